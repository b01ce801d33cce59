#include "plugin/provider/vbasanonymize.h"
#include "plugin/support/vbasqgiscompat.h"

#include "algorithms/metrics/metrics.h"
#include "plugin/pipeline/vbaspartitionsearch.h"
#include "plugin/outputs/vbasreport.h"
#include "plugin/outputs/vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasAnonymize::shortHelpString() const
{
  return QObject::tr( "Runs the whole VBAS pipeline with one set of parameters: estimate the site count, place the sites (balanced density or anonymity-driven clustering), "
                      "aggregate the regions by Voronoi cell and suppress every equivalence class below k, then evaluate the release. "
                      "The same as chaining the four component algorithms (see vbas_pipeline.model3).<br>" )
         + regionsHelp( true, Population::Weights ) + recordsHelp( Qis::Required ) + riskModelHelp() + siteCountHelp() + placementHelp() + constraintHelp() + contiguityHelp() + refinementHelp()
         + searchHelp() + generalizationHelp() + aggregationOutputsHelp() + QObject::tr( "<b>Sites</b>: " ) + custodianOnly()
         + QObject::tr( "the placed sites: site_id; regions and population (on the basis of balanced density) of its aggregate in "
                        "the release, after every step that moves regions between aggregates; used (1 when that aggregate holds a region, 0 "
                        "otherwise); row (as Place sites). The search moves the sites of the aggregates it re-forms to the mean of their region points.<br>" )
         + evaluationParametersHelp() + populationTableHelp() + evaluationOutputsHelp() + reportHelp()
         + QObject::tr(
           "<b>Seed</b> (SEED, advanced): draws ADC's random seeding (SEEDING: random region points) and the search's choices (SEARCH), the algorithm's only random choices, so the same SEED (and SEARCH_MOVES) gives "
           "the same release content (the same rows; their order and feature ids differ). Empty: a fresh seed, reported in the log and the SEED output. It does "
           "not decide the release's row order (see Release order). <b>SEED</b>: the seed.<br>" )
         + adcOutputsHelp() + QObject::tr( "<b>SITES</b>, <b>CUTOFF</b>, <b>ENTROPY</b>, <b>MAXCOMBS</b>, <b>POPULATION</b>: as Estimate site count. <b>RUNTIME</b>: seconds for the whole pipeline." );
}

void VbasAnonymize::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, Population::Weights );
  addRecordsParameters( Qis::Required );
  addKParameter();
  addRiskModelParameter();
  addReleaseParameters();
  addEvaluationParameters();
  addPopulationTableParameters( Shown::Advanced );
  addPlacementParameters();
  addSiteCountParameters();
  addSearchParameters();
  addContiguityParameter();
  addRefinementParameter();
  addGeneralizationParameters();
  addConstraintParameters();
  addSeedParameter( QObject::tr( "Seed of ADC's random seeding (empty: a fresh one)" ), QObject::tr( "A whole number that repeats a run exactly; empty: a fresh one each run" ) );
  addOptionalSink( QStringLiteral( "SITE_POINTS" ), QObject::tr( "Sites" ), vbasqgis::VectorPoint, QObject::tr( "The sites, one point for each aggregate" ) );
  addAggregationOutputs();
  addEvaluationOutputs();
  addReportOutput();
}

bool VbasAnonymize::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mTimer.start();
  mInputs.prepare( *this, parameters, context );
  mSiteCount = VbasSiteCountSettings::read( *this, parameters, context );
  mRelease = VbasReleaseSettings::read( *this, parameters, context );
  mPlacement = VbasPlacementSettings::read( *this, parameters, context, vbasSeed( *this, parameters, context ) );
  mConstraints = VbasConstraintSettings::read( *this, parameters, context );
  mBorderSteps = VbasBorderSteps::read( *this, parameters, context, mPlacement.seed );
  mRiskThreshold = parameterAsDouble( parameters, QStringLiteral( "RISK_THRESHOLD" ), context );
  QList<VbasLocation> inputs = mInputs.locations();
  mGeneralization = VbasGeneralizationSettings::read( *this, parameters, context, mInputs.qiNames(), inputs );
  mPopulationTable = VbasPopulationTable::prepare( *this, parameters, context, mInputs.records()->fields(), mInputs.recordFields().qis, inputs );
  mGeneralization.hierarchies.readFieldTypes( mInputs.records()->fields(), mInputs.recordFields().qis );
  mGeneralization.refuseOtherSteps( mPlacement, mBorderSteps );
  mRelease.refuseUnmetModel( mPopulationTable.get() );
  mRunParameters = vbasRunParameters( *this, parameters, context, { { QStringLiteral( "SEED" ), QString::number( mPlacement.seed ) } } );
  const QList<VbasOutputSchema> schemas
    = QList<VbasOutputSchema> { VbasSitesOutput::schema( QStringLiteral( "SITE_POINTS" ), mInputs.regionsCrs() ), VbasEvaluationOutput::schema(), vbasReportSchema() }
      + VbasAggregationOutputs::schemas( mInputs, &mGeneralization );
  mOutputs.prepare( *this, parameters, context, schemas, inputs, feedback );
  mInputs.keepForRelease( mOutputs.scratchPrefix( QStringLiteral( "ANONYMIZED" ) ), mRelease.memoryBudget );
  return true;
}

