#include "vbasevaluate.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include <map>

QString VbasEvaluate::shortHelpString() const
{
  return QObject::tr( "Measures a release as the paper does (sec. 3.4): suppression, compactness (eq. 20), discernibility (eq. 21), non-uniform entropy of the "
                      "geographic identifier (eq. 22-23) and running time. It recomputes the equivalence classes and their suppression from the records and the "
                      "region lookup, independently of the algorithm that made the release.<br>" )
         + regionsHelp( true, false ) + recordsHelp( true )
         + QObject::tr( "<b>Sites</b>: the site points (site_id field, or their order).<br>"
                        "<b>Region lookup</b>: a table with region_id, aggregate_id and site_id for every region, as Voronoi aggregation writes it.<br>"
                        "<b>k</b>: the k of the release; ECs below it count as suppressed.<br>"
                        "<b>Running time of the evaluated run</b>: seconds, reported as runtime_s (for example the RUNTIME output of Voronoi aggregation).<br>" )
         + QObject::tr( "<h3>Outputs</h3>" ) + evaluationOutputsHelp();
}

void VbasEvaluate::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, false );
  addRecordsParameters( true );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "SITES" ), QObject::tr( "Sites" ), QList<int>() << QgsProcessing::TypeVectorPoint ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "LOOKUP" ), QObject::tr( "Region lookup" ), QList<int>() << QgsProcessing::TypeVector ) );
  addKParameter();
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "RUN_SECONDS" ), QObject::tr( "Running time of the evaluated run (s)" ), QgsProcessingParameterNumber::Double, 0, false, 0 ) );
  addEvaluationOutputs();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time of the evaluated run (s)" ) );
}

bool VbasEvaluate::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback * )
{
  prepareInputs( parameters, context, true );
  mSitesSource = resolveSource( parameters, QStringLiteral( "SITES" ), context );
  mLookupSource = resolveSource( parameters, QStringLiteral( "LOOKUP" ), context );
  return true;
}

QVariantMap VbasEvaluate::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  QgsProcessingMultiStepFeedback steps( 2, feedback );
  const VbasRegions regions = readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  const VbasRecords records = readRecords( regions, &steps );
  const VbasSites sites = readSites( mSitesSource.get(), regions, context );

  // The lookup: aggregate and site of every region.
  const QgsFields fields = mLookupSource->fields();
  const int regionIndex = fields.lookupField( QStringLiteral( "region_id" ) );
  const int aggregateIndex = fields.lookupField( QStringLiteral( "aggregate_id" ) );
  const int siteIndex = fields.lookupField( QStringLiteral( "site_id" ) );
  if ( regionIndex < 0 || aggregateIndex < 0 || siteIndex < 0 )
    throw QgsProcessingException( QObject::tr( "The region lookup needs the fields region_id, aggregate_id and site_id." ) );
  const std::size_t regionCount = static_cast<std::size_t>( regions.ids.size() );
  std::vector<qlonglong> regionAggregateId( regionCount );
  std::vector<bool> seen( regionCount, false );
  std::map<qlonglong, std::size_t> aggregateGroups;
  std::vector<vbas::Point> regionSites( regionCount );
  QgsFeatureIterator it = mLookupSource->getFeatures( QgsFeatureRequest().setFlags( QgsFeatureRequest::NoGeometry ) );
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    throwIfCanceled( feedback );
    const QString region = f.attribute( regionIndex ).toString();
    const std::optional<std::uint32_t> r = regions.find( f.attribute( regionIndex ) );
    if ( !r )
      throw QgsProcessingException( QObject::tr( "The region lookup names region '%1', which is not in the regions layer." ).arg( region ) );
    if ( seen[*r] )
      throw QgsProcessingException( QObject::tr( "The region lookup names region '%1' more than once." ).arg( region ) );
    bool okAggregate = false, okSite = false;
    const qlonglong aggregateId = f.attribute( aggregateIndex ).toLongLong( &okAggregate );
    const qlonglong siteId = f.attribute( siteIndex ).toLongLong( &okSite );
    const auto site = std::lower_bound( sites.ids.begin(), sites.ids.end(), siteId );
    if ( !okAggregate || !okSite || site == sites.ids.end() || *site != siteId )
      throw QgsProcessingException( QObject::tr( "The region lookup row of region '%1' has no valid aggregate_id or a site_id that is not in the sites layer." ).arg( region ) );
    seen[*r] = true;
    regionAggregateId[*r] = aggregateId;
    aggregateGroups.emplace( aggregateId, 0 );
    regionSites[*r] = sites.points[static_cast<std::size_t>( site - sites.ids.begin() )];
  }
  const auto missing = std::find( seen.begin(), seen.end(), false );
  if ( missing != seen.end() )
    throw QgsProcessingException( QObject::tr( "Region '%1' has no row in the region lookup." ).arg( regions.ids[static_cast<int>( missing - seen.begin() )].toString() ) );
  std::size_t group = 0;
  for ( auto &entry : aggregateGroups )
    entry.second = group++;
  std::vector<std::size_t> regionGroup;
  for ( const qlonglong id : regionAggregateId )
    regionGroup.push_back( aggregateGroups[id] );

  VbasRelease release;
  release.aggregation = vbas::aggregate( regionGroup, records.histograms );
  release.suppression = vbas::suppress( release.aggregation.ecs, mK );
  release.regionSites = std::move( regionSites );
  QVariantMap outputs;
  writeEvaluation( parameters, context, regions, records, release, parameterAsDouble( parameters, QStringLiteral( "RUN_SECONDS" ), context ), outputs );
  return outputs;
}
