#include "plugin/provider/vbaslpgeomask.h"
#include "plugin/support/vbasqgiscompat.h"
#include "plugin/provider/vbasdestination.h"

#include "plugin/inputs/vbasinputs.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/pipeline/vbassteps.h"
#include "plugin/support/vbasvaluecodec.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include <QElapsedTimer>
#include <QFileInfo>
#include <QRandomGenerator>

#include <limits>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace
{

//! A released field is (nearly) unique when it takes at least this share of distinct values over at least kFewestRowsToJudge rows (as vbas:anonymize judges).
constexpr double kNearlyUnique = 0.9;
constexpr std::size_t kFewestRowsToJudge = 20;

QString status( vbas::lp::Status status )
{
  switch ( status )
  {
    case vbas::lp::Status::Optimal:
      return QStringLiteral( "optimal" );
    case vbas::lp::Status::Limit:
      return QStringLiteral( "limit" );
    case vbas::lp::Status::Infeasible:
      return QStringLiteral( "infeasible" );
    case vbas::lp::Status::Canceled:
      break;
  }
  return QStringLiteral( "canceled" );
}

//! d_ij of the pair (i, j), j a candidate of i.
double distanceOf( const vbas::lp::Candidates &candidates, std::uint32_t i, std::uint32_t j )
{
  for ( std::size_t e = candidates.offsets[i]; e < candidates.offsets[i + 1]; ++e )
    if ( candidates.targets[e] == j )
      return candidates.distances[e];
  return std::nan( "" );
}

//! Why the patients' field f may not leave with new_code (docs/outputs.md), or nothing: (nearly) unique per patient, or following the original code one way or the other.
QString whyNotReleasable( const VbasPatients &patients, int f )
{
  std::unordered_set<std::string> distinct;
  std::unordered_map<std::uint32_t, std::string> valueOfCode;
  std::unordered_map<std::string, std::uint32_t> codeOfValue;
  bool codeGivesValue = true, valueGivesCode = true;
  for ( std::size_t p = 0; p < patients.origins.size(); ++p )
  {
    const QVariant &value = patients.rows[static_cast<int>( p )].at( f );
    std::string key;
    VbasValueCodec::encode( value, key );
    distinct.insert( key );
    if ( value.isNull() ) // NULL says nothing of the code
      continue;
    const auto [byCode, newCode] = valueOfCode.emplace( patients.origins[p], key );
    codeGivesValue = codeGivesValue && ( newCode || byCode->second == key );
    const auto [byValue, newValue] = codeOfValue.emplace( key, patients.origins[p] );
    valueGivesCode = valueGivesCode && ( newValue || byValue->second == patients.origins[p] );
  }
  const std::size_t rows = patients.origins.size();
  if ( rows >= kFewestRowsToJudge && static_cast<double>( distinct.size() ) >= kNearlyUnique * static_cast<double>( rows ) )
    return QObject::tr( "it is (nearly) unique per patient (%1 different values in %2 rows) and may identify patients" ).arg( distinct.size() ).arg( rows );
  if ( valueOfCode.size() < 2 || codeOfValue.size() < 2 )
    return QString();
  if ( valueGivesCode )
    return QObject::tr( "it carries finer geography than the release: each of its %1 values belongs to a single original code, so it tells the code new_code hides" ).arg( codeOfValue.size() );
  if ( codeGivesValue )
    return QObject::tr( "it follows the original code: each of the %1 original codes has a single value of it (%2 values in all), so it tells where the patient came from" )
      .arg( valueOfCode.size() )
      .arg( codeOfValue.size() );
  return QString();
}

//! Where the sink parameter name writes, as given.
QString destination( const QVariantMap &parameters, const QString &name )
{
  const QVariant value = parameters.value( name );
  const QVariant sink = value.userType() == qMetaTypeId<QgsProcessingOutputLayerDefinition>() ? value.value<QgsProcessingOutputLayerDefinition>().sink.staticValue() : value;
  return sink.toString();
}

} // namespace

