// Folder inputs/: reading the inputs through QGIS providers and GDAL (layers, records, grouped counts, points, codes).
// Region polygons must not overlap, or the aggregates made from them would overlap too.
#pragma once

#include <qgsgeometry.h>

#include <QVariant>
#include <QVector>

class QgsProcessingFeedback;

/**
 * Refuses two region polygons that overlap by more than 1 % of the smaller one's area,
 * naming both; the slivers of digitising noise along shared borders pass. Boxes from a spatial
 * index, then GEOS on the candidates in the layer CRS.
 */
void vbasCheckNoOverlaps( const QVector<QgsGeometry> &geometries, const QVector<QVariant> &ids, QgsProcessingFeedback *feedback );
