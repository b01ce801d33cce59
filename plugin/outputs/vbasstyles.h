// How the run's layers look once QGIS loads them into a project (QGIS desktop, issue 7). Each output
// with a style, chosen by the output's name, gets a layer post-processor: it sets the layer's renderer
// and places the layer among the layers of the same loading (points above outlines above fills).
// Nothing else is touched: qgis_process loads no layer, so it never runs a post-processor.
#pragma once

#include <QString>

#include <memory>

class QgsProcessingLayerPostProcessorInterface;

namespace VbasStyles
{
/**
 * The post-processor for the layer of output name (AGGREGATED, AGGREGATE_METRICS, REGION_RISK, VORONOI,
 * SITE_POINTS), or nullptr when that output has no style. Hand it to the context's layer details, which
 * own it from then on (QGIS 3.22 deletes it with the context).
 */
std::unique_ptr<QgsProcessingLayerPostProcessorInterface> postProcessor( const QString &name );
} // namespace VbasStyles
