#include "vbasplacesites.h"

#include "vbassteps.h"
#include "vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include <limits>

QString VbasPlaceSites::shortHelpString() const
{
  return QObject::tr( "Places the sites of the Voronoi aggregation so that each cell holds about the same population (balanced density, paper sec. 3.2.1).<br>" )
         + regionsHelp( true, true ) + recordsHelp( false )
         + QObject::tr( "<b>Number of sites</b>: from Estimate site count (its SITES output), a whole number between 1 and the number of regions.<br>" ) + placementHelp()
         + QObject::tr( "<h3>Outputs</h3><b>Sites</b>: one point per cell, in the regions layer's CRS: site_id, population (of its cell), regions (region points in its cell), row (from the bottom). "
                        "<b>RUNTIME</b>: seconds.<br>" )
         + outputsHelp();
}

void VbasPlaceSites::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, true );
  addRecordsParameters( false );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "SITES" ), QObject::tr( "Number of sites" ), QgsProcessingParameterNumber::Integer, 10, false, 1, std::numeric_limits<int>::max() ) );
  addPlacementParameters();
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "SITE_POINTS" ), QObject::tr( "Sites" ), QgsProcessing::TypeVectorPoint ) );
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasPlaceSites::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mTimer.start();
  mInputs.prepare( *this, parameters, context );
  mSites = static_cast<std::size_t>( vbasWholeNumber( *this, parameters, QStringLiteral( "SITES" ), context ) );
  mPosition = parameterAsEnum( parameters, QStringLiteral( "SITE_POSITION" ), context ) == 1 ? vbas::SitePosition::Median : vbas::SitePosition::Mean;
  mOutputs.prepare( *this, parameters, context, { VbasSitesOutput::schema( QStringLiteral( "SITE_POINTS" ), mInputs.regionsCrs() ) }, mInputs.locations(), feedback );
  return true;
}

QVariantMap VbasPlaceSites::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  VbasInterrupt::throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  QgsProcessingMultiStepFeedback steps( 2, feedback );
  const VbasRegions regions = mInputs.readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  // With a population field the records are not needed.
  const VbasRecords records = regions.population.empty() ? mInputs.readRecords( regions, &steps ) : VbasRecords( 0 );
  const vbas::Placement placement = vbasPlaceSites( mPosition, regions, vbasRegionPopulation( regions, records ), mSites );
  VbasSitesOutput::write( mOutputs.create( QStringLiteral( "SITE_POINTS" ), context ), regions, placement );
  QVariantMap outputs { { QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 } };
  mOutputs.commit( context, outputs );
  return outputs;
}
