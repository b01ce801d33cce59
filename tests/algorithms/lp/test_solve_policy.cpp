// The LP geomask's solve policy on three codes of 10 people (one patient, Revised-LP) with stand-in solvers
// whose answers are checked by hand: keeping everyone home (P = I) gives a re-identification probability
// of 1/10, spreading everyone evenly (P_ij = 1/3) 1/3 / (30/3) = 1/30. Then the smallest epsilon by the real solvers.
#include "algorithms/lp/solve_policy.h"
#include "tests/algorithms/test_util.h"

#include <stdexcept>

using namespace vbas;
using namespace vbas::lp;

class TestSolvePolicy : public QObject
{
    Q_OBJECT

  private slots:
    void choiceByPairs();
    void fallbackOnSolverError();
    void fallbackWhenColumnGenerationStalls();
    void stalledAnswerKeptWhenOtherFails();
    void refusedWhenNeitherAnswers();
    void refusedAtLimitWithoutAnswer();
    void canceled();
    void resolvedWhenDirectBreaksEpsilon();
    void smallestEpsilon();
    void advisedRoundsUp();
};

namespace
{

Problem threeCodes()
{
  Problem p;
  p.population = { 10, 10, 10 };
  p.patients = 1;
  p.epsilon = 0.2 * ( 1 - kSolveMargin );
  p.candidates = nearestCandidates( { { 0, 0 }, { 1, 0 }, { 2, 0 } }, Distance::Euclidean, 3 );
  return p;
}

//! An optimal answer: everyone stays home, or everyone spreads evenly.
Solution answer( const Problem &p, bool home, Status status = Status::Optimal )
{
  Solution s;
  s.status = status;
  for ( std::uint32_t i = 0; i < p.candidates.codes(); ++i )
    for ( std::size_t e = p.candidates.offsets[i]; e < p.candidates.offsets[i + 1]; ++e )
      s.probability.push_back( home ? ( p.candidates.targets[e] == i ? 1.0 : 0.0 ) : 1.0 / 3 );
  return s;
}

Solution stalled( std::size_t rounds )
{
  Solution s;
  s.status = Status::Limit;
  s.rounds = rounds;
  return s;
}

auto failing( const std::string &what )
{
  return [what]( const Problem &, Progress * ) -> Solution { throw SolverError( what ); };
}

auto giving( const Solution &solution )
{
  return [solution]( const Problem &, Progress * ) { return solution; };
}

SolvePolicy policy( Solver solver, double epsilon = 0.2 )
{
  SolvePolicy policy;
  policy.solver = solver;
  policy.epsilon = epsilon;
  return policy;
}

} // namespace

void TestSolvePolicy::choiceByPairs()
{
  QCOMPARE( int( chosenSolver( Solver::Automatic, kDirectPairs ) ), int( Method::Direct ) );
  QCOMPARE( int( chosenSolver( Solver::Automatic, kDirectPairs + 1 ) ), int( Method::ColumnGeneration ) );
  QCOMPARE( int( chosenSolver( Solver::Direct, kFallbackPairs + 1 ) ), int( Method::Direct ) );
  QCOMPARE( int( chosenSolver( Solver::ColumnGeneration, 1 ) ), int( Method::ColumnGeneration ) );
}

void TestSolvePolicy::fallbackOnSolverError()
{
  const Problem p = threeCodes();
  const PolicyOutcome outcome = solveByPolicy( p, policy( Solver::Automatic ), nullptr, { failing( "direct broke" ), giving( answer( p, true ) ) } );
  QCOMPARE( int( outcome.verdict ), int( Verdict::Accepted ) );
  QCOMPARE( int( outcome.chosen ), int( Method::Direct ) );
  QCOMPARE( outcome.passes.size(), std::size_t( 1 ) );
  const Pass &pass = outcome.passes.front();
  QCOMPARE( int( pass.answeredBy ), int( Method::ColumnGeneration ) );
  QCOMPARE( pass.fallbacks.size(), std::size_t( 1 ) );
  QCOMPARE( int( pass.fallbacks[0].from ), int( Method::Direct ) );
  QCOMPARE( int( pass.fallbacks[0].why.kind ), int( Failure::Kind::SolverError ) );
  QCOMPARE( pass.fallbacks[0].why.error, std::string( "direct broke" ) );
  QVERIFY( pass.refused.empty() );
  QCOMPARE( pass.reidentification, 0.1 );
  QVERIFY( !pass.searched );
}

