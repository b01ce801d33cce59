#include "plugin/provider/vbasgeneralize.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/outputs/vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasGeneralize::shortHelpString() const
{
  return QObject::tr( "Generalizes the quasi-identifiers and builds the aggregation together: the generalization of Anonymize, as a component for the model builder. "
                      "It searches the lattice of the QIs' hierarchy levels; for each combination of levels the site count follows from the generalized classes, balanced "
                      "density places the sites and the regions join the Voronoi cell of their nearest site. The combination that loses the least information within the "
                      "suppression limit is released, its values generalized and, where a class stays below k, single values written as *. Chain Evaluate release after it "
                      "with the same hierarchy files, the sites and the region lookup (the sample model vbas_generalization.model3 does).<br>" )
         + regionsHelp( true, Population::Weights ) + recordsHelp( Qis::Required ) + siteCountHelp()
         + QObject::tr( "<b>Site position in its cell</b> (SITE_POSITION): the mean (paper eq. 12-13) or the median of the cell's region points.<br>" ) + generalizationHelp( false )
         + aggregationOutputsHelp() + QObject::tr( "<b>Sites</b> (SITE_POINTS): " ) + custodianOnly()
         + QObject::tr( "the sites placed for the chosen levels: site_id; regions and population (on the basis of balanced density) of its aggregate; used (1 when that "
                        "aggregate holds a region); row (as Place sites).<br>"
                        "<b>SITES</b>, <b>CUTOFF</b>, <b>ENTROPY</b>, <b>MAXCOMBS</b>, <b>POPULATION</b>: as Estimate site count, for the chosen levels. <b>RUNTIME</b>: seconds." );
}

void VbasGeneralize::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, Population::Weights );
  addRecordsParameters( Qis::Required );
  addKParameter();
  addReleaseParameters();
  addSiteCountParameters();
  addSitePositionParameter();
  addGeneralizationParameters( false );
  addOptionalSink( QStringLiteral( "SITE_POINTS" ), QObject::tr( "Sites" ), vbasqgis::VectorPoint, QObject::tr( "The sites, one point for each aggregate" ) );
  addAggregationOutputs();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasGeneralize::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mTimer.start();
  mInputs.prepare( *this, parameters, context );
  mSiteCount = VbasSiteCountSettings::read( *this, parameters, context );
  mRelease = VbasReleaseSettings::read( *this, parameters, context );
  mPlacement = VbasPlacementSettings::readBalancedDensityOnly( *this, parameters, context );
  QList<VbasLocation> inputs = mInputs.locations();
  mGeneralization = VbasGeneralizationSettings::read( *this, parameters, context, mInputs.qiNames(), inputs );
  mGeneralization.hierarchies.readFieldTypes( mInputs.records()->fields(), mInputs.recordFields().qis );
  mGeneralization.active = true; // every QI without a hierarchy: value -> *
  const QList<VbasOutputSchema> schemas
    = QList<VbasOutputSchema> { VbasSitesOutput::schema( QStringLiteral( "SITE_POINTS" ), mInputs.regionsCrs() ) } + VbasAggregationOutputs::schemas( mInputs, &mGeneralization );
  mOutputs.prepare( *this, parameters, context, schemas, inputs, feedback );
  mInputs.keepForRelease( mOutputs.scratchPrefix( QStringLiteral( "ANONYMIZED" ) ), mRelease.memoryBudget );
  return true;
}

QVariantMap VbasGeneralize::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  QgsProcessingMultiStepFeedback steps( 4, feedback );
  const VbasRegionsAndRecords read = mInputs.readRegionsAndRecords( context, steps, feedback );
  const VbasRegions &regions = read.regions;
  const VbasRecords &records = read.records;
  const VbasGeneralized g = vbasGeneralize( mGeneralization, mSiteCount, mPlacement, VbasConstraintSettings(), regions, records, mRelease, nullptr, mInputs.qiNames(), feedback );
  QVariantMap outputs = VbasAggregationOutputs::writeGeneralized( mOutputs, context, g, regions, records, mRelease.criterion(), feedback );
  steps.setCurrentStep( 2 );
  const QVector<QgsGeometry> dissolved = mOutputs.wanted( { QStringLiteral( "AGGREGATED" ) } ) ? vbasDissolve( regions, g.release.aggregation, &steps ) : QVector<QgsGeometry>();
  outputs.insert( VbasAggregationOutputs::write( mOutputs, context, mInputs, regions, records, g.placement.sites, VbasAggregationOutputs::siteIds( g.placement.sites.size() ), g.release, dissolved,
                                                 mRelease, steps, 2, &g ) );
  outputs.insert( QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 );
  mOutputs.commit( context, outputs );
  return outputs;
}
