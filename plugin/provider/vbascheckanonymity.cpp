#include "plugin/provider/vbascheckanonymity.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbasstoredvalues.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/inputs/vbasrecordreader.h"
#include "plugin/pipeline/vbassteps.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace
{

const QStringList kMeasureFields { QStringLiteral( "records" ), QStringLiteral( "l_diversity" ), QStringLiteral( "t_closeness" ), QStringLiteral( "violates" ), QStringLiteral( "residents" ) };

//! "k", "k,l", "l,t", ...: the checks an EC fails.
QString violated( const vbas::EcMeasures &ec )
{
  QStringList checks;
  if ( ec.violatesK )
    checks << QStringLiteral( "k" );
  if ( ec.violatesL )
    checks << QStringLiteral( "l" );
  if ( ec.violatesT )
    checks << QStringLiteral( "t" );
  return checks.join( ',' );
}

template<typename T>
QVariant orNull( const std::optional<T> &value )
{
  return value ? QVariant( *value ) : QVariant();
}

QVariantMap numberOutputs( const vbas::AnonymityReport &report, const std::optional<std::int64_t> &smallestResidents, const std::optional<double> &average, bool averageMet )
{
  return { { QStringLiteral( "PASS" ), report.violatingEcs == 0 && averageMet },
           { QStringLiteral( "AVERAGE_RISK" ), orNull( average ) },
           { QStringLiteral( "RECORDS" ), static_cast<qlonglong>( report.records ) },
           { QStringLiteral( "ECS" ), static_cast<qlonglong>( report.ecs ) },
           { QStringLiteral( "SMALLEST_EC" ), orNull<qlonglong>( report.smallestEc ) },
           { QStringLiteral( "VIOLATING_ECS" ), static_cast<qlonglong>( report.violatingEcs ) },
           { QStringLiteral( "VIOLATING_RECORDS" ), static_cast<qlonglong>( report.violatingRecords ) },
           { QStringLiteral( "SMALLEST_L" ), orNull<qlonglong>( report.smallestL ) },
           { QStringLiteral( "LARGEST_T" ), orNull( report.largestT ) },
           { QStringLiteral( "SMALLEST_RESIDENTS" ), orNull<qlonglong>( smallestResidents ) } };
}

} // namespace

