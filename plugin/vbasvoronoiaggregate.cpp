#include "vbasvoronoiaggregate.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasVoronoiAggregate::shortHelpString() const
{
  return QObject::tr( "Builds the aggregation (paper sec. 3.3): every region joins the Voronoi cell of its nearest site (ties go to the lower site id), "
                      "the regions of a cell are dissolved into one aggregated region, the region id of each record is replaced by the aggregate id, "
                      "and every equivalence class (aggregate + QI values) with fewer than k records is suppressed. The release is k-anonymous.<br>" )
         + regionsHelp( true, false ) + recordsHelp( true )
         + QObject::tr( "<b>Sites</b>: the site points (from Place sites); their site_id field identifies them, or their order without one.<br>" )
         + aggregationOutputsHelp() + QObject::tr( "<b>RUNTIME</b>: seconds." );
}

void VbasVoronoiAggregate::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, false );
  addRecordsParameters( true );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "SITES" ), QObject::tr( "Sites" ), QList<int>() << QgsProcessing::TypeVectorPoint ) );
  addKParameter();
  addAggregationOutputs();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasVoronoiAggregate::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback * )
{
  prepareInputs( parameters, context, true );
  mSitesSource = resolveSource( parameters, QStringLiteral( "SITES" ), context );
  return true;
}

QVariantMap VbasVoronoiAggregate::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  QgsProcessingMultiStepFeedback steps( 3, feedback );
  const VbasRegions regions = readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  VbasRecords records = readRecords( regions, &steps );
  steps.setCurrentStep( 2 );
  const VbasSites sites = readSites( mSitesSource.get(), regions, context );
  QVariantMap outputs;
  aggregateAndRelease( parameters, context, regions, records, sites.points, sites.ids, outputs, &steps );
  outputs.insert( QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 );
  return outputs;
}
