#include "algorithms/aggregation/partition_search.h"

#include "algorithms/aggregation/contiguity.h"
#include "algorithms/base/random.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

namespace vbas
{

namespace
{

using Clock = std::chrono::steady_clock;
using Moves = std::vector<std::pair<std::size_t, std::size_t>>; //!< (region, new aggregate)

double secondsSince( Clock::time_point start )
{
  return std::chrono::duration<double>( Clock::now() - start ).count();
}

//! A proposed move: what changes, its kind, and how the partition scores it.
struct Proposal
{
    enum class Kind
    {
      None,
      Region,
      Reform,
      Recentre,
    };
    Kind kind = Kind::None;
    std::size_t region = 0; //!< Region: the region and its new aggregate; Recentre: the aggregate
    std::size_t aggregate = 0;
    Moves moves; //!< Reform
    std::vector<std::size_t> aggregates;
    MoveStats *stats = nullptr;
    Partition::Change change;
};

class Search
{
  public:
    Search( Partition &partition, const SearchSettings &settings, SearchResult &result )
      : mPartition( partition )
      , mSettings( settings )
      , mSized( partition.sized() )
      , mHistograms( mSized.entries() )
      , mK( mSized.k() )
      , mRandom( settings.seed )
      , mResult( result )
      , mLocal( partition.regions(), 0 )
      , mMark( partition.regions(), 0 )
      , mClassStamp( partition.classCount(), 0 )
      , mClassIndex( partition.classCount(), 0 )
    {
    }

    //! A random move; slack: the largest rise of the cost that late acceptance would take now.
    Proposal propose( double slack )
    {
      mSlack = slack;
      const std::uint64_t draw = mRandom.below( 100 );
      // Recombinations lower suppression most per second on generated counties (docs/benchmarks.md).
      if ( draw < 30 )
        return regionMove();
      if ( draw < 90 )
        return recombination();
      if ( draw < 95 )
        return mergeSplit();
      return recentre();
    }

    void apply( const Proposal &p )
    {
      if ( p.kind == Proposal::Kind::Region )
        mPartition.applyRegionMove( p.region, p.aggregate );
      else if ( p.kind == Proposal::Kind::Reform )
        mPartition.applyReform( p.moves, p.aggregates );
      else
        mPartition.applyRecentre( p.aggregate );
    }

  private:
    //! A random region and a neighbouring aggregate (an aggregate other than its own that it borders), or false.
    bool borderPair( std::size_t &r, std::size_t &to )
    {
      const RegionAdjacency &adjacency = mPartition.adjacency();
      r = mRandom.below( mPartition.regions() );
      const std::size_t begin = adjacency.offsets[r];
      const std::size_t degree = adjacency.offsets[r + 1] - begin;
      if ( degree == 0 )
        return false;
      const std::size_t first = mRandom.below( degree );
      for ( std::size_t i = 0; i < degree; ++i )
      {
        to = mPartition.aggregateOf( adjacency.neighbours[begin + ( first + i ) % degree] );
        if ( to != mPartition.aggregateOf( r ) )
          return true;
      }
      return false;
    }

    Proposal regionMove()
    {
      Proposal p;
      p.stats = &mResult.regionMoves;
      if ( !borderPair( p.region, p.aggregate ) )
        return p;
      p.kind = Proposal::Kind::Region;
      p.change = mPartition.regionMove( p.region, p.aggregate );
      return p;
    }

    Proposal recentre()
    {
      Proposal p;
      p.stats = &mResult.recentres;
      p.kind = Proposal::Kind::Recentre;
      p.aggregate = mRandom.below( mPartition.aggregates() );
      p.change = mPartition.recentre( p.aggregate );
      return p;
    }

    //! Two neighbouring aggregates: that of a random region, and one it borders; none when the region borders no other aggregate.
    std::optional<std::pair<std::size_t, std::size_t>> neighbourAggregates()
    {
      std::size_t r = 0;
      std::size_t b = 0;
      if ( !borderPair( r, b ) )
        return std::nullopt;
      return std::make_pair( mPartition.aggregateOf( r ), b );
    }

