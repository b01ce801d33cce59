// Column generation (docs/method.md): the LP of direct.cpp as a Dantzig-Wolfe master, one row per code (sum_{j,v} lambda_jv v_i = n_i),
// whose columns are the vertices v of destination j's capped simplex {sum v = 1, 0 <= v_i <= a_i}, found by
// a greedy pricing per destination. Its duals u_i are stabilised by a box step: each row has two penalised
// slack columns that keep u_i within [centre_i - delta_i, centre_i + delta_i]. A large master is solved by
// CLP's barrier while the gap is wide, then by primal simplex warm-started between rounds (new columns enter
// non-basic): see MasterSolver. While the barrier runs, pricing uses smoothed duals (see SmoothingWeight) and
// columns far from pricing out are dropped (see purge).
#include "algorithms/lp/clp_status.h"
#include "algorithms/lp/columns.h"
#include "algorithms/lp/geomask.h"
#include "algorithms/lp/model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace vbas::lp
{

namespace
{

//! Below this, a reduced cost is not negative (the master's costs are metres per person moved).
constexpr double PricingTolerance = 1e-9;
//! A destination whose caps sum to at least 1 - CapTolerance can receive people.
constexpr double CapTolerance = 1e-9;
//! A box slack above this (people) is in use.
constexpr double SlackTolerance = 1e-9;
//! Masters of at least this many rows start with the barrier.
constexpr std::size_t BarrierCodes = 1000;
//! The barrier hands over to the simplex once the Lagrangian bound is within this share of the master objective.
constexpr double BarrierGap = 0.3;
//! The box's width (see boxWidth) is at most this many movement scales.
constexpr double WidthScales = 3;
/**
 * While the barrier solves the master, a generated column whose reduced cost exceeds this share of the box's
 * width (see boxWidth) is dropped. Measured on bench_lp's nearest-30 instance: a barrier round took 0.4 s with
 * 11,740 generated columns and 2.4 s with 96,000, most of them never used again; at 0.25 the whole took 25 s
 * instead of 43, at 0.1 longer (39 rounds instead of 32), and at 0.07 without purge's guard the same columns
 * were dropped and priced out again round after round.
 */
constexpr double PurgeShare = 0.25;
/**
 * While the barrier solves the master, pricing uses the duals SmoothingWeight * centre + (1 - SmoothingWeight) * u
 * (Wentges' smoothing, on top of the box): the barrier's duals u swing from round to round while the master
 * lacks columns; on bench_lp's nearest-30 instance the Lagrangian bound at u was negative in each of the first
 * 11 rounds, and the best bound at the smoothed duals was 77 m a person from round 1. A column priced there
 * joins the master only if its reduced cost at u is negative; when none is, the columns priced at u join.
 * Measured there: 0.5 took 16 s of processor time, 0.4 18 s, 0.3 20 s, 0.6 21 s, 0.7 27 s, none 22 s.
 * CLP only solves each master: it has no column generation of its own, so no stabilisation to ask for.
 */
constexpr double SmoothingWeight = 0.5;
//! The box is widened tenfold at most this many times in one solve of an unbounded master.
constexpr int MaxWidenings = 30;

/**
 * How the master is solved. Measured on bench_lp's nearest-30 instance (11,740 rows): warm-started primal
 * simplex needed 10,000-20,000 iterations a round in the early rounds, at up to 3 ms each once the basis
 * couples most codes (its inverse is dense), and had not converged after 300 s. CLP's barrier solves the
 * same masters in 0.4-5 s from scratch and its duals are well centred, so far fewer rounds are wasted;
 * near the optimum a round adds few columns and the warm-started simplex is cheaper again.
 */
enum class MasterSolver
{
  Barrier,   //!< interior point, no basis kept
  Crossover, //!< once: interior point, then a basis for the simplex
  Simplex,   //!< primal simplex from the last basis
};

enum class Phase
{
  Cost,        //!< minimise movement; artificial columns cost BigM (a big-M phase 1)
  Feasibility, //!< minimise the artificial columns alone (a true phase 1): decides feasibility when BigM left some
};

//! A vertex of a destination's capped simplex: shares v_i over the inflow slots of its destination.
struct Vertex
{
    std::uint32_t destination = 0;
    double reducedCost = 0;
    double cost = 0;                                    //!< sum_i d_ij v_i
    std::vector<std::pair<std::size_t, double>> shares; //!< (inflow slot, v_i)
};

class ColumnGeneration
{
  public:
    ColumnGeneration( const Problem &problem, const ColumnGenerationSettings &settings, Progress *progress );
    Solution run();

  private:
    // Pricing.
    bool usable( std::size_t j ) const { return mCapSum[j] >= 1 - CapTolerance; }
    bool everyOriginCanMove() const;
    Vertex price( std::uint32_t j, const double *u, Phase phase ) const;
    //! The least reduced cost of a destination's (or an artificial) column, and the most people its columns can take.
    struct Reduced
    {
        double cost = 0;
        double people = 0;
    };
    std::vector<Vertex> priceAll( const double *u, Phase phase, std::vector<Reduced> &reduced ) const;
    double reducedCost( double cost, const std::pair<std::size_t, double> *begin, const std::pair<std::size_t, double> *end, const double *u ) const;
    std::vector<Vertex> priceSmoothed( const double *u, std::vector<Vertex> found, std::vector<double> &smooth, double &bound ) const;
    double lagrangian( const double *u, std::vector<Reduced> reduced ) const;

    // The master.
    int firstGenerated() const { return static_cast<int>( 3 * mCodes ); }
    void buildMaster();
    double boxWidth( const std::vector<Vertex> &initial ) const;
    void addColumns( const std::vector<Vertex> &vertices );
    void setBox();
    bool solveMaster();
    void solveOnce();
    double artificialPeople() const;
    bool boxSlacksIdle() const;
    void setPhase( Phase phase );
    void purge( const double *u );

    // The loop.
    //! How a phase ended.
    enum class Outcome
    {
      Optimal,
      Infeasible,
      ArtificialsLeft, //!< the cost phase converged with artificial columns in use: phase 1 decides
      Canceled,
      Limit,
    };
    Outcome iterate( Phase phase );
    static Status status( Outcome outcome );
    bool widenBoxAtEdge( const double *u, bool widen );
    void recordFeasible();
    void report();
    std::vector<double> probability( const std::vector<double> &lambda ) const;

    const Problem &mProblem;
    const ColumnGenerationSettings &mSettings;
    Progress *mProgress;
    const std::chrono::steady_clock::time_point mStart = std::chrono::steady_clock::now();
    const std::size_t mCodes;
    const double mTotal;
    const model::Inflow mInflow;
    std::vector<double> mCap;          //!< min(a_i, 1) per code
    std::vector<double> mCapSum;       //!< per destination, summed over its own origins (never one running sum: it lost precision)
    std::vector<double> mInflowPeople; //!< U_j: the population of destination j's origins, the most any P sends to j
    double mLongest = 0;               //!< the longest candidate distance: no feasible P moves anyone further
    double mBigM = 0;
    double mWidth = 0; //!< the box's width (see boxWidth)

    ClpSimplex mClp;
    MasterSolver mMasterSolver = MasterSolver::Simplex;
    std::vector<double> mCost; //!< of every generated column, for the switch back from phase 1
    std::vector<std::size_t> mColumnStart { 0 };
    std::vector<std::pair<std::size_t, double>> mColumnShares;
    std::vector<double> mCentre, mDelta;                          //!< the box of the dual stabilisation
    bool mPurging = true;                                         //!< whether barrier rounds still drop columns (see purge)
    bool mBoxMoved = true;                                        //!< whether the box changed since the last round's master
    double mLastMaster = std::numeric_limits<double>::infinity(); //!< the master objective of the last round

    std::size_t mRounds = 0;
    std::size_t mStalled = 0;                                      //!< rounds in a row that improved neither bound
    double mLowerBound = -std::numeric_limits<double>::infinity(); //!< best Lagrangian bound (master units: metres x people)
    double mUpperBound = std::numeric_limits<double>::infinity();  //!< best feasible master objective
    std::vector<double> mBestLambda;
};

ColumnGeneration::ColumnGeneration( const Problem &problem, const ColumnGenerationSettings &settings, Progress *progress )
  : mProblem( problem )
  , mSettings( settings )
  , mProgress( progress )
  , mCodes( problem.candidates.codes() )
  , mTotal( model::total( problem ) )
  , mInflow( model::inflow( problem.candidates ) )
  , mCap( mCodes )
  , mCapSum( mCodes, 0.0 )
  , mInflowPeople( mCodes, 0.0 )
{
  for ( std::size_t i = 0; i < mCodes; ++i )
    mCap[i] = std::min( model::a( problem, i ), 1.0 );
  for ( std::size_t j = 0; j < mCodes; ++j )
    for ( std::size_t slot = mInflow.offsets[j]; slot < mInflow.offsets[j + 1]; ++slot )
    {
      mCapSum[j] += mCap[mInflow.origins[slot]];
      mInflowPeople[j] += problem.population[mInflow.origins[slot]];
    }
  mLongest = problem.candidates.distances.empty() ? 0 : *std::max_element( problem.candidates.distances.begin(), problem.candidates.distances.end() );
  mBigM = 1e3 * ( mLongest + 1 );
}

//! If the caps of all eligible origins sum to less than 1, j cannot receive anyone: an origin with no usable destination makes the LP infeasible.
bool ColumnGeneration::everyOriginCanMove() const
{
  const Candidates &candidates = mProblem.candidates;
  for ( std::size_t i = 0; i < mCodes; ++i )
  {
    bool any = false;
    for ( std::size_t p = candidates.offsets[i]; p < candidates.offsets[i + 1] && !any; ++p )
      any = usable( candidates.targets[p] );
    if ( !any )
      return false;
  }
  return true;
}

/**
 * Pricing of destination j: minimise sum_i (d_ij - u_i) v_i over the capped simplex by sorting its
 * origins by d_ij - u_i and filling their caps until the shares sum to 1 (phase 1: d_ij = 0).
 */
Vertex ColumnGeneration::price( std::uint32_t j, const double *u, Phase phase ) const
{
  const Candidates &candidates = mProblem.candidates;
  const auto distanceOf = [&]( std::size_t slot ) { return phase == Phase::Cost ? candidates.distances[mInflow.pairs[slot]] : 0.0; };
  std::vector<std::pair<double, std::size_t>> order;
  for ( std::size_t slot = mInflow.offsets[j]; slot < mInflow.offsets[j + 1]; ++slot )
    order.emplace_back( distanceOf( slot ) - u[mInflow.origins[slot]], slot );
  std::sort( order.begin(), order.end() );
  Vertex vertex;
  vertex.destination = j;
  double remaining = 1;
  for ( auto it = order.begin(); it != order.end() && remaining > 0; ++it )
  {
    const double share = std::min( mCap[mInflow.origins[it->second]], remaining );
    remaining -= share;
    vertex.shares.emplace_back( it->second, share );
    vertex.reducedCost += it->first * share;
    vertex.cost += distanceOf( it->second ) * share;
  }
  return vertex;
}

//! Prices every usable destination (reduced: each one's least reduced cost); returns the columns with a negative reduced cost, at most maxColumnsPerRound of the most negative (partial pricing).
std::vector<Vertex> ColumnGeneration::priceAll( const double *u, Phase phase, std::vector<Reduced> &reduced ) const
{
  std::vector<Vertex> found;
  reduced.clear();
  for ( std::uint32_t j = 0; j < mCodes; ++j )
    if ( usable( j ) )
    {
      Vertex vertex = price( j, u, phase );
      reduced.push_back( { vertex.reducedCost, mInflowPeople[j] } );
      if ( vertex.reducedCost < -PricingTolerance )
        found.push_back( std::move( vertex ) );
    }
  const std::size_t limit = std::max<std::size_t>( 1, mSettings.maxColumnsPerRound );
  if ( found.size() > limit )
  {
    std::nth_element( found.begin(), found.begin() + static_cast<std::ptrdiff_t>( limit ), found.end(), []( const Vertex &a, const Vertex &b ) { return a.reducedCost < b.reducedCost; } );
    found.resize( limit );
  }
  return found;
}

/**
 * The Lagrangian bound at duals u: sum_i u_i n_i + min { sum_j r_j Q_j : sum_j Q_j = N, 0 <= Q_j <= U_j }, r_j the
 * least reduced cost of destination j's columns and U_j the population of its origins (no P sends more to j).
 * Valid for any u because every column has sum(v) = 1, so the rows imply sum lambda = N (so a Lagrangian
 * bound from the duals gives a certified optimality gap at any round). The minimum is a fractional knapsack,
 * filled from the most negative r_j; without the U_j it would be N min_j r_j, far below it while many
 * destinations price out.
 */
double ColumnGeneration::lagrangian( const double *u, std::vector<Reduced> reduced ) const
{
  double bound = 0;
  for ( std::size_t i = 0; i < mCodes; ++i )
    bound += u[i] * mProblem.population[i];
  std::sort( reduced.begin(), reduced.end(), []( const Reduced &a, const Reduced &b ) { return a.cost < b.cost; } );
  double left = mTotal;
  for ( const Reduced &item : reduced )
  {
    const double take = std::min( left, item.people );
    bound += item.cost * take;
    left -= take;
    if ( left <= 0 )
      return bound;
  }
  return reduced.empty() ? -std::numeric_limits<double>::infinity() : bound + left * reduced.back().cost;
}

//! The reduced cost at duals u of a column of this cost and these (inflow slot, share) entries.
double ColumnGeneration::reducedCost( double cost, const std::pair<std::size_t, double> *begin, const std::pair<std::size_t, double> *end, const double *u ) const
{
  for ( const auto *entry = begin; entry != end; ++entry )
    cost -= u[mInflow.origins[entry->first]] * entry->second;
  return cost;
}

/**
 * Pricing at the smoothed duals (see SmoothingWeight): returns its columns with a negative reduced cost at u,
 * or found (the columns priced at u) when there are none; smooth and bound are the smoothed duals and the
 * Lagrangian bound there.
 */
std::vector<Vertex> ColumnGeneration::priceSmoothed( const double *u, std::vector<Vertex> found, std::vector<double> &smooth, double &bound ) const
{
  smooth.resize( mCodes );
  for ( std::size_t i = 0; i < mCodes; ++i )
    smooth[i] = SmoothingWeight * mCentre[i] + ( 1 - SmoothingWeight ) * u[i];
  std::vector<Reduced> reduced;
  std::vector<Vertex> smoothed = priceAll( smooth.data(), Phase::Cost, reduced );
  bound = lagrangian( smooth.data(), reduced );
  smoothed.erase( std::remove_if( smoothed.begin(), smoothed.end(),
                                  [&]( const Vertex &vertex ) { return reducedCost( vertex.cost, vertex.shares.data(), vertex.shares.data() + vertex.shares.size(), u ) >= -PricingTolerance; } ),
                  smoothed.end() );
  return smoothed.empty() ? found : smoothed;
}

/**
 * Columns 0..n-1: artificial e_i (phase 1); n..2n-1: box slack +e_i; 2n..3n-1: box slack -e_i;
 * then the initial columns: the greedy vertex of every usable destination at u = 0 (its nearest origins,
 * itself first), so that each code's own destination holds it.
 */
void ColumnGeneration::buildMaster()
{
  ColumnBuffer columns;
  for ( int sign : { 0, 1, -1 } )
    for ( std::size_t i = 0; i < mCodes; ++i )
    {
      columns.begin( sign == 0 ? mBigM : 0.0 );
      columns.entry( static_cast<int>( i ), sign == 0 ? 1.0 : sign );
    }
  const std::vector<double> rhs( mProblem.population.begin(), mProblem.population.end() );
  columns.load( mClp, rhs, rhs );
  mClp.setLogLevel( 0 );
  mClp.scaling( 0 ); // shares in [0, 1] need none, and scaling left CLP "optimal" with negative reduced costs (secondary status 3)
  const std::vector<double> zero( mCodes, 0.0 );
  std::vector<Vertex> initial;
  for ( std::uint32_t j = 0; j < mCodes; ++j )
    if ( usable( j ) )
      initial.push_back( price( j, zero.data(), Phase::Cost ) );
  addColumns( initial );
  mWidth = boxWidth( initial );
}

/**
 * The box's half-width at the start (less 1 m) and the unit of the purge threshold (docs/method.md, column
 * generation): the mean candidate distance, at most WidthScales movement scales, the movement scale being the mean
 * cost of the initial columns (each destination's nearest origins filling its caps: about how far a person moves to
 * hide among the nearest codes). The mean candidate distance grows with the number of candidates while the optimum
 * barely moves: on bench_lp (movement scales 244 and 246 m, optima 346 and 343 m a person) the width is nearest-30's
 * mean candidate distance, 719 m, as tuned, and 738 m at nearest-100 instead of its 1,324 m, which took 28-37 s of
 * processor time over three seeds instead of 17-27 s. Nearest-30 was not moved: 3 movement scales (733 m) took 20 s
 * instead of 16 s there, and 2.8 or 3.2 of them, 0.75 or 1.25 times the mean distance 20-23 s: its run time changes
 * by a fifth with the width.
 */
double ColumnGeneration::boxWidth( const std::vector<Vertex> &initial ) const
{
  const std::vector<double> &distances = mProblem.candidates.distances;
  if ( initial.empty() || distances.empty() )
    return 0;
  double scale = 0;
  for ( const Vertex &vertex : initial )
    scale += vertex.cost / static_cast<double>( initial.size() );
  return std::min( std::accumulate( distances.begin(), distances.end(), 0.0 ) / static_cast<double>( distances.size() ), WidthScales * scale );
}

void ColumnGeneration::addColumns( const std::vector<Vertex> &vertices )
{
  ColumnBuffer columns;
  for ( const Vertex &vertex : vertices )
  {
    columns.begin( vertex.cost );
    mCost.push_back( vertex.cost );
    for ( const auto &[slot, share] : vertex.shares )
    {
      columns.entry( static_cast<int>( mInflow.origins[slot] ), share );
      mColumnShares.emplace_back( slot, share );
    }
    mColumnStart.push_back( mColumnShares.size() );
  }
  columns.append( mClp );
}

//! Box step: +e_i costs centre_i + delta_i and -e_i costs delta_i - centre_i, so the master's dual u_i stays in [centre_i - delta_i, centre_i + delta_i].
void ColumnGeneration::setBox()
{
  for ( std::size_t i = 0; i < mCodes; ++i )
  {
    mClp.setObjectiveCoefficient( static_cast<int>( mCodes + i ), mCentre[i] + mDelta[i] );
    mClp.setObjectiveCoefficient( static_cast<int>( 2 * mCodes + i ), mDelta[i] - mCentre[i] );
  }
}

//! One solve of the master by the current MasterSolver; a barrier that fails hands over to the simplex from a slack basis.
void ColumnGeneration::solveOnce()
{
  if ( mMasterSolver == MasterSolver::Simplex )
  {
    mClp.primal();
    return;
  }
  mClp.barrier( mMasterSolver == MasterSolver::Crossover );
  if ( mClp.status() == 0 && mMasterSolver == MasterSolver::Barrier )
    return;
  if ( mClp.status() != 0 && mMasterSolver == MasterSolver::Barrier )
    mClp.allSlackBasis( true );
  mMasterSolver = MasterSolver::Simplex;
  if ( mClp.status() != 0 )
    mClp.primal();
}

//! Re-solves the master; a box too narrow for the columns (unbounded master) is widened, up to MaxWidenings times.
bool ColumnGeneration::solveMaster()
{
  for ( int widenings = 0;; ++widenings )
  {
    solveOnce();
    if ( mClp.status() == 0 )
      return true;
    if ( mClp.status() != 2 || widenings == MaxWidenings )
      throw SolverError( "column generation stopped in round " + std::to_string( mRounds ) + ": solving its master, " + clpStatusText( mClp ) );
    for ( double &delta : mDelta )
      delta *= 10;
    mBoxMoved = true;
    setBox();
  }
}

double ColumnGeneration::artificialPeople() const
{
  const double *x = mClp.primalColumnSolution();
  return std::accumulate( x, x + mCodes, 0.0 );
}

bool ColumnGeneration::boxSlacksIdle() const
{
  const double *x = mClp.primalColumnSolution();
  return std::all_of( x + mCodes, x + firstGenerated(), []( double value ) { return value <= SlackTolerance; } );
}

//! Whether some dual sits on the edge of its box (or its slack is in use); if widen, those rows get a box twice as wide.
bool ColumnGeneration::widenBoxAtEdge( const double *u, bool widen )
{
  const double *x = mClp.primalColumnSolution();
  bool any = false;
  for ( std::size_t i = 0; i < mCodes; ++i )
    if ( x[mCodes + i] > SlackTolerance || x[2 * mCodes + i] > SlackTolerance || std::abs( u[i] - mCentre[i] ) >= mDelta[i] * ( 1 - 1e-9 ) )
    {
      any = true;
      if ( widen )
        mDelta[i] *= 2;
    }
  return any;
}

/**
 * Drops the generated columns whose reduced cost at u exceeds PurgeShare times the box's width:
 * the barrier's work grows with the columns, and CLP keeps every column it is given. A dropped column can
 * price out again; when one round after an unchanged box does not lower the master objective, columns are
 * cycling and purging stops for good (the rounds are then those of column generation without it, which ends).
 */
void ColumnGeneration::purge( const double *u )
{
  const double threshold = PurgeShare * mWidth;
  std::vector<int> dropped;
  std::size_t kept = 0;
  std::size_t shares = 0;
  for ( std::size_t k = 0; k < mCost.size(); ++k )
  {
    if ( reducedCost( mCost[k], mColumnShares.data() + mColumnStart[k], mColumnShares.data() + mColumnStart[k + 1], u ) > threshold )
    {
      dropped.push_back( firstGenerated() + static_cast<int>( k ) );
      continue;
    }
    mCost[kept++] = mCost[k];
    std::copy( mColumnShares.begin() + static_cast<std::ptrdiff_t>( mColumnStart[k] ), mColumnShares.begin() + static_cast<std::ptrdiff_t>( mColumnStart[k + 1] ),
               mColumnShares.begin() + static_cast<std::ptrdiff_t>( shares ) );
    shares += mColumnStart[k + 1] - mColumnStart[k];
    mColumnStart[kept] = shares;
  }
  mCost.resize( kept );
  mColumnStart.resize( kept + 1 );
  mColumnShares.resize( shares );
  mClp.deleteColumns( static_cast<int>( dropped.size() ), dropped.data() );
}

/**
 * Phase 1: generated columns cost 0, artificial ones 1, no box. Back to the costs: artificial
 * columns are then forbidden (phase 1 found the master feasible without them) and the box returns.
 */
void ColumnGeneration::setPhase( Phase phase )
{
  const bool feasibility = phase == Phase::Feasibility;
  if ( mMasterSolver == MasterSolver::Barrier )
    mClp.allSlackBasis( true ); // no basis after an interior point: the simplex starts afresh
  mMasterSolver = MasterSolver::Simplex;
  for ( std::size_t i = 0; i < mCodes; ++i )
  {
    mClp.setObjectiveCoefficient( static_cast<int>( i ), 1.0 );
    mClp.setColumnUpper( static_cast<int>( i ), feasibility ? COIN_DBL_MAX : 0.0 );
    mClp.setColumnUpper( static_cast<int>( mCodes + i ), feasibility ? 0.0 : COIN_DBL_MAX );
    mClp.setColumnUpper( static_cast<int>( 2 * mCodes + i ), feasibility ? 0.0 : COIN_DBL_MAX );
  }
  for ( std::size_t k = 0; k < mCost.size(); ++k )
    mClp.setObjectiveCoefficient( firstGenerated() + static_cast<int>( k ), feasibility ? 0.0 : mCost[k] );
  if ( !feasibility )
    setBox();
}

void ColumnGeneration::recordFeasible()
{
  const double objective = mClp.objectiveValue();
  if ( objective >= mUpperBound )
    return;
  mUpperBound = objective;
  const double *x = mClp.primalColumnSolution();
  mBestLambda.assign( x + firstGenerated(), x + mClp.getNumCols() );
}

void ColumnGeneration::report()
{
  if ( !mProgress )
    return;
  const double gap = std::isfinite( mUpperBound ) && mUpperBound > 0 ? ( mUpperBound - mLowerBound ) / mUpperBound : 1.0;
  const double percent = std::clamp( 100 * std::log10( std::max( gap, mSettings.gapTolerance ) ) / std::log10( mSettings.gapTolerance ), 0.0, 100.0 );
  mProgress->report( percent, "round " + std::to_string( mRounds ) + ": objective " + ( std::isfinite( mUpperBound ) ? std::to_string( mUpperBound / mTotal ) : std::string( "-" ) ) + ", gap "
                                + std::to_string( gap ) );
}

/**
 * Rounds of master solve and pricing. The cost phase ends Optimal when the gap closes, Infeasible when the
 * Lagrangian bound exceeds N times the longest candidate distance (the cost of any feasible P is below it),
 * ArtificialsLeft when the master converged with artificial columns in use. Phase 1 ends Optimal when the
 * master needs no artificial column, Infeasible when its Lagrangian bound proves every solution needs some.
 */
ColumnGeneration::Outcome ColumnGeneration::iterate( Phase phase )
{
  const double feasibilityTolerance = 1e-7 * mTotal;
  for ( ;; )
  {
    if ( mProgress && mProgress->canceled() )
      return Outcome::Canceled;
    if ( mRounds >= mSettings.maxRounds || mStalled >= mSettings.stallRounds || ( mSettings.maxSeconds > 0 && model::since( mStart ) > mSettings.maxSeconds ) )
      return Outcome::Limit;
    ++mRounds;
    solveMaster();
    const double *u = mClp.dualRowSolution();
    std::vector<Reduced> reduced;
    std::vector<Vertex> found = priceAll( u, phase, reduced );
    const bool feasible = artificialPeople() <= feasibilityTolerance;
    if ( phase == Phase::Feasibility )
    {
      if ( feasible )
        return Outcome::Optimal;
      for ( std::size_t i = 0; i < mCodes; ++i )
        reduced.push_back( { 1 - u[i], mProblem.population[i] } ); // artificial column i, of cost 1
      if ( found.empty() || lagrangian( u, reduced ) > feasibilityTolerance )
        return Outcome::Infeasible;
    }
    else
    {
      const double bound = lagrangian( u, reduced );
      std::vector<double> smooth;
      double smoothBound = -std::numeric_limits<double>::infinity();
      if ( mMasterSolver == MasterSolver::Barrier )
        found = priceSmoothed( u, std::move( found ), smooth, smoothBound );
      const bool serious = std::max( bound, smoothBound ) > mLowerBound;
      const double upperBefore = mUpperBound;
      if ( serious ) // a serious step: the box moves to the better duals
      {
        mLowerBound = std::max( bound, smoothBound );
        if ( smoothBound > bound )
          mCentre = std::move( smooth );
        else
          mCentre.assign( u, u + mCodes );
      }
      if ( mLowerBound > mTotal * mLongest * ( 1 + 1e-9 ) + feasibilityTolerance )
        return Outcome::Infeasible;
      if ( feasible && boxSlacksIdle() && mMasterSolver == MasterSolver::Simplex ) // a basic solution, not an interior point within the barrier's tolerance
        recordFeasible();
      mStalled = serious || mUpperBound < upperBefore ? 0 : mStalled + 1;
      if ( std::isfinite( mUpperBound ) && mUpperBound - mLowerBound <= mSettings.gapTolerance * mUpperBound )
        return Outcome::Optimal;
      const double master = mClp.objectiveValue();
      const bool atEdge = widenBoxAtEdge( u, serious || found.empty() );
      if ( mMasterSolver == MasterSolver::Barrier && mPurging )
      {
        mPurging = mBoxMoved || master < mLastMaster; // a new box, or the master still improves
        mLastMaster = master;
        if ( mPurging )
          purge( u );
      }
      mBoxMoved = serious || ( found.empty() && atEdge );
      if ( mMasterSolver == MasterSolver::Barrier && ( ( found.empty() && !atEdge ) || mLowerBound > ( 1 - BarrierGap ) * master ) )
        mMasterSolver = MasterSolver::Crossover; // the simplex ends every run, with a basic solution
      else if ( found.empty() && !atEdge )       // the box is inactive: u is optimal for the full dual
        return feasible ? Outcome::Optimal : Outcome::ArtificialsLeft;
      setBox();
    }
    addColumns( found );
    report();
  }
}

/**
 * P_ij = sum_v lambda_jv v_i / n_i. Rows are not rescaled: any lambda >= 0 keeps every
 * re-identification constraint exactly (each column lies in its cone), and rows sum to 1 to CLP's tolerance.
 */
std::vector<double> ColumnGeneration::probability( const std::vector<double> &lambda ) const
{
  std::vector<double> result( mProblem.candidates.pairs(), 0.0 );
  for ( std::size_t k = 0; k < lambda.size(); ++k )
    if ( lambda[k] > 0 )
      for ( std::size_t e = mColumnStart[k]; e < mColumnStart[k + 1]; ++e )
      {
        const auto &[slot, share] = mColumnShares[e];
        result[mInflow.pairs[slot]] += lambda[k] * share / mProblem.population[mInflow.origins[slot]];
      }
  return result;
}

Status ColumnGeneration::status( Outcome outcome )
{
  switch ( outcome )
  {
    case Outcome::Optimal:
      return Status::Optimal;
    case Outcome::Canceled:
      return Status::Canceled;
    case Outcome::Limit:
      return Status::Limit;
    case Outcome::Infeasible:
    case Outcome::ArtificialsLeft: // after phase 1 found the master feasible, artificial columns are forbidden: never here
      break;
  }
  return Status::Infeasible;
}

Solution ColumnGeneration::run()
{
  Solution solution;
  solution.rows = mCodes;
  if ( !everyOriginCanMove() || model::unhideableCode( mProblem, mInflow ) )
  {
    solution.seconds = model::since( mStart );
    return solution; // Infeasible
  }
  mMasterSolver = mCodes >= BarrierCodes ? MasterSolver::Barrier : MasterSolver::Simplex;
  buildMaster();
  mCentre.assign( mCodes, 0.0 );
  mDelta.assign( mCodes, mWidth + 1 );
  setBox();
  Outcome outcome = iterate( Phase::Cost );
  if ( outcome == Outcome::ArtificialsLeft )
  {
    setPhase( Phase::Feasibility );
    outcome = iterate( Phase::Feasibility );
    if ( outcome == Outcome::Optimal )
    {
      setPhase( Phase::Cost );
      outcome = iterate( Phase::Cost );
    }
  }
  solution.status = status( outcome );
  solution.columns = mCost.size();
  solution.rounds = mRounds;
  if ( solution.status != Status::Infeasible && solution.status != Status::Canceled && !mBestLambda.empty() )
  {
    solution.probability = probability( mBestLambda );
    solution.objective = model::objective( mProblem, solution.probability );
    solution.lowerBound = std::min( mLowerBound / mTotal, solution.objective );
    solution.gap = solution.objective > 0 ? ( solution.objective - solution.lowerBound ) / solution.objective : 0;
    if ( solution.status == Status::Optimal && !model::provenOptimal( mProblem, solution.objective, solution.lowerBound ) )
      solution.status = Status::Limit; // converged, but its bound does not prove it
  }
  solution.seconds = model::since( mStart );
  return solution;
}

} // namespace

Solution solveColumnGeneration( const Problem &problem, const ColumnGenerationSettings &settings, Progress *progress )
{
  model::validate( problem );
  return ColumnGeneration( problem, settings, progress ).run();
}

} // namespace vbas::lp
