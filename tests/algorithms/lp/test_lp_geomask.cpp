// LP geomasking: hand-solved instances, Jung and El Emam's three special cases, WCMB against
// Revised, column generation against the direct LP on seeded random instances, the minimum-epsilon
// bisection, the seeded randomisation and the candidate sets against a brute-force search.
#include "algorithms/lp/geomask.h"
#include "algorithms/base/random.h"
#include "tests/algorithms/test_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

using namespace vbas;
using namespace vbas::lp;

class TestLpGeomask : public QObject
{
    Q_OBJECT

  private slots:
    void handSolvedThreeCodes();
    void allPopulationsOne();
    void singleCode();
    void allPatientsFromOneCode();
    void wcmbInfeasibleWhereRevisedIsFeasible();
    void columnGenerationMatchesDirect();
    void unhideableCode();
    void barrierThenSimplexMatchesDirect();
    void colocatedCodesMatchDirect();
    void limits();
    void minimumEpsilon();
    void feasibilityLpMatchesDirect();
    void tinyEpsilonIsProvenInfeasible();
    void extremePopulations();
    void minimumEpsilonAtExtremePopulations();
    void randomisationIsSeededAndFollowsP();
    void publishedProbabilitiesSurviveText();
    void nearestCandidatesMatchBruteForce();
    void radiusCandidatesMatchBruteForce();
    void haversineDistance();
    void cancel();
};

namespace
{

//! Every code may move to every code (the instances here are small).
Candidates allPairs( const std::vector<Location> &codes )
{
  return nearestCandidates( codes, Distance::Euclidean, codes.size() );
}

Problem problem( const std::vector<double> &population, std::int64_t s, double epsilon, Model model, Candidates candidates )
{
  Problem p;
  p.population = population;
  p.patients = s;
  p.epsilon = epsilon;
  p.model = model;
  p.candidates = std::move( candidates );
  return p;
}

//! P_ij of the pair (i, j), 0 when j is not a candidate of i.
double pij( const Problem &p, const std::vector<double> &probability, std::uint32_t i, std::uint32_t j )
{
  for ( std::size_t k = p.candidates.offsets[i]; k < p.candidates.offsets[i + 1]; ++k )
    if ( p.candidates.targets[k] == j )
      return probability[k];
  return 0;
}

//! Rows of P sum to 1, no P_ij is negative, and the re-identification probability recomputed from P is within epsilon.
void checkSolution( const Problem &p, const Solution &solution )
{
  QCOMPARE( solution.probability.size(), p.candidates.pairs() );
  for ( std::size_t i = 0; i < p.candidates.codes(); ++i )
  {
    double sum = 0;
    for ( std::size_t k = p.candidates.offsets[i]; k < p.candidates.offsets[i + 1]; ++k )
    {
      QVERIFY( solution.probability[k] >= -1e-12 );
      sum += solution.probability[k];
    }
    VBAS_COMPARE_NEAR( sum, 1.0, 1e-7 );
  }
  QVERIFY2( maxReidentification( p, solution.probability ) <= p.epsilon + 1e-9, qPrintable( QString::number( maxReidentification( p, solution.probability ) - p.epsilon ) ) );
}

//! Both solvers: the same status, and when optimal the same objective (1e-6 relative), each solution checked.
void solveBoth( const Problem &p, Status expected, double objective = -1 )
{
  const Solution direct = solveDirect( p );
  const Solution generated = solveColumnGeneration( p );
  QCOMPARE( int( direct.status ), int( expected ) );
  QCOMPARE( int( generated.status ), int( expected ) );
  if ( expected != Status::Optimal )
    return;
  checkSolution( p, generated );
  checkSolution( p, direct );
  if ( objective >= 0 )
    VBAS_COMPARE_NEAR( direct.objective, objective, 1e-9 );
  VBAS_COMPARE_NEAR( generated.objective, direct.objective, 1e-6 * std::max( direct.objective, 1e-9 ) );
}

//! A normal variate from two uniforms (Box-Muller), for lognormal populations.
double normal( Random &random )
{
  const double u1 = ( static_cast<double>( random.next() >> 11 ) + 1 ) * 0x1.0p-53;
  const double u2 = static_cast<double>( random.next() >> 11 ) * 0x1.0p-53;
  return std::sqrt( -2 * std::log( u1 ) ) * std::cos( 2 * M_PI * u2 );
}

std::vector<Location> randomPoints( Random &random, std::size_t count, bool grid )
{
  std::vector<Location> points;
  for ( std::size_t i = 0; i < count; ++i )
    if ( grid ) // many exact ties
      points.push_back( { static_cast<double>( random.below( 20 ) ), static_cast<double>( random.below( 20 ) ) } );
    else
      points.push_back( { static_cast<double>( random.below( 1000000 ) ) / 1000, static_cast<double>( random.below( 1000000 ) ) / 1000 } );
  return points;
}

//! Brute force: every code's candidates by (distance, itself first, index), the nearest m or those within radius.
Candidates bruteForce( const std::vector<Location> &codes, Distance metric, std::size_t m, double radius )
{
  Candidates candidates;
  for ( std::uint32_t i = 0; i < codes.size(); ++i )
  {
    std::vector<std::tuple<double, bool, std::uint32_t>> all;
    for ( std::uint32_t j = 0; j < codes.size(); ++j )
      all.emplace_back( distance( codes[i], codes[j], metric ), j != i, j );
    std::sort( all.begin(), all.end() );
    for ( std::size_t r = 0; r < all.size() && r < m && std::get<0>( all[r] ) <= radius; ++r )
    {
      candidates.targets.push_back( std::get<2>( all[r] ) );
      candidates.distances.push_back( std::get<0>( all[r] ) );
    }
    candidates.offsets.push_back( candidates.targets.size() );
  }
  return candidates;
}

void compareCandidates( const Candidates &actual, const Candidates &expected )
{
  QCOMPARE( actual.offsets, expected.offsets );
  QCOMPARE( actual.targets, expected.targets );
  QCOMPARE( actual.distances, expected.distances );
}

class CancelAfter : public Progress
{
  public:
    explicit CancelAfter( int reports )
      : mLeft( reports )
    {
    }
    bool canceled() const override { return mLeft <= 0; }
    void report( double, const std::string & ) override { --mLeft; }

