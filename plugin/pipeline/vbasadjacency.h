// The borders of the regions layer through GEOS: which regions are neighbours, and the bridges that
// link islands to the rest. The steps on them are in pipeline/vbaspartitionsearch.h.
#pragma once

#include "algorithms/aggregation/contiguity.h"
#include "algorithms/base/geometry.h"
#include "plugin/inputs/vbasinputs.h"

class QgsProcessingFeedback;

//! Whether the regions are polygons: points share no borders.
bool vbasHasBorders( const VbasRegions &regions );

/**
 * The adjacency of the regions: two regions are neighbours when their boundaries share a part of
 * positive length (touching at a point is no border). Candidate pairs come from a spatial index of
 * the regions' bounding boxes, then a prepared-geometry intersects test; the shared border is the
 * intersection of the two boundaries, computed by GEOS in the layer CRS (where the polygons'
 * vertices are as given) and measured in the working CRS, where distances are measured too.
 * A point layer has no borders. Honours cancel.
 */
vbas::RegionAdjacency vbasRegionAdjacency( const VbasRegions &regions, QgsProcessingFeedback *feedback );

/**
 * The adjacency of the regions with their islands bridged (vbas::bridgeIslands): an island, or any
 * group of regions sharing no border with the rest, is linked to the nearest region point outside it.
 * The bridges are logged (a count). A point layer has no adjacency.
 */
vbas::RegionAdjacency vbasBridgedAdjacency( const VbasRegions &regions, QgsProcessingFeedback *feedback );
