#include "provider/vbasvoronoiaggregate.h"
#include "support/vbasqgiscompat.h"

#include "outputs/vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasVoronoiAggregate::shortHelpString() const
{
  return QObject::tr( "Builds the aggregation (paper sec. 3.3): every region joins the Voronoi cell of its nearest site (ties go to the lower site id), "
                      "the regions of a cell are dissolved into one aggregated region, the region id of each record is replaced by the aggregate id, "
                      "and every equivalence class (aggregate + QI values) with fewer than k records is suppressed. The release is k-anonymous.<br>" )
         + regionsHelp( true, false ) + recordsHelp( Qis::Required )
         + QObject::tr( "<b>Sites</b>: the site points (from Place sites); their site_id field identifies them, or their order without one.<br>" ) + contiguityHelp()
         + refinementHelp() + aggregationOutputsHelp()
         + QObject::tr( "<b>Seed</b> (SEED, advanced): kept for models and scripts made with earlier versions, where it drew the release's row order. It no longer does "
                        "anything, because the order is always drawn fresh from the operating system's random source; a given SEED is accepted, with a warning "
                        "in the log. <b>SEED</b>: NULL, for the same reason (kept so that models and scripts that read it still run).<br>" )
         + QObject::tr( "<b>RUNTIME</b>: seconds." );
}

void VbasVoronoiAggregate::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, false );
  addRecordsParameters( Qis::Required );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "SITES" ), QObject::tr( "Sites" ), vbasqgis::sourceTypes( { vbasqgis::VectorPoint } ) ) );
  addKParameter();
  addContiguityParameter();
  addRefinementParameter();
  addReleaseParameters();
  addSeedParameter( QObject::tr( "Seed (no longer used: kept for models and scripts made with earlier versions)" ) );
  addAggregationOutputs();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasVoronoiAggregate::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mTimer.start();
  mInputs.prepare( *this, parameters, context );
  mRelease = VbasReleaseSettings::read( *this, parameters, context );
  const QVariant seed = parameters.value( QStringLiteral( "SEED" ) );
  if ( feedback && seed.isValid() && !seed.isNull() && !seed.toString().isEmpty() )
    feedback->pushWarning( QObject::tr( "SEED is no longer used by Voronoi aggregation and was ignored: the release's row order is drawn fresh from the operating "
                                        "system's random source at every run, so it cannot be repeated." ) );
  mBorderSteps.contiguous = parameterAsBoolean( parameters, QStringLiteral( "CONTIGUOUS" ), context );
  mBorderSteps.refineBoundaries = parameterAsBoolean( parameters, QStringLiteral( "REFINE_BOUNDARIES" ), context );
  mOutputs.prepare( *this, parameters, context, VbasAggregationOutputs::schemas( mInputs ), mInputs.locations(), feedback );
  return true;
}

QVariantMap VbasVoronoiAggregate::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  VbasInterrupt::throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  const bool borders = mBorderSteps.contiguous || mBorderSteps.refineBoundaries;
  QgsProcessingMultiStepFeedback steps( borders ? 5 : 4, feedback );
  const VbasRegions regions = mInputs.readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  const VbasRecords records = mInputs.readRecords( regions, &steps );
  const VbasSites sites = mInputs.readSites( regions, context );
  vbas::Release release = vbas::voronoiRelease( sites.points, regions.points, records.histograms, mRelease.k );
  if ( borders )
  {
    steps.setCurrentStep( 2 );
    release = vbasBorderRelease( regions, records, std::move( release ), sites.points, mRelease.k, mBorderSteps, &steps ).release;
  }
  vbasLogRelease( release, sites.points.size(), mRelease.k, feedback );
  steps.setCurrentStep( borders ? 3 : 2 );
  const QVector<QgsGeometry> dissolved = mOutputs.wanted( { QStringLiteral( "AGGREGATED" ) } ) ? vbasDissolve( regions, release.aggregation, &steps ) : QVector<QgsGeometry>();
  QVariantMap outputs = VbasAggregationOutputs::write( mOutputs, context, mInputs, regions, records, sites.points, sites.ids, release, dissolved, mRelease, steps, borders ? 3 : 2 );
  outputs.insert( QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 );
  outputs.insert( QStringLiteral( "SEED" ), QVariant() ); // declared for earlier models and scripts; nothing to report
  mOutputs.commit( context, outputs );
  return outputs;
}