QString VbasLpGeomask::shortHelpString() const
{
  return QObject::tr(
           "Moves each patient's postal code at random to a nearby code (Revised-LP of Jung and El Emam, or WCMB-LP of Wieland et al.). The transition "
           "probabilities P_ij come from a linear program that minimises the expected movement while no randomised code can be traced back to one person with a "
           "probability above epsilon. Nothing is aggregated: every patient keeps a code, usually a near one.<br>"
           "<b>Codes layer</b> (CODES): points of the codes (or polygons, taken at their centroid or a point on their surface). A geographic CRS gives distances in "
           "metres by the Haversine formula; a projected CRS, straight-line distances in its units.<br>"
           "<b>Code field</b> (CODE_FIELD): the unique code of each feature, text or a number. <b>Population field</b> (POPULATION_FIELD): the people living in each "
           "code, a number above 0.<br>"
           "<b>Code point</b> (CODE_POINT): centroid or point on surface, for polygons.<br>"
           "<b>Patients</b> (PATIENTS) and <b>their code field</b> (PATIENT_CODE_FIELD): the patient list; every code must be in the codes layer. Or leave them empty "
           "and give a <b>patient-count field</b> (PATIENT_COUNT_FIELD) on the codes layer.<br>"
           "<b>Epsilon</b> (EPSILON): the largest re-identification probability allowed, in (0, 1]; 0.2 by default (0.05-0.3 is the range in use).<br>"
           "<b>Neighbours</b> (NEIGHBOURS, m): each code may move to its m nearest codes, itself included; default 30. <b>Radius</b> (RADIUS): instead, every code "
           "within this distance.<br>"
           "<b>Model</b> (MODEL): Revised-LP, min(s, n_i) / epsilon in the constraint (works where codes hold fewer people than there are patients), or WCMB-LP, "
           "s / epsilon.<br>"
           "<b>Solver</b> (SOLVER): automatic (the direct LP up to %1 candidate pairs, column generation above), column generation (an exact Dantzig-Wolfe form of the same LP), or the direct LP.<br>"
           "<b>Patient fields to release</b> (RELEASE_FIELDS): the patients' fields that leave besides new_code. Empty (the default): none. A named field is "
           "refused, before anything is written, when it is (nearly) unique (at least %2% different values over %3 rows or more, such as a patient id), or when it "
           "follows the original code (one value per code, as a district or a copy of the code) or carries finer geography (each value in one code, as a street "
           "or a ZIP+4), since it would tell the code that new_code hides. The patients' code and their feature id are never released.<br>"
           "<b>Seed</b> (SEED): advanced, for a repeatable run only. Empty (the default): the draws use a fresh seed from the operating system's random source, "
           "kept nowhere. A given seed is a secret key: whoever holds it, with the public populations, can undo much of the masking. It is written to no output "
           "and not to the log, but QGIS's Processing history (and the JSON of qgis_process) keep the parameters of each run: keep them with the patient data. "
           "The same seed gives the same draws (the same rows); the order of the rows never comes from it.<br>"
           "<b>Find the smallest epsilon</b> (FIND_MIN_EPSILON): also search the smallest feasible epsilon by bisection; the true one lies at most EPSILON_TOLERANCE (advanced, relative: 0.001 is 0.1%) below the one given.<br>"
           "<b>Add the distance moved</b> (AUDIT_DISTANCE): for audit only: each randomised row also gets the distance its code moved, which narrows where the "
           "patient came from. Leave it off for a release.<br>"
           "<h3>Outputs</h3>"
           "<b>Randomised patients</b> (RANDOMISED), <i>for publication</i> (without AUDIT_DISTANCE): new_code and the fields named in RELEASE_FIELDS (and moved, "
           "with AUDIT_DISTANCE: then custodian only); the rows in an order drawn from the operating system's random source (never from SEED), with fresh feature "
           "ids.<br>"
           "<b>Transitions</b> (TRANSITIONS), <i>may be published</i>: from_code, to_code, probability and distance of every P_ij above 0, however small, the "
           "probabilities to 15 significant digits as the draws used them. P comes from the public populations and places of the codes, the number of patients "
           "(the rows of RANDOMISED) and the parameters, never from where the patients live, and with the populations it lets anyone recount MAX_REIDENTIFICATION. "
           "A shapefile cannot hold it (its table keeps 15 decimals): use a GeoPackage or CSV.<br>"
           "Numbers: <b>STATUS</b> (optimal, limit), <b>OBJECTIVE</b> (expected movement per person), <b>MAX_REIDENTIFICATION</b> (recounted from TRANSITIONS as "
           "written: never above epsilon, or nothing is written), <b>ROWS</b>, <b>COLUMNS</b>, <b>ROUNDS</b>, <b>GAP</b> (the proven optimality gap), "
           "<b>SOLVE_SECONDS</b>, <b>MIN_EPSILON</b> (with FIND_MIN_EPSILON) and <b>PATIENTS</b> tell nothing the published outputs do not; <b>MEAN_MOVEMENT</b> and "
           "<b>MAX_MOVEMENT</b> describe the draws and are for the custodian only, as is the log. <b>SEED</b> stays empty: the seed is never reported.<br>"
           "An infeasible epsilon is refused with the epsilon or the number of neighbours to try, and with the code that alone makes it infeasible, if one does. "
           "A code holding more patients than its population is refused with Revised-LP (its bound counts at most n_i patients there), a warning with WCMB-LP. "
           "An optimum is reported only once recounted from P and the solver's duals; a solver that gives no answer that can be trusted, or column generation "
           "that stalls, hands over to the other solver, with a line in the log, and the run is refused with the reason when neither gives one.<br>" )
           .arg( vbas::lp::kDirectPairs )
           .arg( kNearlyUnique * 100 )
           .arg( kFewestRowsToJudge )
         + outputsHelp();
}

