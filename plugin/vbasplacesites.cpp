#include "vbasplacesites.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasPlaceSites::shortHelpString() const
{
  return QObject::tr( "Places the sites of the Voronoi aggregation so that each cell holds about the same population (balanced density, paper sec. 3.2.1).<br>" )
         + regionsHelp( true, true ) + recordsHelp( false )
         + QObject::tr( "<b>Number of sites</b>: from Estimate site count (its SITES output), between 1 and the number of regions.<br>" ) + placementHelp()
         + QObject::tr( "<h3>Outputs</h3><b>Sites</b>: one point per cell, in the regions layer's CRS: site_id, population (of its cell), regions (region points in its cell), row (from the bottom). "
                        "<b>RUNTIME</b>: seconds." );
}

void VbasPlaceSites::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, true );
  addRecordsParameters( false );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "SITES" ), QObject::tr( "Number of sites" ), QgsProcessingParameterNumber::Integer, 10, false, 1 ) );
  addPlacementParameters();
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "SITE_POINTS" ), QObject::tr( "Sites" ), QgsProcessing::TypeVectorPoint ) );
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasPlaceSites::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback * )
{
  prepareInputs( parameters, context, false );
  return true;
}

QVariantMap VbasPlaceSites::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  QgsProcessingMultiStepFeedback steps( 2, feedback );
  const VbasRegions regions = readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  // With a population field the records are not needed.
  const VbasRecords records = mPopulationField.isEmpty() ? readRecords( regions, &steps ) : VbasRecords( 0, 0 );
  const int sites = parameterAsInt( parameters, QStringLiteral( "SITES" ), context );
  const vbas::Placement placement = placeSites( parameters, context, regions, records, static_cast<std::size_t>( std::max( sites, 0 ) ) );
  QVariantMap outputs;
  outputs.insert( QStringLiteral( "SITE_POINTS" ), writeSites( parameters, QStringLiteral( "SITE_POINTS" ), context, regions, placement ) );
  outputs.insert( QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 );
  return outputs;
}
