#include "plugin/outputs/vbaswriters.h"
#include "plugin/outputs/vbasreleaserecount.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/support/vbasinterrupt.h"
#include "plugin/outputs/vbasreleasewriter.h"
#include "plugin/pipeline/vbassteps.h"
#include "algorithms/aggregation/voronoi.h"

#include <qgsgeometrycollection.h>
#include <qgslinestring.h>
#include <qgspolygon.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingalgorithm.h>

namespace
{

const QString kAggregateId = QStringLiteral( "aggregate_id" );
const QString kSiteId = QStringLiteral( "site_id" );

QgsFields fieldsOf( const QList<QPair<QString, vbasqgis::FieldType>> &list )
{
  QgsFields fields;
  for ( const auto &[name, type] : list )
    fields.append( QgsField( name, type ) );
  return fields;
}

//! A geometry of the working CRS back in the regions layer's CRS.
QgsGeometry toLayer( QgsGeometry geometry, const VbasRegions &regions )
{
  geometry.transform( regions.toWorking, Qgis::TransformDirection::Reverse );
  return geometry;
}

void add( VbasOutput &output, const QVector<QVariant> &values, const QgsGeometry &geometry = QgsGeometry() )
{
  QgsFeature feature( output.fields() );
  feature.setAttributes( QgsAttributes( values ) );
  if ( !geometry.isNull() )
    feature.setGeometry( geometry );
  output.add( feature );
}

} // namespace

VbasOutputSchema VbasSitesOutput::schema( const QString &name, const QgsCoordinateReferenceSystem &crs )
{
  return { name,
           fieldsOf( { { kSiteId, vbasqgis::Field::LongLong },
                       { QStringLiteral( "population" ), vbasqgis::Field::Double },
                       { QStringLiteral( "regions" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "used" ), vbasqgis::Field::Int },
                       { QStringLiteral( "row" ), vbasqgis::Field::LongLong } } ),
           vbasqgis::WkbType::Point, crs };
}

void VbasSitesOutput::write( VbasOutput &output, const VbasRegions &regions, const std::vector<vbas::Point> &sites, const std::vector<std::size_t> &regionAggregate,
                             const std::vector<double> &regionPopulation, const std::vector<std::size_t> &siteRow )
{
  std::vector<qlonglong> members( sites.size(), 0 );
  std::vector<double> population( sites.size(), 0 );
  for ( std::size_t r = 0; r < regionAggregate.size(); ++r )
  {
    ++members[regionAggregate[r]];
    population[regionAggregate[r]] += regionPopulation[r];
  }
  for ( std::size_t s = 0; s < sites.size(); ++s )
  {
    const QgsGeometry point( new QgsPoint( sites[s].x, sites[s].y ) );
    const QVariant row = siteRow.empty() ? QVariant() : QVariant( static_cast<qlonglong>( siteRow[s] + 1 ) );
    add( output, { static_cast<qlonglong>( s + 1 ), population[s], members[s], members[s] > 0 ? 1 : 0, row }, toLayer( point, regions ) );
  }
  output.finish();
}

VbasOutputSchema VbasLookupOutput::schema( const QgsField &regionId, bool generalized )
{
  QgsField region = regionId;
  region.setName( QStringLiteral( "region_id" ) );
  QgsFields fields;
  fields.append( region );
  fields.append( QgsField( kAggregateId, vbasqgis::Field::LongLong ) );
  fields.append( QgsField( kSiteId, vbasqgis::Field::LongLong ) );
  if ( generalized )
  {
    fields.append( QgsField( QStringLiteral( "qi_levels" ), vbasqgis::Field::String ) );
    fields.append( QgsField( QStringLiteral( "hierarchies" ), vbasqgis::Field::String ) );
  }
  return { QStringLiteral( "LOOKUP" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem() };
}

void VbasLookupOutput::write( VbasOutput &output, const VbasRegions &regions, const vbas::Release &release, const std::vector<qlonglong> &siteIds, const QString &levels, const QString &hierarchies )
{
  for ( int r = 0; r < regions.ids.size(); ++r )
  {
    const std::size_t a = release.aggregation.regionAggregateIndex[static_cast<std::size_t>( r )];
    QVector<QVariant> row { regions.ids[r], vbasAggregateId( a ), siteIds[release.aggregation.aggregateId[a]] };
    if ( !levels.isEmpty() )
      row << levels << hierarchies;
    add( output, row );
  }
  output.finish();
}

VbasOutputSchema VbasAggregatedOutput::schema( vbasqgis::WkbType regionsType, const QgsCoordinateReferenceSystem &crs )
{
  return { QStringLiteral( "AGGREGATED" ),
           fieldsOf( { { kAggregateId, vbasqgis::Field::LongLong },
                       { kSiteId, vbasqgis::Field::LongLong },
                       { QStringLiteral( "regions" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "members" ), vbasqgis::Field::String },
                       { QStringLiteral( "records" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "released" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "suppressed" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "smallest_ec" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "parts" ), vbasqgis::Field::LongLong } } ),
           QgsWkbTypes::multiType( regionsType ), crs };
}

QVector<QgsGeometry> vbasDissolve( const VbasRegions &regions, const vbas::Aggregation &aggregation, QgsProcessingFeedback *feedback )
{
  const std::size_t aggregates = aggregation.aggregateId.size();
  std::vector<QVector<QgsGeometry>> memberGeometries( aggregates );
  for ( int r = 0; r < regions.ids.size(); ++r )
    memberGeometries[aggregation.regionAggregateIndex[static_cast<std::size_t>( r )]].append( regions.geometries[r] );
  QVector<QgsGeometry> dissolved;
  for ( std::size_t a = 0; a < aggregates; ++a )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    dissolved.append( QgsGeometry::unaryUnion( memberGeometries[a] ) );
    dissolved.back().convertToMultiType();
    feedback->setProgress( 100.0 * static_cast<double>( a + 1 ) / static_cast<double>( aggregates ) );
  }
  return dissolved;
}