  private:
    int mLeft;
};

/**
 * Ten codes at x = 0..9 with populations 1e-6, 1e-4, ..., 1e12 (a factor 100 apart), every pair a candidate, s = 20,
 * Revised: coefficients from 1e-6 to 1e12 in one LP.
 */
Problem extremeProblem( double epsilon )
{
  std::vector<Location> codes;
  std::vector<double> population;
  for ( int i = 0; i < 10; ++i )
  {
    codes.push_back( { double( i ), 0 } );
    population.push_back( std::pow( 10.0, -6 + 2 * i ) );
  }
  return problem( population, 20, epsilon, Model::Revised, allPairs( codes ) );
}

//! Seconds that solve takes.
template<typename Solve>
double timed( Solve solve )
{
  const auto start = std::chrono::steady_clock::now();
  solve();
  return std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
}

} // namespace

/**
 * A at x = 0 (n = 1), B at x = 2 (n = 1), C at x = 10 (n = 8); s = 4, epsilon = 0.5, Revised: c = (1, 1, 4),
 * a_i = epsilon n_i / c_i = (0.5, 0.5, 1). C's constraints are redundant (n_C = 8 >= c_C / epsilon = 8):
 * C stays at no cost. In flows x_ij = n_i P_ij, destination A needs x_AA <= 0.5 (x_AA + x_BA + x_CA), i.e.
 * x_AA <= x_BA + x_CA, with x_AA = 1 - x_AB - x_AC: x_AB + x_AC + x_BA + x_CA >= 1. Each of these four pairs
 * is at least 2 apart, so the movement is at least 2 person-units; A and B swapping half of their
 * people (P_AA = P_AB = P_BA = P_BB = 1/2) moves exactly 2. Optimum: 2 / N = 2 / 10 = 0.2 per person.
 */
void TestLpGeomask::handSolvedThreeCodes()
{
  const Problem p = problem( { 1, 1, 8 }, 4, 0.5, Model::Revised, allPairs( { { 0, 0 }, { 2, 0 }, { 10, 0 } } ) );
  solveBoth( p, Status::Optimal, 0.2 );
  const Solution solution = solveColumnGeneration( p );
  VBAS_COMPARE_NEAR( pij( p, solution.probability, 2, 2 ), 1.0, 1e-9 );
  VBAS_COMPARE_NEAR( solution.lowerBound, 0.2, 1e-6 );
  QVERIFY( solution.gap <= 1e-6 );
}

/**
 * Seed case 1: with every n_i = 1 the WCMB constraint is s P_ij <= epsilon sum_k P_kj: P_ij <= epsilon / s of
 * destination j's inflow. Eight codes on a line, s = 2, epsilon = 0.5: every destination needs at least
 * s / epsilon = 4 origins sharing it equally.
 */
