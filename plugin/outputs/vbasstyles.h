// How the run's layers look once QGIS loads them into a project (QGIS desktop). Each output
// with a style, chosen by the output's name, gets a layer post-processor: it sets the layer's renderer
// and places the layer among the layers of the same loading (points above outlines above fills).
// Every layer also gets metadata that says who may see it (docs/outputs.md: for publication, or for the
// custodian only). Nothing else is touched: qgis_process loads no layer, so it never runs a
// post-processor.
#pragma once

#include "plugin/outputs/vbasoutput.h"

#include <memory>

class QgsProcessingLayerPostProcessorInterface;

namespace VbasStyles
{
/**
 * The post-processor for the layer of an output: its audience in the layer's metadata, and its style
 * when the output has one (AGGREGATED, AGGREGATE_METRICS, REGION_RISK, VORONOI, SITE_POINTS). Hand it
 * to the context's layer details, which own it from then on (QGIS 3.22 deletes it with the context).
 */
std::unique_ptr<QgsProcessingLayerPostProcessorInterface> postProcessor( const VbasOutputSchema &schema );

//! The sentence that says who may see an output, as the layer metadata's rights and abstract give it.
QString audienceText( VbasOutputSchema::Audience audience );
} // namespace VbasStyles
