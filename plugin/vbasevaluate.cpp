#include "vbasevaluate.h"

#include "metrics.h"
#include "release.h"
#include "vbassteps.h"
#include "vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasEvaluate::shortHelpString() const
{
  return QObject::tr( "Measures a release as the paper does (sec. 3.4): suppression, compactness (eq. 20), discernibility (eq. 21), non-uniform entropy of the "
                      "geographic identifier (eq. 22-23) and running time. It recomputes the equivalence classes and their suppression from the records and the "
                      "region lookup, independently of the algorithm that made the release.<br>" )
         + regionsHelp( true, false ) + recordsHelp( Qis::Required )
         + QObject::tr( "<b>Sites</b>: the site points (site_id field, or their order).<br>"
                        "<b>Region lookup</b>: a table with region_id, aggregate_id and site_id for every region, as Voronoi aggregation writes it.<br>"
                        "<b>k</b>: the k of the release; ECs below it count as suppressed.<br>"
                        "<b>Running time of the evaluated run</b>: seconds, reported as runtime_s (for example the RUNTIME output of Voronoi aggregation).<br>" )
         + QObject::tr( "<h3>Outputs</h3>" ) + evaluationOutputsHelp() + outputsHelp();
}

void VbasEvaluate::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, false );
  addRecordsParameters( Qis::Required );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "SITES" ), QObject::tr( "Sites" ), QList<int>() << QgsProcessing::TypeVectorPoint ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "LOOKUP" ), QObject::tr( "Region lookup" ), QList<int>() << QgsProcessing::TypeVector ) );
  addKParameter();
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "RUN_SECONDS" ), QObject::tr( "Running time of the evaluated run (s)" ), QgsProcessingParameterNumber::Double, 0, false, 0 ) );
  addEvaluationOutputs();
  addNumberOutput( QStringLiteral( "RUNTIME" ), QObject::tr( "Running time of the evaluated run (s)" ) );
}

bool VbasEvaluate::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mInputs.prepare( *this, parameters, context );
  mK = vbasWholeNumber( *this, parameters, QStringLiteral( "K" ), context );
  mRunSeconds = parameterAsDouble( parameters, QStringLiteral( "RUN_SECONDS" ), context );
  mOutputs.prepare( *this, parameters, context, { VbasEvaluationOutput::schema() }, mInputs.locations(), feedback );
  return true;
}

QVariantMap VbasEvaluate::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  VbasInterrupt::throwIfCanceled( feedback ); // a multi-step feedback does not see an earlier cancel
  QgsProcessingMultiStepFeedback steps( 2, feedback );
  const VbasRegions regions = mInputs.readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  const VbasRecords records = mInputs.readRecords( regions, &steps );
  const VbasSites sites = mInputs.readSites( regions, context );
  const VbasLookup lookup = mInputs.readLookup( regions, sites, feedback );
  const vbas::Release release = vbas::release( lookup.regionGroup, records.histograms, mK );
  const vbas::Evaluation evaluation = vbas::evaluate( regions.points, lookup.regionSites, records.histograms, release.aggregation, release.suppression );
  QVariantMap outputs = VbasEvaluationOutput::write( mOutputs.create( QStringLiteral( "EVALUATION" ), context ), evaluation, mK, mRunSeconds );
  mOutputs.commit( context, outputs );
  return outputs;
}
