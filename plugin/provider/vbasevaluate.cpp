#include "plugin/provider/vbasevaluate.h"
#include "plugin/support/vbasqgiscompat.h"

#include "algorithms/metrics/metrics.h"
#include "algorithms/aggregation/release.h"
#include "plugin/outputs/vbasreport.h"
#include "plugin/pipeline/vbasgeneralization.h"
#include "plugin/outputs/vbaswriters.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

QString VbasEvaluate::shortHelpString() const
{
  return QObject::tr( "Evaluates a release: the paper's measurements (suppression, compactness, discernibility, non-uniform entropy of the geographic identifier, "
                      "running time) and the metrics the field uses besides (DM, DM*, C_AVG, Prec, generic non-uniform entropy, prosecutor risks, CM, l-diversity, t-closeness). "
                      "It recomputes the equivalence classes and their suppression from the records and the region lookup, independently of the algorithm that made the "
                      "release, and writes a report with maps and a histogram.<br>" )
         + regionsHelp( true, Population::Residents ) + recordsHelp( Qis::Required ) + riskModelHelp() + evaluationParametersHelp() + populationTableHelp()
         + QObject::tr( "<b>Sites</b>: the site points (site_id field, or their order).<br>"
                        "<b>Region lookup</b>: a table with region_id, aggregate_id and site_id for every region, as Voronoi aggregation writes it.<br>"
                        "<b>k</b>: the k of the release; ECs below it count as suppressed.<br>"
                        "<b>Running time of the evaluated run</b>: seconds, reported as runtime_s (for example the RUNTIME output of Voronoi aggregation).<br>"
                        "A generalized release (its lookup has qi_levels, written by Anonymize with generalization) is evaluated at those levels, as written: give the hierarchy "
                        "files and intervals of the run (a QI without one is generalized as value -> *), and its local suppression setting. The lookup's hierarchies field records "
                        "the SHA-256 of each hierarchy file and each interval width the run used: a file whose bytes differ (edited since, even with as many levels), another "
                        "width or a hierarchy the run did not have is refused, naming the QI and the file, before anything is written. A lookup without that field (written "
                        "before it was recorded) is evaluated with a warning that the hierarchies could not be checked.<br>" )
         + hierarchyHelp() + localSuppressionHelp() + QObject::tr( "<h3>Outputs</h3>" ) + evaluationOutputsHelp() + generalizationOutputsHelp()
         + QObject::tr( "Of a release that is not generalized, only the loss outputs, every QI at its values; of a generalized one, NODES_EVALUATED is 1.<br>" )
         + QObject::tr( "<b>Metrics per aggregated region</b> (AGGREGATE_METRICS): " ) + custodianOnly()
         + QObject::tr( "it counts the suppressed records. The aggregated regions (dissolved) with aggregate_id, regions, records, released, suppressed, "
                        "smallest_ec (smallest released EC), l_diversity and t_closeness (over its released ECs; NULL without a sensitive field or released records), "
                        "journalist_max_risk (the largest journalist risk 1/F of its released ECs: a map of the risk against the population; NULL without residents or released records).<br>"
                        "<b>Risk before release per region</b> (REGION_RISK): " )
         + custodianOnly()
         + QObject::tr( "the initial regions with region_id, records, at_risk (records in (region, QI) classes below k) and "
                        "risk_share (at_risk / records; NULL without records).<br>" )
         + reportHelp() + outputsHelp();
}

void VbasEvaluate::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, Population::Residents );
  addRecordsParameters( Qis::Required );
  addKParameter();
  addRiskModelParameter();
  addEvaluationParameters();
  addPopulationTableParameters( Shown::Main );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "SITES" ), QObject::tr( "Sites" ), vbasqgis::sourceTypes( { vbasqgis::VectorPoint } ) ),
                QObject::tr( "The sites of the release to evaluate" ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "LOOKUP" ), QObject::tr( "Region lookup" ), vbasqgis::sourceTypes( { vbasqgis::Vector } ) ),
                QObject::tr( "The release's region lookup: which aggregate each region belongs to" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "RUN_SECONDS" ), QObject::tr( "Running time of the evaluated run (s)" ), vbasqgis::NumberType::Double, 0, false, 0 ),
                QObject::tr( "The running time of the evaluated run, shown in the report; 0: not known" ), Shown::Advanced );
  addHierarchyParameters();
  addLocalSuppressionParameter();
  addEvaluationOutputs();
  addGeneralizationOutputs();
  addOptionalSink( QStringLiteral( "AGGREGATE_METRICS" ), QObject::tr( "Metrics per aggregated region" ), vbasqgis::VectorAnyGeometry,
                   QObject::tr( "The measures of each aggregated region, as polygons" ) );
  addOptionalSink( QStringLiteral( "REGION_RISK" ), QObject::tr( "Risk before release per region" ), vbasqgis::VectorAnyGeometry,
                   QObject::tr( "Each region's re-identification risk before release, as polygons" ) );
  addReportOutput();
}