QString VbasCheckAnonymity::shortHelpString() const
{
  return QObject::tr(
           "Checks a released table, whatever made it: VBAS, another tool, or a table edited by hand. It recounts the equivalence classes (ECs) from the table itself "
           "with its own code, and reports every EC below k records (k-anonymity), and optionally below l distinct sensitive values (distinct l-diversity) or farther "
           "than t from the whole table's sensitive values (t-closeness).<br>"
           "<b>Released table</b> (INPUT): any vector layer or table; its geometry, if any, is never read.<br>"
           "<b>Quasi-identifier fields</b> (QI_FIELDS): the released QIs, the geographic one included (for a VBAS release: the QIs and aggregate_id). Rows with equal values on all "
           "of them form an EC. Values are compared as the file stores them, as an independent recount of the file would: a GeoPackage or SQLite value by its storage class and bytes "
           "(7 and '7', a BLOB and the same text, two spellings of one date are different values), a CSV value (a CSV file or a delimited text layer) by its text (1 and 01 differ, whatever a .csvt "
           "or QGIS's type guessing says), a GeoJSON or GeoJSONSeq property by its JSON type and value (1 and \"1\" differ), a value of a PostgreSQL table with a whole-number key by its text "
           "(citext's F and f, timestamps a microsecond apart differ). Other tables are compared exactly as QGIS reads them, with their type (text, numbers, booleans, dates and "
           "times, binary, lists, maps), and the log warns when a delimited text layer or a PostgreSQL layer is among them. NULL is a category of its own.<br>"
           "<b>Count field</b> (COUNT_FIELD): optional number of records a row stands for, a whole number from 0 to %1; NULL, negative, fractional or larger counts are refused "
           "with the row and the value. A row of 0 records counts nothing. Empty: each row is one record.<br>"
           "<b>k</b> (K): every EC must hold at least k records (under k-map, k residents). Default 5, at least 2.<br>"
           "<b>Risk model</b> (RISK_MODEL): k-anonymity (the default) checks k records in every EC. k-map checks k residents instead: the residents of an EC are those of the "
           "population table (POPULATION_TABLE, a row per region and QI values, with POPULATION_REGION and POPULATION_COUNT, and a field named as each QI but the unit) in the "
           "regions the lookup (LOOKUP: LOOKUP_REGION, default region_id, and LOOKUP_UNIT, default aggregate_id) puts in the EC's unit (UNIT_FIELD, default aggregate_id, one of "
           "QI_FIELDS), matched by the text of the values, with code that shares nothing with the release's. Refused, naming the row: a region given twice in the lookup, "
           "a count that is not a whole number from 0, a table region the lookup lacks, a cell given twice; a table without a field for some QI. "
           "A generalized release (its lookup has qi_levels) counts a row for a class when each of its values is under the class's: * (or NULL in a field that is not text) covers "
           "every value, an interval label such as [20, 30) the numbers and bands inside it, a label of a hierarchy file the values its rows put under it.<br>"
           "<b>Hierarchy files</b> (HIERARCHIES): for k-map of a generalized release, the hierarchy files it was made with, each named after its QI field; refused when "
           "their bytes are not those the lookup records, or when the release is not generalized. <i>Average risk</i>: every "
           "EC must hold k records, and the records' average risk must be at most the Re-identification risk threshold (RISK_THRESHOLD): the journalist's, the "
           "sum of f/F over the ECs divided by the records, with a population table and lookup as for k-map; the prosecutor's, the ECs over the records, without.<br>"
           "<b>Sensitive field</b> (SENSITIVE_FIELD): optional, the attribute to protect (a diagnosis). NULL is a value of its own. Needed for L and T.<br>"
           "<b>l</b> (L): every EC must hold at least l distinct sensitive values. Default 1: not checked.<br>"
           "<b>t</b> (T): the earth mover's distance between an EC's sensitive values and the whole table's, with the same distance between any two values "
           "(0.5 times the sum over the values of the difference of their shares, records weighted by the count), must be at most t. Above 0, at most 1; default 1: not checked.<br>"
           "<b>Compare a CSV's values as typed</b> (TYPED_CSV): a CSV file or delimited text layer is compared by its text unless this is on; then its values are compared as QGIS types them "
           "(a .csvt file, or the delimited text layer's types), so 1 and 01 of an Integer column are one value. Default off. No effect on other formats.<br>"
           "<h3>Outputs</h3>"
           "<b>PASS</b>: true when no EC violates a check. A table without records passes, with a warning.<br>"
           "<b>RECORDS</b>, <b>ECS</b>, <b>SMALLEST_EC</b>: the records, the ECs and the records of the smallest EC. <b>VIOLATING_ECS</b>, <b>VIOLATING_RECORDS</b>: the ECs that "
           "fail a check, and their records. <b>SMALLEST_L</b>, <b>LARGEST_T</b>: the fewest distinct sensitive values and the largest distance of any EC (NULL without a sensitive field).<br>"
           "<b>SMALLEST_RESIDENTS</b>: under k-map, the residents of the EC with fewest (NULL otherwise).<br>"
           "<b>AVERAGE_RISK</b>: under the average risk model, the records' average risk (NULL otherwise).<br>"
           "<b>VALUES_READ</b>: how the values were compared: sqlite (storage class and bytes), csv-text, csv-typed, json (JSON type and value), postgresql-text or qgis (as QGIS reads them); the log says it too.<br>"
           "<b>Violations</b> (VIOLATIONS): " )
           .arg( kVbasMaxCount )
         + custodianOnly()
         + QObject::tr(
           "the classes of the checked table that are too small. A table without geometry, one row per violating EC in the order of its first row: its QI values (same field names and types as the "
           "input; when the stored values are compared, text that names each value as stored: an SQL literal such as 7, '7' or X'46', the CSV text, the JSON text, or PostgreSQL's text), records, l_diversity, t_closeness (NULL without a sensitive field), violates (the failed checks: k, l, t, for example \"k,l\"; under k-map, k is k residents) and residents (under k-map; NULL otherwise). It holds counts only, never "
           "a sensitive value, and the log gives counts only.<br>" )
         + outputsHelp();
}