void VbasLpGeomask::initAlgorithm( const QVariantMap & )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "CODES" ), QObject::tr( "Codes layer" ), vbasqgis::sourceTypes( { vbasqgis::VectorPoint, vbasqgis::VectorPolygon } ) ),
                QObject::tr( "The codes (postal codes, tracts) patients' codes are moved between: points, or polygons" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "CODE_FIELD" ), QObject::tr( "Code field" ), QVariant(), QStringLiteral( "CODES" ) ),
                QObject::tr( "The field that names each code" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "POPULATION_FIELD" ), QObject::tr( "Population field" ), QVariant(), QStringLiteral( "CODES" ), vbasqgis::FieldDataType::Numeric ),
                QObject::tr( "The people living in each code" ) );
  addParameter(
    new QgsProcessingParameterEnum( QStringLiteral( "CODE_POINT" ), QObject::tr( "Code point (polygons)" ), QStringList() << QObject::tr( "Centroid" ) << QObject::tr( "Point on surface" ), false, 0 ),
    QObject::tr( "The point that stands for a polygon code: its centroid or a point inside it" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "PATIENT_COUNT_FIELD" ), QObject::tr( "Patient-count field of the codes (instead of a patient list)" ), QVariant(),
                                                 QStringLiteral( "CODES" ), vbasqgis::FieldDataType::Numeric, false, true ),
                QObject::tr( "The codes' field counting their patients, in place of a patient list" ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "PATIENTS" ), QObject::tr( "Patients" ), vbasqgis::sourceTypes( { vbasqgis::Vector } ), QVariant(), true ),
                QObject::tr( "The patients, each with a code; empty: counts from a field of the codes layer" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "PATIENT_CODE_FIELD" ), QObject::tr( "Code field of the patients" ), QVariant(), QStringLiteral( "PATIENTS" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The patients' field holding their code" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "EPSILON" ), QObject::tr( "Epsilon (largest re-identification probability)" ), vbasqgis::NumberType::Double, 0.2, false, 0, 1 ),
                QObject::tr( "The largest probability of re-identifying a person (0.2: one in five)" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "RELEASE_FIELDS" ), QObject::tr( "Patient fields to release besides new_code (empty: none)" ), QVariant(),
                                                 QStringLiteral( "PATIENTS" ), vbasqgis::FieldDataType::Any, true, true ),
                QObject::tr( "Other fields of the patients to release besides new_code; empty: none" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "NEIGHBOURS" ), QObject::tr( "Neighbours (m nearest codes, itself included)" ), vbasqgis::NumberType::Integer, 30, false, 1,
                                                  std::numeric_limits<int>::max() ),
                QObject::tr( "How many nearest codes a code may move to, itself included" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "RADIUS" ), QObject::tr( "Radius (instead of neighbours; empty: neighbours)" ), vbasqgis::NumberType::Double, QVariant(), true, 0 ),
                QObject::tr( "Move codes within this distance instead of to the nearest ones; empty: use neighbours" ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "MODEL" ), QObject::tr( "Model" ), QStringList() << QObject::tr( "Revised-LP" ) << QObject::tr( "WCMB-LP" ), false, 0 ),
                QObject::tr( "The LP model: Revised-LP, or WCMB-LP" ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "SOLVER" ), QObject::tr( "Solver" ),
                                                QStringList() << QObject::tr( "Automatic" ) << QObject::tr( "Column generation" ) << QObject::tr( "Direct LP" ), false, 0 ),
                QObject::tr( "How the LP is solved; Automatic picks the faster" ), Shown::Advanced );
  addSeedParameter( QObject::tr( "Seed of the draws, a secret (empty: a fresh one, kept nowhere)" ),
                    QObject::tr( "A secret whole number that repeats the draws exactly; empty: a fresh one, kept nowhere" ) );
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "FIND_MIN_EPSILON" ), QObject::tr( "Find the smallest feasible epsilon" ), false ),
                QObject::tr( "Also find the smallest epsilon that can be met" ) );
  auto tolerance = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "EPSILON_TOLERANCE" ), QObject::tr( "Relative tolerance of the smallest epsilon" ), vbasqgis::NumberType::Double,
                                                                   1e-3, false, 1e-9, 0.5 );
  addParameter( tolerance.release(), QObject::tr( "How close, relatively, the smallest epsilon found is to the true one" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "AUDIT_DISTANCE" ), QObject::tr( "Add the distance moved (audit only)" ), false ),
                QObject::tr( "Add how far each code moved: for auditing only, never for publication" ), Shown::Advanced );
  addParameter( new VbasSinkParameter( QStringLiteral( "RANDOMISED" ), QObject::tr( "Randomised patients" ), vbasqgis::Vector ), QObject::tr( "The patients with their new codes" ) );
  addOptionalSink( QStringLiteral( "TRANSITIONS" ), QObject::tr( "Transitions" ), vbasqgis::Vector, QObject::tr( "The probability of moving from each code to each other" ) );
  addOutput( new QgsProcessingOutputString( QStringLiteral( "STATUS" ), QObject::tr( "Status" ) ) );
  for ( const auto &[name, description] : std::vector<std::pair<const char *, const char *>> { { "OBJECTIVE", "Expected movement per person" },
                                                                                               { "MEAN_MOVEMENT", "Mean movement of the draws" },
                                                                                               { "MAX_MOVEMENT", "Largest movement of the draws" },
                                                                                               { "MAX_REIDENTIFICATION", "Largest re-identification probability, from P" },
                                                                                               { "ROWS", "LP rows" },
                                                                                               { "COLUMNS", "LP columns" },
                                                                                               { "ROUNDS", "Rounds" },
                                                                                               { "GAP", "Optimality gap" },
                                                                                               { "SOLVE_SECONDS", "Solve time (s)" },
                                                                                               { "MIN_EPSILON", "Smallest feasible epsilon" },
                                                                                               { "PATIENTS", "Patients" } } )
    addNumberOutput( QString::fromLatin1( name ), QObject::tr( description ) );
}