void TestLpGeomask::allPopulationsOne()
{
  std::vector<Location> codes;
  for ( int i = 0; i < 8; ++i )
    codes.push_back( { double( i ), 0 } );
  const Problem p = problem( std::vector<double>( 8, 1 ), 2, 0.5, Model::Wcmb, allPairs( codes ) );
  solveBoth( p, Status::Optimal );
  const Solution solution = solveColumnGeneration( p );
  std::vector<double> inflow( 8, 0 );
  for ( std::uint32_t i = 0; i < 8; ++i )
    for ( std::uint32_t j = 0; j < 8; ++j )
      inflow[j] += pij( p, solution.probability, i, j );
  for ( std::uint32_t i = 0; i < 8; ++i )
    for ( std::uint32_t j = 0; j < 8; ++j )
      QVERIFY( pij( p, solution.probability, i, j ) <= 0.5 / 2 * inflow[j] + 1e-9 );
  // With 2 candidates each (i and i - 1, the lower index among ties; code 0: 0 and 1) a destination has 3
  // origins at most: infeasible.
  Problem two = p;
  two.candidates = nearestCandidates( codes, Distance::Euclidean, 2 );
  solveBoth( two, Status::Infeasible );
}

//! Seed case 2: one code, P_11 = 1, the constraint reduces to s / N <= epsilon: N = 8, s = 2 is feasible at epsilon = 2 / 8 = 0.25, not at 0.24.
void TestLpGeomask::singleCode()
{
  for ( const Model model : { Model::Revised, Model::Wcmb } )
  {
    solveBoth( problem( { 8 }, 2, 0.25, model, allPairs( { { 0, 0 } } ) ), Status::Optimal, 0 );
    solveBoth( problem( { 8 }, 2, 0.24, model, allPairs( { { 0, 0 } } ) ), Status::Infeasible );
  }
}

/**
 * Seed case 3: when destination j receives from i alone (P_kj = 0 for k != i) the constraint is s / n_i <=
 * epsilon, as in case 2. Code 0 (n = 8) may only stay and nobody may move to it; codes 1 and 2 (n = 100,
 * redundant for s = 2) stay. Feasible exactly when 2 / 8 <= epsilon.
 */
void TestLpGeomask::allPatientsFromOneCode()
{
  Candidates candidates;
  candidates.targets = { 0, 1, 2, 2, 1 };
  candidates.distances = { 0, 0, 1, 0, 1 };
  candidates.offsets = { 0, 1, 3, 5 };
  solveBoth( problem( { 8, 100, 100 }, 2, 0.25, Model::Wcmb, candidates ), Status::Optimal, 0 );
  solveBoth( problem( { 8, 100, 100 }, 2, 0.24, Model::Wcmb, candidates ), Status::Infeasible );
}

/**
 * Three codes of one person each, s = 4, epsilon = 0.5. WCMB: a_i = epsilon n_i / s = 0.125, a destination
 * needs caps summing to 1 and three origins give 0.375: infeasible. Revised: c_i = min(s, 1) = 1, a_i = 0.5:
 * A (x = 0) and B (x = 1) swap half (movement 1), C (x = 3) must share a destination with an origin giving
 * at least as much; any such plan costs more; feasible.
 */
void TestLpGeomask::wcmbInfeasibleWhereRevisedIsFeasible()
{
  const Candidates candidates = allPairs( { { 0, 0 }, { 1, 0 }, { 3, 0 } } );
  solveBoth( problem( { 1, 1, 1 }, 4, 0.5, Model::Wcmb, candidates ), Status::Infeasible );
  solveBoth( problem( { 1, 1, 1 }, 4, 0.5, Model::Revised, candidates ), Status::Optimal );
}

