// The direct LP (Revised-LP eq. 8 or WCMB-LP eq. 3) over the candidate pairs, with one
// auxiliary column per destination, Q_j = sum_k n_k P_kj, so that each re-identification constraint
// Q_j - (c_i / epsilon) P_ij >= 0 has two non-zeros; constraints of codes with n_i >= c_i / epsilon
// are dropped (eq. 9: they hold for every P >= 0).
#include "algorithms/lp/clp_status.h"
#include "algorithms/lp/columns.h"
#include "algorithms/lp/geomask.h"
#include "algorithms/lp/model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

namespace vbas::lp
{

namespace
{

//! P_ij below this are CLP's round-off, not transitions: kept, they can meet a destination of no inflow and break eq. 7 by far.
constexpr double NoiseLevel = 1e-9;
//! Rows of P must sum to 1 within this, and the re-identification probability stay within epsilon (1 + it).
constexpr double VerifyFeasibility = 1e-6;
//! An infeasibility ray scaled to a largest entry of 1 proves infeasibility when its Lagrangian without costs exceeds this.
constexpr double VerifyRay = 1e-6;

//! The ways the LP is solved, in turn, until one gives a verified answer: the dual simplex with CLP's automatic scaling, with geometric scaling, and the primal simplex without scaling.
struct Attempt
{
    int scaling;
    bool dual;
    const char *name;
};
constexpr Attempt Attempts[] = { { 3, true, "dual simplex, automatic scaling" }, { 2, true, "dual simplex, geometric scaling" }, { 0, false, "primal simplex, no scaling" } };

//! Row layout: one "sum_j P_ij = 1" per code, one "Q_j - sum_k n_k P_kj = 0" per code, then the re-identification rows.
struct Layout
{
    std::size_t codes = 0;
    std::vector<int> reidentificationRow; //!< per pair, -1 when redundant

    int rowSum( std::size_t i ) const { return static_cast<int>( i ); }
    int rowQ( std::size_t j ) const { return static_cast<int>( codes + j ); }
};

//! keepRedundant: a row for every pair (FeasibilityLp, whose epsilon changes), else none for codes whose rows are redundant at the problem's epsilon.
Layout layout( const Problem &problem, bool keepRedundant = false )
{
  Layout rows;
  rows.codes = problem.candidates.codes();
  int next = static_cast<int>( 2 * rows.codes );
  for ( std::size_t i = 0; i < rows.codes; ++i )
    for ( std::size_t p = problem.candidates.offsets[i]; p < problem.candidates.offsets[i + 1]; ++p )
      rows.reidentificationRow.push_back( !keepRedundant && model::redundant( problem, i ) ? -1 : next++ );
  return rows;
}

void loadDirect( const Problem &problem, const Layout &rows, ClpSimplex &clp )
{
  const Candidates &candidates = problem.candidates;
  const double total = model::total( problem );
  ColumnBuffer columns;
  for ( std::size_t i = 0; i < rows.codes; ++i ) // P_ij
    for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1]; ++p )
    {
      columns.begin( problem.feasibilityOnly ? 0.0 : problem.population[i] / total * candidates.distances[p] );
      columns.entry( rows.rowSum( i ), 1.0 );
      columns.entry( rows.rowQ( candidates.targets[p] ), -problem.population[i] );
      if ( rows.reidentificationRow[p] >= 0 )
        columns.entry( rows.reidentificationRow[p], -model::c( problem, i ) / problem.epsilon );
    }
  const model::Inflow inflow = model::inflow( candidates );
  for ( std::size_t j = 0; j < rows.codes; ++j ) // Q_j
  {
    columns.begin( 0.0 );
    columns.entry( rows.rowQ( j ), 1.0 );
    for ( std::size_t slot = inflow.offsets[j]; slot < inflow.offsets[j + 1]; ++slot )
      if ( rows.reidentificationRow[inflow.pairs[slot]] >= 0 )
        columns.entry( rows.reidentificationRow[inflow.pairs[slot]], 1.0 );
  }
  const std::size_t rowCount = 2 * rows.codes + std::count_if( rows.reidentificationRow.begin(), rows.reidentificationRow.end(), []( int r ) { return r >= 0; } );
  std::vector<double> lower( rowCount, 0.0 ), upper( rowCount, COIN_DBL_MAX );
  for ( std::size_t i = 0; i < rows.codes; ++i )
  {
    lower[rows.rowSum( i )] = upper[rows.rowSum( i )] = 1.0;
    upper[rows.rowQ( i )] = 0.0;
  }
  columns.load( clp, lower, upper );
}

//! Sets the re-identification coefficients -c_i / epsilon for the problem's epsilon, in the model loadDirect loaded with the same rows.
void setEpsilon( const Problem &problem, const Layout &rows, ClpSimplex &clp )
{
  for ( std::size_t i = 0; i < rows.codes; ++i )
    for ( std::size_t p = problem.candidates.offsets[i]; p < problem.candidates.offsets[i + 1]; ++p )
      if ( rows.reidentificationRow[p] >= 0 )
        clp.modifyCoefficient( rows.reidentificationRow[p], static_cast<int>( p ), -model::c( problem, i ) / problem.epsilon );
}

} // namespace

