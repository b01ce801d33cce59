#include "algorithms/aggregation/adc.h"

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/aggregation/criterion.h"
#include "algorithms/aggregation/delaunay.h"
#include "algorithms/aggregation/mean_point.h"
#include "algorithms/base/flat_map.h"
#include "algorithms/base/random.h"
#include "algorithms/aggregation/voronoi.h"

#include <CGAL/Fuzzy_iso_box.h>
#include <CGAL/Kd_tree.h>
#include <CGAL/Search_traits_2.h>
#include <CGAL/Search_traits_adapter.h>
#include <CGAL/property_map.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

namespace vbas
{

namespace
{

using delaunay::Kernel;
using delaunay::squaredDistance;
using Triangulation = delaunay::Triangulation;
using Vertex = Triangulation::Vertex_handle;
using Point2 = Kernel::Point_2;
using PointMap = CGAL::Pointer_property_map<Point2>::type;
using SearchTraits = CGAL::Search_traits_adapter<std::size_t, PointMap, CGAL::Search_traits_2<Kernel>>;
using KdTree = CGAL::Kd_tree<SearchTraits>;
using Box = CGAL::Fuzzy_iso_box<SearchTraits>;

/**
 * Whether p is inside or on the closed polygon ring (even-odd rule, exact predicates). Written here
 * because CGAL's bounded_side_2 requires a simple polygon, and the polygon through a hull site's
 * neighbours, closed across the outside of the hull, need not be simple.
 */
bool inPolygon( const std::vector<Point2> &ring, const Point2 &p )
{
  bool inside = false;
  for ( std::size_t i = 0; i < ring.size(); ++i )
  {
    const Point2 &a = ring[i];
    const Point2 &b = ring[( i + 1 ) % ring.size()];
    const CGAL::Orientation turn = CGAL::orientation( a, b, p );
    if ( turn == CGAL::COLLINEAR && CGAL::collinear_are_ordered_along_line( a, p, b ) )
      return true;
    // The edge crosses the ray from p toward +x: it straddles p's height with p on its left going up.
    if ( ( a.y() > p.y() ) != ( b.y() > p.y() ) && ( turn == CGAL::LEFT_TURN ) == ( b.y() > a.y() ) )
      inside = !inside;
  }
  return inside;
}

//! The region points in a k-d tree: a neighbourhood polygon's candidates come from a box query.
class PointIndex
{
  public:
    explicit PointIndex( const std::vector<Point> &points )
    {
      for ( const Point &p : points )
        mPoints.emplace_back( p.x, p.y );
      std::vector<std::size_t> indices( points.size() );
      std::iota( indices.begin(), indices.end(), std::size_t( 0 ) );
      mTree = std::make_unique<KdTree>( indices.begin(), indices.end(), KdTree::Splitter(), SearchTraits( CGAL::make_property_map( mPoints ) ) );
      mTree->build();
    }

    //! The points inside or on ring (at least 3 vertices).
    std::vector<std::uint32_t> inside( const std::vector<Point2> &ring ) const
    {
      const CGAL::Bbox_2 box = CGAL::bbox_2( ring.begin(), ring.end() );
      std::vector<std::size_t> candidates;
      mTree->search( std::back_inserter( candidates ), Box( Point2( box.xmin(), box.ymin() ), Point2( box.xmax(), box.ymax() ), 0, mTree->traits() ) );
      std::vector<std::uint32_t> result;
      for ( const std::size_t r : candidates )
        if ( inPolygon( ring, mPoints[r] ) )
          result.push_back( static_cast<std::uint32_t>( r ) );
      return result;
    }

  private:
    std::vector<Point2> mPoints;
    std::unique_ptr<KdTree> mTree;
};

//! A region that changes cluster in a trial.
struct Move
{
    std::uint32_t region;
    std::uint32_t from;
    std::uint32_t to;

    bool operator<( const Move &other ) const { return std::tie( region, from, to ) < std::tie( other.region, other.from, other.to ); }
};

//! What the objectives and the constraints read of one cluster.
struct Score
{
    std::int64_t anonymity = 0;
    std::int64_t suppressed = 0;
    double compactness = 0;          //!< eq. 20, to the site: the Suppression objective's tie-break
    double meanPointCompactness = 0; //!< what the compactness budget holds (docs/method.md, "Mean-point compactness")
    std::int64_t records = 0;
    std::size_t regions = 0;

    //! A cluster with regions whose every record is in an EC below k.
    bool releasesNothing() const { return regions > 0 && suppressed == records; }
};

/**
 * What a set of moves makes of the affected clusters, but for eq. 20's compactness (which depends on
 * where the site is): the scores, the members and the average risk model's change of records. The
 * classes are counted only for moves that keep the limits (Clustering::keepsLimits).
 */
struct MovesScored
{
    std::vector<Score> after;                        //!< anonymity and suppressed once counted
    std::vector<std::vector<std::uint32_t>> members; //!< of each affected cluster once the moves are made, increasing
    bool counted = false;
    std::int64_t trialCut = 0;
};

//! An EC's records, its size under the criterion (its records, or under k-map its residents), and its residents (SizedHistograms::residents).
struct EcCount
{
    std::int64_t records = 0;
    std::int64_t size = 0;
    std::int64_t residents = 0;

    bool empty() const { return records == 0 && size == 0 && residents == 0; }
};

/**
 * A trial that was scored and failed, and what its outcome depended on, kept so that knownToFail skips
 * it while none of that changed. Its affected clusters are kept as affectedHash, not as their list: near
 * the end of a run about a million failed trials are kept (3.3 M records), and the lists took most of
 * ADC's memory (docs/benchmarks.md).
 * Two different lists share a hash about once in 2^64 lookups; that would skip one trial, and the
 * release would still meet every constraint.
 */
struct FailedTrial
{
    std::uint64_t clock = 0; //!< commits made before it
    std::int64_t alpha = 0;
    double meanPointCompactness = 0; //!< over all clusters
    Point target;
    std::uint64_t affected = 0; //!< affectedHash of the clusters it changed
};

//! A 64-bit hash of a list of cluster ids (SplitMix64 over the ids in their order).
std::uint64_t affectedHash( const std::vector<std::uint32_t> &affected )
{
  std::uint64_t h = affected.size();
  for ( const std::uint32_t a : affected )
  {
    std::uint64_t state = h ^ a;
    h = Random::splitMix64( state );
  }
  return h;
}

/**
 * The order of Clustering::mScored's keys, (affected clusters, moves). Transparent: a pair of references
 * to them finds a key without copying them, as each scored trial looks up its own.
 */
struct ScoredLess
{
    using is_transparent = void;
    template<typename A, typename B>
    bool operator()( const A &a, const B &b ) const
    {
      return std::tie( a.first, a.second ) < std::tie( b.first, b.second );
    }
};

using SizesBelowK = std::vector<std::pair<std::int64_t, std::uint32_t>>; //!< (EC size below k, ECs of that size), by increasing size

//! The entry of size in sizes, or where it would go.
template<typename Sizes>
auto sizeAt( Sizes &sizes, std::int64_t size )
{
  return std::lower_bound( sizes.begin(), sizes.end(), std::make_pair( size, std::uint32_t( 0 ) ) );
}

class Clustering
{
  public:
    Clustering( const std::vector<Point> &seeds, const std::vector<Point> &points, const SizedHistograms &sized, const AdcSettings &settings );
    AdcResult run( Progress *progress );