void VbasCheckAnonymity::initAlgorithm( const QVariantMap & )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "INPUT" ), QObject::tr( "Released table" ), vbasqgis::sourceTypes( { vbasqgis::Vector } ) ),
                QObject::tr( "The released table to check, as it will be published" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "COUNT_FIELD" ), QObject::tr( "Count field (records per row; empty: one)" ), QVariant(), QStringLiteral( "INPUT" ),
                                                 vbasqgis::FieldDataType::Numeric, false, true ),
                QObject::tr( "How many records each row stands for; empty: a row is one record" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "QI_FIELDS" ), QObject::tr( "Quasi-identifier fields (with the geographic one)" ), QVariant(), QStringLiteral( "INPUT" ),
                                                 vbasqgis::FieldDataType::Any, true ),
                QObject::tr( "The fields an attacker may know, the geographic one included; the table is grouped by them" ) );
  addKParameter( QObject::tr( "Every group of alike records must hold at least this many records (residents under k-map)" ) );
  addRiskModelParameter();
  addRiskThresholdParameter();
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "LOOKUP" ), QObject::tr( "Region lookup (for k-map)" ), vbasqgis::sourceTypes( { vbasqgis::Vector } ), QVariant(), true ),
                QObject::tr( "The release's region lookup: which released unit each region belongs to" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "LOOKUP_REGION" ), QObject::tr( "Region id field of the lookup" ), QStringLiteral( "region_id" ), QStringLiteral( "LOOKUP" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The lookup's field holding each region's id, as the population table gives it" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "LOOKUP_UNIT" ), QObject::tr( "Unit field of the lookup" ), QStringLiteral( "aggregate_id" ), QStringLiteral( "LOOKUP" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The lookup's field holding the released unit of each region" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "UNIT_FIELD" ), QObject::tr( "Unit field of the released table" ), QStringLiteral( "aggregate_id" ), QStringLiteral( "INPUT" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The released table's field holding the released unit, one of the QI fields" ), Shown::Advanced );
  addPopulationTableParameters( Shown::Main, false );
  addParameter( new QgsProcessingParameterMultipleLayers( QStringLiteral( "HIERARCHIES" ), QObject::tr( "Hierarchy files of a generalized release (for k-map)" ), vbasqgis::File, QVariant(), true ),
                QObject::tr( "The hierarchy files the release was generalized with, each named after its QI: the table's values are placed under their labels" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "SENSITIVE_FIELD" ), QObject::tr( "Sensitive field (for l and t)" ), QVariant(), QStringLiteral( "INPUT" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The field for the l and t checks; empty: neither is checked" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "L" ), QObject::tr( "l (distinct sensitive values per EC; 1: not checked)" ), vbasqgis::NumberType::Integer, 1, false, 1,
                                                  std::numeric_limits<int>::max() ),
                QObject::tr( "The fewest distinct sensitive values each group must hold; 1: not checked" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "T" ), QObject::tr( "t (largest earth mover's distance of an EC; 1: not checked)" ), vbasqgis::NumberType::Double, 1, false, 0, 1 ),
                QObject::tr( "The largest distance a group's sensitive values may have from the whole table's; 1: not checked" ) );
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "TYPED_CSV" ), QObject::tr( "Compare a CSV's values as typed (its .csvt), not its text" ), false ),
                QObject::tr( "For a CSV file: compare values by the types of its .csvt file, not as text" ), Shown::Advanced );
  addOptionalSink( QStringLiteral( "VIOLATIONS" ), QObject::tr( "Violations" ), vbasqgis::Vector, QObject::tr( "The groups that fail a check, with their sizes" ) );
  addOutput( new QgsProcessingOutputString( QStringLiteral( "VALUES_READ" ), QObject::tr( "How the values were read" ) ) );
  addOutput( new QgsProcessingOutputBoolean( QStringLiteral( "PASS" ), QObject::tr( "Passes every check" ) ) );
  addNumberOutput( QStringLiteral( "RECORDS" ), QObject::tr( "Records" ) );
  addNumberOutput( QStringLiteral( "ECS" ), QObject::tr( "Equivalence classes" ) );
  addNumberOutput( QStringLiteral( "SMALLEST_EC" ), QObject::tr( "Records of the smallest equivalence class" ) );
  addNumberOutput( QStringLiteral( "VIOLATING_ECS" ), QObject::tr( "Violating equivalence classes" ) );
  addNumberOutput( QStringLiteral( "VIOLATING_RECORDS" ), QObject::tr( "Records of the violating equivalence classes" ) );
  addNumberOutput( QStringLiteral( "SMALLEST_L" ), QObject::tr( "Fewest distinct sensitive values of an equivalence class" ) );
  addNumberOutput( QStringLiteral( "LARGEST_T" ), QObject::tr( "Largest earth mover's distance of an equivalence class" ) );
  addNumberOutput( QStringLiteral( "SMALLEST_RESIDENTS" ), QObject::tr( "Residents of the equivalence class with fewest (k-map)" ) );
  addNumberOutput( QStringLiteral( "AVERAGE_RISK" ), QObject::tr( "Average risk of the records (average risk model)" ) );
}