namespace
{

/**
 * A lower bound on the LP's optimum from CLP's row duals y, recounted from the problem alone (docs/method.md, solver
 * checks): the Lagrangian y^T b + sum over columns of min(0, c - A^T y) times the column's implicit upper bound
 * (P_ij <= 1; Q_j <= the population of the origins of j), the duals of the ">= 0" rows taken at 0 or above. Valid
 * for any y, so a wrong report of CLP cannot raise it. With costScale 0 (no costs), a positive value for a ray y proves
 * the LP infeasible (the bound of t y grows without end).
 */
double lagrangianBound( const Problem &problem, const Layout &rows, const double *dual, double costScale = 1 )
{
  const Candidates &candidates = problem.candidates;
  const double total = model::total( problem );
  const auto y = [&]( int row ) { return row >= static_cast<int>( 2 * rows.codes ) ? std::max( dual[row], 0.0 ) : dual[row]; };
  std::vector<double> qReduced( rows.codes ), qUpper( rows.codes, 0.0 );
  for ( std::size_t j = 0; j < rows.codes; ++j )
    qReduced[j] = -y( rows.rowQ( j ) );
  double bound = 0;
  for ( std::size_t i = 0; i < rows.codes; ++i )
  {
    bound += y( rows.rowSum( i ) );
    for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1]; ++p )
    {
      const std::uint32_t j = candidates.targets[p];
      double reduced = costScale * problem.population[i] / total * candidates.distances[p] - y( rows.rowSum( i ) ) + problem.population[i] * y( rows.rowQ( j ) );
      if ( rows.reidentificationRow[p] >= 0 )
      {
        reduced += model::c( problem, i ) / problem.epsilon * y( rows.reidentificationRow[p] );
        qReduced[j] -= y( rows.reidentificationRow[p] );
      }
      bound += std::min( reduced, 0.0 );
      qUpper[j] += problem.population[i];
    }
  }
  for ( std::size_t j = 0; j < rows.codes; ++j )
    bound += std::min( qReduced[j], 0.0 ) * qUpper[j];
  return bound;
}

//! Whether y (either sign) proves the LP infeasible when recounted: the Lagrangian without costs of y scaled to a largest entry of 1 is clearly positive.
bool provesInfeasible( const Problem &problem, const Layout &rows, std::vector<double> y )
{
  double size = 0;
  for ( const double value : y )
    size = std::max( size, std::abs( value ) );
  if ( !( size > 0 ) )
    return false;
  for ( double &value : y )
    value /= size;
  if ( lagrangianBound( problem, rows, y.data(), 0 ) > VerifyRay )
    return true;
  std::transform( y.begin(), y.end(), y.begin(), std::negate<double>() );
  return lagrangianBound( problem, rows, y.data(), 0 ) > VerifyRay;
}

//! Whether CLP's certificate proves the LP infeasible: the dual simplex's infeasibility ray or, since the Lagrangian bound holds for any y, the row duals the primal simplex ends its phase 1 with.
bool certificateProvesInfeasible( const Problem &problem, const Layout &rows, const ClpSimplex &clp )
{
  std::unique_ptr<double[]> ray( clp.infeasibilityRay() );
  const double *duals = clp.dualRowSolution();
  return ( ray && provesInfeasible( problem, rows, std::vector<double>( ray.get(), ray.get() + clp.getNumRows() ) ) )
         || ( duals && provesInfeasible( problem, rows, std::vector<double>( duals, duals + clp.getNumRows() ) ) );
}

//! Why P is not a verified optimum (rows, epsilon or the gap to the bound recounted), or nothing when it is.
std::optional<std::string> unverified( const Problem &problem, const Solution &solution )
{
  const Candidates &candidates = problem.candidates;
  for ( std::size_t i = 0; i < candidates.codes(); ++i )
  {
    const double sum = std::accumulate( solution.probability.begin() + static_cast<std::ptrdiff_t>( candidates.offsets[i] ),
                                        solution.probability.begin() + static_cast<std::ptrdiff_t>( candidates.offsets[i + 1] ), 0.0 );
    if ( !( std::abs( sum - 1 ) <= VerifyFeasibility ) )
      return "the probabilities of code " + std::to_string( i ) + " sum to " + std::to_string( sum ) + ", not 1";
  }
  const double reidentification = maxReidentification( problem, solution.probability );
  if ( !( reidentification <= problem.epsilon * ( 1 + VerifyFeasibility ) ) )
    return "its re-identification probability is " + std::to_string( reidentification ) + ", above epsilon";
  if ( !problem.feasibilityOnly && !model::provenOptimal( problem, solution.objective, solution.lowerBound ) )
    return "its objective " + std::to_string( solution.objective ) + " is not within 1e-4 of the lower bound recounted from the duals, " + std::to_string( solution.lowerBound );
  return std::nullopt;
}

