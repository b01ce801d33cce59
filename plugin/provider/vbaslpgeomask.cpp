#include "provider/vbaslpgeomask.h"
#include "support/vbasqgiscompat.h"

#include "random.h"
#include "inputs/vbasinputs.h"
#include "support/vbasinterrupt.h"
#include "steps/vbassteps.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include <QElapsedTimer>

#include <limits>

#include <cmath>
#include <numeric>

namespace
{

//! Above this many candidate pairs the column generation solver is chosen automatically (SPEC 4.1: the direct LP is the better choice for small instances).
constexpr std::size_t kDirectPairs = 40000;
//! Slack on epsilon when P is checked: the solvers' feasibility tolerance.
constexpr double kReidentificationSlack = 1e-9;
//! A transition below this is no transition (the solvers' zero).
constexpr double kZeroProbability = 1e-12;

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

} // namespace

QString VbasLpGeomask::shortHelpString() const
{
  return QObject::tr( "Moves each patient's postal code at random to a nearby code (SPEC 4; Revised-LP of the seed paper, or WCMB-LP of Wieland et al.). The transition "
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
                      "<b>Solver</b> (SOLVER): automatic (the direct LP up to %1 candidate pairs, column generation above), column generation (SPEC 4.1), or the direct LP.<br>"
                      "<b>Seed</b> (SEED): draws the new codes and the order of the output rows; the same seed, the same draws. Empty: a fresh one, reported.<br>"
                      "<b>Find the smallest epsilon</b> (FIND_MIN_EPSILON): also search the smallest feasible epsilon by bisection, to within EPSILON_TOLERANCE (advanced).<br>"
                      "<b>Add the distance moved</b> (AUDIT_DISTANCE): for audit only: each randomised row also gets the distance its code moved, which narrows where the "
                      "patient came from. Leave it off for a release.<br>"
                      "<h3>Outputs</h3>"
                      "<b>Randomised patients</b> (RANDOMISED): every field of the patients but their code, plus new_code (and moved, with AUDIT_DISTANCE); the rows in a random "
                      "order drawn from the seed, with fresh feature ids.<br>"
                      "<b>Transitions</b> (TRANSITIONS): from_code, to_code, probability and distance of every non-zero P_ij.<br>"
                      "<b>STATUS</b> (optimal, limit), <b>OBJECTIVE</b> (expected movement per person), <b>MEAN_MOVEMENT</b> and <b>MAX_MOVEMENT</b> (of the draws), "
                      "<b>MAX_REIDENTIFICATION</b> (recomputed from P: never above epsilon, or nothing is written), <b>ROWS</b>, <b>COLUMNS</b>, <b>ROUNDS</b>, <b>GAP</b> "
                      "(the proven optimality gap), <b>SOLVE_SECONDS</b>, <b>MIN_EPSILON</b> (with FIND_MIN_EPSILON), <b>PATIENTS</b>, <b>SEED</b>.<br>"
                      "An infeasible epsilon is refused with the epsilon or the number of neighbours to try, and with the code that alone makes it infeasible, if one does.<br>" )
           .arg( kDirectPairs )
         + outputsHelp();
}

