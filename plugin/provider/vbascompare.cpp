#include "plugin/provider/vbascompare.h"
#include "plugin/support/vbasqgiscompat.h"

#include "algorithms/metrics/frontier.h"
#include "plugin/outputs/vbascandidatesoutput.h"
#include "plugin/provider/vbasdestination.h"
#include "plugin/outputs/vbasreport.h"

#include <qgsapplication.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>
#include <qgsprocessingregistry.h>

#include <limits>

namespace
{

//! LOSS: the measures a recommendation may minimise, in the order of its options (columns of CANDIDATES).
const char *const kLossFields[] = { "loss_generic_nue", "generic_nue", "nue", "dm" };

} // namespace

QString VbasCompare::shortHelpString() const
{
  return QObject::tr(
           "Builds candidate releases of the same records side by side, without writing any release: for each k of a list, the releases chosen (the paper's "
           "balanced density, ADC aiming at the fewest suppressed records, the suppression search, generalization of the QIs without and with local suppression), "
           "built exactly as Anonymize builds them under the risk model, and the usual alternatives (the regions unaggregated, a parent geography, region ids "
           "cropped, HIPAA Safe Harbor's 3-digit ZIP codes, no geography). The records are read once; the candidates are built side by side, one per core that QGIS lets "
           "its background work use (Options, Rendering, Max cores to use), fewer when the memory available would not hold them. Each candidate is measured as Evaluate measures a release; the "
           "table gives one row per candidate, with the command that makes it, whether no other candidate beats it on both records suppressed and information lost "
           "(the frontier), and the one recommended.<br>" )
         + regionsHelp( true, Population::Weights ) + recordsHelp( Qis::Required )
         + QObject::tr( "<b>k the release must meet</b> (K): the recommendation is the candidate of least information loss among those at this k or above (under the "
                        "average risk model, at a threshold of at most RISK_THRESHOLD too); ties: the fewer records suppressed, then the first.<br>" )
         + riskModelHelp()
         + QObject::tr( "Every candidate, baselines included, is made under the risk model at its own k (and threshold).<br>"
                        "<b>Candidate k values</b> (K_VALUES): the k of the candidates, whole numbers of at least 2 separated by commas (default 5, 10, 20).<br>"
                        "<b>Candidate average risk thresholds</b> (RISK_VALUES): under the average risk model only, the thresholds of the candidates, numbers above 0 "
                        "and at most 1 separated by commas (0.05, 0.1): every k of K_VALUES (the floor) with every threshold; empty: RISK_THRESHOLD alone.<br>"
                        "<b>Methods</b> (METHODS): for each k, the releases of Anonymize with METHOD balanced density (the paper), with ADC and OBJECTIVE fewest suppressed, "
                        "with balanced density and SEARCH, with GENERALIZE (balanced density, the QIs generalized with HIERARCHIES and INTERVALS, every other QI value -> *) "
                        "without LOCAL_SUPPRESSION, and with it; the aggregations at the site count of MODEL (one count for all, balanced density placed once), each "
                        "generalization at its chosen levels' count. A generalization that no levels make within SUPPRESSION_LIMIT is left out, with a warning.<br>"
                        "<b>Baselines</b> (BASELINES): for each k, a release of the records over the initial regions as they are; grouped by PARENT_FIELD (a county, a health "
                        "region); grouped by the first CROP_LENGTH characters of the region id (the paper's cropping: a 5-digit ZIP code cropped to 3); by HIPAA Safe Harbor's "
                        "rule (the id cropped to 3 characters, every 3-digit code of 20,000 residents or fewer merged into one, the rule's 000; needs POPULATION_FIELD); or with no "
                        "geography at all. Each suppresses the classes below k, as any release; its compactness is measured to the mean point of each group's regions.<br>"
                        "<b>Parent geography field</b> (PARENT_FIELD): the field of REGIONS that names each region's parent; NULL is a parent of its own.<br>"
                        "<b>Cropped id length</b> (CROP_LENGTH): the characters of the region id kept (default 3).<br>"
                        "<b>Information loss to compare by</b> (LOSS): generic non-uniform entropy of the QIs and the geography (LOSS_GENERIC_NUE, the default: generalization, "
                        "values written as *, the geography's levels and suppression on one scale, so that every method compares fairly), the generic non-uniform entropy of "
                        "the geography alone (GENERIC_NUE: blind to the QIs' generalization), the non-uniform entropy of the released records (NUE, eq. 22-23), or the "
                        "discernibility metric (DM).<br>" )
         + evaluationParametersHelp() + populationTableHelp() + siteCountHelp() + hierarchyHelp()
         + QObject::tr( "<b>Suppression limit</b> (SUPPRESSION_LIMIT, advanced) and <b>Information loss generalization minimises</b> (LOSS_METRIC, advanced): as in Anonymize, "
                        "for each generalization candidate.<br>"
                        "<b>ADC: most trial moves</b> (MAX_ITERATIONS, advanced): as in Anonymize, for each ADC candidate: lower it to bound ADC's time on large "
                        "inputs (ADC takes as long as in Anonymize: 15 to 30 s per k on 3 million records, longer on more).<br>"
                        "<b>Search time limit</b> (TIME_LIMIT, advanced) and <b>Search: most trial moves</b> (SEARCH_MOVES, advanced): as in Anonymize, for each search "
                        "candidate.<br>"
                        "<b>Seed</b> (SEED, advanced): the search's choices, as in Anonymize; empty: a fresh one, given in the SEED output and in each command.<br>"
                        "<h3>Outputs</h3><b>Candidates</b> (CANDIDATES): " )
         + custodianOnly()
         + QObject::tr(
           "one row per candidate: candidate (in words; k, and the average risk model's threshold, first), kind (balanced_density, adc, search, generalization, generalization_local, regions, parent, cropped, "
           "safe_harbor, no_geography), levels (a generalization's level of each QI, as Anonymize's LEVELS; NULL otherwise), units_asked (sites placed, or the "
           "baseline's groups), units_in_pieces and units_releasing_nothing (as Anonymize's outputs; units_in_pieces NULL for a baseline), on_front (1: no other "
           "candidate suppresses at most as many records and loses at most as much, one of them less), recommended (1 for the recommendation), command (the "
           "qgis_process command of Anonymize that makes it; NULL for a baseline), then every measure of Evaluate's EVALUATION row (runtime_s: the seconds that "
           "candidate took; risk_threshold: under the average risk model, the candidate's threshold), then Anonymize's loss outputs in lower case (loss_generic_nue, loss_gc, loss_are and the rest, records_generalized).<br>"
           "<b>Report</b> (REPORT): " )
         + custodianOnly()
         + QObject::tr( "a self-contained HTML page (no network needed) shown in the results viewer: the recommendation, the frontier chart (records kept against information "
                        "lost, a point per candidate, the baselines as grey squares, the frontier as a line, the recommendation ringed), the candidates' table, the command of "
                        "Anonymize that makes each candidate of METHODS, the parameters and the command that repeats the comparison.<br>"
                        "<b>CANDIDATES_MADE</b>: the candidates built. <b>RECOMMENDED</b>: the recommended candidate in words; empty when none meets K (and RISK_THRESHOLD). "
                        "<b>SITES</b>, <b>CUTOFF</b>, <b>ENTROPY</b>, <b>MAXCOMBS</b>, <b>RECORDS</b>, <b>POPULATION</b>: as Estimate site count. <b>SEED</b>: the seed.<br>" )
         + outputsHelp();
}