bool VbasCheckAnonymity::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  QList<VbasLocation> inputs;
  mSource = vbasSource( *this, parameters, QStringLiteral( "INPUT" ), context, inputs );
  resolveFields( parameters, context );
  mRecount = std::make_unique<VbasTableRecount>( *mSource, vbasSourceLayer( *this, parameters, QStringLiteral( "INPUT" ), context ), mQis, mCount, mSensitive,
                                                 parameterAsBoolean( parameters, QStringLiteral( "TYPED_CSV" ), context ) );
  mThresholds = thresholds( parameters, context );
  mModel = static_cast<VbasReleaseSettings::Model>( parameterAsEnum( parameters, QStringLiteral( "RISK_MODEL" ), context ) );
  mAverageThreshold = mModel == VbasReleaseSettings::Model::AverageRisk ? parameterAsDouble( parameters, QStringLiteral( "RISK_THRESHOLD" ), context ) : 1;
  const QVariant table = parameters.value( QStringLiteral( "POPULATION_TABLE" ) );
  const bool withTable = table.isValid() && !table.isNull() && !( table.userType() == QMetaType::QString && table.toString().isEmpty() );
  if ( mModel == VbasReleaseSettings::Model::KMap || ( mModel == VbasReleaseSettings::Model::AverageRisk && withTable ) )
    mResidents = std::make_unique<VbasResidentsRecount>( *this, parameters, context, mSource->fields(), mQis, mRecount->stored(), inputs );
  mOutputs.prepare( *this, parameters, context, { violationsSchema() }, inputs, feedback );
  return true;
}