void VbasLpGeomask::initAlgorithm( const QVariantMap & )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "CODES" ), QObject::tr( "Codes layer" ), vbasqgis::sourceTypes( { vbasqgis::VectorPoint, vbasqgis::VectorPolygon } ) ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "CODE_FIELD" ), QObject::tr( "Code field" ), QVariant(), QStringLiteral( "CODES" ) ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "POPULATION_FIELD" ), QObject::tr( "Population field" ), QVariant(), QStringLiteral( "CODES" ), vbasqgis::FieldDataType::Numeric ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "CODE_POINT" ), QObject::tr( "Code point (polygons)" ), QStringList() << QObject::tr( "Centroid" ) << QObject::tr( "Point on surface" ), false, 0 ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "PATIENTS" ), QObject::tr( "Patients" ), vbasqgis::sourceTypes( { vbasqgis::Vector } ), QVariant(), true ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "PATIENT_CODE_FIELD" ), QObject::tr( "Code field of the patients" ), QVariant(), QStringLiteral( "PATIENTS" ), vbasqgis::FieldDataType::Any, false, true ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "PATIENT_COUNT_FIELD" ), QObject::tr( "Patient-count field of the codes (instead of a patient list)" ), QVariant(), QStringLiteral( "CODES" ),
                                                 vbasqgis::FieldDataType::Numeric, false, true ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "EPSILON" ), QObject::tr( "Epsilon (largest re-identification probability)" ), vbasqgis::NumberType::Double, 0.2, false, 0, 1 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "NEIGHBOURS" ), QObject::tr( "Neighbours (m nearest codes, itself included)" ), vbasqgis::NumberType::Integer, 30, false, 1, std::numeric_limits<int>::max() ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "RADIUS" ), QObject::tr( "Radius (instead of neighbours; empty: neighbours)" ), vbasqgis::NumberType::Double, QVariant(), true, 0 ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "MODEL" ), QObject::tr( "Model" ), QStringList() << QObject::tr( "Revised-LP" ) << QObject::tr( "WCMB-LP" ), false, 0 ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "SOLVER" ), QObject::tr( "Solver" ), QStringList() << QObject::tr( "Automatic" ) << QObject::tr( "Column generation" ) << QObject::tr( "Direct LP" ), false, 0 ) );
  addSeedParameter( QObject::tr( "Seed of the draws (empty: a fresh one)" ) );
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "FIND_MIN_EPSILON" ), QObject::tr( "Find the smallest feasible epsilon" ), false ) );
  auto tolerance = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "EPSILON_TOLERANCE" ), QObject::tr( "Tolerance of the smallest epsilon" ), vbasqgis::NumberType::Double, 1e-3, false, 1e-9, 0.5 );
  tolerance->setFlags( tolerance->flags() | vbasqgis::ParameterAdvanced );
  addParameter( tolerance.release() );
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "AUDIT_DISTANCE" ), QObject::tr( "Add the distance moved (audit only)" ), false ) );
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "RANDOMISED" ), QObject::tr( "Randomised patients" ), vbasqgis::Vector ) );
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "TRANSITIONS" ), QObject::tr( "Transitions" ), vbasqgis::Vector ) );
  addOutput( new QgsProcessingOutputString( QStringLiteral( "STATUS" ), QObject::tr( "Status" ) ) );
  for ( const auto &[name, description] : std::vector<std::pair<const char *, const char *>> {
          { "OBJECTIVE", "Expected movement per person" }, { "MEAN_MOVEMENT", "Mean movement of the draws" }, { "MAX_MOVEMENT", "Largest movement of the draws" },
          { "MAX_REIDENTIFICATION", "Largest re-identification probability, from P" }, { "ROWS", "LP rows" }, { "COLUMNS", "LP columns" }, { "ROUNDS", "Rounds" },
          { "GAP", "Optimality gap" }, { "SOLVE_SECONDS", "Solve time (s)" }, { "MIN_EPSILON", "Smallest feasible epsilon" }, { "PATIENTS", "Patients" } } )
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
    const QgsAttributeList identity = vbasIdentityFields( *this, parameters, QStringLiteral( "PATIENTS" ), context );
    const QgsFields patientFields = mPatientsSource->fields();
    for ( int i = 0; i < patientFields.count(); ++i )
      if ( i != mPatientCodeIndex && !identity.contains( i ) && patientFields.fieldOrigin( i ) != vbasqgis::OriginExpression )
        mReleasedFields.append( i );
  }
  mEpsilon = parameterAsDouble( parameters, QStringLiteral( "EPSILON" ), context );
  if ( !( mEpsilon > 0 && mEpsilon <= 1 ) )
    throw QgsProcessingException( QObject::tr( "EPSILON must be above 0 and at most 1 (EPSILON = %1)." ).arg( mEpsilon ) );
  mNeighbours = vbasWholeNumber( *this, parameters, QStringLiteral( "NEIGHBOURS" ), context );
  const QVariant radius = parameters.value( QStringLiteral( "RADIUS" ) );
  mRadius = radius.isValid() && !radius.isNull() && !radius.toString().isEmpty() ? parameterAsDouble( parameters, QStringLiteral( "RADIUS" ), context ) : 0;
  if ( radius.isValid() && !radius.isNull() && !radius.toString().isEmpty() && !( mRadius > 0 && std::isfinite( mRadius ) ) )
    throw QgsProcessingException( QObject::tr( "RADIUS must be a distance above 0 (RADIUS = %1)." ).arg( radius.toString() ) );
  mModel = parameterAsEnum( parameters, QStringLiteral( "MODEL" ), context ) == 1 ? vbas::lp::Model::Wcmb : vbas::lp::Model::Revised;
  mSolver = static_cast<Solver>( parameterAsEnum( parameters, QStringLiteral( "SOLVER" ), context ) );
  mSeed = vbasSeed( *this, parameters, context );
  mFindMinEpsilon = parameterAsBoolean( parameters, QStringLiteral( "FIND_MIN_EPSILON" ), context );
  mEpsilonTolerance = parameterAsDouble( parameters, QStringLiteral( "EPSILON_TOLERANCE" ), context );
  mAudit = parameterAsBoolean( parameters, QStringLiteral( "AUDIT_DISTANCE" ), context );
  QgsFields transitions;
  transitions.append( QgsField( QStringLiteral( "from_code" ), mCodeType ) );
  transitions.append( QgsField( QStringLiteral( "to_code" ), mCodeType ) );
  transitions.append( QgsField( QStringLiteral( "probability" ), vbasqgis::Field::Double ) );
  transitions.append( QgsField( QStringLiteral( "distance" ), vbasqgis::Field::Double ) );
  mOutputs.prepare( *this, parameters, context, { randomisedSchema(), { QStringLiteral( "TRANSITIONS" ), transitions, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem() } }, inputs, feedback );
  return true;
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
  return { QStringLiteral( "RANDOMISED" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem() };
}