bool VbasLpGeomask::prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  QList<VbasLocation> inputs;
  mCodesSource = vbasSource( *this, parameters, QStringLiteral( "CODES" ), context, inputs );
  mCodeFields = { parameterAsString( parameters, QStringLiteral( "CODE_FIELD" ), context ), parameterAsString( parameters, QStringLiteral( "POPULATION_FIELD" ), context ),
                  parameterAsString( parameters, QStringLiteral( "PATIENT_COUNT_FIELD" ), context ), parameterAsEnum( parameters, QStringLiteral( "CODE_POINT" ), context ) };
  const QgsFields codeFields = mCodesSource->fields();
  const int codeIndex = codeFields.lookupField( mCodeFields.code );
  if ( codeIndex < 0 )
    throw QgsProcessingException( QObject::tr( "The codes layer has no field '%1' (CODE_FIELD)." ).arg( mCodeFields.code ) );
  mCodeType = codeFields.at( codeIndex ).type();
  const QVariant patients = parameters.value( QStringLiteral( "PATIENTS" ) );
  const bool havePatients = patients.isValid() && !patients.isNull() && !( patients.userType() == QMetaType::QString && patients.toString().isEmpty() );
  if ( havePatients == !mCodeFields.patientCount.isEmpty() )
    throw QgsProcessingException( QObject::tr( "Give either the patients (PATIENTS with PATIENT_CODE_FIELD) or a patient-count field on the codes (PATIENT_COUNT_FIELD), not both or neither." ) );
  if ( havePatients )
  {
    mPatientsSource = vbasSource( *this, parameters, QStringLiteral( "PATIENTS" ), context, inputs );
    mPatientCodeField = parameterAsString( parameters, QStringLiteral( "PATIENT_CODE_FIELD" ), context );
    mPatientCodeIndex = mPatientsSource->fields().lookupField( mPatientCodeField );
    if ( mPatientCodeIndex < 0 )
      throw QgsProcessingException( QObject::tr( "The patients have no field '%1' (PATIENT_CODE_FIELD)." ).arg( mPatientCodeField ) );
  }
  readReleasedFields( parameters, context );
  mEpsilon = parameterAsDouble( parameters, QStringLiteral( "EPSILON" ), context );
  if ( !( mEpsilon > 0 && mEpsilon <= 1 ) )
    throw QgsProcessingException( QObject::tr( "EPSILON must be above 0 and at most 1 (EPSILON = %1)." ).arg( mEpsilon ) );
  mNeighbours = vbasWholeNumber( *this, parameters, QStringLiteral( "NEIGHBOURS" ), context );
  const QVariant radius = parameters.value( QStringLiteral( "RADIUS" ) );
  mRadius = radius.isValid() && !radius.isNull() && !radius.toString().isEmpty() ? parameterAsDouble( parameters, QStringLiteral( "RADIUS" ), context ) : 0;
  if ( radius.isValid() && !radius.isNull() && !radius.toString().isEmpty() && !( mRadius > 0 && std::isfinite( mRadius ) ) )
    throw QgsProcessingException( QObject::tr( "RADIUS must be a distance above 0 (RADIUS = %1)." ).arg( radius.toString() ) );
  mModel = parameterAsEnum( parameters, QStringLiteral( "MODEL" ), context ) == 1 ? vbas::lp::Model::Wcmb : vbas::lp::Model::Revised;
  mSolver = static_cast<vbas::lp::Solver>( parameterAsEnum( parameters, QStringLiteral( "SOLVER" ), context ) );
  readSeed( parameters, context );
  mFindMinEpsilon = parameterAsBoolean( parameters, QStringLiteral( "FIND_MIN_EPSILON" ), context );
  mEpsilonTolerance = parameterAsDouble( parameters, QStringLiteral( "EPSILON_TOLERANCE" ), context );
  mAudit = parameterAsBoolean( parameters, QStringLiteral( "AUDIT_DISTANCE" ), context );
  QgsFields transitions;
  transitions.append( QgsField( QStringLiteral( "from_code" ), mCodeType ) );
  transitions.append( QgsField( QStringLiteral( "to_code" ), mCodeType ) );
  transitions.append( QgsField( QStringLiteral( "probability" ), vbasqgis::Field::Double ) );
  transitions.append( QgsField( QStringLiteral( "distance" ), vbasqgis::Field::Double ) );
  const QString suffix = QFileInfo( destination( parameters, QStringLiteral( "TRANSITIONS" ) ) ).suffix().toLower();
  if ( suffix == QLatin1String( "shp" ) || suffix == QLatin1String( "dbf" ) )
    throw QgsProcessingException(
      QObject::tr( "TRANSITIONS cannot be a shapefile: its table keeps 15 decimals, which loses the smallest probabilities the bound depends on. Use a GeoPackage or CSV." ) );
  mOutputs.prepare(
    *this, parameters, context,
    { randomisedSchema(), { QStringLiteral( "TRANSITIONS" ), transitions, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem(), false, VbasOutputSchema::Audience::Published } }, inputs,
    feedback );
  return true;
}