  private:
    enum class Visit
    {
      Unchanged,
      Committed,
      Restart, //!< the cluster's anonymity rose: start again from the lowest clusters
      Stopped,
    };

    // The clusters and their scores.
    EcCount ecCount( std::size_t cluster, std::uint32_t cls ) const;
    std::int64_t anonymity( std::size_t cluster ) const;
    std::int64_t alpha() const { return mLevels.begin()->first; }
    std::int64_t objective() const;
    double compactness( const std::vector<std::uint32_t> &members, std::uint32_t cluster ) const;
    double meanPointCompactness( const std::vector<std::uint32_t> &members ) const;
    Score score( std::uint32_t cluster ) const;
    AdcStatus status() const;
    bool reachedGoal() const;
    void count( std::uint32_t cluster, std::uint32_t region, std::int64_t sign );
    //! An EC that counts: it holds records and its size (records, or residents) is below k.
    bool below( const EcCount &ec ) const { return ec.records > 0 && ec.size < mSettings.criterion.k; }
    void resize( std::uint32_t cluster, const EcCount &from, const EcCount &to );
    void shiftLevel( std::int64_t from, std::int64_t to );
    //! An EC of these counts joins the average risk model's cut (delta 1) or leaves it (-1), if it is released at k.
    void cutEc( const EcCount &ec, int delta );
    //! Whether a class of these counts is in a group the cut takes from (wholly or in part).
    bool cutFrom( const EcCount &ec ) const;
    std::int64_t suppressed() const { return mSuppressed + mCutRecords; }

    // Passes and targets.
    std::vector<std::uint32_t> targetClusters() const;
    bool isTarget( std::size_t cluster, std::uint32_t cls ) const;
    Visit visit( std::uint32_t cluster, Progress *progress, double percent );
    std::vector<std::uint32_t> neighbourhood( std::uint32_t cluster );
    std::vector<std::pair<Point, std::uint32_t>> targets( std::uint32_t cluster, const std::vector<std::uint32_t> &hood );
    Point targetPosition( const std::vector<std::uint32_t> &hood, std::uint32_t cls ) const;

    // One trial.
    bool trial( std::uint32_t site, std::uint32_t cls, const Point &target );
    std::vector<std::uint32_t> neighbours( std::uint32_t site ) const;
    std::vector<Point2> neighbourPolygon( std::uint32_t site ) const;
    std::vector<std::uint32_t> neighboursAtSite( std::uint32_t site );
    void restoreSite();
    std::vector<Move> reassign( const std::vector<std::uint32_t> &affected ) const;
    std::optional<std::vector<Score>> scoresAfter( const std::vector<std::uint32_t> &affected, const std::vector<Move> &moves, const std::vector<Score> &before );
    MovesScored regionsAfter( const std::vector<std::uint32_t> &affected, const std::vector<Move> &moves ) const;
    void countClasses( const std::vector<std::uint32_t> &affected, const std::vector<Move> &moves, MovesScored &scored );
    void apply( const std::vector<Move> &moves );
    bool keepsLimits( const std::vector<Score> &before, const std::vector<Score> &after ) const;
    bool keepsReleasing( const std::vector<Score> &before, const std::vector<Score> &after ) const;
    bool improves( const std::vector<std::uint32_t> &affected, const std::vector<Score> &before, const std::vector<Score> &after );
    void commit( const std::vector<std::uint32_t> &affected, const std::vector<Score> &before, const std::vector<Score> &after );
    bool knownToFail( std::uint32_t site, std::uint32_t cls, const Point &target, const std::vector<std::uint32_t> &affected, std::uint64_t hash ) const;
    bool repeatsFailure( std::uint32_t site, std::uint32_t cls, const Point &target );
    void rememberFailure( std::uint32_t site, std::optional<FailedTrial> failed, const Point &target );
    static std::uint64_t key( std::uint64_t high, std::uint32_t low ) { return ( high << 32 ) | low; }

    const std::vector<Point> &mPoints;
    const SizedHistograms &mSized;
    const SparseHistograms &mHistograms;            //!< mSized's entries: each region's classes and records
    const std::vector<std::int64_t> mRegionRecords; //!< records of each region: what a move takes from one cluster to another
    const AdcSettings &mSettings;
    const std::vector<double> mWeights; //!< AdcSettings::regionWeights, or 1 each
    const PointIndex mIndex;

    std::vector<Point> mSites;
    Triangulation mTriangulation;
    std::vector<Vertex> mVertices;                    //!< of each site; none for a repeated position
    std::vector<std::size_t> mCluster;                //!< of each region
    std::vector<std::vector<std::uint32_t>> mMembers; //!< regions of each cluster, increasing
    //! Per cluster: class -> records and size, present when either is above 0. A table per cluster keeps a trial's lookups, all in the
    //! clusters it changes, near each other in memory (one table for all missed the cache on almost every lookup, docs/benchmarks.md).
    std::vector<FlatMap<EcCount>> mEcs;
    //! Per cluster: its ECs with records below k by size. A few entries at most: a flat vector, so the commits' many updates
    //! allocate nothing (a std::map did, and dominated a trial); a trial only reads it (countClasses).
    std::vector<SizesBelowK> mBelowK;
    std::vector<std::int64_t> mClusterSuppressed;                  //!< records in ECs below k, per cluster
    std::vector<double> mCompactness;                              //!< eq. 20 per cluster, as of its last change
    double mTotalCompactness = 0;                                  //!< their sum, kept as they change
    std::vector<double> mMeanPointCompactness;                     //!< per cluster, as of its last change
    double mTotalMeanPointCompactness = 0;                         //!< their sum, what the budget holds
    std::vector<std::int64_t> mRecords;                            //!< records per cluster
    std::map<std::int64_t, std::int64_t> mLevels;                  //!< anonymity -> clusters at it
    std::int64_t mSuppressed = 0;                                  //!< in ECs below k
    std::optional<AverageCut> mCut;                                //!< the average risk model's, over the ECs released at k
    std::int64_t mCutRecords = 0;                                  //!< the records it takes
    std::optional<std::pair<std::int64_t, std::int64_t>> mCutLast; //!< its last (residents, records) group taken from
    std::int64_t mTrialCut = 0;                                    //!< the change of mCutRecords the last trial scored