void VbasCompare::initAlgorithm( const QVariantMap & )
{
  addRegionsParameters( true, Population::Weights );
  addRecordsParameters( Qis::Required );
  addKParameter( QObject::tr( "The k the release must meet: the recommendation is among the candidates at this k or above" ) );
  addRiskModelParameter();
  addParameter( new QgsProcessingParameterString( QStringLiteral( "K_VALUES" ), QObject::tr( "Candidate k values" ), QStringLiteral( "5, 10, 20" ) ),
                QObject::tr( "The k of the candidates, separated by commas" ) );
  addParameter( new QgsProcessingParameterString( QStringLiteral( "RISK_VALUES" ), QObject::tr( "Candidate average risk thresholds" ), QVariant(), false, true ),
                QObject::tr( "Under the average risk model: the thresholds of the candidates, separated by commas (empty: RISK_THRESHOLD)" ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "METHODS" ), QObject::tr( "Methods" ),
                                                QStringList() << QObject::tr( "Balanced density (paper)" ) << QObject::tr( "ADC, fewest suppressed records" )
                                                              << QObject::tr( "Balanced density and the suppression search" ) << QObject::tr( "Generalization of the QIs" )
                                                              << QObject::tr( "Generalization of the QIs, with local suppression" ),
                                                true, QVariantList { 0, 1 }, true ),
                QObject::tr( "The releases built for each k, as Anonymize builds them" ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "BASELINES" ), QObject::tr( "Baselines" ),
                                                QStringList() << QObject::tr( "Initial regions, unaggregated" ) << QObject::tr( "Parent geography (PARENT_FIELD)" )
                                                              << QObject::tr( "Region ids cropped (CROP_LENGTH)" ) << QObject::tr( "HIPAA Safe Harbor 3-digit ZIP codes" )
                                                              << QObject::tr( "No geography" ),
                                                true, QVariantList { 0, 4 }, true ),
                QObject::tr( "The usual alternatives built for each k beside the aggregations" ) );
  addParameter(
    new QgsProcessingParameterField( QStringLiteral( "PARENT_FIELD" ), QObject::tr( "Parent geography field" ), QVariant(), QStringLiteral( "REGIONS" ), vbasqgis::FieldDataType::Any, false, true ),
    QObject::tr( "The field of the regions that names each region's parent (county, health region), for the parent geography baseline" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "CROP_LENGTH" ), QObject::tr( "Cropped id length" ), vbasqgis::NumberType::Integer, 3, false, 1, 1000 ),
                QObject::tr( "The characters of the region id the cropped baseline keeps" ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "LOSS" ), QObject::tr( "Information loss to compare by" ),
                                                QStringList() << QObject::tr( "Generic non-uniform entropy of the QIs and the geography (LOSS_GENERIC_NUE)" )
                                                              << QObject::tr( "Generic non-uniform entropy of the geography (GENERIC_NUE)" ) << QObject::tr( "Non-uniform entropy (NUE)" )
                                                              << QObject::tr( "Discernibility metric (DM)" ),
                                                false, 0 ),
                QObject::tr( "The measure of information lost that the frontier and the recommendation use" ) );
  addEvaluationParameters();
  addPopulationTableParameters( Shown::Advanced );
  addSiteCountParameters();
  addHierarchyParameters();
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "SUPPRESSION_LIMIT" ), QObject::tr( "Suppression limit (% of the records)" ), vbasqgis::NumberType::Double, 5, false, 0, 100 ),
                QObject::tr( "The most records, in %, that generalization may leave in groups smaller than k" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterEnum(
                  QStringLiteral( "LOSS_METRIC" ), QObject::tr( "Information loss generalization minimises" ),
                  QStringList() << QObject::tr( "Generic non-uniform entropy" ) << QObject::tr( "Precision (Prec)" ) << QObject::tr( "Loss metric (LM / NCP)" ) << QObject::tr( "DM*" ), false, 0 ),
                QObject::tr( "The information loss that each generalization candidate keeps smallest" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "TIME_LIMIT" ), QObject::tr( "Search time limit (s)" ), vbasqgis::NumberType::Double, 30, false, 0 ),
                QObject::tr( "Seconds each search candidate runs" ), Shown::Advanced );
  addParameter(
    new QgsProcessingParameterNumber( QStringLiteral( "SEARCH_MOVES" ), QObject::tr( "Search: most trial moves" ), vbasqgis::NumberType::Integer, 0, false, 0, std::numeric_limits<int>::max() ),
    QObject::tr( "Trial moves after which each search candidate stops (0: only the time limit)" ), Shown::Advanced );
  addAdcMovesParameter();
  addSeedParameter( QObject::tr( "Seed of the search (empty: a fresh one)" ), QObject::tr( "A whole number that repeats a comparison exactly; empty: a fresh one each run" ) );
  addParameter( new VbasSinkParameter( QStringLiteral( "CANDIDATES" ), QObject::tr( "Candidates" ), vbasqgis::Vector ),
                QObject::tr( "One row per candidate release: what it is, the command that makes it, and its measures" ) );
  addParameter( new VbasFileDestinationParameter( QStringLiteral( "REPORT" ), QObject::tr( "Report" ), QObject::tr( "HTML files (*.html *.HTML)" ), QVariant(), true, true ),
                QObject::tr( "An HTML page: the frontier chart, the candidates and the command that makes each" ) );
  addNumberOutput( QStringLiteral( "CANDIDATES_MADE" ), QObject::tr( "Candidates built" ) );
  addOutput( new QgsProcessingOutputString( QStringLiteral( "RECOMMENDED" ), QObject::tr( "Recommended candidate" ) ) );
}