//! Seeded random instances of 20-2,000 clustered codes with lognormal populations (median 10).
void TestLpGeomask::columnGenerationMatchesDirect()
{
  std::map<Status, int> seen;
  for ( std::uint64_t seed = 1; seed <= 30; ++seed )
  {
    Random random( seed );
    const std::size_t codes = seed % 10 == 0 ? 1000 + random.below( 1001 ) : 20 + random.below( 280 );
    std::vector<Location> points;
    for ( std::size_t c = 0; c < codes; ++c )
    {
      const double cluster = static_cast<double>( random.below( 5 ) ) * 40;
      points.push_back( { cluster + 10 * normal( random ), cluster / 2 + 10 * normal( random ) } );
    }
    std::vector<double> population;
    for ( std::size_t c = 0; c < codes; ++c )
      population.push_back( std::max( 1.0, std::round( 10 * std::exp( normal( random ) ) ) ) );
    const std::size_t m = std::size_t( 5 ) << random.below( 3 );
    const std::int64_t s = 5 + static_cast<std::int64_t>( random.below( 100 ) );
    const double epsilon = 0.1 + 0.05 * static_cast<double>( random.below( 10 ) );
    const Model model = random.below( 4 ) == 0 ? Model::Wcmb : Model::Revised;
    const Problem p = problem( population, s, epsilon, model, nearestCandidates( points, Distance::Euclidean, m ) );
    const Solution direct = solveDirect( p );
    QVERIFY( direct.status == Status::Optimal || direct.status == Status::Infeasible );
    if ( vbas::lp::unhideableCode( p ) ) // the quick proof is never wrong
      QCOMPARE( int( direct.status ), int( Status::Infeasible ) );
    solveBoth( p, direct.status );
    ++seen[direct.status];
  }
  QVERIFY( seen[Status::Optimal] >= 5 );
  QVERIFY( seen[Status::Infeasible] >= 3 );
}

/**
 * Three codes, every pair a candidate, n = (40, 5, 5), s = 100, Revised, epsilon = 0.2: a_i = 0.2 for all.
 * Code 0 needs 40 * 0.8 / 0.2 = 160 people from the others at its destinations, which hold 5 + 5 = 10: both
 * solvers find it infeasible. Five codes of 5 people: each needs 5 * 4 = 20 and the other four hold exactly
 * 20, so no code is flagged, and everyone moving to one code (shares 5 / 25 = 0.2) is feasible.
 */
void TestLpGeomask::unhideableCode()
{
  const Problem p = problem( { 40, 5, 5 }, 100, 0.2, Model::Revised, allPairs( { { 0, 0 }, { 1, 0 }, { 2, 0 } } ) );
  const std::optional<vbas::lp::Unhideable> code = vbas::lp::unhideableCode( p );
  QVERIFY( code.has_value() );
  QCOMPARE( code->code, std::size_t( 0 ) );
  VBAS_COMPARE_NEAR( code->needed, 160.0, 1e-9 );
  VBAS_COMPARE_NEAR( code->available, 10.0, 1e-12 );
  solveBoth( p, Status::Infeasible );
  const Problem even = problem( { 5, 5, 5, 5, 5 }, 100, 0.2, Model::Revised, allPairs( { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 } } ) );
  QVERIFY( !vbas::lp::unhideableCode( even ).has_value() );
  solveBoth( even, Status::Optimal );
}

//! A feasible master of 1,500 rows: the barrier starts, the simplex finishes, and the optimum is the direct LP's.
void TestLpGeomask::barrierThenSimplexMatchesDirect()
{
  Random random( 11 );
  const std::vector<Location> points = randomPoints( random, 1500, false );
  std::vector<double> population;
  for ( std::size_t c = 0; c < points.size(); ++c )
    population.push_back( 2 + static_cast<double>( random.below( 6 ) ) );
  solveBoth( problem( population, 50, 0.2, Model::Revised, nearestCandidates( points, Distance::Euclidean, 10 ) ), Status::Optimal );
}

/**
 * 1,500 codes five to a place (300 places), populations 2-7, s = 50 (so every a_i = 0.2): each destination's
 * nearest origins are the four codes at its own place, every initial column costs 0, and so does the movement
 * scale. The box then starts 1 m wide and the barrier rounds drop every column that does not price out; the
 * column generation still ends at the direct LP's optimum.
 */
void TestLpGeomask::colocatedCodesMatchDirect()
{
  Random random( 7 );
  std::vector<Location> points;
  std::vector<double> population;
  for ( std::size_t place = 0; place < 300; ++place )
  {
    const Location at { static_cast<double>( random.below( 1000000 ) ) / 1000, static_cast<double>( random.below( 1000000 ) ) / 1000 };
    for ( int code = 0; code < 5; ++code )
    {
      points.push_back( at );
      population.push_back( 2 + static_cast<double>( random.below( 6 ) ) );
    }
  }
  solveBoth( problem( population, 50, 0.2, Model::Revised, nearestCandidates( points, Distance::Euclidean, 15 ) ), Status::Optimal );
}

