#include "algorithms/lp/solve_policy.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace vbas::lp
{

namespace
{

//! A solver stopped on Progress::canceled: the policy stops at once.
struct CanceledSolve
{
};

//! An answer, or why none can be trusted.
struct Answer
{
    std::optional<Solution> solution;
    Method by = Method::Direct;
    std::vector<Failure> refused;
};

Method other( Method method )
{
  return method == Method::Direct ? Method::ColumnGeneration : Method::Direct;
}

Solution notCanceled( Solution solution )
{
  if ( solution.status == Status::Canceled )
    throw CanceledSolve();
  return solution;
}

Solution solveWith( const Solvers &solvers, const Problem &problem, Method method, Progress *progress )
{
  return notCanceled( method == Method::Direct ? solvers.direct( problem, progress ) : solvers.columnGeneration( problem, progress ) );
}

//! The stopped solution when it holds transition probabilities (Status::Limit, with its proven gap); otherwise why none.
Answer limitOrRefuse( const std::optional<Solution> &stopped, Method method, std::vector<Failure> why )
{
  if ( stopped && !stopped->probability.empty() )
    return { stopped, method, {} };
  return { std::nullopt, method, std::move( why ) };
}

//! method's answer, or once the other's when method gives none that can be trusted or column generation stalls.
Answer solveOrFallBack( const Problem &problem, Method method, const Solvers &solvers, Progress *progress, std::vector<Fallback> &fallbacks )
{
  std::optional<Solution> first;
  Failure why;
  try
  {
    first = solveWith( solvers, problem, method, progress );
    if ( method == Method::Direct || first->status != Status::Limit )
      return { first, method, {} };
    why = { Failure::Kind::Stalled, first->rounds, {} };
  }
  catch ( const SolverError &e )
  {
    why = { Failure::Kind::SolverError, 0, e.what() };
  }
  if ( method == Method::ColumnGeneration && problem.candidates.pairs() > kFallbackPairs ) // too large for the direct LP
    return limitOrRefuse( first, method, { why } );
  fallbacks.push_back( { method, why } );
  try
  {
    return { solveWith( solvers, problem, other( method ), progress ), other( method ), {} };
  }
  catch ( const SolverError &e )
  {
    return limitOrRefuse( first, method, { why, { Failure::Kind::SolverError, 0, e.what() } } );
  }
}

//! The run's solution at epsilon (solver and fallback as the run chooses them); no probabilities when the run would refuse it.
Solution accepted( Problem problem, double epsilon, const SolvePolicy &policy, const Solvers &solvers, Progress *progress, std::vector<Fallback> &fallbacks )
{
  problem.epsilon = epsilon * ( 1 - kSolveMargin );
  const Answer answer = solveOrFallBack( problem, chosenSolver( policy.solver, problem.candidates.pairs() ), solvers, progress, fallbacks );
  if ( !answer.solution || answer.solution->status == Status::Infeasible || answer.solution->probability.empty()
       || !( maxReidentification( problem, publishedProbabilities( answer.solution->probability ) ) <= epsilon ) )
    return {};
  return *answer.solution;
}

/**
 * The smallest feasible epsilon (minimumEpsilon: the direct LP without costs, warm-started, up to kFallbackPairs
 * pairs, column generation when it cannot tell or above), as advised, when the run accepts it; otherwise the
 * smallest the run accepts, each epsilon tried by accepted. Nothing, with pass.undecided saying why, when the
 * solvers cannot tell, or when even 1 is infeasible.
 */
void smallestEpsilon( const Problem &problem, const SolvePolicy &policy, const Solvers &solvers, Progress *progress, Pass &pass )
{
  const bool direct = problem.candidates.pairs() <= kFallbackPairs; // without costs, the direct LP only looks for a feasible P: the quicker
  const Method primary = direct ? Method::Direct : Method::ColumnGeneration;
  std::optional<FeasibilityLp> feasibility; // each epsilon's solve starts from the last one's basis
  if ( direct )
    feasibility.emplace( problem );
  const auto feasible = [&]( Problem p ) {
    p.epsilon *= 1 - kSolveMargin; // as the run solves it
    try
    {
      return direct ? notCanceled( feasibility->solve( p.epsilon, progress ) ) : solveWith( solvers, p, primary, progress );
    }
    catch ( const SolverError & )
    {
      return solveWith( solvers, p, other( primary ), progress );
    }
  };
  // An epsilon tried as the run tries it: transition probabilities its own solver gives and its recount accepts.
  const auto run = [&]( const Problem &p ) { return accepted( problem, advised( p.epsilon ), policy, solvers, progress, pass.fallbacks ); };
  try
  {
    std::optional<double> smallest = minimumEpsilon( problem, policy.tolerance, feasible );
    // The advice is an EPSILON the run accepts: once, at populations of 1e-6 to 1e12, the run's solver stopped
    // without an answer at the feasible epsilon advised. Then the search is done again, each epsilon tried by a run.
    if ( smallest && accepted( problem, advised( *smallest ), policy, solvers, progress, pass.fallbacks ).probability.empty() )
      smallest = minimumEpsilon( problem, policy.tolerance, run );
    if ( smallest )
      pass.smallestEpsilon = advised( *smallest );
  }
  catch ( const SolverError &e )
  {
    pass.undecided = e.what();
  }
}

//! One pass at the problem's epsilon, first by method.
void solveBy( const Problem &problem, const SolvePolicy &policy, Method method, const Solvers &solvers, Progress *progress, Pass &pass )
{
  Answer answer = solveOrFallBack( problem, method, solvers, progress, pass.fallbacks );
  pass.answeredBy = answer.by;
  pass.refused = std::move( answer.refused );
  if ( !answer.solution )
    return;
  pass.solution = std::move( *answer.solution );
  if ( pass.solution.status == Status::Limit && pass.solution.probability.empty() )
  {
    pass.refused = { { Failure::Kind::LimitWithoutAnswer, 0, {} } };
    return;
  }
  pass.searched = policy.findSmallestEpsilon || pass.solution.status == Status::Infeasible;
  if ( pass.searched )
    smallestEpsilon( problem, policy, solvers, progress, pass );
  if ( pass.solution.status == Status::Infeasible )
    return;
  pass.published = publishedProbabilities( pass.solution.probability );
  pass.reidentification = maxReidentification( problem, pass.published );
}

Verdict verdictOf( const Pass &pass, double epsilon )
{
  if ( !pass.refused.empty() )
    return Verdict::Untrusted;
  if ( pass.solution.status == Status::Infeasible )
    return Verdict::Infeasible;
  return pass.reidentification <= epsilon ? Verdict::Accepted : Verdict::AboveEpsilon;
}

//! value as printed with 12 significant digits, read back.
double printed( double value )
{
  char text[32];
  std::snprintf( text, sizeof text, "%.12g", value );
  return std::strtod( text, nullptr );
}

} // namespace

Method chosenSolver( Solver solver, std::size_t pairs )
{
  return solver == Solver::Direct || ( solver == Solver::Automatic && pairs <= kDirectPairs ) ? Method::Direct : Method::ColumnGeneration;
}

PolicyOutcome solveByPolicy( const Problem &problem, const SolvePolicy &policy, Progress *progress, const Solvers &solvers )
{
  PolicyOutcome outcome;
  outcome.chosen = chosenSolver( policy.solver, problem.candidates.pairs() );
  try
  {
    solveBy( problem, policy, outcome.chosen, solvers, progress, outcome.passes.emplace_back() );
    const Verdict first = verdictOf( outcome.passes.back(), policy.epsilon );
    if ( first == Verdict::AboveEpsilon && outcome.chosen == Method::Direct && policy.solver == Solver::Automatic )
      solveBy( problem, policy, Method::ColumnGeneration, solvers, progress, outcome.passes.emplace_back() );
  }
  catch ( const CanceledSolve & )
  {
    outcome.verdict = Verdict::Canceled;
    return outcome;
  }
  outcome.verdict = verdictOf( outcome.passes.back(), policy.epsilon );
  return outcome;
}

double advised( double epsilon )
{
  const double rounded = printed( epsilon );
  return rounded >= epsilon ? rounded : printed( rounded + std::pow( 10.0, std::floor( std::log10( epsilon ) ) - 11 ) );
}

} // namespace vbas::lp