bool VbasCompare::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  mInputs.prepare( *this, parameters, context );
  QList<VbasLocation> inputs = mInputs.locations();
  mSettings = VbasCandidateSettings::read( *this, parameters, context, vbasSeed( *this, parameters, context ), mInputs.qiNames(), inputs );
  mPopulationTable = VbasPopulationTable::prepare( *this, parameters, context, mInputs.records()->fields(), mInputs.recordFields().qis, inputs );
  mSettings.generalization.hierarchies.readFieldTypes( mInputs.records()->fields(), mInputs.recordFields().qis );
  mSettings.release.refuseUnmetModel( mPopulationTable.get() );
  mStatedK = vbasWholeNumber( *this, parameters, QStringLiteral( "K" ), context );
  mLossField = QString::fromLatin1( kLossFields[parameterAsEnum( parameters, QStringLiteral( "LOSS" ), context )] );
  mParameters = parameters;
  mRunParameters = vbasRunParameters( *this, parameters, context, { { QStringLiteral( "SEED" ), QString::number( mSettings.seed ) } } );
  mOutputs.prepare( *this, parameters, context, { VbasCandidatesOutput::schema(), vbasReportSchema() }, inputs, feedback );
  return true;
}

QVariantMap VbasCompare::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  QgsProcessingMultiStepFeedback steps( 2, feedback );
  const VbasRegionsAndRecords read = mInputs.readRegionsAndRecords( context, steps, feedback );
  const std::optional<VbasPopulation> population = VbasPopulationTable::readFor( mPopulationTable.get(), read.regions, read.records, mSettings.generalizes(), feedback );
  VbasCandidateSettings settings = mSettings;
  settings.release.useResidents( population );
  const VbasComparedInputs in { read.regions, read.records,
                                mSettings.baselines.contains( VbasCandidateSettings::Baseline::Parent ) ? mInputs.regionValues( read.regions, mSettings.parentField ) : std::vector<std::string>(),
                                population ? &*population : nullptr };
  steps.setCurrentStep( 1 );
  QVariantMap outputs;
  std::size_t sites = 0;
  if ( !mSettings.methods.isEmpty() ) // one site count for every aggregation: it does not depend on k
  {
    const VbasSiteCount siteCount = vbasEstimateSiteCount( mSettings.siteCount, read.regions, read.records, feedback );
    outputs = vbasSiteCountOutputs( siteCount, read.records );
    sites = siteCount.sites;
  }
  const QList<VbasCandidate> candidates = vbasCandidates( settings, sites, in, &steps );
  std::vector<vbas::CandidateScore> scores;
  for ( const VbasCandidate &c : candidates )
    scores.push_back( { static_cast<std::int64_t>( c.measure( QStringLiteral( "suppressed" ) ) ), c.measure( mLossField ), meets( c ) } );
  const std::optional<std::size_t> recommended = vbas::recommend( scores );
  const std::vector<char> front = vbas::paretoFront( scores );
  const QStringList made = commands( candidates, context );
  const QString verdict = vbasRecommendation( candidates, recommended, mLossField, mStatedK, mSettings.thresholds.isEmpty() ? std::nullopt : std::optional<double>( mSettings.riskThreshold ) );
  VbasCandidatesOutput::write( mOutputs.create( QStringLiteral( "CANDIDATES" ), context ), candidates, front, recommended, made );
  if ( VbasOutput *report = mOutputs.createIfWanted( QStringLiteral( "REPORT" ), context ) )
    report->write( vbasComparisonReport( { candidates, front, recommended, made, mLossField, verdict, mRunParameters, vbasProcessCommand( *this, mRunParameters ) } ) );
  outputs.insert( QStringLiteral( "CANDIDATES_MADE" ), static_cast<qlonglong>( candidates.size() ) );
  outputs.insert( QStringLiteral( "RECOMMENDED" ), recommended ? candidates.at( static_cast<int>( *recommended ) ).name : QString() );
  outputs.insert( QStringLiteral( "SEED" ), static_cast<double>( mSettings.seed ) );
  feedback->pushInfo( verdict );
  mOutputs.commit( context, outputs );
  return outputs;
}

