// The borders of the regions layer through GEOS, and the steps on them (algorithms/
// contiguity.h): CONTIGUOUS, the detached fragments of the aggregates reassigned to a neighbouring
// aggregate, and REFINE_BOUNDARIES, single boundary regions moved to a neighbouring aggregate.
#pragma once

#include "contiguity.h"
#include "release.h"
#include "inputs/vbasinputs.h"

#include <cstdint>

class QgsProcessingFeedback;

/**
 * The adjacency of the regions: two regions are neighbours when their boundaries share a part of
 * positive length (touching at a point is no border). Candidate pairs come from a spatial index of
 * the regions' bounding boxes, then a prepared-geometry intersects test; the shared border is the
 * intersection of the two boundaries, computed by GEOS in the layer CRS (where the polygons'
 * vertices are as given) and measured in the working CRS, where distances are measured too.
 * A point layer has no borders. Honours cancel.
 */
vbas::RegionAdjacency vbasRegionAdjacency( const VbasRegions &regions, QgsProcessingFeedback *feedback );

//! The optional steps on the regions' borders that follow the Voronoi release.
struct VbasBorderSteps
{
    bool contiguous = false;       //!< CONTIGUOUS
    bool refineBoundaries = false; //!< REFINE_BOUNDARIES
};

/**
 * The release after the border steps, on one adjacency of the regions. CONTIGUOUS first: every
 * detached fragment of an aggregate moved to the neighbouring aggregate it shares the longest border
 * with, when that raises no suppression (vbas::makeContiguous). Then REFINE_BOUNDARIES: single
 * boundary regions moved to a neighbouring aggregate when that lowers suppression without more
 * fragments (vbas::refineBoundaries). Rebuilt by vbas::release when a region moved. Logs the counts
 * of each step; a point layer is logged as having no borders and its release returned as it is.
 */
vbas::Release vbasBorderRelease( const VbasRegions &regions, const VbasRecords &records, vbas::Release release, std::int64_t k, VbasBorderSteps steps, QgsProcessingFeedback *feedback );
