#include "plugin/provider/vbasestimatesitecount.h"

QString VbasEstimateSiteCount::shortHelpString() const
{
  return QObject::tr( "Approximates how many sites (aggregated regions) VBAS should build: the dynamic GAPS cutoff of El Emam et al., as VBAS uses it (paper sec. 3.1, eq. 1-6).<br>" )
         + regionsHelp( false, Population::Weights ) + recordsHelp( Qis::Required ) + siteCountHelp()
         + QObject::tr( "<h3>Outputs</h3><b>SITES</b>: the number of sites, R(records / cutoff). <b>CUTOFF</b>: records per site. <b>ENTROPY</b>: eq. 1 over the ECs of the QIs. "
                        "<b>MAXCOMBS</b>: eq. 4, the product of the number of distinct values of each QI. <b>RECORDS</b>: records read. "
                        "<b>POPULATION</b>: total population on the basis of balanced density. <b>RUNTIME</b>: seconds." );
}

void VbasEstimateSiteCount::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( false, Population::Weights );
  addRecordsParameters( Qis::Required );
  addSiteCountParameters();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time (s)" ) );
}

bool VbasEstimateSiteCount::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback * )
{
  mTimer.start();
  mInputs.prepare( *this, parameters, context );
  mSettings = VbasSiteCountSettings::read( *this, parameters, context );
  return true;
}

QVariantMap VbasEstimateSiteCount::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  QgsProcessingMultiStepFeedback steps( 2, feedback );
  const VbasRegionsAndRecords read = mInputs.readRegionsAndRecords( context, steps, feedback );
  const VbasRegions &regions = read.regions;
  const VbasRecords &records = read.records;
  QVariantMap outputs = vbasSiteCountOutputs( vbasEstimateSiteCount( mSettings, regions, records, feedback ), records );
  outputs.insert( QStringLiteral( "RUNTIME" ), mTimer.elapsed() / 1000.0 );
  mOutputs.commit( context, outputs );
  return outputs;
}