    //! Two adjacent aggregates re-formed: merged, then split along a random spanning tree at its best edge.
    Proposal recombination()
    {
      Proposal p;
      p.stats = &mResult.recombinations;
      const auto pair = neighbourAggregates();
      if ( !pair )
        return p;
      const auto [a, b] = *pair;
      std::vector<std::size_t> regions = mPartition.members( a );
      regions.insert( regions.end(), mPartition.members( b ).begin(), mPartition.members( b ).end() );
      std::vector<std::size_t> side;
      std::int64_t suppressed = 0;
      if ( !bestSplit( regions, { a, b }, side, suppressed ) )
        return p;
      // Skipped unscored when its suppression below k alone rises more than late acceptance takes (a move
      // changes compactness by less than a record); not under the average risk model, whose cut may fall as much.
      const std::int64_t splitChange = suppressed - mPartition.aggregateSuppressed( a ) - mPartition.aggregateSuppressed( b );
      if ( !mPartition.cuts() && splitChange > mSlack + 1 )
        return p;
      markSide( side );
      for ( const std::size_t q : regions )
      {
        const std::size_t to = mMark[q] == mStamp ? a : b;
        if ( mPartition.aggregateOf( q ) != to )
          p.moves.emplace_back( q, to );
      }
      p = reform( std::move( p ), { a, b } );
      // The split's own count below k and the partition's must agree: they count the same criterion two ways.
      if ( p.kind == Proposal::Kind::Reform && p.change.suppressed - p.change.cut != splitChange )
        throw std::logic_error( "searchPartition: a split's suppression differs from the partition's" );
      return p;
    }

    //! Two adjacent aggregates merged into one, and a third aggregate split in two along a random spanning tree at its best edge.
    Proposal mergeSplit()
    {
      Proposal p;
      p.stats = &mResult.mergeSplits;
      const auto pair = neighbourAggregates();
      if ( !pair )
        return p;
      const auto [a, b] = *pair;
      const std::size_t c = mRandom.below( mPartition.aggregates() );
      if ( c == a || c == b || mPartition.members( c ).size() < 2 )
        return p;
      std::vector<std::size_t> side;
      std::int64_t suppressed = 0;
      if ( !bestSplit( mPartition.members( c ), { c, b }, side, suppressed ) )
        return p;
      for ( const std::size_t q : mPartition.members( b ) )
        p.moves.emplace_back( q, a );
      markSide( side );
      for ( const std::size_t q : mPartition.members( c ) )
        if ( mMark[q] != mStamp )
          p.moves.emplace_back( q, b );
      return reform( std::move( p ), { a, b, c } );
    }

    Proposal reform( Proposal p, std::vector<std::size_t> aggregates )
    {
      if ( p.moves.empty() )
        return p;
      p.kind = Proposal::Kind::Reform;
      p.aggregates = std::move( aggregates );
      p.change = mPartition.reform( p.moves, p.aggregates );
      return p;
    }

    void markSide( const std::vector<std::size_t> &side )
    {
      ++mStamp;
      for ( const std::size_t q : side )
        mMark[q] = mStamp;
    }

    /**
     * The regions split at the edge of a random spanning tree (Kruskal on the borders within the
     * regions, in random order) whose two sides suppress fewest records together below k (the average
     * risk model's cut, global, is scored on the move that follows), among the edges whose
     * sides keep the record floor and ceiling (or the records of the aggregates they replace); `side`
     * is the part that goes to aggregates.first, `suppressed` the records both sides suppress. False
     * when the regions are too many or not connected.
     */
    bool bestSplit( const std::vector<std::size_t> &regions, std::pair<std::size_t, std::size_t> aggregates, std::vector<std::size_t> &side, std::int64_t &suppressed )
    {
      if ( regions.size() < 2 || regions.size() > mSettings.largestRecombined )
        return false;
      std::vector<std::size_t> &order = mOrder;
      std::vector<std::size_t> &subtree = mSubtree;
      if ( !randomTree( regions, order, subtree ) )
        return false;
      const ClassTotals all = classTotals( order );
      prefixSums( order, all );
      const std::size_t classes = all.classes.size(), width = 2 * classes + 1;
      const auto keepsBounds = [&]( std::int64_t records, std::size_t aggregate ) { return mPartition.withinRecordBounds( records, mPartition.aggregateRecords( aggregate ) ); };
      std::int64_t best = -1;
      std::size_t bestNode = 0;
      for ( std::size_t v = 1; v < order.size(); ++v ) // the cut above order[v]: its subtree, order[v .. v + subtree[v]), against the rest
      {
        const std::int64_t *first = &mPrefix[v * width];
        const std::int64_t *last = &mPrefix[( v + subtree[v] ) * width];
        const std::int64_t records = last[2 * classes] - first[2 * classes];
        if ( !keepsBounds( records, aggregates.first ) || !keepsBounds( all.records - records, aggregates.second ) )
          continue;
        std::int64_t suppressed = 0;
        for ( std::size_t c = 0; c < classes; ++c )
        {
          const std::int64_t part = last[2 * c] - first[2 * c], partSize = last[2 * c + 1] - first[2 * c + 1];
          const ClassCounts &whole = all.classes[c];
          suppressed += suppressedIn( part, partSize, mK ) + suppressedIn( whole.records - part, whole.size - partSize, mK );
        }
        if ( best < 0 || suppressed < best )
        {
          best = suppressed;
          bestNode = v;
        }
      }
      if ( best < 0 )
        return false;
      side.assign( order.begin() + static_cast<std::ptrdiff_t>( bestNode ), order.begin() + static_cast<std::ptrdiff_t>( bestNode + subtree[bestNode] ) );
      suppressed = best;
      return true;
    }