void VbasCheckAnonymity::resolveFields( const QVariantMap &parameters, QgsProcessingContext &context )
{
  const QgsFields fields = mSource->fields();
  mQis.clear();
  for ( const QString &name : vbasqgis::parameterAsFields( parameterDefinition( QStringLiteral( "QI_FIELDS" ) ), parameters, context ) )
  {
    const int index = fields.lookupField( name );
    if ( index < 0 )
      throw QgsProcessingException( QObject::tr( "The table has no field '%1' (QI field, QI_FIELDS)." ).arg( name ) );
    if ( mQis.contains( index ) )
      throw QgsProcessingException( QObject::tr( "The QI field '%1' is listed twice in QI_FIELDS: each QI counts once." ).arg( fields.at( index ).name() ) );
    if ( kMeasureFields.contains( fields.at( index ).name(), Qt::CaseInsensitive ) )
      throw QgsProcessingException( QObject::tr( "The QI field '%1' has the name of a field that VIOLATIONS adds (%2): rename it." ).arg( name, kMeasureFields.join( QLatin1String( ", " ) ) ) );
    mQis << index;
  }
  if ( mQis.isEmpty() )
    throw QgsProcessingException( QObject::tr( "Choose at least one quasi-identifier field (QI_FIELDS)." ) );
  mCount = optionalField( parameters, QStringLiteral( "COUNT_FIELD" ), context );
  mSensitive = optionalField( parameters, QStringLiteral( "SENSITIVE_FIELD" ), context );
  if ( mCount >= 0 && ( mQis.contains( mCount ) || mCount == mSensitive ) )
    throw QgsProcessingException( QObject::tr( "The count field '%1' is also a QI or the sensitive field: a field has one role." ).arg( fields.at( mCount ).name() ) );
  if ( mSensitive >= 0 && mQis.contains( mSensitive ) )
    throw QgsProcessingException( QObject::tr( "The sensitive field '%1' is also a QI field: a field has one role." ).arg( fields.at( mSensitive ).name() ) );
}

int VbasCheckAnonymity::optionalField( const QVariantMap &parameters, const QString &name, QgsProcessingContext &context ) const
{
  const QString field = parameterAsString( parameters, name, context );
  if ( field.isEmpty() )
    return -1;
  const int index = mSource->fields().lookupField( field );
  if ( index < 0 )
    throw QgsProcessingException( QObject::tr( "The table has no field '%1' (%2)." ).arg( field, name ) );
  return index;
}

vbas::AnonymityThresholds VbasCheckAnonymity::thresholds( const QVariantMap &parameters, QgsProcessingContext &context ) const
{
  vbas::AnonymityThresholds thresholds;
  thresholds.k = vbasWholeNumber( *this, parameters, QStringLiteral( "K" ), context );
  thresholds.l = vbasWholeNumber( *this, parameters, QStringLiteral( "L" ), context );
  thresholds.t = parameterAsDouble( parameters, QStringLiteral( "T" ), context );
  if ( !( thresholds.t > 0 && thresholds.t <= 1 ) )
    throw QgsProcessingException( QObject::tr( "T must be above 0 and at most 1 (T = %1)." ).arg( thresholds.t ) );
  if ( mSensitive < 0 && thresholds.l > 1 )
    throw QgsProcessingException( QObject::tr( "L = %1 needs a sensitive field (SENSITIVE_FIELD): l-diversity counts its distinct values." ).arg( thresholds.l ) );
  if ( mSensitive < 0 && thresholds.t < 1 )
    throw QgsProcessingException( QObject::tr( "T = %1 needs a sensitive field (SENSITIVE_FIELD): t-closeness compares its values." ).arg( thresholds.t ) );
  return thresholds;
}