    std::uint64_t mClock = 0;                               //!< commits so far
    std::vector<std::uint64_t> mChanged;                    //!< per site: the clock of the last commit that touched it
    std::vector<EcCount> mDelta;                            //!< per class: scratch of countClasses, all zero between calls
    std::vector<std::uint32_t> mDeltaCluster;               //!< per class: the last cluster (+1) whose scoring touched it
    std::vector<std::uint32_t> mTargetPlace;                //!< per class: scratch of targets, its place among the target classes (+1), all zero between calls
    std::vector<std::uint32_t> mLeaving;                    //!< scratch of countClasses: per entry of a cluster's mBelowK, its ECs that change size
    std::unordered_map<std::uint64_t, FailedTrial> mFailed; //!< by (site, class)
    //! The last trial, while it failed: a trial of another class with the same site, target and clock repeats it (Clustering::repeatsFailure).
    struct LastFailure
    {
        std::uint32_t site = 0;
        Point target;
        std::uint64_t clock = 0;
        std::optional<FailedTrial> failed; //!< what it left in mFailed; none when another site was at its target
    };
    std::optional<LastFailure> mLastFailure;
    std::optional<std::uint32_t> mAway; //!< the site whose vertex the last failed trial left at its target (neighboursAtSite)
    struct SiteNeighbours
    {
        std::uint32_t site = 0;
        std::uint64_t clock = 0;
        std::vector<std::uint32_t> sites;
    };
    std::optional<SiteNeighbours> mAtSite; //!< a site's neighbours at its position, as of a clock (neighboursAtSite)
    //! The moves scored in this cluster's visit since the last commit, by (affected clusters, moves): the targets of one
    //! cluster mostly move the same few regions, and a commit or the next visit clears it.
    std::map<std::pair<std::vector<std::uint32_t>, std::vector<Move>>, MovesScored, ScoredLess> mScored;
    AdcStatus mStatus;
    AdcStop mStop = AdcStop::NoImprovement;
};

Clustering::Clustering( const std::vector<Point> &seeds, const std::vector<Point> &points, const SizedHistograms &sized, const AdcSettings &settings )
  : mPoints( points )
  , mSized( sized )
  , mHistograms( sized.entries() )
  , mRegionRecords( mHistograms.rowTotals() )
  , mSettings( settings )
  , mWeights( settings.regionWeights.empty() ? std::vector<double>( points.size(), 1.0 ) : settings.regionWeights )
  , mIndex( points )
  , mSites( seeds )
  , mVertices( seeds.size() )
  , mCluster( locateRegions( points, VoronoiDiagram( seeds ) ) )
  , mMembers( seeds.size() )
  , mEcs( seeds.size() )
  , mBelowK( seeds.size() )
  , mClusterSuppressed( seeds.size(), 0 )
  , mCompactness( seeds.size(), 0 )
  , mMeanPointCompactness( seeds.size(), 0 )
  , mRecords( seeds.size(), 0 )
  , mChanged( seeds.size(), 0 )
{
  if ( settings.criterion.averageThreshold < 1 )
    mCut.emplace( settings.criterion.averageThreshold );
  const std::size_t classes = mHistograms.classes.empty() ? 0 : *std::max_element( mHistograms.classes.begin(), mHistograms.classes.end() ) + std::size_t( 1 );
  mDelta.assign( classes, EcCount() );
  mDeltaCluster.assign( classes, 0 );
  mTargetPlace.assign( classes, 0 );
  for ( std::size_t s = 0; s < seeds.size(); ++s )
  {
    const std::size_t before = mTriangulation.number_of_vertices();
    const Vertex vertex = mTriangulation.insert( Point2( seeds[s].x, seeds[s].y ) );
    if ( mTriangulation.number_of_vertices() > before ) // a repeated position stays with the lower site
    {
      vertex->info() = s;
      mVertices[s] = vertex;
    }
  }
  for ( std::size_t r = 0; r < points.size(); ++r )
  {
    mMembers[mCluster[r]].push_back( static_cast<std::uint32_t>( r ) );
    count( static_cast<std::uint32_t>( mCluster[r] ), static_cast<std::uint32_t>( r ), 1 );
  }
  for ( std::uint32_t s = 0; s < seeds.size(); ++s )
  {
    mCompactness[s] = compactness( mMembers[s], s );
    mTotalCompactness += mCompactness[s];
    mMeanPointCompactness[s] = meanPointCompactness( mMembers[s] );
    mTotalMeanPointCompactness += mMeanPointCompactness[s];
    ++mLevels[anonymity( s )];
    mSuppressed += mClusterSuppressed[s];
  }
  if ( mCut )
  {
    mCutRecords = mCut->records();
    mCutLast = mCut->lastGroup();
  }
}

// ---------------------------------------------------------------------------------------------
// The clusters and their scores

EcCount Clustering::ecCount( std::size_t cluster, std::uint32_t cls ) const
{
  const EcCount *ec = mEcs[cluster].find( cls );
  return ec ? *ec : EcCount();
}

//! The smallest EC of the cluster, capped at k: anything at k or above (or no records) is done.
std::int64_t Clustering::anonymity( std::size_t cluster ) const
{
  return mBelowK[cluster].empty() ? mSettings.criterion.k : mBelowK[cluster].front().first;
}

//! Eq. 14: f = alpha * |R| - |R_alpha|, |R| the number of sites, so f rises with alpha (eq. 15-17).
std::int64_t Clustering::objective() const
{
  return alpha() * static_cast<std::int64_t>( mSites.size() ) - mLevels.begin()->second;
}

//! Eq. 20 over one cluster of these members: the distances from their region points to its site, in the members' order.
double Clustering::compactness( const std::vector<std::uint32_t> &members, std::uint32_t cluster ) const
{
  double sum = 0;
  for ( const std::uint32_t r : members )
    sum += std::sqrt( squaredDistance( mPoints[r], mSites[cluster] ) );
  return sum;
}

//! The budget's measure over one cluster's regions (docs/method.md, "Mean-point compactness").
double Clustering::meanPointCompactness( const std::vector<std::uint32_t> &members ) const
{
  return meanPointSpread( mPoints, mWeights, [&members]( const auto &f ) {
    for ( const std::uint32_t r : members )
      f( r );
  } );
}

Score Clustering::score( std::uint32_t cluster ) const
{
  return { anonymity( cluster ), mClusterSuppressed[cluster], mCompactness[cluster], mMeanPointCompactness[cluster], mRecords[cluster], mMembers[cluster].size() };
}

AdcStatus Clustering::status() const
{
  AdcStatus s = mStatus;
  s.alpha = alpha();
  s.clustersAtAlpha = mLevels.begin()->second;
  s.objective = objective();
  s.suppressed = suppressed();
  s.compactness = mTotalCompactness;
  s.meanPointCompactness = mTotalMeanPointCompactness;
  for ( std::uint32_t c = 0; c < mSites.size(); ++c )
  {
    const Score cluster = score( c );
    s.clusters += cluster.regions > 0;
    s.releasingNothing += cluster.releasesNothing();
  }
  return s;
}

bool Clustering::reachedGoal() const
{
  return mSettings.objective == AdcObjective::Anonymity ? alpha() >= mSettings.criterion.k : suppressed() == 0;
}

//! Adds (sign 1) or removes (sign -1) one region's records to the ECs of cluster.
void Clustering::count( std::uint32_t cluster, std::uint32_t region, std::int64_t sign )
{
  for ( std::size_t e = mHistograms.offsets[region]; e < mHistograms.offsets[region + 1]; ++e )
  {
    const std::uint32_t cls = mHistograms.classes[e];
    EcCount &counted = mEcs[cluster].findOrInsert( cls, EcCount() );
    const EcCount from = counted;
    counted.records += sign * mHistograms.counts[e];
    counted.size += sign * mSized.size( e );
    counted.residents += sign * mSized.residents( e );
    mRecords[cluster] += sign * mHistograms.counts[e];
    const EcCount to = counted;
    if ( to.empty() )
      mEcs[cluster].erase( cls );
    resize( cluster, from, to );
    if ( mCut )
    {
      cutEc( from, -1 );
      cutEc( to, 1 );
    }
  }
}

void Clustering::cutEc( const EcCount &ec, int delta )
{
  if ( ec.records > 0 && ec.size >= mSettings.criterion.k )
    mCut->change( ec.records, ec.residents, delta );
}

bool Clustering::cutFrom( const EcCount &ec ) const
{
  return mCutLast && ec.records > 0 && ec.size >= mSettings.criterion.k && std::make_pair( ec.residents, ec.records ) <= *mCutLast;
}

//! One EC of cluster went from `from` to `to`: its suppressed records and its sizes below k follow.
void Clustering::resize( std::uint32_t cluster, const EcCount &from, const EcCount &to )
{
  SizesBelowK &belowK = mBelowK[cluster];
  if ( below( from ) )
  {
    mClusterSuppressed[cluster] -= from.records;
    const auto it = sizeAt( belowK, from.size );
    if ( --it->second == 0 )
      belowK.erase( it );
  }
  if ( below( to ) )
  {
    mClusterSuppressed[cluster] += to.records;
    const auto it = sizeAt( belowK, to.size );
    if ( it != belowK.end() && it->first == to.size )
      ++it->second;
    else
      belowK.insert( it, { to.size, 1 } );
  }
}

void Clustering::shiftLevel( std::int64_t from, std::int64_t to )
{
  if ( --mLevels[from] == 0 )
    mLevels.erase( from );
  ++mLevels[to];
}

// ---------------------------------------------------------------------------------------------
// Passes and targets

//! Eq. 14: the clusters at alpha; Suppression: the clusters with suppressed records (below k, or in a group the average risk model's cut takes from). In site order.
std::vector<std::uint32_t> Clustering::targetClusters() const
{
  std::vector<std::uint32_t> clusters;
  for ( std::uint32_t s = 0; s < mSites.size(); ++s )
  {
    bool target = mSettings.objective == AdcObjective::Anonymity ? anonymity( s ) == alpha() && alpha() < mSettings.criterion.k : mClusterSuppressed[s] > 0;
    for ( std::size_t i = 0; !target && mCutLast && mSettings.objective == AdcObjective::Suppression && i < mMembers[s].size(); ++i )
      for ( std::size_t e = mHistograms.offsets[mMembers[s][i]]; !target && e < mHistograms.offsets[mMembers[s][i] + 1]; ++e )
        target = cutFrom( ecCount( s, mHistograms.classes[e] ) );
    if ( target )
      clusters.push_back( s );
  }
  return clusters;
}

//! A bottleneck EC of a lowest cluster (eq. 14), or an EC below k or in a group the cut takes from (Suppression).
bool Clustering::isTarget( std::size_t cluster, std::uint32_t cls ) const
{
  const EcCount ec = ecCount( cluster, cls );
  if ( mSettings.objective == AdcObjective::Suppression )
    return below( ec ) || cutFrom( ec );
  return below( ec ) && ec.size == anonymity( cluster ) && ec.size == alpha();
}

Clustering::Visit Clustering::visit( std::uint32_t cluster, Progress *progress, double percent )
{
  const std::int64_t start = anonymity( cluster );
  mScored.clear();
  std::vector<std::uint32_t> hood = neighbourhood( cluster );
  const std::uint64_t planned = mClock;
  std::uint64_t gathered = mClock;
  bool committed = false;
  for ( const auto &[position, cls] : targets( cluster, hood ) )
  {
    if ( !isTarget( cluster, cls ) )
      continue; // an earlier commit in this cluster changed the EC
    if ( mStatus.tried >= mSettings.maxMoves || ( progress && progress->canceled() ) )
    {
      mStop = mStatus.tried >= mSettings.maxMoves ? AdcStop::MaxMoves : AdcStop::Canceled;
      return Visit::Stopped;
    }
    if ( gathered != mClock ) // a commit moved sites or regions since the neighbourhood was gathered
    {
      hood = neighbourhood( cluster );
      gathered = mClock;
    }
    if ( trial( cluster, cls, planned == mClock ? position : targetPosition( hood, cls ) ) )
    {
      committed = true;
      if ( mSettings.objective == AdcObjective::Anonymity && anonymity( cluster ) > start )
        return Visit::Restart;
    }
    if ( progress && mStatus.tried % 256 == 0 )
    {
      const AdcStatus s = status();
      progress->report( percent, "ADC pass " + std::to_string( s.passes ) + ": alpha " + std::to_string( s.alpha ) + " (" + std::to_string( s.clustersAtAlpha ) + " clusters), f "
                                   + std::to_string( s.objective ) + ", suppressed " + std::to_string( s.suppressed ) + "; moves tried " + std::to_string( s.tried ) + ", committed "
                                   + std::to_string( s.committed ) );
    }
  }
  return committed ? Visit::Committed : Visit::Unchanged;
}

/**
 * The neighbourhood of a cluster (paper sec. 3.2.2): its Voronoi cell, whose points are its members,
 * union the polygon through the sites of its Voronoi neighbours in order. Increasing region indices.
 */
std::vector<std::uint32_t> Clustering::neighbourhood( std::uint32_t cluster )
{
  restoreSite(); // the polygon is read from the triangulation
  std::vector<std::uint32_t> hood = mMembers[cluster];
  const std::vector<Point2> polygon = neighbourPolygon( cluster );
  if ( polygon.size() >= 3 )
  {
    const std::vector<std::uint32_t> inside = mIndex.inside( polygon );
    hood.insert( hood.end(), inside.begin(), inside.end() );
    std::sort( hood.begin(), hood.end() );
    hood.erase( std::unique( hood.begin(), hood.end() ), hood.end() );
  }
  return hood;
}

/**
 * The target classes of a cluster with the position each would move its site to, ordered by that
 * position (then class): an order that does not depend on how the records were sorted, and two
 * classes with the same position make the same move.
 */
std::vector<std::pair<Point, std::uint32_t>> Clustering::targets( std::uint32_t cluster, const std::vector<std::uint32_t> &hood )
{
  std::vector<std::uint32_t> classes;
  for ( const std::uint32_t r : mMembers[cluster] )
    for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
      if ( isTarget( cluster, mHistograms.classes[e] ) )
        classes.push_back( mHistograms.classes[e] );
  std::sort( classes.begin(), classes.end() );
  classes.erase( std::unique( classes.begin(), classes.end() ), classes.end() );
  for ( std::size_t i = 0; i < classes.size(); ++i )
    mTargetPlace[classes[i]] = static_cast<std::uint32_t>( i ) + 1;
  std::vector<double> sx( classes.size(), 0 ), sy( classes.size(), 0 ), sw( classes.size(), 0 );
  for ( const std::uint32_t r : hood )
    for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
    {
      const std::uint32_t place = mTargetPlace[mHistograms.classes[e]];
      if ( place == 0 )
        continue;
      const double w = static_cast<double>( mHistograms.counts[e] );
      sx[place - 1] += mPoints[r].x * w;
      sy[place - 1] += mPoints[r].y * w;
      sw[place - 1] += w;
    }
  std::vector<std::pair<Point, std::uint32_t>> result;
  for ( std::size_t i = 0; i < classes.size(); ++i )
  {
    result.push_back( { { sx[i] / sw[i], sy[i] / sw[i] }, classes[i] } );
    mTargetPlace[classes[i]] = 0;
  }
  std::sort( result.begin(), result.end(), []( const auto &a, const auto &b ) { return std::tie( a.first.x, a.first.y, a.second ) < std::tie( b.first.x, b.first.y, b.second ); } );
  return result;
}

//! Eq. 18-19: the mean of the neighbourhood's points holding members of cls, weighted by those members.
Point Clustering::targetPosition( const std::vector<std::uint32_t> &hood, std::uint32_t cls ) const
{
  double sx = 0, sy = 0, sw = 0;
  for ( const std::uint32_t r : hood )
  {
    const std::size_t e = mHistograms.find( r, cls );
    if ( e == SparseHistograms::npos )
      continue;
    const double w = static_cast<double>( mHistograms.counts[e] );
    sx += mPoints[r].x * w;
    sy += mPoints[r].y * w;
    sw += w;
  }
  return { sx / sw, sy / sw };
}

// ---------------------------------------------------------------------------------------------
// One trial

/**
 * Moves site to target and scores the move incrementally: only the clusters whose Voronoi cells
 * change (the site and its neighbours before and after the move) are re-assigned, and only the
 * regions that change cluster update the EC counts. The scores are worked out before anything
 * but the site moves: the regions and counts change only for a move that is kept.
 */
bool Clustering::trial( std::uint32_t site, std::uint32_t cls, const Point &target )
{
  ++mStatus.tried;
  const Point origin = mSites[site];
  if ( target.x == origin.x && target.y == origin.y )
    return false;
  if ( repeatsFailure( site, cls, target ) )
    return false;
  std::vector<std::uint32_t> affected = neighboursAtSite( site );
  if ( mTriangulation.move_if_no_collision( mVertices[site], Point2( target.x, target.y ) ) != mVertices[site] )
  {
    rememberFailure( site, std::nullopt, target ); // another site is there
    return false;
  }
  mAway = site;
  mSites[site] = target;
  const std::vector<std::uint32_t> moved = neighbours( site );
  affected.insert( affected.end(), moved.begin(), moved.end() );
  affected.push_back( site );
  std::sort( affected.begin(), affected.end() );
  affected.erase( std::unique( affected.begin(), affected.end() ), affected.end() );
  const std::uint64_t hash = affectedHash( affected );
  const FailedTrial failed { mClock, alpha(), mTotalMeanPointCompactness, target, hash }; // what it leaves if it fails
  if ( knownToFail( site, cls, target, affected, hash ) )
  {
    mSites[site] = origin;
    rememberFailure( site, failed, target );
    return false;
  }
  ++mStatus.evaluated;
  std::vector<Score> before;
  for ( const std::uint32_t a : affected )
    before.push_back( score( a ) );
  const std::vector<Move> moves = reassign( affected );
  const std::optional<std::vector<Score>> after = scoresAfter( affected, moves, before );
  if ( after && keepsReleasing( before, *after ) && improves( affected, before, *after ) )
  {
    apply( moves );
    commit( affected, before, *after );
    mAway.reset(); // its vertex is where the site now is
    return true;
  }
  mSites[site] = origin;
  mFailed[key( site, cls )] = failed;
  rememberFailure( site, failed, target );
  return false;
}

/**
 * Whether the last trial failed with the same site and target, and nothing has been committed since:
 * this one moves the same site to the same place from the same clusters, so it fails the same way
 * (docs/method.md, "ADC"). Two target classes of one cluster often share a target position: both are
 * held in the neighbourhood by one region alone, whose point is the target. Leaves the failure under
 * this class too, as scoring it would.
 */
bool Clustering::repeatsFailure( std::uint32_t site, std::uint32_t cls, const Point &target )
{
  if ( !mSettings.reuseTrials || !mLastFailure )
    return false;
  const LastFailure &last = *mLastFailure;
  if ( last.site != site || last.clock != mClock || last.target.x != target.x || last.target.y != target.y )
    return false;
  ++mStatus.repeated;
  if ( last.failed )
    mFailed[key( site, cls )] = *last.failed;
  return true;
}

//! A trial of site toward target failed, leaving failed (repeatsFailure).
void Clustering::rememberFailure( std::uint32_t site, std::optional<FailedTrial> failed, const Point &target )
{
  mLastFailure = LastFailure { site, target, mClock, std::move( failed ) };
}

//! The sites adjacent to site in the Delaunay triangulation (all of them while the sites are collinear).
std::vector<std::uint32_t> Clustering::neighbours( std::uint32_t site ) const
{
  std::vector<std::uint32_t> result;
  if ( mTriangulation.dimension() < 2 )
  {
    for ( auto v = mTriangulation.finite_vertices_begin(); v != mTriangulation.finite_vertices_end(); ++v )
      if ( v->info() != site )
        result.push_back( static_cast<std::uint32_t>( v->info() ) );
    return result;
  }
  auto circulator = mTriangulation.incident_vertices( mVertices[site] );
  const auto done = circulator;
  do
  {
    if ( !mTriangulation.is_infinite( circulator ) )
      result.push_back( static_cast<std::uint32_t>( circulator->info() ) );
  } while ( ++circulator != done );
  return result;
}

/**
 * The polygon through the sites of the Voronoi cells adjacent to site's cell, in order around it
 * (CGAL circulates counterclockwise; the paper's clockwise traversal draws the same polygon). Cells
 * that meet only at a Voronoi vertex (four co-circular sites) are not adjacent. On the hull the
 * traversal starts after the outside, so the closing edge crosses it.
 */
std::vector<Point2> Clustering::neighbourPolygon( std::uint32_t site ) const
{
  std::vector<Point2> ring;
  if ( mTriangulation.dimension() < 2 )
    return ring;
  const Vertex v = mVertices[site];
  std::vector<Triangulation::Edge> edges;
  auto circulator = mTriangulation.incident_edges( v );
  const auto done = circulator;
  do
    edges.push_back( *circulator );
  while ( ++circulator != done );
  const auto outside = std::find_if( edges.begin(), edges.end(), [&]( const Triangulation::Edge &e ) { return mTriangulation.is_infinite( e ); } );
  if ( outside != edges.end() )
    std::rotate( edges.begin(), outside + 1, edges.end() );
  for ( const auto &[face, i] : edges )
  {
    if ( mTriangulation.is_infinite( face, i ) )
      continue;
    const auto mirror = face->neighbor( i );
    const bool zeroLength = !mTriangulation.is_infinite( face ) && !mTriangulation.is_infinite( mirror )
                            && mTriangulation.side_of_oriented_circle( face, mTriangulation.mirror_vertex( face, i )->point() ) == CGAL::ON_ORIENTED_BOUNDARY;
    if ( zeroLength )
      continue;
    const Vertex a = face->vertex( Triangulation::cw( i ) );
    ring.push_back( ( a == v ? face->vertex( Triangulation::ccw( i ) ) : a )->point() );
  }
  return ring;
}

/**
 * The site's neighbours at its position. A failed trial leaves the site's vertex at its target (mAway),
 * and the next trial of the same site moves it on from there: one move of the vertex per trial instead
 * of two. Its neighbours at its position are kept until the next commit.
 */
std::vector<std::uint32_t> Clustering::neighboursAtSite( std::uint32_t site )
{
  if ( !mAtSite || mAtSite->site != site || mAtSite->clock != mClock )
  {
    restoreSite();
    mAtSite = SiteNeighbours { site, mClock, neighbours( site ) };
  }
  return mAtSite->sites;
}

//! Puts the vertex a failed trial left at its target (mAway) back at its site.
void Clustering::restoreSite()
{
  if ( !mAway )
    return;
  const Point &p = mSites[*mAway];
  mTriangulation.move_if_no_collision( mVertices[*mAway], Point2( p.x, p.y ) );
  mAway.reset();
}

//! The regions of the affected clusters that now lie nearer another affected site (ties: lower site).
std::vector<Move> Clustering::reassign( const std::vector<std::uint32_t> &affected ) const
{
  std::vector<Move> moves;
  for ( const std::uint32_t from : affected )
    for ( const std::uint32_t r : mMembers[from] )
    {
      std::uint32_t best = affected.front();
      double bestDistance = squaredDistance( mPoints[r], mSites[best] );
      for ( const std::uint32_t s : affected )
      {
        const double d = squaredDistance( mPoints[r], mSites[s] );
        if ( d < bestDistance )
        {
          best = s;
          bestDistance = d;
        }
      }
      if ( best != from )
        moves.push_back( { r, from, best } );
    }
  return moves;
}

/**
 * The scores of the affected clusters once moves are made, without making them; nothing when the moves
 * break a limit (keepsLimits), before their classes are counted. The same moves scored before since the
 * last commit in this visit score the same but for eq. 20's compactness. Under the average risk model,
 * the change of the records its cut takes goes to mTrialCut.
 */
std::optional<std::vector<Score>> Clustering::scoresAfter( const std::vector<std::uint32_t> &affected, const std::vector<Move> &moves, const std::vector<Score> &before )
{
  if ( !mSettings.reuseTrials )
    mScored.clear();
  auto entry = mScored.find( std::pair<const std::vector<std::uint32_t> &, const std::vector<Move> &>( affected, moves ) );
  if ( entry == mScored.end() )
    entry = mScored.emplace( std::make_pair( affected, moves ), regionsAfter( affected, moves ) ).first;
  MovesScored &scored = entry->second;
  if ( !keepsLimits( before, scored.after ) )
  {
    ++mStatus.limited;
    return std::nullopt;
  }
  if ( !scored.counted )
    countClasses( affected, moves, scored );
  std::vector<Score> after = scored.after;
  for ( std::size_t i = 0; i < affected.size(); ++i )
    after[i].compactness = compactness( scored.members[i], affected[i] );
  mTrialCut = scored.trialCut;
  return after;
}

//! The members, records, regions and mean-point compactness of each affected cluster once the moves are made.
MovesScored Clustering::regionsAfter( const std::vector<std::uint32_t> &affected, const std::vector<Move> &moves ) const
{
  MovesScored scored;
  for ( const std::uint32_t a : affected )
  {
    std::vector<std::uint32_t> members = mMembers[a];
    std::int64_t records = mRecords[a];
    for ( const Move &move : moves )
    {
      if ( move.to == a )
      {
        members.push_back( move.region );
        records += mRegionRecords[move.region];
      }
      else if ( move.from == a )
      {
        members.erase( std::find( members.begin(), members.end(), move.region ) );
        records -= mRegionRecords[move.region];
      }
    }
    // In the order compactness() sums in once the moves are made.
    std::sort( members.begin(), members.end() );
    const double meanPoint = members == mMembers[a] ? mMeanPointCompactness[a] : meanPointCompactness( members ); // a site's move alone leaves it
    scored.after.push_back( { 0, 0, 0, meanPoint, records, members.size() } );
    scored.members.push_back( std::move( members ) );
  }
  return scored;
}

//! The anonymity and suppressed records of each affected cluster once the moves are made: its EC sizes change by its arriving minus its leaving regions' records, summed per class in a scratch array.
void Clustering::countClasses( const std::vector<std::uint32_t> &affected, const std::vector<Move> &moves, MovesScored &scored )
{
  std::vector<std::uint32_t> classes;
  if ( mCut )
    mCut->mark();
  for ( std::size_t i = 0; i < affected.size(); ++i )
  {
    const std::uint32_t a = affected[i];
    classes.clear();
    for ( const Move &move : moves )
    {
      const std::int64_t sign = move.to == a ? 1 : move.from == a ? -1 : 0;
      for ( std::size_t e = mHistograms.offsets[move.region]; sign != 0 && e < mHistograms.offsets[move.region + 1]; ++e )
      {
        const std::uint32_t cls = mHistograms.classes[e];
        if ( mDeltaCluster[cls] != a + 1 )
        {
          mDeltaCluster[cls] = a + 1;
          classes.push_back( cls );
        }
        mDelta[cls].records += sign * mHistograms.counts[e];
        mDelta[cls].size += sign * mSized.size( e );
        mDelta[cls].residents += sign * mSized.residents( e );
      }
    }
    Score &score = scored.after[i];
    score.suppressed = mClusterSuppressed[a];
    // The sizes below k after the moves: mBelowK[a]'s, less the ECs that leave theirs (counted in
    // mLeaving by position), and the ones the changed ECs take.
    const SizesBelowK &belowK = mBelowK[a];
    mLeaving.assign( belowK.size(), 0 );
    std::int64_t smallest = mSettings.criterion.k;
    for ( const std::uint32_t cls : classes )
    {
      const EcCount from = ecCount( a, cls );
      const EcCount to { from.records + mDelta[cls].records, from.size + mDelta[cls].size, from.residents + mDelta[cls].residents };
      if ( below( from ) )
      {
        score.suppressed -= from.records;
        ++mLeaving[static_cast<std::size_t>( sizeAt( belowK, from.size ) - belowK.begin() )];
      }
      if ( below( to ) )
      {
        score.suppressed += to.records;
        smallest = std::min( smallest, to.size );
      }
      if ( mCut )
      {
        cutEc( from, -1 );
        cutEc( to, 1 );
      }
      mDelta[cls] = EcCount();
      mDeltaCluster[cls] = 0;
    }
    std::size_t kept = 0; // the smallest size some EC keeps
    while ( kept < belowK.size() && belowK[kept].second == mLeaving[kept] )
      ++kept;
    score.anonymity = kept < belowK.size() ? std::min( smallest, belowK[kept].first ) : smallest;
  }
  if ( mCut )
  {
    scored.trialCut = mCut->records() - mCutRecords;
    mCut->rollback();
  }
  scored.counted = true;
  ++mStatus.counted;
}

void Clustering::apply( const std::vector<Move> &moves )
{
  for ( const Move &move : moves )
  {
    std::vector<std::uint32_t> &source = mMembers[move.from];
    source.erase( std::lower_bound( source.begin(), source.end(), move.region ) );
    std::vector<std::uint32_t> &destination = mMembers[move.to];
    destination.insert( std::lower_bound( destination.begin(), destination.end(), move.region ), move.region );
    count( move.from, move.region, -1 );
    count( move.to, move.region, 1 );
    mCluster[move.region] = move.to;
  }
}

/**
 * Whether a trial keeps the constraints read from the clusters' regions and records (docs/method.md, ADC:
 * clusters and constraints): it empties no cluster, and makes none of the mean-point compactness cap, the
 * record floor and the record ceiling worse. Incremental: the affected clusters' scores and the
 * mean-point compactness sum.
 */
bool Clustering::keepsLimits( const std::vector<Score> &before, const std::vector<Score> &after ) const
{
  double compactness = 0;
  for ( std::size_t i = 0; i < before.size(); ++i )
  {
    if ( before[i].regions > 0 && after[i].regions == 0 )
      return false;
    if ( after[i].records < mSettings.minClusterRecords && after[i].records < before[i].records )
      return false;
    if ( after[i].records > mSettings.maxClusterRecords && after[i].records > before[i].records )
      return false;
    compactness += after[i].meanPointCompactness - before[i].meanPointCompactness;
  }
  return compactness <= 0 || mTotalMeanPointCompactness + compactness <= mSettings.maxMeanPointCompactness;
}

//! The last constraint, read from the counted classes: a trial raises no count of clusters releasing nothing.
bool Clustering::keepsReleasing( const std::vector<Score> &before, const std::vector<Score> &after ) const
{
  std::int64_t releasingNothing = 0;
  for ( std::size_t i = 0; i < before.size(); ++i )
    releasingNothing += static_cast<std::int64_t>( after[i].releasesNothing() ) - static_cast<std::int64_t>( before[i].releasesNothing() );
  return releasingNothing <= 0;
}

/**
 * Eq. 14: whether f rises (levels shifted to the new anonymities and back). Suppression: whether the
 * suppressed records (the average risk model's cut included) drop, or stay and compactness drops (by
 * more than rounding).
 */
bool Clustering::improves( const std::vector<std::uint32_t> &affected, const std::vector<Score> &before, const std::vector<Score> &after )
{
  if ( mSettings.objective == AdcObjective::Suppression )
  {
    std::int64_t suppressed = mCut ? mTrialCut : 0;
    double compactnessBefore = 0, compactnessAfter = 0;
    for ( std::size_t i = 0; i < affected.size(); ++i )
    {
      suppressed += after[i].suppressed - before[i].suppressed;
      compactnessBefore += before[i].compactness;
      compactnessAfter += after[i].compactness;
    }
    return suppressed < 0 || ( suppressed == 0 && compactnessAfter < compactnessBefore * ( 1 - 1e-9 ) );
  }
  const std::int64_t f = objective();
  for ( std::size_t i = 0; i < affected.size(); ++i )
    shiftLevel( before[i].anonymity, after[i].anonymity );
  const bool better = objective() > f;
  for ( std::size_t i = 0; i < affected.size(); ++i )
    shiftLevel( after[i].anonymity, before[i].anonymity );
  return better;
}

void Clustering::commit( const std::vector<std::uint32_t> &affected, const std::vector<Score> &before, const std::vector<Score> &after )
{
  ++mClock;
  mScored.clear();
  for ( std::size_t i = 0; i < affected.size(); ++i )
  {
    shiftLevel( before[i].anonymity, after[i].anonymity );
    mSuppressed += after[i].suppressed - before[i].suppressed;
    mTotalCompactness += after[i].compactness - before[i].compactness;
    mCompactness[affected[i]] = after[i].compactness;
    mTotalMeanPointCompactness += after[i].meanPointCompactness - before[i].meanPointCompactness;
    mMeanPointCompactness[affected[i]] = after[i].meanPointCompactness;
    mChanged[affected[i]] = mClock;
  }
  if ( mCut )
  {
    // apply() moved the ECs in the cut: it must take what the trial scored.
    if ( mCut->records() != mCutRecords + mTrialCut )
      throw std::logic_error( "anonymityDrivenClustering: the cut of a committed trial differs from its score" );
    mCutRecords = mCut->records();
    mCutLast = mCut->lastGroup();
  }
  ++mStatus.committed;
  if ( mSettings.afterCommit )
    mSettings.afterCommit( mSites, mCluster, status() );
}

/**
 * Whether this trial failed before with the same target and affected clusters, none of which changed
 * since, at the same alpha and a mean-point compactness sum no lower: its outcome depends on nothing else
 * (eq. 14 compares the affected clusters' levels with alpha; Suppression only their scores; the
 * compactness cap the sum), so it would fail again.
 */
bool Clustering::knownToFail( std::uint32_t site, std::uint32_t cls, const Point &target, const std::vector<std::uint32_t> &affected, std::uint64_t hash ) const
{
  if ( !mSettings.reuseTrials )
    return false;
  const auto it = mFailed.find( key( site, cls ) );
  if ( it == mFailed.end() )
    return false;
  const FailedTrial &failed = it->second;
  if ( failed.target.x != target.x || failed.target.y != target.y || failed.affected != hash )
    return false;
  if ( mSettings.objective == AdcObjective::Anonymity && failed.alpha != alpha() )
    return false;
  if ( mCut && failed.clock != mClock ) // the cut depends on every cluster: any commit may change the outcome
    return false;
  if ( mTotalMeanPointCompactness < failed.meanPointCompactness && std::isfinite( mSettings.maxMeanPointCompactness ) )
    return false;
  return std::all_of( affected.begin(), affected.end(), [&]( std::uint32_t a ) { return mChanged[a] <= failed.clock; } );
}

AdcResult Clustering::run( Progress *progress )
{
  AdcResult result;
  result.before = status();
  while ( !reachedGoal() )
  {
    ++mStatus.passes;
    const std::vector<std::uint32_t> clusters = targetClusters();
    Visit outcome = Visit::Unchanged;
    bool committed = false;
    for ( std::size_t i = 0; i < clusters.size() && outcome != Visit::Restart && outcome != Visit::Stopped; ++i )
    {
      outcome = visit( clusters[i], progress, 100.0 * static_cast<double>( i ) / static_cast<double>( clusters.size() ) );
      committed = committed || outcome != Visit::Unchanged;
    }
    if ( outcome == Visit::Stopped || !committed )
      break;
  }
  if ( reachedGoal() )
    mStop = AdcStop::ReachedK;
  result.sites = mSites;
  result.regionAggregate = locateRegions( mPoints, VoronoiDiagram( mSites ) );
  result.after = status();
  result.stop = mStop;
  return result;
}

} // namespace

AdcResult anonymityDrivenClustering( const std::vector<Point> &seeds, const std::vector<Point> &regionPoints, const SparseHistograms &regionHistograms, const AdcSettings &settings,
                                     Progress *progress )
{
  if ( seeds.empty() )
    throw std::invalid_argument( "anonymity-driven clustering needs at least one seed" );
  if ( settings.criterion.k < 2 )
    throw std::invalid_argument( "k must be at least 2" );
  if ( regionPoints.size() != regionHistograms.rows() )
    throw std::invalid_argument( "one histogram per region point is needed" );
  if ( !settings.regionWeights.empty() && settings.regionWeights.size() != regionPoints.size() )
    throw std::invalid_argument( "one weight per region point is needed" );
  const SizedHistograms sized( regionHistograms, settings.criterion );
  Clustering clustering( seeds, regionPoints, sized, settings );
  return clustering.run( progress );
}

std::vector<Point> randomSites( const std::vector<Point> &regionPoints, std::size_t sites, std::uint64_t seed )
{
  if ( sites < 1 || sites > regionPoints.size() )
    throw std::invalid_argument( "the number of sites must be between 1 and the number of regions" );
  std::vector<std::size_t> order( regionPoints.size() );
  std::iota( order.begin(), order.end(), std::size_t( 0 ) );
  Random random( seed );
  std::vector<Point> result;
  for ( std::size_t i = 0; i < sites; ++i ) // the first `sites` steps of a Fisher-Yates shuffle
  {
    std::swap( order[i], order[i + static_cast<std::size_t>( random.below( order.size() - i ) )] );
    result.push_back( regionPoints[order[i]] );
  }
  return result;
}

} // namespace vbas
