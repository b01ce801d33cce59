// The parts of LP geomasking that need no solver (docs/method.md, LP geomasking): checks, the re-identification probability
// recomputed from P, P as it is published, the minimum-epsilon bisection and the seeded randomisation.
#include "algorithms/lp/geomask.h"
#include "algorithms/lp/model.h"

#include "algorithms/base/random.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace vbas::lp
{

namespace model
{

void validate( const Problem &problem )
{
  const Candidates &candidates = problem.candidates;
  if ( problem.patients < 1 )
    throw std::invalid_argument( "LP geomasking: the number of patients s must be at least 1" );
  if ( !( problem.epsilon > 0 && problem.epsilon <= 1 ) )
    throw std::invalid_argument( "LP geomasking: epsilon must be in (0, 1]" );
  if ( candidates.codes() != problem.population.size() || candidates.distances.size() != candidates.pairs() || candidates.offsets.back() != candidates.pairs() )
    throw std::invalid_argument( "LP geomasking: the candidates are not over the codes" );
  for ( const double n : problem.population )
    if ( !( n > 0 && std::isfinite( n ) ) )
      throw std::invalid_argument( "LP geomasking: every population n_i must be positive" );
  for ( const std::uint32_t j : candidates.targets )
    if ( j >= candidates.codes() )
      throw std::invalid_argument( "LP geomasking: a candidate is not a code" );
}

double c( const Problem &problem, std::size_t i )
{
  const double s = static_cast<double>( problem.patients );
  return problem.model == Model::Revised ? std::min( s, problem.population[i] ) : s;
}

double total( const Problem &problem )
{
  return std::accumulate( problem.population.begin(), problem.population.end(), 0.0 );
}

Inflow inflow( const Candidates &candidates )
{
  Inflow inflow;
  inflow.offsets.assign( candidates.codes() + 1, 0 );
  for ( const std::uint32_t j : candidates.targets )
    ++inflow.offsets[j + 1];
  std::partial_sum( inflow.offsets.begin(), inflow.offsets.end(), inflow.offsets.begin() );
  inflow.pairs.resize( candidates.pairs() );
  inflow.origins.resize( candidates.pairs() );
  std::vector<std::size_t> next( inflow.offsets.begin(), inflow.offsets.end() - 1 );
  for ( std::size_t i = 0; i < candidates.codes(); ++i )
    for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1]; ++p )
    {
      const std::size_t slot = next[candidates.targets[p]]++;
      inflow.pairs[slot] = p;
      inflow.origins[slot] = static_cast<std::uint32_t>( i );
    }
  return inflow;
}

double objective( const Problem &problem, const std::vector<double> &probability )
{
  const Candidates &candidates = problem.candidates;
  double sum = 0;
  for ( std::size_t i = 0; i < candidates.codes(); ++i )
    for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1]; ++p )
      sum += problem.population[i] * candidates.distances[p] * probability[p];
  return sum / total( problem );
}

double otherOrigins( const Problem &problem, const Inflow &inflow, std::size_t i, std::vector<std::size_t> &seen )
{
  const Candidates &candidates = problem.candidates;
  double available = 0;
  seen[i] = i;
  for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1]; ++p )
  {
    const std::uint32_t j = candidates.targets[p];
    for ( std::size_t slot = inflow.offsets[j]; slot < inflow.offsets[j + 1]; ++slot )
      if ( seen[inflow.origins[slot]] != i )
      {
        seen[inflow.origins[slot]] = i;
        available += problem.population[inflow.origins[slot]];
      }
  }
  return available;
}

bool provenOptimal( const Problem &problem, double objective, double lowerBound )
{
  const std::vector<double> &distances = problem.candidates.distances;
  const double longest = distances.empty() ? 0 : *std::max_element( distances.begin(), distances.end() );
  return objective - lowerBound <= 1e-4 * objective + 1e-9 * longest;
}

std::optional<Unhideable> unhideableCode( const Problem &problem, const Inflow &inflow )
{
  std::vector<std::size_t> seen( problem.candidates.codes(), problem.candidates.codes() ); // seen[k] == i: k counted for code i
  for ( std::size_t i = 0; i < problem.candidates.codes(); ++i )
  {
    const double a = model::a( problem, i );
    if ( a >= 1 )
      continue;
    Unhideable code { i, problem.population[i] * ( 1 - a ) / a, otherOrigins( problem, inflow, i, seen ) };
    if ( code.needed > code.available * ( 1 + UnhideableSlack ) )
      return code;
  }
  return std::nullopt;
}

} // namespace model

std::optional<Unhideable> unhideableCode( const Problem &problem )
{
  return model::unhideableCode( problem, model::inflow( problem.candidates ) );
}

