// The LP geomask's solve policy (docs/method.md, LP geomasking): which solver, the fallback to the other, the
// recount that accepts P, the smallest feasible epsilon and the automatic re-solve when the direct LP's
// round-off breaks epsilon. It says what happened as facts; the plugin words them for the user.
#pragma once

#include "algorithms/lp/geomask.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vbas::lp
{

//! Above this many candidate pairs the automatic choice is column generation (the direct LP is the better choice for small instances).
constexpr std::size_t kDirectPairs = 40000;
//! Up to this many candidate pairs, the direct LP is tried when column generation stalls or fails.
constexpr std::size_t kFallbackPairs = 10 * kDirectPairs;
/**
 * The LP is solved at epsilon (1 - kSolveMargin): its binding constraints then hold with room for the
 * round-off of the solvers and of the 15 digits written, so the bound recounted from TRANSITIONS is at
 * most epsilon itself (recounted from the outputs, docs/outputs.md), which the run checks before anything is written.
 */
constexpr double kSolveMargin = 1e-9;

//! The solver asked for (SOLVER).
enum class Solver
{
  Automatic,
  ColumnGeneration,
  Direct,
};

//! A solver that runs.
enum class Method
{
  Direct,
  ColumnGeneration,
};

//! The two solvers, solveDirect and solveColumnGeneration unless a test gives others.
struct Solvers
{
    std::function<Solution( const Problem &, Progress * )> direct = []( const Problem &p, Progress *progress ) { return solveDirect( p, progress ); };
    std::function<Solution( const Problem &, Progress * )> columnGeneration = []( const Problem &p, Progress *progress ) { return solveColumnGeneration( p, {}, progress ); };
};

struct SolvePolicy
{
    Solver solver = Solver::Automatic;
    double epsilon = 0.2;             //!< EPSILON as given: the problem is solved at epsilon (1 - kSolveMargin), the recount must be at most epsilon
    bool findSmallestEpsilon = false; //!< FIND_MIN_EPSILON (the search also runs when epsilon is infeasible)
    double tolerance = 1e-3;          //!< of the smallest epsilon (minimumEpsilon)
};

//! Why a solver gave no transition probabilities that can be trusted.
struct Failure
{
    enum class Kind
    {
      Stalled,            //!< column generation stopped (Status::Limit) after rounds rounds without proving an optimum
      SolverError,        //!< error says what failed (SolverError::what())
      LimitWithoutAnswer, //!< the solver stopped on its iteration or time limit before it found any
    };
    Kind kind = Kind::SolverError;
    std::size_t rounds = 0;
    std::string error;
};

//! The solver from failed (why) and the other was tried.
struct Fallback
{
    Method from = Method::Direct;
    Failure why;
};

//! One solve at EPSILON with one first solver, and the smallest epsilon when searched for.
struct Pass
{
    Method answeredBy = Method::Direct;
    std::vector<Fallback> fallbacks; //!< in order: the solve's own, then those of the smallest-epsilon search
    std::vector<Failure> refused;    //!< why no solver gave P that can be trusted (the first's, then the other's); empty when one did
    Solution solution;
    bool searched = false;                 //!< whether the smallest epsilon was searched for
    std::optional<double> smallestEpsilon; //!< as advised; nothing when undecided or when even 1 is infeasible
    std::string undecided;                 //!< why the smallest epsilon could not be found (a SolverError), or empty
    std::vector<double> published;         //!< P as TRANSITIONS holds it (publishedProbabilities)
    double reidentification = 0;           //!< recounted from published
};

enum class Verdict
{
  Accepted,     //!< the last pass's published P keeps every re-identification probability at most epsilon
  Canceled,     //!< Progress::canceled stopped a solver
  Untrusted,    //!< no transition probabilities that can be trusted: the last pass's refused says why
  Infeasible,   //!< no P keeps the re-identification probability at most epsilon with these candidates
  AboveEpsilon, //!< the last pass's recount is above epsilon
};

struct PolicyOutcome
{
    Verdict verdict = Verdict::Canceled;
    Method chosen = Method::Direct; //!< the first solver, by SOLVER and the pairs
    std::vector<Pass> passes;       //!< one, or two when the automatic choice re-solved by column generation (the last may be cut short by a cancel)
    bool resolved() const { return passes.size() == 2; }
};

//! The first solver: the one asked for, or automatically the direct LP up to kDirectPairs pairs.
Method chosenSolver( Solver solver, std::size_t pairs );

/**
 * Solves problem (its epsilon is policy.epsilon (1 - kSolveMargin)) as the run does: the chosen solver, once the
 * other when it fails or column generation stalls (not the direct LP above kFallbackPairs pairs), the smallest epsilon when
 * asked or infeasible, and by column generation again when the automatic choice's direct LP gives a recount above epsilon.
 */
PolicyOutcome solveByPolicy( const Problem &problem, const SolvePolicy &policy, Progress *progress, const Solvers &solvers = {} );

//! epsilon rounded up to the 12 significant digits a message gives it with: the value advised is the value tried.
double advised( double epsilon );

} // namespace vbas::lp