    /**
     * A random spanning tree of the regions' borders within them, in depth-first preorder from
     * regions[0]: order, and the size of each node's subtree (the subtree of order[v] is
     * order[v .. v + subtree[v])). False when the regions are not connected.
     */
    bool randomTree( const std::vector<std::size_t> &regions, std::vector<std::size_t> &order, std::vector<std::size_t> &subtree )
    {
      const RegionAdjacency &adjacency = mPartition.adjacency();
      ++mStamp;
      for ( std::size_t i = 0; i < regions.size(); ++i )
      {
        mMark[regions[i]] = mStamp;
        mLocal[regions[i]] = i;
      }
      std::vector<std::pair<std::size_t, std::size_t>> &edges = mEdges;
      edges.clear();
      for ( std::size_t i = 0; i < regions.size(); ++i )
        for ( std::size_t e = adjacency.offsets[regions[i]]; e < adjacency.offsets[regions[i] + 1]; ++e )
          if ( mMark[adjacency.neighbours[e]] == mStamp && mLocal[adjacency.neighbours[e]] > i )
            edges.emplace_back( i, mLocal[adjacency.neighbours[e]] );
      mRandom.shuffle( edges.begin(), edges.end() );
      std::vector<std::size_t> &parent = mParent;
      parent.resize( regions.size() );
      std::iota( parent.begin(), parent.end(), 0 );
      const auto root = [&parent]( std::size_t x ) {
        while ( parent[x] != x )
          x = parent[x] = parent[parent[x]];
        return x;
      };
      if ( mTree.size() < regions.size() )
        mTree.resize( regions.size() );
      for ( std::size_t i = 0; i < regions.size(); ++i )
        mTree[i].clear();
      std::size_t joined = 0;
      for ( const auto &[i, j] : edges )
      {
        if ( root( i ) == root( j ) )
          continue;
        parent[root( i )] = root( j );
        mTree[i].push_back( j );
        mTree[j].push_back( i );
        ++joined;
      }
      if ( joined + 1 != regions.size() )
        return false;
      preorder( regions, order, subtree );
      return true;
    }

    //! The preorder of mTree from its node 0 (local indices into regions), as regions, and the size of each node's subtree.
    void preorder( const std::vector<std::size_t> &regions, std::vector<std::size_t> &order, std::vector<std::size_t> &subtree )
    {
      std::vector<std::size_t> &local = mLocalOrder;
      local.clear();
      mStack.assign( 1, { 0, 0 } ); // (node, parent + 1; 0 for the root)
      mTreeParent.assign( regions.size(), 0 );
      while ( !mStack.empty() )
      {
        const auto [v, from] = mStack.back();
        mStack.pop_back();
        mTreeParent[v] = from;
        local.push_back( v );
        for ( const std::size_t w : mTree[v] )
          if ( w + 1 != from )
            mStack.emplace_back( w, v + 1 );
      }
      mSizeOf.assign( regions.size(), 1 );
      for ( std::size_t i = local.size(); i-- > 1; )
        mSizeOf[mTreeParent[local[i]] - 1] += mSizeOf[local[i]];
      order.clear();
      subtree.clear();
      for ( const std::size_t v : local )
      {
        order.push_back( regions[v] );
        subtree.push_back( mSizeOf[v] );
      }
    }

    //! A class's records and size under the criterion (Partition's EcCounts).
    struct ClassCounts
    {
        std::uint32_t cls = 0;
        std::int64_t records = 0;
        std::int64_t size = 0;
    };

    //! The counts of each class of some regions, in the order met, and their records; mClassIndex gives each class's place.
    struct ClassTotals
    {
        std::vector<ClassCounts> classes;
        std::int64_t records = 0;
    };