//! A round limit stops column generation with Status::Limit; what it returns, if anything, is within epsilon.
void TestLpGeomask::limits()
{
  Random random( 5 );
  const std::vector<Location> points = randomPoints( random, 400, false );
  const Problem p = problem( std::vector<double>( 400, 3 ), 50, 0.2, Model::Revised, nearestCandidates( points, Distance::Euclidean, 30 ) );
  ColumnGenerationSettings settings;
  settings.maxRounds = 2;
  const Solution solution = solveColumnGeneration( p, settings );
  QCOMPARE( int( solution.status ), int( Status::Limit ) );
  QCOMPARE( solution.rounds, std::size_t( 2 ) );
  if ( !solution.probability.empty() )
    checkSolution( p, solution );
  settings.maxRounds = 100000;
  settings.maxSeconds = 1e-9;
  QCOMPARE( int( solveColumnGeneration( p, settings ).status ), int( Status::Limit ) );
}

/**
 * Four codes, n = (8, 3, 3, 3), s = 2, Revised: c_i = min(2, n_i) = 2 for all. Summing c_i P_ij <= epsilon Q_j
 * over j gives c_i <= epsilon sum_j Q_j = epsilon N, so epsilon >= 2 / 17; everyone moving to code 0 (shares
 * n_i / 17 <= a_i = epsilon n_i / 2) reaches it. The bisection returns a feasible epsilon in [2/17, 2/17 + 1e-3],
 * and the direct LP finds epsilon - 1e-3 infeasible.
 */
void TestLpGeomask::minimumEpsilon()
{
  const double tolerance = 1e-3;
  const Problem p = problem( { 8, 3, 3, 3 }, 2, 1.0, Model::Revised, allPairs( { { 0, 0 }, { 5, 0 }, { 6, 0 }, { 7, 0 } } ) );
  const auto solve = []( const Problem &q ) { return solveColumnGeneration( q ); };
  const std::optional<double> epsilon = vbas::lp::minimumEpsilon( p, tolerance, solve );
  QVERIFY( epsilon.has_value() );
  QVERIFY2( *epsilon >= 2.0 / 17 - 1e-9 && *epsilon <= 2.0 / 17 + tolerance, qPrintable( QString::number( *epsilon, 'g', 12 ) ) );
  Problem at = p;
  at.epsilon = *epsilon;
  QCOMPARE( int( solveDirect( at ).status ), int( Status::Optimal ) );
  at.epsilon = *epsilon - tolerance;
  QCOMPARE( int( solveDirect( at ).status ), int( Status::Infeasible ) );
  // Nothing is feasible with one code of 1 person and s = 2 (s / N = 2 > 1): WCMB.
  QVERIFY( !vbas::lp::minimumEpsilon( problem( { 1 }, 2, 1.0, Model::Wcmb, allPairs( { { 0, 0 } } ) ), tolerance, solve ).has_value() );
}

/**
 * The warm-started feasibility LP of the smallest-epsilon search on seeded random instances: at each epsilon of a
 * bisection-like walk (down, up, down) the same feasibility as the direct LP from scratch, a feasible P that passes
 * the recount, and every answer not given by the quick proof given by the warm model itself (a row for every pair:
 * 2 m + pairs rows; the fallback from scratch drops redundant rows), infeasible ones included: the primal simplex's
 * phase-1 duals must prove them. minimumEpsilon then returns what it returns with the direct LP.
 */
void TestLpGeomask::feasibilityLpMatchesDirect()
{
  std::map<Status, int> warm;
  for ( std::uint64_t seed = 1; seed <= 12; ++seed )
  {
    Random random( seed );
    const std::size_t codes = 20 + random.below( 120 );
    std::vector<Location> points = randomPoints( random, codes, false );
    std::vector<double> population;
    for ( std::size_t c = 0; c < codes; ++c )
      population.push_back( std::max( 1.0, std::round( 10 * std::exp( normal( random ) ) ) ) );
    Problem p = problem( population, 5 + static_cast<std::int64_t>( random.below( 100 ) ), 1.0, random.below( 4 ) == 0 ? Model::Wcmb : Model::Revised,
                         nearestCandidates( points, Distance::Euclidean, std::size_t( 5 ) << random.below( 3 ) ) );
    const std::optional<double> smallest = vbas::lp::minimumEpsilon( p, 1e-3, []( const Problem &q ) { return solveDirect( q ); } );
    FeasibilityLp feasibility( p );
    const double around = smallest.value_or( 1.0 );
    for ( const double factor : { 4.0, 1.02, 0.97, 1.5, 1.001, 0.5, 1.0, 0.999 } )
    {
      p.epsilon = std::min( 1.0, around * factor );
      p.feasibilityOnly = true;
      const Solution fromScratch = solveDirect( p );
      const Solution solved = feasibility.solve( p.epsilon );
      QCOMPARE( int( solved.status ), int( fromScratch.status ) );
      if ( solved.status == Status::Optimal )
        checkSolution( p, solved );
      if ( !vbas::lp::unhideableCode( p ) )
      {
        QCOMPARE( solved.rows, 2 * p.candidates.codes() + p.candidates.pairs() );
        ++warm[solved.status];
      }
    }
    p.epsilon = 1.0;
    FeasibilityLp again( p );
    const std::optional<double> warmSmallest = vbas::lp::minimumEpsilon( p, 1e-3, [&]( const Problem &q ) { return again.solve( q.epsilon ); } );
    QCOMPARE( warmSmallest.has_value(), smallest.has_value() );
    if ( smallest )
      QCOMPARE( *warmSmallest, *smallest );
  }
  QVERIFY( warm[Status::Optimal] >= 20 );
  QVERIFY( warm[Status::Infeasible] >= 10 );
}