//! What a solved CLP model answers, recounted: Status::Limit for CLP's limits; nothing (and why, in failure) when the answer cannot be trusted.
std::optional<Solution> outcome( const Problem &problem, const Layout &rows, const ClpSimplex &clp, const char *how, std::string &failure )
{
  Solution solution;
  solution.rows = static_cast<std::size_t>( clp.getNumRows() );
  solution.columns = static_cast<std::size_t>( clp.getNumCols() );
  solution.rounds = 1;
  solution.status = Status::Optimal;
  failure = std::string( how ) + ": " + clpStatusText( clp );
  if ( clp.status() == 1 && certificateProvesInfeasible( problem, rows, clp ) )
    solution.status = Status::Infeasible;
  else if ( clp.status() == 1 )
  {
    failure += ", and its certificate does not prove it when recounted";
    return std::nullopt;
  }
  else if ( clp.status() == 3 )
    solution.status = Status::Limit; // stopped without a feasible P: none is returned
  else if ( clp.status() != 0 )
    return std::nullopt;
  if ( solution.status != Status::Optimal )
    return solution;
  const double *values = clp.primalColumnSolution();
  solution.probability.assign( values, values + problem.candidates.pairs() );
  for ( double &value : solution.probability )
    value = value < NoiseLevel ? 0.0 : value;
  solution.objective = model::objective( problem, solution.probability );
  solution.lowerBound = std::min( lagrangianBound( problem, rows, clp.dualRowSolution(), problem.feasibilityOnly ? 0 : 1 ), solution.objective );
  solution.gap = solution.objective > 0 ? ( solution.objective - solution.lowerBound ) / solution.objective : 0;
  if ( const std::optional<std::string> why = unverified( problem, solution ) )
  {
    failure = std::string( how ) + ": CLP reported an optimum, but " + *why;
    return std::nullopt;
  }
  return solution;
}

//! One attempt from scratch (outcome).
std::optional<Solution> solveOnce( const Problem &problem, const Layout &rows, const Attempt &attempt, std::string &failure )
{
  ClpSimplex clp;
  clp.setLogLevel( 0 );
  loadDirect( problem, rows, clp );
  clp.scaling( attempt.scaling );
  attempt.dual ? clp.dual() : clp.primal();
  return outcome( problem, rows, clp, attempt.name, failure );
}

} // namespace

Solution solveDirect( const Problem &problem, Progress *progress )
{
  model::validate( problem );
  const auto start = std::chrono::steady_clock::now();
  Solution solution;
  solution.status = progress && progress->canceled() ? Status::Canceled : Status::Infeasible;
  if ( solution.status == Status::Canceled || unhideableCode( problem ) ) // the quick proof: no solver, whatever epsilon
    return solution;
  const Layout rows = layout( problem );
  std::string failures;
  for ( const Attempt &attempt : Attempts )
  {
    std::string failure;
    if ( std::optional<Solution> solved = solveOnce( problem, rows, attempt, failure ) )
    {
      solved->seconds = model::since( start );
      return *solved;
    }
    failures += ( failures.empty() ? "" : "; " ) + failure;
  }
  throw SolverError( "the direct LP has no answer that can be trusted: " + failures );
}

struct FeasibilityLp::State
{
    Problem problem;
    Layout rows;
    ClpSimplex clp;
};

FeasibilityLp::FeasibilityLp( const Problem &problem )
  : mState( std::make_unique<State>() )
{
  model::validate( problem );
  State &state = *mState;
  state.problem = problem;
  state.problem.feasibilityOnly = true;
  state.rows = layout( state.problem, true );
  state.clp.setLogLevel( 0 );
  loadDirect( state.problem, state.rows, state.clp );
}

FeasibilityLp::~FeasibilityLp() = default;

Solution FeasibilityLp::solve( double epsilon, Progress *progress )
{
  State &state = *mState;
  state.problem.epsilon = epsilon;
  model::validate( state.problem );
  Solution quick;
  quick.status = progress && progress->canceled() ? Status::Canceled : Status::Infeasible;
  if ( quick.status == Status::Canceled || unhideableCode( state.problem ) )
    return quick;
  const auto start = std::chrono::steady_clock::now();
  setEpsilon( state.problem, state.rows, state.clp );
  state.clp.primal(); // without costs, every basis is optimal once feasible: the primal simplex's phase 1 is the whole solve
  std::string failure;
  std::optional<Solution> solved = outcome( state.problem, state.rows, state.clp, "primal simplex from the last basis", failure );
  if ( !solved || solved->status == Status::Limit )
    return solveDirect( state.problem, progress ); // from scratch, every way
  solved->seconds = model::since( start );
  return *solved;
}

} // namespace vbas::lp