void VbasAggregatedOutput::write( VbasOutput &output, const VbasRegions &regions, const vbas::Release &release, const QVector<QgsGeometry> &dissolved, const std::vector<qlonglong> &siteIds )
{
  const vbas::Aggregation &aggregation = release.aggregation;
  std::vector<QStringList> memberIds( aggregation.aggregateId.size() );
  for ( int r = 0; r < regions.ids.size(); ++r )
    memberIds[aggregation.regionAggregateIndex[static_cast<std::size_t>( r )]].append( regions.ids[r].toString() );
  const std::vector<vbas::AggregateSummary> summaries = vbas::summarize( aggregation.ecs, release.suppression );
  for ( std::size_t a = 0; a < memberIds.size(); ++a )
  {
    const QgsGeometry &geometry = dissolved[static_cast<int>( a )];
    const auto *parts = qgsgeometry_cast<const QgsGeometryCollection *>( geometry.constGet() ); // detached parts of a polygon aggregate
    const vbas::AggregateSummary &s = summaries[a];
    add( output,
         { vbasAggregateId( a ), siteIds[aggregation.aggregateId[a]], static_cast<qlonglong>( memberIds[a].size() ), memberIds[a].join( QLatin1Char( ',' ) ), static_cast<qlonglong>( s.records ),
           static_cast<qlonglong>( s.released ), static_cast<qlonglong>( s.suppressed ), static_cast<qlonglong>( s.smallestReleasedEc ),
           parts ? QVariant( static_cast<qlonglong>( parts->numGeometries() ) ) : QVariant() },
         geometry );
  }
  output.finish();
}

VbasOutputSchema VbasCellsOutput::schema( const QgsCoordinateReferenceSystem &crs )
{
  return { QStringLiteral( "VORONOI" ), fieldsOf( { { kSiteId, vbasqgis::Field::LongLong }, { kAggregateId, vbasqgis::Field::LongLong } } ), vbasqgis::WkbType::Polygon, crs };
}

void VbasCellsOutput::write( VbasOutput &output, const VbasRegions &regions, const std::vector<vbas::Point> &sites, const vbas::Release &release, const std::vector<qlonglong> &siteIds )
{
  const vbas::VoronoiDiagram diagram( sites );
  const std::vector<std::size_t> &ids = release.aggregation.aggregateId;
  for ( std::size_t s = 0; s < sites.size(); ++s )
  {
    const std::vector<vbas::Point> ring = diagram.cell( s, regions.extent );
    if ( ring.size() < 3 )
      continue;
    QgsPointSequence points;
    for ( const vbas::Point &p : ring )
      points.append( QgsPoint( p.x, p.y ) );
    points.append( points.front() );
    auto polygon = std::make_unique<QgsPolygon>();
    polygon->setExteriorRing( new QgsLineString( points ) );
    const auto it = std::lower_bound( ids.begin(), ids.end(), s );
    const QVariant aggregate = it != ids.end() && *it == s ? QVariant( vbasAggregateId( static_cast<std::size_t>( it - ids.begin() ) ) ) : QVariant();
    add( output, { siteIds[s], aggregate }, toLayer( QgsGeometry( polygon.release() ), regions ) );
  }
  output.finish();
}

