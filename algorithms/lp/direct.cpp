// The direct LP (Revised-LP eq. 8 or WCMB-LP eq. 3) over the candidate pairs, with one
// auxiliary column per destination, Q_j = sum_k n_k P_kj, so that each re-identification constraint
// Q_j - (c_i / epsilon) P_ij >= 0 has two non-zeros; constraints of codes with n_i >= c_i / epsilon
// are dropped (eq. 9: they hold for every P >= 0).
#include "columns.h"
#include "geomask.h"
#include "model.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vbas::lp
{

namespace
{

//! P_ij below this are CLP's round-off, not transitions: kept, they can meet a destination of no inflow and break eq. 7 by far.
constexpr double NoiseLevel = 1e-9;

//! Row layout: one "sum_j P_ij = 1" per code, one "Q_j - sum_k n_k P_kj = 0" per code, then the re-identification rows.
struct Layout
{
    std::size_t codes = 0;
    std::vector<int> reidentificationRow; //!< per pair, -1 when redundant

    int rowSum( std::size_t i ) const { return static_cast<int>( i ); }
    int rowQ( std::size_t j ) const { return static_cast<int>( codes + j ); }
};

Layout layout( const Problem &problem )
{
  Layout rows;
  rows.codes = problem.candidates.codes();
  int next = static_cast<int>( 2 * rows.codes );
  for ( std::size_t i = 0; i < rows.codes; ++i )
    for ( std::size_t p = problem.candidates.offsets[i]; p < problem.candidates.offsets[i + 1]; ++p )
      rows.reidentificationRow.push_back( model::redundant( problem, i ) ? -1 : next++ );
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
      columns.begin( problem.population[i] / total * candidates.distances[p] );
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

} // namespace

Solution solveDirect( const Problem &problem, Progress *progress )
{
  model::validate( problem );
  const auto start = std::chrono::steady_clock::now();
  Solution solution;
  if ( progress && progress->canceled() )
  {
    solution.status = Status::Canceled;
    return solution;
  }
  const Layout rows = layout( problem );
  ClpSimplex clp;
  clp.setLogLevel( 0 );
  loadDirect( problem, rows, clp );
  clp.dual();
  solution.rows = static_cast<std::size_t>( clp.getNumRows() );
  solution.columns = static_cast<std::size_t>( clp.getNumCols() );
  solution.rounds = 1;
  if ( clp.isProvenPrimalInfeasible() )
    solution.status = Status::Infeasible;
  else if ( clp.status() != 0 )
    throw std::runtime_error( "solveDirect: CLP stopped with status " + std::to_string( clp.status() ) );
  else
  {
    solution.status = Status::Optimal;
    const double *values = clp.primalColumnSolution();
    solution.probability.assign( values, values + problem.candidates.pairs() );
    for ( double &value : solution.probability )
      value = value < NoiseLevel ? 0.0 : value;
    solution.objective = model::objective( problem, solution.probability );
    solution.lowerBound = clp.objectiveValue();
  }
  solution.seconds = model::since( start );
  return solution;
}

} // namespace vbas::lp