vbas::lp::Solution VbasLpGeomask::solveWith( const vbas::lp::Problem &problem, QgsProcessingFeedback *feedback ) const
{
  VbasCoreProgress progress( feedback );
  const bool direct = mSolver == Solver::Direct || ( mSolver == Solver::Automatic && problem.candidates.pairs() <= kDirectPairs );
  vbas::lp::Solution solution = direct ? vbas::lp::solveDirect( problem, &progress ) : vbas::lp::solveColumnGeneration( problem, {}, &progress );
  if ( solution.status == vbas::lp::Status::Canceled )
  {
    VbasInterrupt::throwIfCanceled( feedback ); // a signal: its own message
    throw QgsProcessingException( QObject::tr( "Canceled: nothing was written." ) );
  }
  return solution;
}

//! The quick proof of infeasibility (SPEC 4.1 bound, vbas::lp::unhideableCode) as a sentence naming the code, or nothing.
QString VbasLpGeomask::unhideable( const vbas::lp::Problem &problem, const VbasCodes &codes )
{
  const std::optional<vbas::lp::Unhideable> code = vbas::lp::unhideableCode( problem );
  if ( !code )
    return QString();
  return QObject::tr( " Code %1 (population %2) cannot be hidden: the other codes that may move to its destinations hold %3 people, and keeping its share of every destination within "
                      "epsilon needs at least %4." )
    .arg( codes.ids[static_cast<int>( code->code )].toString() )
    .arg( problem.population[code->code] )
    .arg( code->available )
    .arg( std::ceil( code->needed ) );
}

VbasLpGeomask::Solved VbasLpGeomask::solve( const vbas::lp::Problem &problem, const VbasCodes &codes, QgsProcessingFeedback *feedback ) const
{
  vbas::lp::Solution solution = solveWith( problem, feedback );
  std::optional<double> smallest;
  if ( mFindMinEpsilon || solution.status == vbas::lp::Status::Infeasible )
    smallest = vbas::lp::minimumEpsilon( problem, mEpsilonTolerance, [&]( const vbas::lp::Problem &p ) { return solveWith( p, feedback ); } );
  if ( solution.status == vbas::lp::Status::Infeasible )
  {
    const QString neighbours = mRadius > 0 ? QObject::tr( "a larger RADIUS" ) : QObject::tr( "more NEIGHBOURS (now %1)" ).arg( mNeighbours );
    throw QgsProcessingException( ( smallest ? QObject::tr( "No transition probabilities keep every re-identification probability at most EPSILON = %1 with these candidates. The smallest feasible "
                                                          "epsilon is %2: use EPSILON = %2 or more, or %3." )
                                               .arg( mEpsilon )
                                               .arg( *smallest )
                                               .arg( neighbours )
                                           : QObject::tr( "No transition probabilities keep the re-identification probability at most EPSILON = %1, nor even at 1, with these candidates: "
                                                          "use %2%3." )
                                               .arg( mEpsilon )
                                               .arg( neighbours, mModel == vbas::lp::Model::Wcmb ? QObject::tr( ", or the Revised-LP model" ) : QString() ) )
                                  + unhideable( problem, codes ) );
  }
  if ( smallest )
    feedback->pushInfo( QObject::tr( "The smallest feasible epsilon is %1 (to within %2)." ).arg( *smallest ).arg( mEpsilonTolerance ) );
  return { std::move( solution ), smallest };
}