bool VbasCompare::meets( const VbasCandidate &candidate ) const
{
  return candidate.k >= mStatedK && ( !candidate.threshold || *candidate.threshold <= mSettings.riskThreshold );
}

QStringList VbasCompare::commands( const QList<VbasCandidate> &candidates, QgsProcessingContext &context ) const
{
  const QgsProcessingAlgorithm *anonymize = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:anonymize" ) );
  QVariantMap shared; // the inputs and settings vbas:anonymize shares with this algorithm
  for ( const QgsProcessingParameterDefinition *definition : parameterDefinitions() )
    if ( !definition->isDestination() && anonymize && anonymize->parameterDefinition( definition->name() ) && mParameters.contains( definition->name() ) )
      shared.insert( definition->name(), mParameters.value( definition->name() ) );
  shared.insert( QStringLiteral( "SEED" ), static_cast<double>( mSettings.seed ) );
  shared.insert( QStringLiteral( "ANONYMIZED" ), QStringLiteral( "anonymized.gpkg" ) );
  QVariantMap aggregated = shared; // HIERARCHIES or INTERVALS given to Anonymize would generalize
  for ( const char *generalizing : { "HIERARCHIES", "INTERVALS", "SUPPRESSION_LIMIT", "LOSS_METRIC" } )
    aggregated.remove( QString::fromLatin1( generalizing ) );
  QStringList result;
  for ( const VbasCandidate &c : candidates )
  {
    QVariantMap p = c.anonymize.contains( QStringLiteral( "GENERALIZE" ) ) ? shared : aggregated;
    for ( auto it = c.anonymize.constBegin(); it != c.anonymize.constEnd(); ++it )
      p.insert( it.key(), it.value() );
    result << ( c.anonymize.isEmpty() || !anonymize ? QString() : vbasProcessCommand( *anonymize, vbasRunParameters( *anonymize, p, context, {} ) ) );
  }
  return result;
}