/**
 * The three codes of handSolvedThreeCodes (n = 1, 1, 8; s = 4; c = 1, 1, 4): each code's destinations may receive
 * everyone else (A_i = N - n_i = 9, 9, 2), so the quick proof holds below max_i c_i / (n_i + A_i) = max(1/10, 1/10, 4/10)
 * = 0.4. Every epsilon below it, down to the smallest double, is infeasible by both solvers without CLP, at once.
 */
void TestLpGeomask::tinyEpsilonIsProvenInfeasible()
{
  Problem p = problem( { 1, 1, 8 }, 4, 0.5, Model::Revised, allPairs( { { 0, 0 }, { 2, 0 }, { 10, 0 } } ) );
  VBAS_COMPARE_NEAR( provenInfeasibleBelow( p ), 0.4, 1e-8 );
  for ( const double epsilon : { 0.39, 1e-10, 1e-20, 1e-300, std::numeric_limits<double>::denorm_min() } )
  {
    p.epsilon = epsilon;
    QVERIFY( vbas::lp::unhideableCode( p ).has_value() );
    QVERIFY( timed( [&] { solveBoth( p, Status::Infeasible ); } ) < 1 );
  }
}

/**
 * extremeProblem at epsilon = 0.2 and 1e-10: each solver ends within seconds (column generation once ran for hours at
 * 1e-10) with an optimum that passes its recount, or says it has none (Status::Limit, SolverError), never a wrong
 * optimum (the direct LP once reported 9e12 times the optimum). At 0.2, c3 (1 person, a = 0.2) either moves (at least
 * 1 apart) or needs 4 times its stayers from others (each at least 1 apart): at least 1 person-unit; c3, c2, c1 and c0
 * moving to c4 (100 people, redundant) cost 1.0203: column generation's optimum lies in [1, 1.1] / N.
 */
void TestLpGeomask::extremePopulations()
{
  for ( const double epsilon : { 0.2, 1e-10 } )
  {
    const Problem p = extremeProblem( epsilon );
    QVERIFY( !vbas::lp::unhideableCode( p ).has_value() );
    std::vector<Solution> optimal;
    const double seconds = timed( [&] {
      try
      {
        optimal.push_back( solveDirect( p ) );
      }
      catch ( const SolverError & )
      {
      }
      optimal.push_back( solveColumnGeneration( p ) );
    } );
    QVERIFY2( seconds < 20, qPrintable( QString::number( seconds ) ) );
    optimal.erase( std::remove_if( optimal.begin(), optimal.end(), []( const Solution &s ) { return s.status != Status::Optimal; } ), optimal.end() );
    for ( const Solution &solution : optimal )
    {
      checkSolution( p, solution );
      QVERIFY( solution.objective - solution.lowerBound <= 1e-4 * solution.objective + 1e-8 );
    }
    if ( optimal.size() == 2 )
      VBAS_COMPARE_NEAR( optimal[0].objective, optimal[1].objective, 1e-4 * optimal[1].objective );
    if ( epsilon == 0.2 )
    {
      QVERIFY( !optimal.empty() );
      const double total = std::accumulate( p.population.begin(), p.population.end(), 0.0 );
      QVERIFY2( optimal.back().objective * total >= 1 - 1e-6 && optimal.back().objective * total <= 1.1, qPrintable( QString::number( optimal.back().objective * total ) ) );
    }
  }
}