QVariantMap VbasAnonymize::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  QgsProcessingMultiStepFeedback steps( 4, feedback );
  const VbasRegionsAndRecords read = mInputs.readRegionsAndRecords( context, steps, feedback );
  const VbasRegions &regions = read.regions;
  const VbasRecords &records = read.records;
  mPopulation = VbasPopulationTable::readFor( mPopulationTable.get(), regions, records, mGeneralization.active, feedback );
  mRelease.useResidents( mPopulation );
  mPlacement.adc.criterion = mRelease.criterion(); // under k-map, ADC aims at k residents; under the average risk model, it counts the cut
  if ( mGeneralization.active )
    return processGeneralized( regions, records, context, steps, feedback );
  const VbasSiteCount siteCount = vbasEstimateSiteCount( mSiteCount, regions, records, feedback );
  QVariantMap outputs = vbasSiteCountOutputs( siteCount, records );
  const VbasAggregated aggregated = vbasAggregate( mPlacement, mConstraints, mBorderSteps, regions, records, siteCount.sites, mRelease.criterion(), &steps );
  outputs.insert( aggregated.placementOutputs );
  outputs.insert( QStringLiteral( "SEED" ), static_cast<double>( mPlacement.seed ) );
  const VbasBorderResult &bordered = aggregated.bordered;
  const vbas::Release &release = bordered.release;
  outputs.insert( vbasAggregateOutputs( bordered, regions, records, aggregated.reference ) );
  if ( !records.encoder.classCodes().empty() )
    outputs.insert( vbasLossOutputs( vbasReleaseLoss( records, release ) ) );
  vbasLogRelease( release, aggregated.placedSites.size(), mRelease.criterion(), feedback );
  if ( VbasOutput *sites = mOutputs.createIfWanted( QStringLiteral( "SITE_POINTS" ), context ) )
    VbasSitesOutput::write( *sites, regions, bordered.sites, release.regionAggregate, vbasRegionPopulation( regions, records ), aggregated.siteRow );
  return writeRelease( regions, records, records, bordered.sites, release, outputs, context, steps, feedback, nullptr );
}

QVariantMap VbasAnonymize::processGeneralized( const VbasRegions &regions, const VbasRecords &records, QgsProcessingContext &context, QgsProcessingMultiStepFeedback &steps,
                                               QgsProcessingFeedback *feedback )
{
  const VbasGeneralized g = vbasGeneralize( mGeneralization, mSiteCount, mPlacement, mConstraints, regions, records, mRelease, mPopulation ? &*mPopulation : nullptr, mInputs.qiNames(), feedback );
  if ( mPopulation ) // the residents of the classes as written, for the criterion, its recount and the measures
    mPopulation->cells = g.writtenResidents;
  QVariantMap outputs = VbasAggregationOutputs::writeGeneralized( mOutputs, context, g, regions, records, mRelease.criterion(), feedback );
  outputs.insert( vbasPlacementOutputs( g.placement ) );
  outputs.insert( QStringLiteral( "SEED" ), static_cast<double>( mPlacement.seed ) );
  return writeRelease( regions, records, g.writtenRecords, g.placement.sites, g.release, outputs, context, steps, feedback, &g );
}

QVariantMap VbasAnonymize::writeRelease( const VbasRegions &regions, const VbasRecords &records, const VbasRecords &measured, const std::vector<vbas::Point> &sites, const vbas::Release &release,
                                         QVariantMap outputs, QgsProcessingContext &context, QgsProcessingMultiStepFeedback &steps, QgsProcessingFeedback *feedback,
                                         const VbasGeneralized *generalized )
{
  steps.setCurrentStep( 2 );
  const QVector<QgsGeometry> dissolved
    = mOutputs.wanted( { QStringLiteral( "AGGREGATED" ), QStringLiteral( "REPORT" ) } ) ? vbasDissolve( regions, release.aggregation, &steps ) : QVector<QgsGeometry>();
  outputs.insert(
    VbasAggregationOutputs::write( mOutputs, context, mInputs, regions, records, sites, VbasAggregationOutputs::siteIds( sites.size() ), release, dissolved, mRelease, steps, 2, generalized ) );

  std::vector<vbas::Point> regionSites;
  for ( const std::size_t s : release.regionAggregate )
    regionSites.push_back( sites[s] );
  const VbasMeasured measures = vbasMeasure( regions, measured, regionSites, release, mRelease.k, mRiskThreshold, mTimer.elapsed() / 1000.0, feedback, mPopulation ? &*mPopulation : nullptr );
  const vbas::MetricValues &values = measures.values;
  outputs.insert( VbasEvaluationOutput::write( mOutputs.createIfWanted( QStringLiteral( "EVALUATION" ), context ), values ) );
  if ( VbasOutput *report = mOutputs.createIfWanted( QStringLiteral( "REPORT" ), context ) )
    report->write( vbasReport( { QObject::tr( "VBAS release: whole pipeline" ), regions, measured.histograms, release, dissolved, values, mRunParameters, vbasProcessCommand( *this, mRunParameters ),
                                 generalized ? vbasGeneralizationFacts( *generalized ) : QList<QPair<QString, QString>>(), measures.populationFacts, mRelease,
                                 measures.population ? &*measures.population : nullptr } ) );
  mOutputs.commit( context, outputs );
  vbasLogSummary( values, feedback );
  return outputs;
}
