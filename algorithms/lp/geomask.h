// LP geomasking of postal codes (Jung and El Emam 2014; docs/method.md, LP geomasking): each patient's code
// moves at random to a nearby code, with transition probabilities P_ij from a linear program that
// minimises the expected movement while no randomised code can be traced to a person with probability
// above epsilon. Its own library beside the VBAS core; COIN-OR CLP is linked privately and never
// appears in this header. No dense |A| x |B| structure anywhere: everything is over the candidate
// pairs (i, j), j among the codes i may move to.
#pragma once

#include "algorithms/base/progress.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace vbas::lp
{

//! Distances: Euclidean in a projected CRS, Haversine (metres, on a sphere of radius 6,371,008.8 m) for longitude x and latitude y in degrees.
enum class Distance
{
  Euclidean,
  Haversine,
};

struct Location
{
    double x = 0;
    double y = 0;
};

//! d_ij between two codes: Euclidean, or Haversine metres (x longitude, y latitude in degrees).
double distance( const Location &a, const Location &b, Distance distance );

//! The destinations j each code i may move to, itself included, with d_ij; CSR: code i's are [offsets[i], offsets[i + 1]), sorted by distance, then index (the code itself first among codes at distance 0).
struct Candidates
{
    std::vector<std::size_t> offsets { 0 };
    std::vector<std::uint32_t> targets;
    std::vector<double> distances;

    std::size_t codes() const { return offsets.size() - 1; }
    std::size_t pairs() const { return targets.size(); }
};

//! The nearest m codes of every code (itself included; ties to the lower index), from a spatial index, not an O(n^2) pass.
Candidates nearestCandidates( const std::vector<Location> &codes, Distance distance, std::size_t m );

//! Every code within radius of each code (itself included).
Candidates radiusCandidates( const std::vector<Location> &codes, Distance distance, double radius );

enum class Model
{
  Revised, //!< min(s, n_i) / epsilon in the re-identification constraint (Revised-LP eq. 8)
  Wcmb,    //!< s / epsilon (Wieland et al.)
};

struct Problem
{
    std::vector<double> population; //!< n_i > 0 of every code
    std::int64_t patients = 0;      //!< s >= 1
    double epsilon = 0.2;           //!< in (0, 1]
    Model model = Model::Revised;
    Candidates candidates;
    bool feasibilityOnly = false; //!< the direct LP without costs: only whether some P meets the constraints (minimumEpsilon), its objective not optimal
};

enum class Status
{
  Optimal,
  Infeasible, //!< no P meets the constraints for this epsilon and these candidates
  Canceled,
  Limit, //!< a round or time limit stopped the solver; the solution (if any: probability may be empty) is feasible but maybe not optimal
};

/**
 * A solver gave no answer that can be trusted: CLP stopped on numerical difficulties or said something this LP
 * cannot be (unbounded), or its "optimal" answer failed the recount (docs/method.md, LP geomasking: solver
 * checks), every way of solving tried. The message says what failed.
 */
class SolverError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

struct Solution
{
    Status status = Status::Infeasible;
    double objective = 0;            //!< expected movement per person: sum_i sum_j (n_i / N) d_ij P_ij
    std::vector<double> probability; //!< P_ij, one per candidate pair (aligned with Problem::candidates)
    double lowerBound = 0;           //!< a proven lower bound on the optimum (column generation: Lagrangian)
    double gap = 0;                  //!< (objective - lowerBound) / objective
    std::size_t rows = 0;            //!< of the LP solved (the master's, for column generation)
    std::size_t columns = 0;         //!< of the LP solved (generated columns, for column generation)
    std::size_t rounds = 0;          //!< column-generation rounds (1 for the direct LP)
    double seconds = 0;
};

/**
 * The direct LP (Revised-LP eq. 8 or WCMB-LP eq. 3) with Q_j = sum_k n_k P_kj, redundant constraints (n_i >= s/epsilon)
 * dropped; for small instances and cross-checks. Infeasible without CLP when unhideableCode proves it. An optimum
 * CLP reports is kept only once recounted from P and the duals (rows sum to 1, within epsilon, and a Lagrangian
 * bound within 1e-4 of the objective, which GAP then gives); otherwise, and on CLP's numerical trouble, the LP is solved again
 * another way (other scaling, the primal simplex), and throws SolverError when no way passes.
 */
Solution solveDirect( const Problem &problem, Progress *progress = nullptr );

/**
 * The direct LP without costs (Problem::feasibilityOnly) at one epsilon after another, for minimumEpsilon: one CLP
 * model, with a re-identification row for every pair, whose coefficients -c_i / epsilon change and whose last basis
 * starts the next solve. Answers are recounted as solveDirect's; one that fails the recount is solved by solveDirect.
 */
class FeasibilityLp
{
  public:
    explicit FeasibilityLp( const Problem &problem );
    ~FeasibilityLp();
    Solution solve( double epsilon, Progress *progress = nullptr );

  private:
    struct State; //!< CLP stays out of this header
    std::unique_ptr<State> mState;
};

struct ColumnGenerationSettings
{
    double gapTolerance = 1e-6; //!< stop when (objective - Lagrangian bound) / objective is below it
    std::size_t maxRounds = 100000;
    double maxSeconds = 0;         //!< stop (Status::Limit) after a round that ends past it; 0: no limit
    std::size_t stallRounds = 200; //!< stop (Status::Limit) after this many rounds in a row that improve neither bound
    //! Partial pricing: at most this many columns a round, those of the most negative reduced costs (default: every destination that prices out).
    std::size_t maxColumnsPerRound = std::numeric_limits<std::size_t>::max();
};

//! The Dantzig-Wolfe master (one row per code; docs/method.md, column generation) solved by column generation with a warm-started CLP master and box-step dual stabilisation.
Solution solveColumnGeneration( const Problem &problem, const ColumnGenerationSettings &settings = {}, Progress *progress = nullptr );

//! A code whose people cannot be hidden: the people its destinations could receive from other codes are too few for its share cap.
struct Unhideable
{
    std::size_t code = 0;
    double needed = 0;    //!< n_i (1 - a_i) / a_i: people from other codes its destinations must receive
    double available = 0; //!< the population of the other codes that may move to any of its destinations
};

/**
 * A quick proof of infeasibility (no solver): the first code i with n_i (1 - a_i) / a_i above the population
 * of the other origins of its destinations. Each x_ij <= a_i Q_j = a_i (x_ij + R_j) gives x_ij <= a_i / (1 - a_i)
 * R_j, and summed over i's destinations n_i <= a_i / (1 - a_i) * sum_j R_j, which is at most that population.
 * Nothing when every code passes (which does not prove feasibility).
 */
std::optional<Unhideable> unhideableCode( const Problem &problem );

/**
 * The epsilon below which unhideableCode proves every epsilon infeasible: max_i c_i / (n_i + A_i), A_i the
 * population of the other origins of i's destinations (n_i (1 - a_i) / a_i > A_i exactly when a_i < n_i / (n_i + A_i)).
 * Closed form, so it holds for every epsilon a double can hold, however small.
 */
double provenInfeasibleBelow( const Problem &problem );

//! The largest re-identification probability of P, recomputed from P alone: max over pairs of c_i P_ij / sum_k n_k P_kj, c_i = min(s, n_i) (Revised) or s (WCMB).
double maxReidentification( const Problem &problem, const std::vector<double> &probability );

/**
 * P as it is written (a bound stated in an output holds when recounted from the outputs, docs/outputs.md): every
 * P_ij rounded to 15 significant digits, which a column of doubles keeps exactly and text (CSV, GeoJSON)
 * writes and reads back unchanged (DBL_DIG). Negative round-off and values below the smallest normal
 * double (which text cannot hold to 15 digits) become 0; no other P_ij is dropped, however small: with
 * a population of 1e15, 1e-13 is 100 people.
 */
std::vector<double> publishedProbabilities( std::vector<double> probability );

/**
 * The smallest feasible epsilon e to within a relative tolerance: the true one lies in [e (1 - tolerance), e]. Bisection
 * (geometric while the bracket spans more than a factor 2) between provenInfeasibleBelow and 1; nothing when even
 * epsilon = 1 is infeasible. Each problem given to solve has feasibilityOnly set. Every epsilon tried is decided by solve: SolverError when it cannot tell (its own, or
 * Status::Limit without a solution), since a bracket end that is not proven would make the tolerance untrue.
 */
std::optional<double> minimumEpsilon( Problem problem, double tolerance, const std::function<Solution( const Problem & )> &solve );

/**
 * The randomisation: each patient's new code drawn from the row P_i. of its code origins[p], with a
 * generator seeded by seed (the same seed, the same draws). Returns the new code of every patient.
 */
std::vector<std::uint32_t> randomise( const Candidates &candidates, const std::vector<double> &probability, const std::vector<std::uint32_t> &origins, std::uint64_t seed );

} // namespace vbas::lp