/**
 * The smallest epsilon of the three hand-solved codes: at least 0.4 (tinyEpsilonIsProvenInfeasible), at most 0.5
 * (handSolvedThreeCodes), feasible where given and infeasible 1e-3 (relative) below, by both solvers. On
 * extremeProblem, where the solvers cannot decide every epsilon, the search ends within seconds with such a value, or
 * says it cannot tell (SolverError), never with the bisection's step on (0, 1] (once 2^-10 where 1e-10 is feasible).
 */
void TestLpGeomask::minimumEpsilonAtExtremePopulations()
{
  const double tolerance = 1e-3;
  const auto direct = []( const Problem &q ) { return solveDirect( q ); };
  const Problem p = problem( { 1, 1, 8 }, 4, 1, Model::Revised, allPairs( { { 0, 0 }, { 2, 0 }, { 10, 0 } } ) );
  const std::optional<double> epsilon = vbas::lp::minimumEpsilon( p, tolerance, direct );
  QVERIFY( epsilon.has_value() );
  QVERIFY2( *epsilon >= 0.4 && *epsilon <= 0.5, qPrintable( QString::number( *epsilon, 'g', 12 ) ) );
  Problem at = p;
  at.epsilon = *epsilon;
  QCOMPARE( int( solveDirect( at ).status ), int( Status::Optimal ) );
  QCOMPARE( int( solveColumnGeneration( at ).status ), int( Status::Optimal ) );
  at.epsilon = *epsilon * ( 1 - tolerance );
  QCOMPARE( int( solveDirect( at ).status ), int( Status::Infeasible ) );
  QCOMPARE( int( solveColumnGeneration( at ).status ), int( Status::Infeasible ) );

  const auto either = []( const Problem &q ) {
    try
    {
      return solveDirect( q );
    }
    catch ( const SolverError & )
    {
      return solveColumnGeneration( q );
    }
  };
  QVERIFY( timed( [&] {
             try
             {
               const std::optional<double> extreme = vbas::lp::minimumEpsilon( extremeProblem( 1 ), tolerance, either );
               QVERIFY( extreme.has_value() && *extreme <= 1e-10 );
             }
             catch ( const SolverError & )
             {
             }
           } )
           < 20 );
}

/**
 * The same seed, the same draws; another seed, other draws. 20,000 patients of code 0 of the hand-solved
 * instance of three codes drawn with a fixed P row (0.5, 0.3, 0.2): chi-square with 2 degrees of freedom
 * below 13.8 (p = 0.001).
 */
void TestLpGeomask::randomisationIsSeededAndFollowsP()
{
  Candidates candidates = allPairs( { { 0, 0 }, { 2, 0 }, { 10, 0 } } );
  std::vector<double> probability( candidates.pairs(), 0.0 );
  const double row0[] = { 0.5, 0.3, 0.2 };
  for ( std::uint32_t i = 0; i < 3; ++i )
    for ( std::size_t k = candidates.offsets[i]; k < candidates.offsets[i + 1]; ++k )
      probability[k] = i == 0 ? row0[candidates.targets[k]] : ( candidates.targets[k] == i ? 1.0 : 0.0 );
  const std::vector<std::uint32_t> origins( 20000, 0 );
  const std::vector<std::uint32_t> drawn = randomise( candidates, probability, origins, 42 );
  QCOMPARE( randomise( candidates, probability, origins, 42 ), drawn );
  QVERIFY( randomise( candidates, probability, origins, 43 ) != drawn );
  double counts[3] = { 0, 0, 0 };
  for ( const std::uint32_t j : drawn )
    ++counts[j];
  double chiSquare = 0;
  for ( int j = 0; j < 3; ++j )
    chiSquare += std::pow( counts[j] - 20000 * row0[j], 2 ) / ( 20000 * row0[j] );
  QVERIFY2( chiSquare < 13.8, qPrintable( QString::number( chiSquare ) ) );
  // Codes 1 and 2 stay (P = 1).
  QCOMPARE( randomise( candidates, probability, { 1, 2, 2 }, 7 ), std::vector<std::uint32_t>( { 1, 2, 2 } ) );
}

