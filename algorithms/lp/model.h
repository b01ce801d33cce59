// What the two LP solvers share (internal to vbas_lp): checks of a Problem, c_i and a_i (docs/method.md, LP geomasking),
// and the candidate pairs grouped by destination.
#pragma once

#include "algorithms/lp/geomask.h"

#include <chrono>

namespace vbas::lp::model
{

//! Throws std::invalid_argument on bad input: n_i <= 0, s < 1, epsilon outside (0, 1], candidates not over the codes.
void validate( const Problem &problem );

//! c_i: min(s, n_i) for Revised-LP (eq. 8), s for WCMB-LP (eq. 3).
double c( const Problem &problem, std::size_t i );

//! a_i = epsilon n_i / c_i (docs/method.md, column generation): the largest share of destination j's inflow that may come from i.
inline double a( const Problem &problem, std::size_t i )
{
  return problem.epsilon * problem.population[i] / c( problem, i );
}

//! Whether code i's re-identification constraints are redundant: n_i >= c_i / epsilon (eq. 9: g(n_i) >= 0), i.e. a_i >= 1.
inline bool redundant( const Problem &problem, std::size_t i )
{
  return problem.population[i] >= c( problem, i ) / problem.epsilon;
}

//! N = sum_i n_i.
double total( const Problem &problem );

//! The candidate pairs by destination (CSR over j): destination j's pairs are pairs[offsets[j]..offsets[j + 1]).
struct Inflow
{
    std::vector<std::size_t> offsets;
    std::vector<std::size_t> pairs;     //!< index p of the pair (i, j) in Problem::candidates
    std::vector<std::uint32_t> origins; //!< its i
};

Inflow inflow( const Candidates &candidates );

//! Relative slack of the quick infeasibility proof, for the round-off of the sums it compares.
constexpr double UnhideableSlack = 1e-9;

//! A_i: the population of the codes other than i that may move to any of i's destinations; seen[k] == i marks k as counted (seen[i] is set).
double otherOrigins( const Problem &problem, const Inflow &inflow, std::size_t i, std::vector<std::size_t> &seen );

//! vbas::lp::unhideableCode with the inflow already grouped.
std::optional<Unhideable> unhideableCode( const Problem &problem, const Inflow &inflow );

//! sum_i sum_j (n_i / N) d_ij P_ij.
double objective( const Problem &problem, const std::vector<double> &probability );

/**
 * Whether a lower bound proves an objective optimal (docs/method.md, solver checks): within 1e-4 of it (CLP's own tolerances
 * leave gaps of some 1e-5), or within 1e-9 times the longest candidate distance when the objective is near 0.
 */
bool provenOptimal( const Problem &problem, double objective, double lowerBound );

//! Seconds since start.
inline double since( std::chrono::steady_clock::time_point start )
{
  return std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
}

} // namespace vbas::lp::model