void VbasLpGeomask::readReleasedFields( const QVariantMap &parameters, QgsProcessingContext &context )
{
  const QStringList names = vbasqgis::parameterAsFields( parameterDefinition( QStringLiteral( "RELEASE_FIELDS" ) ), parameters, context );
  if ( !mPatientsSource )
  {
    if ( !names.isEmpty() )
      throw QgsProcessingException( QObject::tr( "RELEASE_FIELDS names fields of the patients, and there is no patient list (PATIENTS): leave it empty with PATIENT_COUNT_FIELD." ) );
    return;
  }
  const QgsAttributeList identity = vbasIdentityFields( *this, parameters, QStringLiteral( "PATIENTS" ), context );
  for ( const QString &name : names )
  {
    const int i = mPatientsSource->fields().lookupField( name );
    if ( i < 0 )
      throw QgsProcessingException( QObject::tr( "The patients have no field '%1' (RELEASE_FIELDS)." ).arg( name ) );
    if ( i == mPatientCodeIndex )
      throw QgsProcessingException( QObject::tr( "The field '%1' (RELEASE_FIELDS) is the patients' code (PATIENT_CODE_FIELD), which new_code replaces: it is never released." ).arg( name ) );
    if ( identity.contains( i ) )
      throw QgsProcessingException( QObject::tr( "The field '%1' (RELEASE_FIELDS) is the patients' feature id, which carries the order of the table: it is never released." ).arg( name ) );
    if ( !mReleasedFields.contains( i ) )
      mReleasedFields.append( i );
  }
}

void VbasLpGeomask::checkReleasedFields( const VbasPatients &patients ) const
{
  for ( const int i : mReleasedFields )
  {
    const QString why = whyNotReleasable( patients, i );
    if ( !why.isEmpty() )
      throw QgsProcessingException(
        QObject::tr( "The field '%1' (RELEASE_FIELDS) cannot be released: %2. Leave it out of RELEASE_FIELDS; nothing was written." ).arg( patients.fields.at( i ).name(), why ) );
  }
}

void VbasLpGeomask::checkPopulations( const VbasCodes &codes, const VbasPatients &patients, QgsProcessingFeedback *feedback ) const
{
  std::vector<std::int64_t> count( codes.population.size(), 0 );
  for ( const std::uint32_t i : patients.origins )
    ++count[i];
  std::size_t above = 0, first = 0;
  for ( std::size_t i = 0; i < count.size(); ++i )
    if ( static_cast<double>( count[i] ) > codes.population[i] && above++ == 0 )
      first = i;
  if ( above == 0 )
    return;
  const QString code = QObject::tr( "Code %1 holds %2 patients but a population (POPULATION_FIELD) of %3%4: the population counts everyone living in a code, patients included." )
                         .arg( codes.ids[static_cast<int>( first )].toString() )
                         .arg( count[first] )
                         .arg( codes.population[first] )
                         .arg( above > 1 ? QObject::tr( " (and %1 more codes hold more patients than people)" ).arg( above - 1 ) : QString() );
  if ( mModel == vbas::lp::Model::Revised ) // eq. 8's c_i = min(s, n_i) counts at most n_i patients of code i: the bound would not hold
    throw QgsProcessingException(
      code
      + QObject::tr(
        " The Revised-LP bound assumes at most that many patients live there, so it would not hold. Correct the populations (or the patients' codes), or use MODEL = WCMB-LP, whose bound holds whatever the populations; nothing was written." ) );
  feedback->pushWarning( code + QObject::tr( " The WCMB-LP bound still holds (it counts every patient of the table as possibly in each code), but check the populations." ) );
}