VbasOutputSchema VbasCheckAnonymity::violationsSchema() const
{
  QgsFields fields;
  for ( const int qi : mQis )
    fields.append( mRecount->stored().asText() ? QgsField( mSource->fields().at( qi ).name(), vbasqgis::Field::String ) : mSource->fields().at( qi ) );
  fields.append( QgsField( kMeasureFields[0], vbasqgis::Field::LongLong ) );
  fields.append( QgsField( kMeasureFields[1], vbasqgis::Field::LongLong ) );
  fields.append( QgsField( kMeasureFields[2], vbasqgis::Field::Double ) );
  fields.append( QgsField( kMeasureFields[3], vbasqgis::Field::String ) );
  fields.append( QgsField( kMeasureFields[4], vbasqgis::Field::LongLong ) );
  return { QStringLiteral( "VIOLATIONS" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem() };
}

QVariantMap VbasCheckAnonymity::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  VbasTableRecount::RowVisitor visit;
  if ( mResidents )
  {
    mResidents->readPopulation( feedback );
    visit = [this]( const QByteArray &key, const QgsAttributes &attributes, std::int64_t records ) { mResidents->addRow( key, attributes, records ); };
  }
  const vbas::AnonymityCheck check = mRecount->recount( feedback, visit );
  const std::optional<std::int64_t> smallestResidents = mResidents ? mResidents->smallest() : std::nullopt;
  const vbas::AnonymityReport report = mModel == VbasReleaseSettings::Model::KMap ? kMapReport( check ) : check.report( mThresholds );
  log( report, feedback );
  const std::optional<double> average = averageRisk( report, feedback );
  if ( VbasOutput *violations = mOutputs.createIfWanted( QStringLiteral( "VIOLATIONS" ), context ) )
    writeViolations( *violations, report );
  QVariantMap outputs
    = numberOutputs( report, mModel == VbasReleaseSettings::Model::KMap ? smallestResidents : std::nullopt, average, !average || *average <= mAverageThreshold * ( 1 + vbas::kAverageRiskTolerance ) );
  outputs.insert( QStringLiteral( "VALUES_READ" ), mRecount->stored().code() );
  mOutputs.commit( context, outputs );
  return outputs;
}

std::optional<double> VbasCheckAnonymity::averageRisk( const vbas::AnonymityReport &report, QgsProcessingFeedback *feedback ) const
{
  if ( mModel != VbasReleaseSettings::Model::AverageRisk || report.records == 0 )
    return std::nullopt;
  double average = static_cast<double>( report.ecs ) / static_cast<double>( report.records ); // the prosecutor's: classes over records
  if ( mResidents )
  {
    double risky = 0;
    std::int64_t fewer = 0; // classes with fewer residents than records: counted at their records
    for ( const VbasResidentsRecount::Class &c : mResidents->classes() )
      if ( c.records > 0 )
      {
        fewer += c.residents < c.records;
        risky += static_cast<double>( c.records ) / static_cast<double>( std::max( c.residents, c.records ) );
      }
    if ( fewer > 0 )
      feedback->pushWarning(
        QObject::tr( "%n class(es) have fewer residents in the population table than records: their residents were taken as their records.", nullptr, static_cast<int>( fewer ) ) );
    average = risky / static_cast<double>( report.records );
  }
  const bool met = average <= mAverageThreshold * ( 1 + vbas::kAverageRiskTolerance );
  const QString attacker = mResidents ? QObject::tr( "journalist" ) : QObject::tr( "prosecutor" );
  if ( met )
    feedback->pushInfo( QObject::tr( "The records' average %1 risk is %2, at most the stated %3." ).arg( attacker ).arg( average ).arg( mAverageThreshold ) );
  else
    feedback->pushWarning( QObject::tr( "FAIL: the records' average %1 risk is %2, above the stated %3." ).arg( attacker ).arg( average ).arg( mAverageThreshold ) );
  return average;
}

vbas::AnonymityReport VbasCheckAnonymity::kMapReport( const vbas::AnonymityCheck &check ) const
{
  vbas::AnonymityThresholds every = mThresholds;
  every.k = std::numeric_limits<std::int64_t>::max(); // every EC comes back measured, flagged below k records, which k-map does not check
  vbas::AnonymityReport report = check.report( every );
  std::vector<vbas::EcMeasures> measured = std::move( report.violations );
  report.violations.clear();
  report.violatingEcs = 0;
  report.violatingRecords = 0;
  for ( vbas::EcMeasures &ec : measured )
  {
    ec.violatesK = residentsOf( ec.key ).value_or( 0 ) < mThresholds.k;
    if ( !ec.violates() )
      continue;
    ++report.violatingEcs;
    report.violatingRecords += ec.records;
    report.violations.push_back( std::move( ec ) );
  }
  return report;
}

