// One writer per output (docs/outputs.md): each output's fields, known before anything is read so the
// output set can check the destination up front, and its features, written from the core's results.
// The release has its own writer, VbasReleaseWriter.
#pragma once

#include "plugin/support/vbasqgiscompat.h"
#include "algorithms/metrics/metrics.h"
#include "algorithms/aggregation/release.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbasgeneralization.h"

#include <QVariantMap>

class QgsProcessingContext;
class QgsProcessingFeedback;
class QgsProcessingMultiStepFeedback;

//! SITE_POINTS: one point per site (site_id, population, regions, used, row), its aggregate as released.
namespace VbasSitesOutput
{
VbasOutputSchema schema( const QString &name, const QgsCoordinateReferenceSystem &crs );
/**
 * Writes the final sites with their aggregates in the partition released, regionAggregate giving each
 * region's aggregate, its site index: regions and population (regionPopulation summed: the basis of balanced density) of
 * the site's aggregate, used = 1 when it holds a region, row = siteRow + 1 (NULL when siteRow is empty).
 */
void write( VbasOutput &output, const VbasRegions &regions, const std::vector<vbas::Point> &sites, const std::vector<std::size_t> &regionAggregate, const std::vector<double> &regionPopulation,
            const std::vector<std::size_t> &siteRow );
} // namespace VbasSitesOutput

/**
 * LOOKUP: region_id, aggregate_id and site_id of every initial region; with generalization, qi_levels
 * (the QIs' levels, VbasGeneralized::levels) and hierarchies (the hierarchy files' digests and the
 * interval widths, VbasGeneralized::hierarchies), the same on every row.
 */
namespace VbasLookupOutput
{
VbasOutputSchema schema( const QgsField &regionId, bool generalized = false );
void write( VbasOutput &output, const VbasRegions &regions, const vbas::Release &release, const std::vector<qlonglong> &siteIds, const QString &levels = QString(),
            const QString &hierarchies = QString() );
} // namespace VbasLookupOutput

//! The member regions of each aggregate dissolved with GEOS, in the regions layer's CRS, as multi-geometries.
QVector<QgsGeometry> vbasDissolve( const VbasRegions &regions, const vbas::Aggregation &aggregation, QgsProcessingFeedback *feedback );

//! AGGREGATED: the dissolved aggregates with their counts.
namespace VbasAggregatedOutput
{
VbasOutputSchema schema( vbasqgis::WkbType regionsType, const QgsCoordinateReferenceSystem &crs );
void write( VbasOutput &output, const VbasRegions &regions, const vbas::Release &release, const QVector<QgsGeometry> &dissolved, const std::vector<qlonglong> &siteIds );
} // namespace VbasAggregatedOutput

//! VORONOI: the cells of the sites clipped to the regions' extent, for display.
namespace VbasCellsOutput
{
VbasOutputSchema schema( const QgsCoordinateReferenceSystem &crs );
void write( VbasOutput &output, const VbasRegions &regions, const std::vector<vbas::Point> &sites, const vbas::Release &release, const std::vector<qlonglong> &siteIds );
} // namespace VbasCellsOutput

//! EVALUATION: every metric (vbas::metrics()) as a one-row table; the same values as number outputs.
namespace VbasEvaluationOutput
{
VbasOutputSchema schema();
//! Writes the row when output is given (asked for) and returns the number outputs (NULL where a metric does not apply).
QVariantMap write( VbasOutput *output, const vbas::MetricValues &values );
} // namespace VbasEvaluationOutput

//! AGGREGATE_METRICS: per aggregated region its records, released, suppressed, smallest EC, l and t.
namespace VbasAggregateMetricsOutput
{
VbasOutputSchema schema( vbasqgis::WkbType regionsType, const QgsCoordinateReferenceSystem &crs );
//! population: the released classes' residents, for journalist_max_risk (NULL without).
void write( VbasOutput &output, const QVector<QgsGeometry> &dissolved, const vbas::Release &release, const std::optional<vbas::SensitiveHistograms> &sensitive,
            const std::optional<vbas::PopulationMeasures> &population );
} // namespace VbasAggregateMetricsOutput

//! REGION_RISK: the risk before release, per initial region: its records in (region, QI) classes below k.
namespace VbasRegionRiskOutput
{
VbasOutputSchema schema( const QgsField &regionId, vbasqgis::WkbType regionsType, const QgsCoordinateReferenceSystem &crs );
void write( VbasOutput &output, const VbasRegions &regions, const vbas::SparseHistograms &regionHistograms, std::int64_t k );
} // namespace VbasRegionRiskOutput

//! The aggregate id of aggregate a in every output: 1, 2, ... in site order.
inline qlonglong vbasAggregateId( std::size_t a )
{
  return static_cast<qlonglong>( a + 1 );
}

struct VbasReleaseSettings;

//! LOOKUP, AGGREGATED, VORONOI and ANONYMIZED: the outputs of Voronoi aggregation, shared with the whole pipeline.
namespace VbasAggregationOutputs
{
//! Their schemas, the release last (the output set commits in this order); with generalization, the QIs it releases as text and the lookup's qi_levels.
QList<VbasOutputSchema> schemas( const VbasInputs &inputs, const VbasGeneralizationSettings *generalization = nullptr );
/**
 * The numbers of a generalized release (its site count, its generalization, its aggregates), logged,
 * and its SITE_POINTS when asked for.
 */
QVariantMap writeGeneralized( VbasOutputSet &outputs, QgsProcessingContext &context, const VbasGeneralized &generalized, const VbasRegions &regions, const VbasRecords &records,
                              const vbas::Criterion &criterion, QgsProcessingFeedback *feedback );

//! The ids 1, 2, ..., count of sites placed in a run (the site_id the outputs write).
std::vector<qlonglong> siteIds( std::size_t count );

/**
 * Writes those of the four outputs asked for of a release built on sites (ids siteIds), its aggregates dissolved (read only
 * for AGGREGATED), as steps step and step + 1 of feedback, and returns the number outputs AGGREGATES, RELEASED and SUPPRESSED.
 */
QVariantMap write( VbasOutputSet &outputs, QgsProcessingContext &context, const VbasInputs &inputs, const VbasRegions &regions, const VbasRecords &records, const std::vector<vbas::Point> &sites,
                   const std::vector<qlonglong> &siteIds, const vbas::Release &release, const QVector<QgsGeometry> &dissolved, const VbasReleaseSettings &settings,
                   QgsProcessingMultiStepFeedback &feedback, int step, const VbasGeneralized *generalized = nullptr );
} // namespace VbasAggregationOutputs