bool VbasEvaluate::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mInputs.prepare( *this, parameters, context );
  mRelease = VbasReleaseSettings::read( *this, parameters, context );
  mRunSeconds = parameterAsDouble( parameters, QStringLiteral( "RUN_SECONDS" ), context );
  mRiskThreshold = parameterAsDouble( parameters, QStringLiteral( "RISK_THRESHOLD" ), context );
  mRunParameters = vbasRunParameters( *this, parameters, context, {} );
  QList<VbasLocation> inputs = mInputs.locations();
  mHierarchies = VbasHierarchySettings::read( *this, parameters, context, mInputs.qiNames(), inputs );
  mHierarchies.readFieldTypes( mInputs.records()->fields(), mInputs.recordFields().qis );
  mLocalSuppression = parameterAsBoolean( parameters, QStringLiteral( "LOCAL_SUPPRESSION" ), context );
  mPopulationTable = VbasPopulationTable::prepare( *this, parameters, context, mInputs.records()->fields(), mInputs.recordFields().qis, inputs );
  if ( mPopulationTable && !parameterAsString( parameters, QStringLiteral( "POPULATION_FIELD" ), context ).isEmpty() )
    throw QgsProcessingException( QObject::tr( "POPULATION_TABLE and POPULATION_FIELD both give the residents: give one of them." ) );
  mRelease.refuseUnmetModel( mPopulationTable.get() );
  const QgsFields regionFields = mInputs.regionFields();
  const QgsField regionId = regionFields.at( regionFields.lookupField( mInputs.regionIdField() ) );
  mOutputs.prepare( *this, parameters, context,
                    { VbasEvaluationOutput::schema(), VbasAggregateMetricsOutput::schema( mInputs.regionsWkbType(), mInputs.regionsCrs() ),
                      VbasRegionRiskOutput::schema( regionId, mInputs.regionsWkbType(), mInputs.regionsCrs() ), vbasReportSchema() },
                    inputs, feedback );
  return true;
}

QVariantMap VbasEvaluate::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  QgsProcessingMultiStepFeedback steps( 3, feedback );
  const VbasRegionsAndRecords read = mInputs.readRegionsAndRecords( context, steps, feedback );
  const VbasRegions &regions = read.regions;
  const VbasRecords &records = read.records;
  const VbasSites sites = mInputs.readSites( regions, context );
  const VbasLookup lookup = mInputs.readLookup( regions, sites, feedback );
  std::optional<VbasPopulation> population = VbasPopulationTable::readFor( mPopulationTable.get(), regions, records, !lookup.qiLevels.isEmpty(), feedback );
  const std::optional<VbasGeneralized> generalized = generalizedAt( lookup, records, population ? &*population : nullptr, feedback );
  if ( generalized && population ) // the residents of the classes as written, for the criterion and the measures
    population->cells = generalized->writtenResidents;
  mRelease.useResidents( population );
  const vbas::Release release = generalized ? generalized->release : vbas::release( lookup.regionAggregate, records.histograms, mRelease.criterion() );
  const VbasRecords &measured = generalized ? generalized->writtenRecords : records;
  const VbasMeasured measures = vbasMeasure( regions, measured, lookup.regionSites, release, mRelease.k, mRiskThreshold, mRunSeconds, feedback, population ? &*population : nullptr );
  const vbas::MetricValues &values = measures.values;
  QVariantMap outputs = VbasEvaluationOutput::write( mOutputs.createIfWanted( QStringLiteral( "EVALUATION" ), context ), values );
  outputs.insert( generalized ? vbasGeneralizationOutputs( *generalized ) : vbasLossOutputs( vbasReleaseLoss( records, release ) ) );
  steps.setCurrentStep( 2 );
  const QVector<QgsGeometry> dissolved
    = mOutputs.wanted( { QStringLiteral( "AGGREGATE_METRICS" ), QStringLiteral( "REPORT" ) } ) ? vbasDissolve( regions, release.aggregation, &steps ) : QVector<QgsGeometry>();
  if ( VbasOutput *metrics = mOutputs.createIfWanted( QStringLiteral( "AGGREGATE_METRICS" ), context ) )
    VbasAggregateMetricsOutput::write( *metrics, dissolved, release, measured.sensitive, measures.population );
  if ( VbasOutput *risk = mOutputs.createIfWanted( QStringLiteral( "REGION_RISK" ), context ) )
    VbasRegionRiskOutput::write( *risk, regions, records.histograms, mRelease.k );
  if ( VbasOutput *report = mOutputs.createIfWanted( QStringLiteral( "REPORT" ), context ) )
    report->write( vbasReport( { QObject::tr( "VBAS evaluation of a release" ), regions, measured.histograms, release, dissolved, values, mRunParameters, vbasProcessCommand( *this, mRunParameters ),
                                 generalized ? vbasGeneralizationFacts( *generalized ) : QList<QPair<QString, QString>>(), measures.populationFacts, mRelease,
                                 measures.population ? &*measures.population : nullptr } ) );
  mOutputs.commit( context, outputs );
  vbasLogSummary( values, feedback );
  return outputs;
}

std::optional<VbasGeneralized> VbasEvaluate::generalizedAt( const VbasLookup &lookup, const VbasRecords &records, const VbasPopulation *population, QgsProcessingFeedback *feedback ) const
{
  if ( lookup.qiLevels.isEmpty() )
  {
    if ( mHierarchies.any() )
      throw QgsProcessingException(
        QObject::tr( "HIERARCHIES and INTERVALS evaluate a generalized release, but the region lookup has no qi_levels: give the LOOKUP of the generalized run, or leave them empty." ) );
    return std::nullopt;
  }
  if ( lookup.hierarchies )
    mHierarchies.checkRecorded( *lookup.hierarchies, mInputs.qiNames() );
  else
    feedback->pushWarning( QObject::tr( "The region lookup has qi_levels but no hierarchies field (it was written before VBAS recorded them): the hierarchy files and intervals "
                                        "given could not be checked against those of the release: if they are not the run's, the numbers are of a release that was never written." ) );
  if ( mLocalSuppression )
    vbasRefuseLocalSuppression( static_cast<std::size_t>( mInputs.qiNames().size() ) );
  return vbasGeneralizedAt( mHierarchies, mLocalSuppression, lookup.qiLevels, records, lookup.regionAggregate, mRelease, population, mInputs.qiNames(), feedback );
}