    ClassTotals classTotals( const std::vector<std::size_t> &regions )
    {
      ClassTotals t;
      ++mStamp;
      for ( const std::size_t r : regions )
        for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
        {
          const std::uint32_t cls = mHistograms.classes[e];
          if ( mClassStamp[cls] != mStamp )
          {
            mClassStamp[cls] = mStamp;
            mClassIndex[cls] = t.classes.size();
            t.classes.push_back( { cls, 0, 0 } );
          }
          t.classes[mClassIndex[cls]].records += mHistograms.counts[e];
          t.classes[mClassIndex[cls]].size += mSized.size( e );
          t.records += mHistograms.counts[e];
        }
      return t;
    }

    /**
     * mPrefix row j (of 2 all.classes.size() + 1 entries): the records and size of each class of `all`,
     * then the records, over order[0 .. j), so that the counts of any run of order are the difference of
     * two rows.
     */
    void prefixSums( const std::vector<std::size_t> &order, const ClassTotals &all )
    {
      const std::size_t width = 2 * all.classes.size() + 1;
      mPrefix.assign( ( order.size() + 1 ) * width, 0 );
      for ( std::size_t j = 0; j < order.size(); ++j )
      {
        std::int64_t *row = &mPrefix[( j + 1 ) * width];
        std::copy( row - width, row, row );
        const std::size_t r = order[j];
        for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
        {
          row[2 * mClassIndex[mHistograms.classes[e]]] += mHistograms.counts[e];
          row[2 * mClassIndex[mHistograms.classes[e]] + 1] += mSized.size( e );
          row[width - 1] += mHistograms.counts[e];
        }
      }
    }