void VbasLpGeomask::readSeed( const QVariantMap &parameters, QgsProcessingContext &context )
{
  const QVariant seed = parameters.value( QStringLiteral( "SEED" ) );
  mSeedGiven = seed.isValid() && !seed.isNull() && !seed.toString().isEmpty();
  mSeed = mSeedGiven ? vbasSeed( *this, parameters, context ) : QRandomGenerator::system()->generate64();
}

void VbasLpGeomask::logSeed( QgsProcessingFeedback *feedback ) const
{
  if ( mSeedGiven )
    feedback->pushWarning( QObject::tr( "The draws come from the SEED given. Keep it secret, with the patient data: whoever holds it, with the public populations, can undo much of "
                                        "the masking. It is in no output and not in this log, but QGIS's Processing history keeps the parameters of each run." ) );
  else
    feedback->pushInfo( QObject::tr( "The draws use a fresh seed from the operating system's random source, kept nowhere: they cannot be repeated or undone from it." ) );
}

VbasOutputSchema VbasLpGeomask::randomisedSchema() const
{
  QgsFields fields;
  for ( const int i : mReleasedFields )
    fields.append( mPatientsSource->fields().at( i ) );
  for ( const QString &name : { QStringLiteral( "new_code" ), QStringLiteral( "moved" ) } )
    if ( fields.lookupField( name ) >= 0 )
      throw QgsProcessingException( QObject::tr( "The patients already have a field '%1', which the randomised table adds: rename it." ).arg( name ) );
  fields.append( QgsField( QStringLiteral( "new_code" ), mCodeType ) );
  if ( mAudit )
    fields.append( QgsField( QStringLiteral( "moved" ), vbasqgis::Field::Double ) );
  const VbasOutputSchema::Audience audience = mAudit ? VbasOutputSchema::Audience::Custodian : VbasOutputSchema::Audience::Published; // the distance moved tells the origin
  VbasOutputSchema schema { QStringLiteral( "RANDOMISED" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem(), false, audience };
  for ( const int i : mReleasedFields )
    schema.namedBy.insert( mPatientsSource->fields().at( i ).name(), QStringLiteral( "RELEASE_FIELDS" ) );
  return schema;
}

QString VbasLpGeomask::why( const vbas::lp::Failure &failure )
{
  switch ( failure.kind )
  {
    case vbas::lp::Failure::Kind::Stalled:
      return QObject::tr( "Column generation stopped after %1 rounds without proving an optimum (its rounds stopped improving either bound, or its bound does not prove its objective)." )
        .arg( failure.rounds );
    case vbas::lp::Failure::Kind::LimitWithoutAnswer:
      return QObject::tr( "the solver stopped on its iteration or time limit before it found any." );
    case vbas::lp::Failure::Kind::SolverError:
      break;
  }
  return QString::fromStdString( failure.error ) + '.';
}

void VbasLpGeomask::logPass( const vbas::lp::Pass &pass, bool refused, QgsProcessingFeedback *feedback ) const
{
  for ( const vbas::lp::Fallback &fallback : pass.fallbacks )
    feedback->pushInfo(
      QObject::tr( "%1 Solving by %2 instead." ).arg( why( fallback.why ), fallback.from == vbas::lp::Method::Direct ? QObject::tr( "column generation" ) : QObject::tr( "the direct LP" ) ) );
  if ( refused )
    return;
  if ( pass.smallestEpsilon )
    feedback->pushInfo( QObject::tr( "The smallest feasible epsilon is %1 (%2)." ).arg( *pass.smallestEpsilon, 0, 'g', 12 ).arg( tolerance() ) );
  if ( !pass.undecided.empty() )
    feedback->pushWarning( QObject::tr( "The smallest feasible epsilon could not be found (%1): MIN_EPSILON is empty." ).arg( QString::fromStdString( pass.undecided ) ) );
}

QString VbasLpGeomask::tolerance() const
{
  return QObject::tr( "the true one lies within %1% below it" ).arg( mEpsilonTolerance * 100 );
}

//! The quick proof of infeasibility (a code whose caps cannot sum to 1, vbas::lp::unhideableCode) at the EPSILON given, as a sentence naming the code, or nothing.
QString VbasLpGeomask::unhideable( const vbas::lp::Problem &problem, const VbasCodes &codes ) const
{
  vbas::lp::Problem given = problem;
  given.epsilon = mEpsilon;
  const std::optional<vbas::lp::Unhideable> code = vbas::lp::unhideableCode( given );
  if ( !code )
    return QString();
  return QObject::tr( " Code %1 (population %2) cannot be hidden: the other codes that may move to its destinations hold %3 people, and keeping its share of every destination within "
                      "epsilon needs at least %4." )
    .arg( codes.ids[static_cast<int>( code->code )].toString() )
    .arg( problem.population[code->code] )
    .arg( code->available )
    .arg( std::ceil( code->needed ) );
}

vbas::lp::Pass VbasLpGeomask::solve( const vbas::lp::Problem &problem, const VbasCodes &codes, QgsProcessingFeedback *feedback ) const
{
  VbasCoreProgress progress( feedback );
  vbas::lp::PolicyOutcome outcome = vbas::lp::solveByPolicy( problem, { mSolver, mEpsilon, mFindMinEpsilon, mEpsilonTolerance }, &progress );
  const bool refused = outcome.verdict == vbas::lp::Verdict::Canceled || outcome.verdict == vbas::lp::Verdict::Untrusted || outcome.verdict == vbas::lp::Verdict::Infeasible;
  logPass( outcome.passes.front(), refused && !outcome.resolved(), feedback );
  if ( outcome.resolved() )
  {
    feedback->pushInfo( QObject::tr( "The direct LP's round-off allows a re-identification probability of %1 at these populations: solving by column generation instead." )
                          .arg( outcome.passes.front().reidentification ) );
    logPass( outcome.passes.back(), refused, feedback );
  }
  vbas::lp::Pass &pass = outcome.passes.back();
  switch ( outcome.verdict )
  {
    case vbas::lp::Verdict::Canceled:
      VbasInterrupt::throwIfCanceled( feedback ); // a signal: its own message
      throw QgsProcessingException( QObject::tr( "Canceled: nothing was written." ) );
    case vbas::lp::Verdict::Untrusted:
    {
      QStringList whys;
      for ( const vbas::lp::Failure &failure : pass.refused )
        whys << why( failure );
      throw QgsProcessingException(
        QObject::tr( "No transition probabilities that can be trusted at EPSILON = %1: %2 Nothing was written. Try a larger EPSILON, or fewer NEIGHBOURS (or a smaller RADIUS)." )
          .arg( problem.epsilon / ( 1 - vbas::lp::kSolveMargin ) )
          .arg( whys.join( ' ' ) ) );
    }
    case vbas::lp::Verdict::Infeasible:
      throw QgsProcessingException( infeasible( pass ) + unhideable( problem, codes ) );
    case vbas::lp::Verdict::AboveEpsilon:
      throw QgsProcessingException( QObject::tr( "The solver's transition probabilities allow a re-identification probability of %1, above EPSILON = %2: nothing is written.%3" )
                                      .arg( pass.reidentification )
                                      .arg( mEpsilon )
                                      .arg( outcome.chosen == vbas::lp::Method::Direct ? QObject::tr( " Try SOLVER = column generation." ) : QString() ) );
    case vbas::lp::Verdict::Accepted:
      break;
  }
  return std::move( pass );
}

QString VbasLpGeomask::infeasible( const vbas::lp::Pass &pass ) const
{
  const QString neighbours = mRadius > 0 ? QObject::tr( "a larger RADIUS" ) : QObject::tr( "more NEIGHBOURS (now %1)" ).arg( mNeighbours );
  const QString start = QObject::tr( "No transition probabilities keep every re-identification probability at most EPSILON = %1 with these candidates." ).arg( mEpsilon );
  if ( pass.smallestEpsilon )
    return start + QObject::tr( " The smallest feasible epsilon is %1 (%2): use EPSILON = %1 or more, or %3." ).arg( *pass.smallestEpsilon, 0, 'g', 12 ).arg( tolerance(), neighbours );
  if ( !pass.undecided.empty() )
    return start + QObject::tr( " The smallest feasible epsilon could not be found (%1): try a larger EPSILON, or %2." ).arg( QString::fromStdString( pass.undecided ), neighbours );
  return QObject::tr( "No transition probabilities keep the re-identification probability at most EPSILON = %1, nor even at 1, with these candidates: use %2%3." )
    .arg( mEpsilon )
    .arg( neighbours, mModel == vbas::lp::Model::Wcmb ? QObject::tr( ", or the Revised-LP model" ) : QString() );
}

void VbasLpGeomask::writeTransitions( VbasOutput &output, const vbas::lp::Problem &problem, const std::vector<double> &published, const VbasCodes &codes )
{
  for ( std::uint32_t i = 0; i < problem.candidates.codes(); ++i )
    for ( std::size_t e = problem.candidates.offsets[i]; e < problem.candidates.offsets[i + 1]; ++e )
    {
      if ( !( published[e] > 0 ) )
        continue;
      QgsFeature feature( output.fields() );
      feature.setAttributes( QgsAttributes() << codes.ids[static_cast<int>( i )] << codes.ids[static_cast<int>( problem.candidates.targets[e] )] << published[e] << problem.candidates.distances[e] );
      output.add( feature );
    }
  output.finish();
}

QVariantMap VbasLpGeomask::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  const VbasCodes codes = vbasReadCodes( *mCodesSource, mCodeFields, context, feedback );
  const VbasPatients patients = mPatientsSource ? vbasReadPatients( *mPatientsSource, mPatientCodeField, codes, feedback ) : vbasPatientsFromCounts( codes );
  if ( patients.origins.empty() )
    throw QgsProcessingException( QObject::tr( "There are no patients to randomise." ) );
  checkReleasedFields( patients );
  checkPopulations( codes, patients, feedback );
  feedback->pushInfo( QObject::tr( "%1 codes, %2 patients." ).arg( codes.ids.size() ).arg( patients.origins.size() ) );
  feedback->pushInfo( QObject::tr( "Released fields: %1." ).arg( randomisedSchema().fields.names().join( QLatin1String( ", " ) ) ) );
  logSeed( feedback );

  vbas::lp::Problem problem;
  problem.population = codes.population;
  problem.patients = static_cast<std::int64_t>( patients.origins.size() );
  problem.epsilon = mEpsilon * ( 1 - vbas::lp::kSolveMargin );
  problem.model = mModel;
  problem.candidates = mRadius > 0 ? vbas::lp::radiusCandidates( codes.locations, codes.distance, mRadius )
                                   : vbas::lp::nearestCandidates( codes.locations, codes.distance, static_cast<std::size_t>( std::min<std::int64_t>( mNeighbours, codes.ids.size() ) ) );
  QElapsedTimer timer;
  timer.start();
  const vbas::lp::Pass solved = solve( problem, codes, feedback );
  const vbas::lp::Solution &solution = solved.solution;
  const double seconds = timer.elapsed() / 1000.0;

  // The draws from the seed and P as published; the rows in an order from the operating system's random source, kept nowhere, so neither the input's order nor the seed gives it.
  const std::vector<std::uint32_t> drawn = vbas::lp::randomise( problem.candidates, solved.published, patients.origins, mSeed );
  std::vector<std::size_t> order( drawn.size() );
  std::iota( order.begin(), order.end(), 0 );
  std::shuffle( order.begin(), order.end(), *QRandomGenerator::system() );
  VbasOutput &randomised = mOutputs.create( QStringLiteral( "RANDOMISED" ), context );
  double moved = 0, farthest = 0;
  for ( const std::size_t p : order )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    const double distance = distanceOf( problem.candidates, patients.origins[p], drawn[p] );
    moved += distance;
    farthest = std::max( farthest, distance );
    QgsAttributes values;
    for ( const int i : mReleasedFields )
      values << patients.rows[static_cast<int>( p )].at( i );
    values << codes.ids[static_cast<int>( drawn[p] )];
    if ( mAudit )
      values << distance;
    QgsFeature feature( randomised.fields() );
    feature.setAttributes( values );
    randomised.add( feature );
  }
  randomised.finish();

  if ( VbasOutput *transitions = mOutputs.createIfWanted( QStringLiteral( "TRANSITIONS" ), context ) )
    writeTransitions( *transitions, problem, solved.published, codes );

  const double patientsCount = static_cast<double>( drawn.size() );
  QVariantMap outputs { { QStringLiteral( "STATUS" ), status( solution.status ) },
                        { QStringLiteral( "OBJECTIVE" ), solution.objective },
                        { QStringLiteral( "MEAN_MOVEMENT" ), moved / patientsCount },
                        { QStringLiteral( "MAX_MOVEMENT" ), farthest },
                        { QStringLiteral( "MAX_REIDENTIFICATION" ), solved.reidentification },
                        { QStringLiteral( "ROWS" ), static_cast<qlonglong>( solution.rows ) },
                        { QStringLiteral( "COLUMNS" ), static_cast<qlonglong>( solution.columns ) },
                        { QStringLiteral( "ROUNDS" ), static_cast<qlonglong>( solution.rounds ) },
                        { QStringLiteral( "GAP" ), solution.gap },
                        { QStringLiteral( "SOLVE_SECONDS" ), seconds },
                        { QStringLiteral( "MIN_EPSILON" ), solved.smallestEpsilon ? QVariant( *solved.smallestEpsilon ) : QVariant() },
                        { QStringLiteral( "PATIENTS" ), patientsCount } };
  feedback->pushInfo( QObject::tr( "Expected movement %1 %2 per person; the draws moved %3 %2 on average. The largest re-identification probability, recounted from TRANSITIONS, is %4." )
                        .arg( solution.objective )
                        .arg( codes.distanceUnit )
                        .arg( moved / patientsCount )
                        .arg( solved.reidentification ) );
  mOutputs.commit( context, outputs );
  return outputs;
}