std::optional<std::int64_t> VbasCheckAnonymity::residentsOf( const std::string &key ) const
{
  if ( !mResidents )
    return std::nullopt;
  return mResidents->residents( QByteArray( key.data(), static_cast<int>( key.size() ) ) );
}

void VbasCheckAnonymity::log( const vbas::AnonymityReport &report, QgsProcessingFeedback *feedback ) const
{
  if ( report.records == 0 )
  {
    feedback->pushWarning( QObject::tr( "The table holds no records: there is nothing to check, and it passes." ) );
    return;
  }
  feedback->pushInfo( QObject::tr( "%1 record(s) in %2 equivalence class(es); the smallest holds %3." ).arg( report.records ).arg( report.ecs ).arg( *report.smallestEc ) );
  if ( report.smallestL )
    feedback->pushInfo( QObject::tr( "Sensitive field: the fewest distinct values in an equivalence class is %1, the largest distance %2." ).arg( *report.smallestL ).arg( *report.largestT ) );
  if ( report.violatingEcs == 0 )
  {
    feedback->pushInfo( QObject::tr( "PASS: every equivalence class meets every check." ) );
    return;
  }
  const auto failing = [&]( bool vbas::EcMeasures::*check ) { return std::count_if( report.violations.begin(), report.violations.end(), [&]( const vbas::EcMeasures &ec ) { return ec.*check; } ); };
  QStringList checks { ( mModel == VbasReleaseSettings::Model::KMap ? QObject::tr( "%1 below k = %2 residents (k-map)" ) : QObject::tr( "%1 below k = %2 records" ) )
                         .arg( failing( &vbas::EcMeasures::violatesK ) )
                         .arg( mThresholds.k ) };
  if ( mSensitive >= 0 )
    checks << QObject::tr( "%1 below l = %2 distinct sensitive values" ).arg( failing( &vbas::EcMeasures::violatesL ) ).arg( mThresholds.l )
           << QObject::tr( "%1 farther than t = %2" ).arg( failing( &vbas::EcMeasures::violatesT ) ).arg( mThresholds.t );
  feedback->pushWarning(
    QObject::tr( "FAIL: %1 equivalence class(es) holding %2 record(s) violate a check: %3." ).arg( report.violatingEcs ).arg( report.violatingRecords ).arg( checks.join( QLatin1String( "; " ) ) ) );
  const vbas::EcMeasures &first = report.violations.front();
  const std::optional<std::int64_t> residents = residentsOf( first.key );
  feedback->pushWarning( QObject::tr( "The first, in the order of its first row: %1 record(s)%2, failing %3." )
                           .arg( first.records )
                           .arg( residents ? QObject::tr( ", %1 resident(s)" ).arg( *residents ) : QString() )
                           .arg( violated( first ) ) );
}

void VbasCheckAnonymity::writeViolations( VbasOutput &output, const vbas::AnonymityReport &report ) const
{
  const bool sensitive = mSensitive >= 0;
  for ( const vbas::EcMeasures &ec : report.violations )
  {
    QgsAttributes values = mRecount->decodeKey( ec.key );
    const std::optional<std::int64_t> residents = residentsOf( ec.key );
    values << static_cast<qlonglong>( ec.records ) << ( sensitive ? QVariant( static_cast<qlonglong>( ec.l ) ) : QVariant() ) << ( sensitive ? QVariant( ec.t ) : QVariant() ) << violated( ec )
           << ( residents ? QVariant( static_cast<qlonglong>( *residents ) ) : QVariant() );
    QgsFeature feature( output.fields() );
    feature.setAttributes( values );
    output.add( feature );
  }
  output.finish();
}