QVariantMap VbasLpGeomask::processAlgorithm( const QVariantMap &, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const VbasRun run( mOutputs );
  const VbasCodes codes = vbasReadCodes( *mCodesSource, mCodeFields, context, feedback );
  const VbasPatients patients = mPatientsSource ? vbasReadPatients( *mPatientsSource, mPatientCodeField, codes, feedback ) : vbasPatientsFromCounts( codes );
  if ( patients.origins.empty() )
    throw QgsProcessingException( QObject::tr( "There are no patients to randomise." ) );
  feedback->pushInfo( QObject::tr( "%1 codes, %2 patients." ).arg( codes.ids.size() ).arg( patients.origins.size() ) );

  vbas::lp::Problem problem;
  problem.population = codes.population;
  problem.patients = static_cast<std::int64_t>( patients.origins.size() );
  problem.epsilon = mEpsilon;
  problem.model = mModel;
  problem.candidates = mRadius > 0 ? vbas::lp::radiusCandidates( codes.locations, codes.distance, mRadius )
                                   : vbas::lp::nearestCandidates( codes.locations, codes.distance, static_cast<std::size_t>( std::min<std::int64_t>( mNeighbours, codes.ids.size() ) ) );
  QElapsedTimer timer;
  timer.start();
  const Solved solved = solve( problem, codes, feedback );
  const vbas::lp::Solution &solution = solved.solution;
  const double seconds = timer.elapsed() / 1000.0;
  const double reidentification = vbas::lp::maxReidentification( problem, solution.probability );
  if ( !( reidentification <= mEpsilon + kReidentificationSlack ) )
    throw QgsProcessingException( QObject::tr( "The solver's transition probabilities allow a re-identification probability of %1, above EPSILON = %2: nothing is written." ).arg( reidentification ).arg( mEpsilon ) );

  // The draws, then the rows in an order drawn from the seed, so the order says nothing of the input.
  const std::vector<std::uint32_t> drawn = vbas::lp::randomise( problem.candidates, solution.probability, patients.origins, mSeed );
  std::vector<std::size_t> order( drawn.size() );
  std::iota( order.begin(), order.end(), 0 );
  vbas::Random( mSeed ^ 0x6a09e667f3bcc909ULL ).shuffle( order.begin(), order.end() );
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

  VbasOutput &transitions = mOutputs.create( QStringLiteral( "TRANSITIONS" ), context );
  for ( std::uint32_t i = 0; i < problem.candidates.codes(); ++i )
    for ( std::size_t e = problem.candidates.offsets[i]; e < problem.candidates.offsets[i + 1]; ++e )
    {
      if ( solution.probability[e] <= kZeroProbability )
        continue;
      QgsFeature feature( transitions.fields() );
      feature.setAttributes( QgsAttributes() << codes.ids[static_cast<int>( i )] << codes.ids[static_cast<int>( problem.candidates.targets[e] )] << solution.probability[e]
                                             << problem.candidates.distances[e] );
      transitions.add( feature );
    }
  transitions.finish();

  const double patientsCount = static_cast<double>( drawn.size() );
  QVariantMap outputs { { QStringLiteral( "STATUS" ), status( solution.status ) },
                        { QStringLiteral( "OBJECTIVE" ), solution.objective },
                        { QStringLiteral( "MEAN_MOVEMENT" ), moved / patientsCount },
                        { QStringLiteral( "MAX_MOVEMENT" ), farthest },
                        { QStringLiteral( "MAX_REIDENTIFICATION" ), reidentification },
                        { QStringLiteral( "ROWS" ), static_cast<qlonglong>( solution.rows ) },
                        { QStringLiteral( "COLUMNS" ), static_cast<qlonglong>( solution.columns ) },
                        { QStringLiteral( "ROUNDS" ), static_cast<qlonglong>( solution.rounds ) },
                        { QStringLiteral( "GAP" ), solution.gap },
                        { QStringLiteral( "SOLVE_SECONDS" ), seconds },
                        { QStringLiteral( "MIN_EPSILON" ), solved.smallestEpsilon ? QVariant( *solved.smallestEpsilon ) : QVariant() },
                        { QStringLiteral( "PATIENTS" ), patientsCount },
                        { QStringLiteral( "SEED" ), static_cast<double>( mSeed ) } };
  feedback->pushInfo( QObject::tr( "Expected movement %1 %2 per person; the draws moved %3 %2 on average. The draws are from seed %4 (SEED=%4 repeats them)." )
                        .arg( solution.objective )
                        .arg( codes.distanceUnit )
                        .arg( moved / patientsCount )
                        .arg( mSeed ) );
  mOutputs.commit( context, outputs );
  return outputs;
}
