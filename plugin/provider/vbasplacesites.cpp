#include "plugin/provider/vbasplacesites.h"
#include "plugin/support/vbasqgiscompat.h"
#include "plugin/provider/vbasdestination.h"

#include "plugin/pipeline/vbassteps.h"
#include "plugin/outputs/vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include <limits>

QString VbasPlaceSites::shortHelpString() const
{
  return QObject::tr( "Places the sites of the Voronoi aggregation: by balanced density, so that each cell holds about the same population (paper sec. 3.2.1), or by "
                      "anonymity-driven clustering, which moves them to raise the smallest equivalence class of each cluster (paper sec. 3.2.2).<br>" )
         + regionsHelp( true, Population::Weights ) + recordsHelp( Qis::Optional )
         + QObject::tr( "<b>Number of sites</b>: from Estimate site count (its SITES output), a whole number between 1 and the number of regions.<br>" ) + placementHelp()
         + QObject::tr( "<b>k</b>: the smallest equivalence class ADC aims for (the k of the aggregation step); not used by balanced density.<br>" ) + constraintHelp()
         + QObject::tr( "<b>Seed</b> (SEED, advanced): draws ADC's random seeding. Empty: a fresh seed, reported in the log and the SEED output.<br>"
                        "<h3>Outputs</h3><b>Sites</b>: " )
         + custodianOnly()
         + QObject::tr( "one point per site, in the regions layer's CRS: site_id; regions and population (on the basis of "
                        "balanced density) of its Voronoi cluster, the regions whose region point is nearest to it, which is the aggregate Voronoi aggregation builds from these "
                        "sites; used (1 when that cluster holds a region, 0 otherwise); row (balanced density's row from the bottom, also for ADC's balanced-density seeding; NULL "
                        "for random seeding).<br>"
                        "<b>AGGREGATES</b>: the Voronoi clusters of the sites that hold regions, the aggregates Voronoi aggregation will build; fewer than the sites asked for "
                        "(or the regions, if fewer) only when some site has no nearest region, which the log warns about. "
                        "<b>RUNTIME</b>: seconds. <b>SEED</b>: the seed.<br>" )
         + adcOutputsHelp() + outputsHelp();
}

void VbasPlaceSites::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, Population::Weights );
  addRecordsParameters( Qis::Optional );
  addKParameter();
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "SITES" ), QObject::tr( "Number of sites" ), vbasqgis::NumberType::Integer, 10, false, 1, std::numeric_limits<int>::max() ),
                QObject::tr( "How many sites to place (the number Estimate site count gives)" ) );
  addPlacementParameters();
  addConstraintParameters();
  addSeedParameter( QObject::tr( "Seed of ADC's random seeding (empty: a fresh one)" ), QObject::tr( "A whole number that repeats a run exactly; empty: a fresh one each run" ) );
  addParameter( new VbasSinkParameter( QStringLiteral( "SITE_POINTS" ), QObject::tr( "Sites" ), vbasqgis::VectorPoint ), QObject::tr( "The placed sites" ) );
  addNumberOutput( QStringLiteral( "AGGREGATES" ), QObject::tr( "Aggregates: Voronoi clusters holding regions" ) );
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasPlaceSites::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mTimer.start();
  mInputs.prepare( *this, parameters, context );
  mSites = static_cast<std::size_t>( vbasWholeNumber( *this, parameters, QStringLiteral( "SITES" ), context ) );
  mPlacement = VbasPlacementSettings::read( *this, parameters, context, vbasSeed( *this, parameters, context ) );
  mConstraints = VbasConstraintSettings::read( *this, parameters, context );
  mOutputs.prepare( *this, parameters, context, { VbasSitesOutput::schema( QStringLiteral( "SITE_POINTS" ), mInputs.regionsCrs() ) }, mInputs.locations(), feedback );
  return true;
}

QVariantMap VbasPlaceSites::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  VbasInterrupt::throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  QgsProcessingMultiStepFeedback steps( 3, feedback );
  const VbasRegions regions = mInputs.readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  // Balanced density on a population field needs no records.
  const bool needsRecords = mPlacement.method == VbasPlacementSettings::Method::Adc || regions.population.empty();
  const VbasRecords records = needsRecords ? mInputs.readRecords( regions, &steps ) : VbasRecords( 0 );
  steps.setCurrentStep( 2 );
  const VbasPlacement placement = vbasPlaceSites( mPlacement, mConstraints, regions, records, mSites, &steps );
  VbasSitesOutput::write( mOutputs.create( QStringLiteral( "SITE_POINTS" ), context ), regions, placement.sites, placement.regionAggregate, vbasRegionPopulation( regions, records ),
                          placement.siteRow );
  QVariantMap outputs = vbasPlacementOutputs( placement );
  outputs.insert( QStringLiteral( "AGGREGATES" ), static_cast<qlonglong>( vbasNonEmptyAggregates( placement.regionAggregate, mSites, feedback ) ) );
  outputs.insert( QStringLiteral( "SEED" ), static_cast<double>( mPlacement.seed ) );
  outputs.insert( QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 );
  mOutputs.commit( context, outputs );
  return outputs;
}