    Partition &mPartition;
    const SearchSettings &mSettings;
    const SizedHistograms &mSized;
    const SparseHistograms &mHistograms; //!< mSized's entries
    std::int64_t mK;
    Random mRandom;
    SearchResult &mResult;
    std::vector<std::size_t> mLocal;
    std::vector<std::size_t> mMark;
    std::size_t mStamp = 0;
    std::vector<std::int64_t> mPrefix;
    // Buffers of randomTree and preorder, kept between calls.
    std::vector<std::pair<std::size_t, std::size_t>> mEdges, mStack;
    std::vector<std::size_t> mParent, mLocalOrder, mTreeParent, mSizeOf, mOrder, mSubtree;
    std::vector<std::vector<std::size_t>> mTree;
    double mSlack = 0;
    std::vector<std::size_t> mClassStamp; //!< classTotals' marks, by class id
    std::vector<std::size_t> mClassIndex;
};

} // namespace

namespace
{

bool better( const PartitionScore &a, const PartitionScore &b )
{
  return a.suppressed < b.suppressed || ( a.suppressed == b.suppressed && a.meanPointCompactness < b.meanPointCompactness );
}

void keepBest( SearchResult &result, const Partition &partition, bool keepsBounds )
{
  result.boundsKept = keepsBounds;
  result.best = partition.score();
  result.regionAggregate = partition.regionAggregate();
  result.sites = partition.sites();
}

void report( Progress &progress, const SearchResult &result, const Partition &partition, double percent )
{
  const double ratio = result.start.meanPointCompactness > 0 ? partition.score().meanPointCompactness / result.start.meanPointCompactness : 1;
  progress.report( percent, "suppressed " + std::to_string( partition.score().suppressed ) + " (best " + std::to_string( result.best.suppressed ) + ", start "
                              + std::to_string( result.start.suppressed ) + "), compactness " + std::to_string( ratio ) + " x the start's" );
}

//! Whether the search stops before its next move: the stop is set then.
bool stops( SearchResult &result, const SearchSettings &settings, Progress *progress, Clock::time_point start, double &lastReport, const Partition &partition )
{
  if ( result.best.suppressed == 0 )
    result.stop = SearchStop::NothingSuppressed;
  else if ( result.moves >= settings.maxMoves )
    result.stop = SearchStop::MaxMoves;
  else if ( result.moves % 64 != 0 )
    return false;
  else if ( progress && progress->canceled() )
    result.stop = SearchStop::Canceled;
  else
  {
    const double elapsed = secondsSince( start );
    if ( elapsed < settings.timeLimit )
    {
      if ( progress && elapsed - lastReport >= 0.5 )
      {
        lastReport = elapsed;
        report( *progress, result, partition, 100 * elapsed / settings.timeLimit );
      }
      return false;
    }
    result.stop = SearchStop::TimeLimit;
  }
  return true;
}

} // namespace

namespace
{

//! The aggregates other than r's own that region r borders, with the length of border shared with each, by increasing aggregate.
std::vector<std::pair<std::size_t, double>> neighbourAggregates( std::size_t r, const Partition &partition )
{
  const RegionAdjacency &adjacency = partition.adjacency();
  std::vector<std::pair<std::size_t, double>> borders;
  for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
    if ( partition.aggregateOf( adjacency.neighbours[e] ) != partition.aggregateOf( r ) )
      borders.emplace_back( partition.aggregateOf( adjacency.neighbours[e] ), adjacency.borderLengths[e] );
  return bordersByAggregate( std::move( borders ) );
}

//! One pass of the boundary refinement: every site moved to the mean of its aggregate where that lowers compactness, then the region moves; returns those.
std::size_t refinePass( Partition &partition )
{
  for ( std::size_t a = 0; a < partition.aggregates(); ++a )
    if ( partition.recentre( a ).compactness < 0 )
      partition.applyRecentre( a );
  std::size_t moves = 0;
  for ( std::size_t r = 0; r < partition.regions(); ++r )
  {
    std::size_t best = 0;
    std::int64_t bestDrop = 0;
    double bestLength = 0;
    for ( const auto &[to, length] : neighbourAggregates( r, partition ) ) // by increasing aggregate: a full tie keeps the lower one
    {
      const Partition::Change change = partition.regionMove( r, to );
      if ( change.allowed && ( -change.suppressed > bestDrop || ( bestDrop > 0 && -change.suppressed == bestDrop && length > bestLength ) ) )
      {
        best = to;
        bestDrop = -change.suppressed;
        bestLength = length;
      }
    }
    if ( bestDrop == 0 )
      continue;
    partition.applyRegionMove( r, best );
    ++moves;
  }
  return moves;
}

} // namespace

BoundaryRefinement refineBoundaries( Partition &partition )
{
  BoundaryRefinement result;
  result.suppressedBefore = partition.score().suppressed;
  // Termination: every move strictly lowers the suppressed records, a whole number from 0.
  for ( std::size_t moves = 1; moves > 0; ++result.passes )
  {
    moves = refinePass( partition );
    result.moves += moves;
  }
  result.suppressedAfter = partition.score().suppressed;
  return result;
}

SearchResult searchPartition( Partition &partition, const SearchSettings &settings, Progress *progress )
{
  const Clock::time_point start = Clock::now();
  SearchResult result;
  result.start = partition.score();
  keepBest( result, partition, partition.keepsBounds() );
  Search search( partition, settings, result );
  // Late acceptance on the suppressed records, the mean-point compactness (as a share of the start's) breaking ties.
  const double scale = result.start.meanPointCompactness > 0 ? result.start.meanPointCompactness : 1;
  const auto cost = [scale]( const PartitionScore &s ) { return static_cast<double>( s.suppressed ) + s.meanPointCompactness / scale; };
  double current = cost( partition.score() );
  std::vector<double> history( std::max<std::size_t>( settings.history, 1 ), current );
  double lastReport = 0;
  while ( !stops( result, settings, progress, start, lastReport, partition ) )
  {
    const Clock::time_point moveStart = Clock::now();
    double &late = history[result.moves++ % history.size()];
    const Proposal p = search.propose( std::max( late, current ) - current );
    const double candidate = current + static_cast<double>( p.change.suppressed ) + p.change.meanPointCompactness / scale;
    const bool accept = p.kind != Proposal::Kind::None && p.change.allowed && ( candidate <= late || candidate <= current );
    if ( accept )
    {
      search.apply( p );
      current = cost( partition.score() );
    }
    late = current;
    ++p.stats->tried;
    p.stats->accepted += accept;
    p.stats->seconds += secondsSince( moveStart );
    if ( !accept )
      continue;
    ++result.accepted;
    if ( settings.afterAccept )
      settings.afterAccept( partition );
    // The best partition that keeps every bound; the start until one does (docs/method.md, "Suppression search").
    const bool improves = better( partition.score(), result.best ) || ( !result.boundsKept && partition.score().suppressed <= result.start.suppressed );
    if ( improves && partition.keepsBounds() )
    {
      keepBest( result, partition, true );
      result.bestMove = result.moves;
      result.bestSeconds = secondsSince( start );
    }
  }
  result.seconds = secondsSince( start );
  return result;
}

} // namespace vbas