double provenInfeasibleBelow( const Problem &problem )
{
  model::validate( problem );
  const model::Inflow inflow = model::inflow( problem.candidates );
  std::vector<std::size_t> seen( problem.candidates.codes(), problem.candidates.codes() );
  double below = 0;
  for ( std::size_t i = 0; i < problem.candidates.codes(); ++i )
    below = std::max( below, model::c( problem, i ) / ( problem.population[i] + model::otherOrigins( problem, inflow, i, seen ) * ( 1 + model::UnhideableSlack ) ) );
  return std::min( below, 1.0 );
}

double maxReidentification( const Problem &problem, const std::vector<double> &probability )
{
  // eq. 7: c_i P_ij / sum_k n_k P_kj over every pair with P_ij > 0.
  const Candidates &candidates = problem.candidates;
  std::vector<double> inflow( candidates.codes(), 0.0 );
  for ( std::size_t i = 0; i < candidates.codes(); ++i )
    for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1]; ++p )
      inflow[candidates.targets[p]] += problem.population[i] * probability[p];
  double largest = 0;
  for ( std::size_t i = 0; i < candidates.codes(); ++i )
    for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1]; ++p )
      if ( probability[p] > 0 )
        largest = std::max( largest, model::c( problem, i ) * probability[p] / inflow[candidates.targets[p]] );
  return largest;
}

std::vector<double> publishedProbabilities( std::vector<double> probability )
{
  for ( double &p : probability )
  {
    if ( !( p >= std::numeric_limits<double>::min() ) )
    {
      p = 0;
      continue;
    }
    char text[32];
    std::snprintf( text, sizeof text, "%.15g", p );
    p = std::strtod( text, nullptr );
  }
  return probability;
}

std::optional<double> minimumEpsilon( Problem problem, double tolerance, const std::function<Solution( const Problem & )> &solve )
{
  if ( !( tolerance > 0 && tolerance < 1 ) )
    throw std::invalid_argument( "minimumEpsilon: the tolerance must be in (0, 1)" );
  problem.feasibilityOnly = true;
  const auto feasibleAt = [&]( double epsilon ) {
    problem.epsilon = epsilon;
    const Solution solution = solve( problem );
    if ( solution.status == Status::Canceled )
      throw std::runtime_error( "minimumEpsilon: canceled" );
    if ( solution.status == Status::Limit && solution.probability.empty() )
      throw SolverError( "at epsilon = " + std::to_string( epsilon ) + " the solver stopped before it could tell whether that epsilon is feasible" );
    return solution.status != Status::Infeasible;
  };
  if ( !feasibleAt( 1.0 ) )
    return std::nullopt;
  // feasible: the smallest epsilon proven feasible; every epsilon below infeasible is proven infeasible.
  double feasible = 1.0, infeasible = provenInfeasibleBelow( problem );
  while ( feasible - infeasible > tolerance * feasible )
  {
    const double middle = infeasible > 0 && feasible > 2 * infeasible ? std::sqrt( feasible * infeasible ) : ( feasible + infeasible ) / 2;
    ( feasibleAt( middle ) ? feasible : infeasible ) = middle;
  }
  // feasible (1 - tolerance) <= infeasible: infeasible too, the constraints only tighten as epsilon falls.
  return feasible;
}

std::vector<std::uint32_t> randomise( const Candidates &candidates, const std::vector<double> &probability, const std::vector<std::uint32_t> &origins, std::uint64_t seed )
{
  if ( probability.size() != candidates.pairs() )
    throw std::invalid_argument( "randomise: one probability per candidate pair" );
  // Each patient's new code from the multinomial row P_i. (as in Jung and El Emam), by inversion of a uniform in [0, 1) with 53 random bits.
  Random random( seed );
  std::vector<std::uint32_t> result;
  result.reserve( origins.size() );
  for ( const std::uint32_t i : origins )
  {
    if ( i >= candidates.codes() )
      throw std::invalid_argument( "randomise: a patient's code is not a code" );
    const std::size_t first = candidates.offsets[i], last = candidates.offsets[i + 1];
    double rowSum = 0;
    for ( std::size_t p = first; p < last; ++p )
      rowSum += probability[p];
    const double uniform = static_cast<double>( random.next() >> 11 ) * 0x1.0p-53 * rowSum;
    std::size_t chosen = first;
    double cumulative = 0;
    for ( std::size_t p = first; p < last; ++p )
      if ( probability[p] > 0 )
      {
        chosen = p;
        cumulative += probability[p];
        if ( uniform < cumulative )
          break;
      }
    result.push_back( candidates.targets[chosen] );
  }
  return result;
}

} // namespace vbas::lp
