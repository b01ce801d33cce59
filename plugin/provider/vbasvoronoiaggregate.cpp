#include "plugin/provider/vbasvoronoiaggregate.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/outputs/vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasVoronoiAggregate::shortHelpString() const
{
  return QObject::tr( "Builds the aggregation (paper sec. 3.3): every region joins the Voronoi cell of its nearest site (ties go to the lower site id), "
                      "the regions of a cell are dissolved into one aggregated region, the region id of each record is replaced by the aggregate id, "
                      "and every equivalence class (aggregate + QI values) with fewer than k records is suppressed (under k-map, fewer than k residents). The release is k-anonymous "
                      "(or a k-map).<br>" )
         + regionsHelp( true, Population::None ) + recordsHelp( Qis::Required ) + riskModelHelp()
         + QObject::tr( "<b>Sites</b>: the site points (from Place sites); their site_id field identifies them, or their order without one.<br>" ) + constraintHelp() + contiguityHelp()
         + refinementHelp() + searchHelp() + aggregationOutputsHelp()
         + QObject::tr( "<b>Seed</b> (SEED, advanced): draws the search's choices (SEARCH), the algorithm's only random choice: the same SEED and SEARCH_MOVES give the same "
                        "partition. Empty: a fresh seed, reported in the SEED output. It never decides the release's row order, which is drawn fresh from the operating "
                        "system's random source at every run. <b>SEED</b>: the seed.<br>" )
         + populationTableHelp() + QObject::tr( "<b>RUNTIME</b>: seconds." );
}

void VbasVoronoiAggregate::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, Population::None );
  addRecordsParameters( Qis::Required );
  addKParameter();
  addRiskModelParameter();
  addRiskThresholdParameter();
  addReleaseParameters();
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "SITES" ), QObject::tr( "Sites" ), vbasqgis::sourceTypes( { vbasqgis::VectorPoint } ) ),
                QObject::tr( "The sites to aggregate around (from Place sites)" ) );
  addSearchParameters();
  addContiguityParameter();
  addRefinementParameter();
  addConstraintParameters();
  addSeedParameter( QObject::tr( "Seed of the search (empty: a fresh one)" ), QObject::tr( "A whole number that repeats a run exactly; empty: a fresh one each run" ) );
  addPopulationTableParameters( Shown::Advanced );
  addAggregationOutputs();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasVoronoiAggregate::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mTimer.start();
  mInputs.prepare( *this, parameters, context );
  mRelease = VbasReleaseSettings::read( *this, parameters, context );
  mBorderSteps = VbasBorderSteps::read( *this, parameters, context, vbasSeed( *this, parameters, context ) );
  mConstraints = VbasConstraintSettings::read( *this, parameters, context );
  mBorderSteps.recordFloor = mConstraints.recordFloor;
  mBorderSteps.recordCeiling = mConstraints.recordCeiling;
  QList<VbasLocation> inputs = mInputs.locations();
  mPopulationTable = VbasPopulationTable::prepare( *this, parameters, context, mInputs.records()->fields(), mInputs.recordFields().qis, inputs );
  mRelease.refuseUnmetModel( mPopulationTable.get() );
  mOutputs.prepare( *this, parameters, context, VbasAggregationOutputs::schemas( mInputs ), inputs, feedback );
  mInputs.keepForRelease( mOutputs.scratchPrefix( QStringLiteral( "ANONYMIZED" ) ), mRelease.memoryBudget );
  return true;
}

QVariantMap VbasVoronoiAggregate::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  QgsProcessingMultiStepFeedback steps( 5, feedback );
  const VbasRegionsAndRecords read = mInputs.readRegionsAndRecords( context, steps, feedback );
  const VbasRegions &regions = read.regions;
  const VbasRecords &records = read.records;
  const VbasSites sites = mInputs.readSites( regions, context );
  mPopulation = VbasPopulationTable::readFor( mPopulationTable.get(), regions, records, false, feedback );
  mRelease.useResidents( mPopulation );
  vbas::Release voronoi = vbas::voronoiRelease( sites.points, regions.points, records.histograms, mRelease.criterion() );
  const VbasCompactnessReference start = vbasCompactnessOf( regions, records, voronoi, sites.points ); // the budget is a ratio to the given sites' start
  VbasBorderSteps borderSteps = mBorderSteps;
  borderSteps.compactnessBudget = mConstraints.compactnessBudget;
  borderSteps.referenceMeanPoint = start.meanPoint;
  steps.setCurrentStep( 2 );
  const VbasBorderResult bordered = vbasBorderRelease( regions, records, std::move( voronoi ), sites.points, mRelease.criterion(), borderSteps, &steps );
  const vbas::Release &release = bordered.release;
  vbasLogRelease( release, sites.points.size(), mRelease.criterion(), feedback );
  steps.setCurrentStep( 3 );
  const QVector<QgsGeometry> dissolved = mOutputs.wanted( { QStringLiteral( "AGGREGATED" ) } ) ? vbasDissolve( regions, release.aggregation, &steps ) : QVector<QgsGeometry>();
  QVariantMap outputs = VbasAggregationOutputs::write( mOutputs, context, mInputs, regions, records, bordered.sites, sites.ids, release, dissolved, mRelease, steps, 3 );
  outputs.insert( vbasAggregateOutputs( bordered, regions, records, start ) );
  outputs.insert( QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 );
  outputs.insert( QStringLiteral( "SEED" ), static_cast<double>( mBorderSteps.seed ) );
  mOutputs.commit( context, outputs );
  return outputs;
}