VbasOutputSchema VbasEvaluationOutput::schema()
{
  QgsFields fields;
  for ( const vbas::Metric &metric : vbas::metrics() )
    fields.append( QgsField( QString::fromLatin1( metric.field ), metric.whole ? vbasqgis::Field::LongLong : vbasqgis::Field::Double ) );
  return { QStringLiteral( "EVALUATION" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem() };
}

QVariantMap VbasEvaluationOutput::write( VbasOutput *output, const vbas::MetricValues &values )
{
  QVector<QVariant> row;
  QVariantMap numbers;
  for ( std::size_t i = 0; i < values.size(); ++i )
  {
    const vbas::Metric &metric = vbas::metrics()[i];
    const QVariant value = !values[i] ? QVariant() : metric.whole ? QVariant( static_cast<qlonglong>( *values[i] ) ) : QVariant( static_cast<double>( *values[i] ) );
    row.append( value );
    if ( metric.output )
      numbers.insert( QString::fromLatin1( metric.output ), value );
  }
  if ( output )
  {
    add( *output, row );
    output->finish();
  }
  return numbers;
}

VbasOutputSchema VbasAggregateMetricsOutput::schema( vbasqgis::WkbType regionsType, const QgsCoordinateReferenceSystem &crs )
{
  return { QStringLiteral( "AGGREGATE_METRICS" ),
           fieldsOf( { { kAggregateId, vbasqgis::Field::LongLong },
                       { QStringLiteral( "regions" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "records" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "released" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "suppressed" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "smallest_ec" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "l_diversity" ), vbasqgis::Field::LongLong },
                       { QStringLiteral( "t_closeness" ), vbasqgis::Field::Double },
                       { QStringLiteral( "journalist_max_risk" ), vbasqgis::Field::Double } } ),
           QgsWkbTypes::multiType( regionsType ), crs };
}

void VbasAggregateMetricsOutput::write( VbasOutput &output, const QVector<QgsGeometry> &dissolved, const vbas::Release &release, const std::optional<vbas::SensitiveHistograms> &sensitive,
                                        const std::optional<vbas::PopulationMeasures> &population )
{
  const vbas::Aggregation &aggregation = release.aggregation;
  const std::vector<vbas::AggregateSummary> summaries = vbas::summarize( aggregation.ecs, release.suppression );
  std::vector<qlonglong> regionCount( summaries.size(), 0 );
  for ( const std::size_t a : aggregation.regionAggregateIndex )
    ++regionCount[a];
  std::optional<vbas::AggregateDiversity> diversity;
  if ( sensitive )
    diversity = vbas::aggregateDiversity( vbas::ecDiversity( *sensitive, aggregation, release.suppression ), aggregation, release.suppression );
  const std::vector<double> journalist = population ? vbas::aggregateJournalistRisk( population->released, summaries.size() ) : std::vector<double>();
  for ( std::size_t a = 0; a < summaries.size(); ++a )
  {
    const vbas::AggregateSummary &s = summaries[a];
    const bool diverse = diversity && s.released > 0;
    add( output,
         { vbasAggregateId( a ), regionCount[a], static_cast<qlonglong>( s.records ), static_cast<qlonglong>( s.released ), static_cast<qlonglong>( s.suppressed ),
           static_cast<qlonglong>( s.smallestReleasedEc ), diverse ? QVariant( static_cast<qlonglong>( diversity->smallestL[a] ) ) : QVariant(),
           diverse ? QVariant( diversity->largestT[a] ) : QVariant(), population && s.released > 0 ? QVariant( journalist[a] ) : QVariant() },
         dissolved[static_cast<int>( a )] );
  }
  output.finish();
}

VbasOutputSchema VbasRegionRiskOutput::schema( const QgsField &regionId, vbasqgis::WkbType regionsType, const QgsCoordinateReferenceSystem &crs )
{
  QgsField region = regionId;
  region.setName( QStringLiteral( "region_id" ) );
  QgsFields fields;
  fields.append( region );
  for ( const QgsField &field : fieldsOf(
          { { QStringLiteral( "records" ), vbasqgis::Field::LongLong }, { QStringLiteral( "at_risk" ), vbasqgis::Field::LongLong }, { QStringLiteral( "risk_share" ), vbasqgis::Field::Double } } ) )
    fields.append( field );
  return { QStringLiteral( "REGION_RISK" ), fields, QgsWkbTypes::multiType( regionsType ), crs };
}

void VbasRegionRiskOutput::write( VbasOutput &output, const VbasRegions &regions, const vbas::SparseHistograms &regionHistograms, std::int64_t k )
{
  const std::vector<std::int64_t> atRisk = vbas::recordsInSmallClasses( regionHistograms, k );
  for ( int r = 0; r < regions.ids.size(); ++r )
  {
    const std::int64_t records = regionHistograms.rowTotal( static_cast<std::size_t>( r ) );
    const std::int64_t risk = atRisk[static_cast<std::size_t>( r )];
    QgsGeometry geometry = regions.geometries[r];
    geometry.convertToMultiType();
    add( output,
         { regions.ids[r], static_cast<qlonglong>( records ), static_cast<qlonglong>( risk ), records > 0 ? QVariant( static_cast<double>( risk ) / static_cast<double>( records ) ) : QVariant() },
         geometry );
  }
  output.finish();
}

QList<VbasOutputSchema> VbasAggregationOutputs::schemas( const VbasInputs &inputs, const VbasGeneralizationSettings *generalization )
{
  const QgsFields regionFields = inputs.regionFields();
  const bool generalized = generalization && generalization->active;
  return { VbasLookupOutput::schema( regionFields.at( regionFields.lookupField( inputs.regionIdField() ) ), generalized ), VbasAggregatedOutput::schema( inputs.regionsWkbType(), inputs.regionsCrs() ),
           VbasCellsOutput::schema( inputs.regionsCrs() ),
           VbasReleaseWriter::schema( inputs.records()->fields(), inputs.recordFields(), generalized ? generalization->hierarchies.textFields() : QSet<QString>() ) };
}

QVariantMap VbasAggregationOutputs::write( VbasOutputSet &outputs, QgsProcessingContext &context, const VbasInputs &inputs, const VbasRegions &regions, const VbasRecords &records,
                                           const std::vector<vbas::Point> &sites, const std::vector<qlonglong> &siteIds, const vbas::Release &release, const QVector<QgsGeometry> &dissolved,
                                           const VbasReleaseSettings &settings, QgsProcessingMultiStepFeedback &feedback, int step, const VbasGeneralized *generalized )
{
  feedback.setCurrentStep( step );
  if ( VbasOutput *lookup = outputs.createIfWanted( QStringLiteral( "LOOKUP" ), context ) )
    VbasLookupOutput::write( *lookup, regions, release, siteIds, generalized ? generalized->levels() : QString(), generalized ? generalized->hierarchies : QString() );
  if ( VbasOutput *aggregated = outputs.createIfWanted( QStringLiteral( "AGGREGATED" ), context ) )
    VbasAggregatedOutput::write( *aggregated, regions, release, dissolved, siteIds );
  if ( VbasOutput *cells = outputs.createIfWanted( QStringLiteral( "VORONOI" ), context ) )
    VbasCellsOutput::write( *cells, regions, sites, release, siteIds );
  feedback.setCurrentStep( step + 1 );
  VbasOutput &anonymized = outputs.create( QStringLiteral( "ANONYMIZED" ), context );
  feedback.pushInfo( QObject::tr( "The release holds the fields %1, in a fresh random order." ).arg( anonymized.fields().names().join( QStringLiteral( ", " ) ) ) );
  VbasReleaseWriter( inputs.records()->fields(), inputs.recordFields(), regions, records, release, generalized ).write( anonymized, &feedback );
  const int count = inputs.recordFields().count;
  vbasRecountRelease( anonymized, inputs.qiNames(), count < 0 ? QString() : inputs.records()->fields().at( count ).name(), release, settings.criterion(), context, &feedback );
  return { { QStringLiteral( "AGGREGATES" ), static_cast<qlonglong>( release.aggregation.aggregateId.size() ) },
           { QStringLiteral( "RELEASED" ), static_cast<qlonglong>( release.suppression.releasedRecords ) },
           { QStringLiteral( "SUPPRESSED" ), static_cast<qlonglong>( release.suppression.suppressedRecords ) } };
}

std::vector<qlonglong> VbasAggregationOutputs::siteIds( std::size_t count )
{
  std::vector<qlonglong> ids;
  for ( std::size_t s = 0; s < count; ++s )
    ids.push_back( static_cast<qlonglong>( s + 1 ) );
  return ids;
}

QVariantMap VbasAggregationOutputs::writeGeneralized( VbasOutputSet &outputs, QgsProcessingContext &context, const VbasGeneralized &g, const VbasRegions &regions, const VbasRecords &records,
                                                      const vbas::Criterion &criterion, QgsProcessingFeedback *feedback )
{
  QVariantMap numbers = vbasSiteCountOutputs( g.siteCount, records );
  numbers.insert( vbasGeneralizationOutputs( g ) );
  numbers.insert( vbasGeneralizedAggregateOutputs( g, regions, criterion, feedback ) );
  vbasLogRelease( g.release, g.placement.sites.size(), criterion, feedback );
  if ( VbasOutput *sites = outputs.createIfWanted( QStringLiteral( "SITE_POINTS" ), context ) )
    VbasSitesOutput::write( *sites, regions, g.placement.sites, g.release.regionAggregate, vbasRegionPopulation( regions, records ), g.placement.siteRow );
  return numbers;
}