void TestSolvePolicy::fallbackWhenColumnGenerationStalls()
{
  const Problem p = threeCodes();
  const PolicyOutcome outcome = solveByPolicy( p, policy( Solver::ColumnGeneration ), nullptr, { giving( answer( p, false ) ), giving( stalled( 7 ) ) } );
  QCOMPARE( int( outcome.verdict ), int( Verdict::Accepted ) );
  const Pass &pass = outcome.passes.front();
  QCOMPARE( int( pass.answeredBy ), int( Method::Direct ) );
  QCOMPARE( pass.fallbacks.size(), std::size_t( 1 ) );
  QCOMPARE( int( pass.fallbacks[0].from ), int( Method::ColumnGeneration ) );
  QCOMPARE( int( pass.fallbacks[0].why.kind ), int( Failure::Kind::Stalled ) );
  QCOMPARE( pass.fallbacks[0].why.rounds, std::size_t( 7 ) );
  QCOMPARE( pass.reidentification, 1.0 / 30 );
}

void TestSolvePolicy::stalledAnswerKeptWhenOtherFails()
{
  const Problem p = threeCodes();
  const PolicyOutcome outcome = solveByPolicy( p, policy( Solver::ColumnGeneration ), nullptr, { failing( "direct broke" ), giving( answer( p, true, Status::Limit ) ) } );
  QCOMPARE( int( outcome.verdict ), int( Verdict::Accepted ) );
  const Pass &pass = outcome.passes.front();
  QCOMPARE( int( pass.answeredBy ), int( Method::ColumnGeneration ) );
  QCOMPARE( int( pass.solution.status ), int( Status::Limit ) );
  QCOMPARE( pass.fallbacks.size(), std::size_t( 1 ) );
  QVERIFY( pass.refused.empty() );
  QCOMPARE( pass.reidentification, 0.1 );
}

void TestSolvePolicy::refusedWhenNeitherAnswers()
{
  const Problem p = threeCodes();
  const PolicyOutcome outcome = solveByPolicy( p, policy( Solver::Automatic ), nullptr, { failing( "direct broke" ), failing( "column generation broke" ) } );
  QCOMPARE( int( outcome.verdict ), int( Verdict::Untrusted ) );
  const Pass &pass = outcome.passes.front();
  QCOMPARE( pass.fallbacks.size(), std::size_t( 1 ) );
  QCOMPARE( pass.refused.size(), std::size_t( 2 ) );
  QCOMPARE( pass.refused[0].error, std::string( "direct broke" ) );
  QCOMPARE( pass.refused[1].error, std::string( "column generation broke" ) );
}

void TestSolvePolicy::refusedAtLimitWithoutAnswer()
{
  const Problem p = threeCodes();
  const PolicyOutcome outcome = solveByPolicy( p, policy( Solver::Direct ), nullptr, { giving( stalled( 1 ) ), failing( "not asked" ) } );
  QCOMPARE( int( outcome.verdict ), int( Verdict::Untrusted ) );
  const Pass &pass = outcome.passes.front();
  QVERIFY( pass.fallbacks.empty() ); // the direct LP's limit is its answer
  QCOMPARE( pass.refused.size(), std::size_t( 1 ) );
  QCOMPARE( int( pass.refused[0].kind ), int( Failure::Kind::LimitWithoutAnswer ) );
}

void TestSolvePolicy::canceled()
{
  const Problem p = threeCodes();
  Solution stopped;
  stopped.status = Status::Canceled;
  QCOMPARE( int( solveByPolicy( p, policy( Solver::Automatic ), nullptr, { giving( stopped ), giving( answer( p, true ) ) } ).verdict ), int( Verdict::Canceled ) );
}