void TestLpGeomask::publishedProbabilitiesSurviveText()
{
  // P as written keeps every P_ij above 0 however small (1e-13 of a code of 1e15 people is 100
  // people), and each survives 15 significant digits of text (CSV) unchanged; round-off below 0 is 0.
  vbas::Random random( 17 );
  std::vector<double> probability { -1e-18, 0.0, 1e-13, 1e-300, 0.1 + 0.2, 1.0 / 3, 1.0 };
  for ( int k = 0; k < 1000; ++k )
    probability.push_back( static_cast<double>( random.next() >> 11 ) * 0x1.0p-53 * std::pow( 10.0, -static_cast<double>( random.below( 20 ) ) ) );
  const std::vector<double> published = publishedProbabilities( probability );
  QCOMPARE( published.size(), probability.size() );
  QCOMPARE( published[0], 0.0 );
  QCOMPARE( published[1], 0.0 );
  for ( std::size_t k = 2; k < published.size(); ++k )
  {
    QVERIFY2( probability[k] == 0 || published[k] > 0, qPrintable( QString::number( probability[k] ) ) );
    VBAS_COMPARE_NEAR( published[k], probability[k], 5e-15 * probability[k] ); // half a unit of the 15th digit
    char text[32];
    std::snprintf( text, sizeof text, "%.15g", published[k] );
    QCOMPARE( std::strtod( text, nullptr ), published[k] );
  }
}

void TestLpGeomask::nearestCandidatesMatchBruteForce()
{
  Random random( 11 );
  for ( const bool grid : { false, true } )
  {
    const std::vector<Location> points = randomPoints( random, 300, grid );
    for ( const std::size_t m : { std::size_t( 1 ), std::size_t( 7 ), std::size_t( 30 ), std::size_t( 400 ) } )
      compareCandidates( nearestCandidates( points, Distance::Euclidean, m ), bruteForce( points, Distance::Euclidean, m, INFINITY ) );
  }
  // Haversine: longitudes in [-180, 180), latitudes in [-80, 80].
  std::vector<Location> geographic;
  for ( const Location &point : randomPoints( random, 300, false ) )
    geographic.push_back( { point.x * 0.36 - 180, point.y * 0.16 - 80 } );
  for ( const std::size_t m : { std::size_t( 1 ), std::size_t( 10 ), std::size_t( 30 ) } )
    compareCandidates( nearestCandidates( geographic, Distance::Haversine, m ), bruteForce( geographic, Distance::Haversine, m, INFINITY ) );
}

void TestLpGeomask::radiusCandidatesMatchBruteForce()
{
  Random random( 12 );
  for ( const bool grid : { false, true } )
  {
    const std::vector<Location> points = randomPoints( random, 300, grid );
    for ( const double radius : { 0.0, 2.0, 50.0 } )
      compareCandidates( radiusCandidates( points, Distance::Euclidean, radius ), bruteForce( points, Distance::Euclidean, SIZE_MAX, radius ) );
  }
  std::vector<Location> geographic;
  for ( const Location &point : randomPoints( random, 300, false ) )
    geographic.push_back( { point.x * 0.01, point.y * 0.01 } ); // a 10 x 10 degree square
  for ( const double radius : { 1000.0, 100000.0, 2e7 } )
    compareCandidates( radiusCandidates( geographic, Distance::Haversine, radius ), bruteForce( geographic, Distance::Haversine, SIZE_MAX, radius ) );
}

//! One degree along the equator: 6,371,008.8 * pi / 180 = 111,195.0797 m; (3, 4) to (0, 0) in a projected CRS: 5.
void TestLpGeomask::haversineDistance()
{
  VBAS_COMPARE_NEAR( distance( { 0, 0 }, { 1, 0 }, Distance::Haversine ), 111195.0797, 1e-3 );
  VBAS_COMPARE_NEAR( distance( { 10, 0 }, { 10, 1 }, Distance::Haversine ), 111195.0797, 1e-3 );
  VBAS_COMPARE_NEAR( distance( { 0, 0 }, { 180, 0 }, Distance::Haversine ), 6371008.8 * M_PI, 1e-3 );
  QCOMPARE( distance( { 3, 4 }, { 0, 0 }, Distance::Euclidean ), 5.0 );
}

void TestLpGeomask::cancel()
{
  Random random( 5 );
  const std::vector<Location> points = randomPoints( random, 400, false );
  const Problem p = problem( std::vector<double>( 400, 3 ), 50, 0.2, Model::Revised, nearestCandidates( points, Distance::Euclidean, 30 ) );
  CancelAfter progress( 1 );
  QCOMPARE( int( solveColumnGeneration( p, {}, &progress ).status ), int( Status::Canceled ) );
  CancelAfter now( 0 );
  QCOMPARE( int( solveDirect( p, &now ).status ), int( Status::Canceled ) );
}

QTEST_APPLESS_MAIN( TestLpGeomask )
#include "test_lp_geomask.moc"
