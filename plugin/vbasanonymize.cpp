#include "vbasanonymize.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasAnonymize::shortHelpString() const
{
  return QObject::tr( "Runs the whole VBAS pipeline with one set of parameters: estimate the site count, place the sites by balanced density, "
                      "aggregate the regions by Voronoi cell and suppress every equivalence class below k, then evaluate the release. "
                      "The same as chaining the four component algorithms (see vbas_pipeline.model3).<br>" )
         + regionsHelp( true, true ) + recordsHelp( true ) + siteCountHelp() + placementHelp() + aggregationOutputsHelp()
         + QObject::tr( "<b>Sites</b>: the placed sites (site_id, population, regions, row).<br>" ) + evaluationOutputsHelp()
         + QObject::tr( "<b>SITES</b>, <b>CUTOFF</b>, <b>ENTROPY</b>, <b>MAXCOMBS</b>, <b>POPULATION</b>: as Estimate site count. <b>RUNTIME</b>: seconds for the whole pipeline." );
}

void VbasAnonymize::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, true );
  addRecordsParameters( true );
  addSiteCountParameters();
  addPlacementParameters();
  addKParameter();
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "SITE_POINTS" ), QObject::tr( "Sites" ), QgsProcessing::TypeVectorPoint ) );
  addAggregationOutputs();
  addEvaluationOutputs();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasAnonymize::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback * )
{
  prepareInputs( parameters, context, true );
  return true;
}

QVariantMap VbasAnonymize::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  QgsProcessingMultiStepFeedback steps( 3, feedback );
  const VbasRegions regions = readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  VbasRecords records = readRecords( regions, &steps );
  steps.setCurrentStep( 2 );
  QVariantMap outputs;
  const VbasSiteCount siteCount = estimateSiteCount( parameters, context, regions, records, feedback );
  setSiteCountOutputs( siteCount, records, outputs );
  const vbas::Placement placement = placeSites( parameters, context, regions, records, siteCount.sites );
  outputs.insert( QStringLiteral( "SITE_POINTS" ), writeSites( parameters, QStringLiteral( "SITE_POINTS" ), context, regions, placement ) );
  std::vector<qlonglong> siteIds;
  for ( std::size_t s = 0; s < placement.sites.size(); ++s )
    siteIds.push_back( static_cast<qlonglong>( s + 1 ) );
  const VbasRelease release = aggregateAndRelease( parameters, context, regions, records, placement.sites, siteIds, outputs, &steps );
  writeEvaluation( parameters, context, regions, records, release, mTimer.elapsed() / 1000.0, outputs );
  return outputs;
}