void TestSolvePolicy::resolvedWhenDirectBreaksEpsilon()
{
  const Problem p = threeCodes();
  const Solvers solvers { giving( answer( p, true ) ), giving( answer( p, false ) ) };
  const PolicyOutcome automatic = solveByPolicy( p, policy( Solver::Automatic, 0.05 ), nullptr, solvers );
  QCOMPARE( int( automatic.verdict ), int( Verdict::Accepted ) );
  QVERIFY( automatic.resolved() );
  QCOMPARE( automatic.passes.front().reidentification, 0.1 );
  QCOMPARE( int( automatic.passes.back().answeredBy ), int( Method::ColumnGeneration ) );
  QCOMPARE( automatic.passes.back().reidentification, 1.0 / 30 );
  // SOLVER = direct asked: no re-solve, refused.
  const PolicyOutcome direct = solveByPolicy( p, policy( Solver::Direct, 0.05 ), nullptr, solvers );
  QCOMPARE( int( direct.verdict ), int( Verdict::AboveEpsilon ) );
  QVERIFY( !direct.resolved() );
}

void TestSolvePolicy::smallestEpsilon()
{
  // The minimum-epsilon instance of test_lp_geomask: 2/17 is the smallest feasible epsilon.
  Problem p;
  p.population = { 8, 3, 3, 3 };
  p.patients = 2;
  p.candidates = nearestCandidates( { { 0, 0 }, { 5, 0 }, { 6, 0 }, { 7, 0 } }, Distance::Euclidean, 4 );
  SolvePolicy below = policy( Solver::Automatic, 0.1 );
  p.epsilon = below.epsilon * ( 1 - kSolveMargin );
  const PolicyOutcome infeasible = solveByPolicy( p, below, nullptr );
  QCOMPARE( int( infeasible.verdict ), int( Verdict::Infeasible ) );
  const Pass &pass = infeasible.passes.front();
  QVERIFY( pass.searched );
  QVERIFY( pass.undecided.empty() );
  QVERIFY( pass.smallestEpsilon.has_value() );
  QVERIFY2( *pass.smallestEpsilon >= 2.0 / 17 && *pass.smallestEpsilon <= 2.0 / 17 * ( 1 + below.tolerance ), std::to_string( *pass.smallestEpsilon ).c_str() );
  QCOMPARE( *pass.smallestEpsilon, advised( *pass.smallestEpsilon ) );
  // Asked for at a feasible epsilon: the same advice, the run accepted.
  SolvePolicy above = policy( Solver::Automatic, 0.5 );
  above.findSmallestEpsilon = true;
  p.epsilon = above.epsilon * ( 1 - kSolveMargin );
  const PolicyOutcome feasible = solveByPolicy( p, above, nullptr );
  QCOMPARE( int( feasible.verdict ), int( Verdict::Accepted ) );
  QCOMPARE( *feasible.passes.front().smallestEpsilon, *pass.smallestEpsilon );
  // A code of 1 person with s = 2 (WCMB): not even 1 is feasible, and the search says so without a reason.
  Problem none;
  none.population = { 1 };
  none.patients = 2;
  none.model = Model::Wcmb;
  none.candidates = nearestCandidates( { { 0, 0 } }, Distance::Euclidean, 1 );
  none.epsilon = 1 - kSolveMargin;
  const PolicyOutcome never = solveByPolicy( none, policy( Solver::Automatic, 1 ), nullptr );
  QCOMPARE( int( never.verdict ), int( Verdict::Infeasible ) );
  QVERIFY( !never.passes.front().smallestEpsilon && never.passes.front().undecided.empty() );
}

void TestSolvePolicy::advisedRoundsUp()
{
  QVERIFY( advised( 0.25 ) == 0.25 );                         // 12 digits hold it
  QVERIFY( advised( 0.1234567890123456 ) == 0.123456789013 ); // printed 0.123456789012 is below: one in the 12th digit up
  QVERIFY( advised( 0.1234567890126 ) == 0.123456789013 );    // printed rounds up already
  QVERIFY( advised( 1.0000000000004 ) == 1.00000000001 );     // the 12th digit of 1 is 1e-11
  QVERIFY( advised( 2.5e-7 + 1e-20 ) == 2.50000000001e-7 );   // and of 2.5e-7, 1e-18
}

QTEST_APPLESS_MAIN( TestSolvePolicy )
#include "test_solve_policy.moc"
