#include "contiguity.h"

#include "aggregation.h"
#include "flat_map.h"
#include "suppression.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace vbas
{

RegionAdjacency regionAdjacency( std::size_t regions, const std::vector<Border> &borders )
{
  // Each border in both directions, sorted by (region, neighbour): the rows of the CSR in order.
  std::vector<Border> directed;
  for ( const Border &b : borders )
  {
    if ( b.length <= 0 )
      continue;
    directed.push_back( b );
    directed.push_back( { b.b, b.a, b.length } );
  }
  std::sort( directed.begin(), directed.end(), []( const Border &x, const Border &y ) { return std::make_pair( x.a, x.b ) < std::make_pair( y.a, y.b ); } );

  RegionAdjacency adjacency;
  adjacency.offsets.assign( regions + 1, 0 );
  for ( const Border &b : directed )
  {
    ++adjacency.offsets[b.a + 1];
    adjacency.neighbours.push_back( b.b );
    adjacency.borderLengths.push_back( b.length );
  }
  std::partial_sum( adjacency.offsets.begin(), adjacency.offsets.end(), adjacency.offsets.begin() );
  return adjacency;
}

Fragments fragments( const std::vector<std::size_t> &regionGroup, const RegionAdjacency &adjacency )
{
  constexpr std::size_t unseen = ~std::size_t( 0 );
  Fragments result;
  result.regionFragment.assign( regionGroup.size(), unseen );
  std::vector<std::size_t> stack;
  // A new fragment starts at each region not reached yet, so fragments come in order of their lowest region.
  for ( std::size_t start = 0; start < regionGroup.size(); ++start )
  {
    if ( result.regionFragment[start] != unseen )
      continue;
    const std::size_t fragment = result.count();
    const std::size_t group = regionGroup[start];
    result.fragmentGroup.push_back( group );
    result.regionFragment[start] = fragment;
    stack.push_back( start );
    while ( !stack.empty() ) // depth-first, over borders within the group only
    {
      const std::size_t r = stack.back();
      stack.pop_back();
      for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
      {
        const std::size_t n = adjacency.neighbours[e];
        if ( regionGroup[n] == group && result.regionFragment[n] == unseen )
        {
          result.regionFragment[n] = fragment;
          stack.push_back( n );
        }
      }
    }
  }
  return result;
}

namespace
{

constexpr std::size_t kNone = ~std::size_t( 0 );

//! Records suppressed in an EC of n records: all of them when n < k (paper sec. 3.3).
std::int64_t suppressedIn( std::int64_t n, std::int64_t k )
{
  return n < k ? n : 0;
}

std::int64_t suppressedRecords( const std::vector<std::size_t> &regionGroup, const SparseHistograms &regionHistograms, std::int64_t k )
{
  return suppress( aggregate( regionGroup, regionHistograms ).ecs, k ).suppressedRecords;
}

//! The records of every EC (group, class), kept up to date as fragments move. Groups are dense indices.
class GroupEcs
{
  public:
    GroupEcs( const std::vector<std::size_t> &regionGroup, const SparseHistograms &regionHistograms )
    {
      for ( std::size_t r = 0; r < regionGroup.size(); ++r )
        for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
          add( regionGroup[r], regionHistograms.classes[e], regionHistograms.counts[e] );
    }

    std::int64_t count( std::size_t group, std::uint32_t cls ) const
    {
      const std::int64_t *n = mCounts.find( key( group, cls ) );
      return n ? *n : 0;
    }

    void add( std::size_t group, std::uint32_t cls, std::int64_t records ) { mCounts.findOrInsert( key( group, cls ), 0 ) += records; }

  private:
    //! Groups number fewer than the regions, which are 32-bit rows of the histograms.
    static std::uint64_t key( std::size_t group, std::uint32_t cls ) { return std::uint64_t( group ) << 32 | cls; }

    FlatMap<std::int64_t> mCounts;
};

//! The regions of each fragment, increasing: fragment f holds regions[offsets[f]] .. regions[offsets[f + 1] - 1].
struct Members
{
    std::vector<std::size_t> offsets;
    std::vector<std::size_t> regions;
};

Members members( const Fragments &parts )
{
  Members m;
  m.offsets.assign( parts.count() + 1, 0 );
  for ( const std::size_t f : parts.regionFragment )
    ++m.offsets[f + 1];
  std::partial_sum( m.offsets.begin(), m.offsets.end(), m.offsets.begin() );
  m.regions.resize( parts.regionFragment.size() );
  std::vector<std::size_t> next( m.offsets.begin(), m.offsets.end() - 1 );
  for ( std::size_t r = 0; r < parts.regionFragment.size(); ++r )
    m.regions[next[parts.regionFragment[r]]++] = r;
  return m;
}

//! The main fragment of each group: most records; ties: most regions; then the lowest region (the lower fragment).
std::vector<std::size_t> mainFragments( const Fragments &parts, const Members &m, const SparseHistograms &regionHistograms, std::size_t groups )
{
  struct Candidate
  {
    std::int64_t records = -1; // below any fragment's, so the first fragment of a group wins
    std::size_t regions = 0;
    std::size_t fragment = kNone;
  };
  std::vector<Candidate> best( groups );
  for ( std::size_t f = 0; f < parts.count(); ++f )
  {
    Candidate c { 0, m.offsets[f + 1] - m.offsets[f], f };
    for ( std::size_t i = m.offsets[f]; i < m.offsets[f + 1]; ++i )
      c.records += regionHistograms.rowTotal( m.regions[i] );
    Candidate &b = best[parts.fragmentGroup[f]];
    if ( c.records > b.records || ( c.records == b.records && c.regions > b.regions ) )
      b = c;
  }
  std::vector<std::size_t> main( groups );
  std::transform( best.begin(), best.end(), main.begin(), []( const Candidate &c ) { return c.fragment; } );
  return main;
}

//! The borders (group, length) summed by group, by increasing group.
std::vector<std::pair<std::size_t, double>> bordersByGroup( std::vector<std::pair<std::size_t, double>> borders )
{
  std::sort( borders.begin(), borders.end() );
  std::vector<std::pair<std::size_t, double>> groups;
  for ( const auto &[group, length] : borders )
  {
    if ( groups.empty() || groups.back().first != group )
      groups.emplace_back( group, 0 );
    groups.back().second += length;
  }
  return groups;
}

//! The group other than `group` that fragment f shares the longest border with (ties: the lower group), or kNone.
std::size_t longestBorderGroup( std::size_t f, const Members &m, std::size_t group, const std::vector<std::size_t> &regionGroup, const RegionAdjacency &adjacency )
{
  std::vector<std::pair<std::size_t, double>> borders; // (group, length) of each border leaving the fragment
  for ( std::size_t i = m.offsets[f]; i < m.offsets[f + 1]; ++i )
  {
    const std::size_t r = m.regions[i];
    for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
      if ( regionGroup[adjacency.neighbours[e]] != group )
        borders.emplace_back( regionGroup[adjacency.neighbours[e]], adjacency.borderLengths[e] );
  }
  std::size_t best = kNone;
  double bestLength = 0;
  for ( const auto &[other, length] : bordersByGroup( std::move( borders ) ) )
  {
    if ( length > bestLength ) // strictly longer: a tie keeps the lower group
    {
      best = other;
      bestLength = length;
    }
  }
  return best;
}

//! The records of each class in fragment f, by increasing class.
std::vector<std::pair<std::uint32_t, std::int64_t>> fragmentClasses( std::size_t f, const Members &m, const SparseHistograms &regionHistograms )
{
  std::vector<std::pair<std::uint32_t, std::int64_t>> entries;
  for ( std::size_t i = m.offsets[f]; i < m.offsets[f + 1]; ++i )
  {
    const std::size_t r = m.regions[i];
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      entries.emplace_back( regionHistograms.classes[e], regionHistograms.counts[e] );
  }
  std::sort( entries.begin(), entries.end() );
  std::vector<std::pair<std::uint32_t, std::int64_t>> classes;
  for ( const auto &[cls, records] : entries )
  {
    if ( classes.empty() || classes.back().first != cls )
      classes.emplace_back( cls, 0 );
    classes.back().second += records;
  }
  return classes;
}

/**
 * How many more records are suppressed once the classes move from group `from` to group `to`
 * (negative: fewer). Only the ECs of these two groups and of these classes change.
 */
std::int64_t suppressionChange( const GroupEcs &ecs, std::size_t from, std::size_t to, const std::vector<std::pair<std::uint32_t, std::int64_t>> &classes, std::int64_t k )
{
  std::int64_t change = 0;
  for ( const auto &[cls, records] : classes )
  {
    const std::int64_t f = ecs.count( from, cls );
    const std::int64_t t = ecs.count( to, cls );
    change += suppressedIn( f - records, k ) - suppressedIn( f, k ) + suppressedIn( t + records, k ) - suppressedIn( t, k );
  }
  return change;
}

//! The ECs updated for the classes' records moving from group `from` to group `to`.
void moveClasses( GroupEcs &ecs, std::size_t from, std::size_t to, const std::vector<std::pair<std::uint32_t, std::int64_t>> &classes )
{
  for ( const auto &[cls, records] : classes )
  {
    ecs.add( from, cls, -records );
    ecs.add( to, cls, records );
  }
}

/**
 * One pass over the detached fragments of parts, in fragment order (their lowest region), moving
 * each to its longest-border neighbour unless suppression would rise; returns the moves. A group
 * that received a fragment has had fragments merged, so its own fragments wait for the next pass;
 * the other groups' fragments are still exactly their connected components.
 */
std::size_t reassignPass( std::vector<std::size_t> &regionGroup, const Fragments &parts, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, std::int64_t k,
                          GroupEcs &ecs, std::size_t groups )
{
  const Members m = members( parts );
  const std::vector<std::size_t> main = mainFragments( parts, m, regionHistograms, groups );
  std::vector<char> received( groups, 0 );
  std::size_t moves = 0;
  for ( std::size_t f = 0; f < parts.count(); ++f )
  {
    const std::size_t from = parts.fragmentGroup[f];
    if ( main[from] == f || received[from] )
      continue;
    const std::size_t to = longestBorderGroup( f, m, from, regionGroup, adjacency );
    if ( to == kNone )
      continue;
    const auto classes = fragmentClasses( f, m, regionHistograms );
    if ( suppressionChange( ecs, from, to, classes, k ) > 0 )
      continue;
    moveClasses( ecs, from, to, classes );
    for ( std::size_t i = m.offsets[f]; i < m.offsets[f + 1]; ++i )
      regionGroup[m.regions[i]] = to;
    received[to] = 1;
    ++moves;
  }
  return moves;
}

/**
 * Groups as dense indices 0 .. groups - 1, in the order of their ids, so that ties going to the
 * lower index go to the lower id: regionGroup is renumbered, and the ids are returned by index.
 */
std::vector<std::size_t> denseGroups( std::vector<std::size_t> &regionGroup )
{
  std::vector<std::size_t> ids = regionGroup;
  std::sort( ids.begin(), ids.end() );
  ids.erase( std::unique( ids.begin(), ids.end() ), ids.end() );
  for ( std::size_t &g : regionGroup )
    g = static_cast<std::size_t>( std::lower_bound( ids.begin(), ids.end(), g ) - ids.begin() );
  return ids;
}

//! The records of each class in region r, by increasing class (a row of the histograms).
std::vector<std::pair<std::uint32_t, std::int64_t>> regionClasses( std::size_t r, const SparseHistograms &regionHistograms )
{
  std::vector<std::pair<std::uint32_t, std::int64_t>> classes;
  for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
    classes.emplace_back( regionHistograms.classes[e], regionHistograms.counts[e] );
  return classes;
}

//! The groups other than r's own that region r borders, with the length of border shared with each, by increasing group.
std::vector<std::pair<std::size_t, double>> neighbourGroups( std::size_t r, const std::vector<std::size_t> &regionGroup, const RegionAdjacency &adjacency )
{
  std::vector<std::pair<std::size_t, double>> borders;
  for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
    if ( regionGroup[adjacency.neighbours[e]] != regionGroup[r] )
      borders.emplace_back( regionGroup[adjacency.neighbours[e]], adjacency.borderLengths[e] );
  return bordersByGroup( std::move( borders ) );
}

/**
 * The neighbouring group that region r's classes should move to from group `from`: the one that
 * lowers most the records suppressed in the two groups together (ties: the longest border with r,
 * then the lower group), or kNone when no neighbour lowers them.
 */
std::size_t bestMove( std::size_t from, const std::vector<std::pair<std::size_t, double>> &neighbours, const std::vector<std::pair<std::uint32_t, std::int64_t>> &classes,
                      const GroupEcs &ecs, std::int64_t k )
{
  std::size_t best = kNone;
  std::int64_t bestDrop = 0;
  double bestLength = 0;
  for ( const auto &[to, length] : neighbours ) // by increasing group: a full tie keeps the lower one
  {
    const std::int64_t drop = -suppressionChange( ecs, from, to, classes, k );
    if ( drop > bestDrop || ( best != kNone && drop == bestDrop && length > bestLength ) )
    {
      best = to;
      bestDrop = drop;
      bestLength = length;
    }
  }
  return best;
}

/**
 * Whether a group keeps its fragments without one of its regions r: the regions of the group that
 * border r are still connected to one another within the group once r is gone. A breadth-first
 * search over the group's regions from one of them, which stops once it has reached them all.
 * Visits are marked with a stamp per check, so the marks are never cleared.
 */
class SplitCheck
{
  public:
    explicit SplitCheck( std::size_t regions )
      : mSeen( regions, 0 )
      , mTarget( regions, 0 )
    {}

    bool keepsFragments( std::size_t r, const std::vector<std::size_t> &regionGroup, const RegionAdjacency &adjacency )
    {
      ++mStamp;
      const std::size_t group = regionGroup[r];
      std::size_t targets = 0;
      for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
      {
        const std::size_t n = adjacency.neighbours[e];
        if ( regionGroup[n] == group )
        {
          mTarget[n] = mStamp;
          ++targets;
          mQueue.assign( 1, n );
        }
      }
      if ( targets <= 1 ) // r is a fragment of its own, which goes, or no path within the group runs through it
        return true;
      mSeen[r] = mStamp;
      mSeen[mQueue.front()] = mStamp;
      std::size_t reached = 1;
      for ( std::size_t i = 0; i < mQueue.size() && reached < targets; ++i )
      {
        const std::size_t q = mQueue[i];
        for ( std::size_t e = adjacency.offsets[q]; e < adjacency.offsets[q + 1]; ++e )
        {
          const std::size_t n = adjacency.neighbours[e];
          if ( regionGroup[n] != group || mSeen[n] == mStamp )
            continue;
          mSeen[n] = mStamp;
          reached += mTarget[n] == mStamp;
          mQueue.push_back( n );
        }
      }
      return reached == targets;
    }

  private:
    std::vector<std::size_t> mSeen;
    std::vector<std::size_t> mTarget;
    std::vector<std::size_t> mQueue;
    std::size_t mStamp = 0;
};

/**
 * One pass over the regions in index order, moving each boundary region to the neighbouring group
 * that lowers suppression most, when its group keeps another region and no more fragments; returns
 * the moves. Later regions see the groups as the earlier moves left them.
 */
std::size_t refinePass( std::vector<std::size_t> &regionGroup, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, std::int64_t k, GroupEcs &ecs,
                        std::vector<std::size_t> &groupRegions, SplitCheck &split )
{
  std::size_t moves = 0;
  for ( std::size_t r = 0; r < regionGroup.size(); ++r )
  {
    const std::size_t from = regionGroup[r];
    if ( groupRegions[from] == 1 )
      continue;
    const auto neighbours = neighbourGroups( r, regionGroup, adjacency );
    if ( neighbours.empty() )
      continue;
    const auto classes = regionClasses( r, regionHistograms );
    const std::size_t to = bestMove( from, neighbours, classes, ecs, k );
    if ( to == kNone || !split.keepsFragments( r, regionGroup, adjacency ) )
      continue;
    moveClasses( ecs, from, to, classes );
    regionGroup[r] = to;
    --groupRegions[from];
    ++groupRegions[to];
    ++moves;
  }
  return moves;
}

} // namespace

Contiguity makeContiguous( std::vector<std::size_t> regionGroup, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, std::int64_t k )
{
  Contiguity result;
  result.suppressedBefore = suppressedRecords( regionGroup, regionHistograms, k );

  const std::vector<std::size_t> ids = denseGroups( regionGroup );
  GroupEcs ecs( regionGroup, regionHistograms );

  // Termination: a move takes a whole connected component F out of its group (one fragment fewer
  // there) and joins it to m >= 1 fragments of a neighbouring group (m fragments become one), so
  // each move lowers the total number of fragments by m >= 1. No group ever loses its main fragment,
  // so there are never fewer fragments than groups: the passes stop after finitely many moves.
  for ( bool first = true;; first = false )
  {
    const Fragments parts = fragments( regionGroup, adjacency );
    if ( first )
      result.fragmentsBefore = parts.count();
    const std::size_t moves = reassignPass( regionGroup, parts, adjacency, regionHistograms, k, ecs, ids.size() );
    result.reassigned += moves;
    if ( moves == 0 )
    {
      result.fragmentsAfter = parts.count();
      break;
    }
  }
  result.kept = result.fragmentsAfter - ids.size();

  for ( std::size_t &g : regionGroup )
    g = ids[g];
  result.suppressedAfter = suppressedRecords( regionGroup, regionHistograms, k );
  result.regionGroup = std::move( regionGroup );
  return result;
}

BoundaryRefinement refineBoundaries( std::vector<std::size_t> regionGroup, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, std::int64_t k )
{
  BoundaryRefinement result;
  result.suppressedBefore = suppressedRecords( regionGroup, regionHistograms, k );
  const std::vector<std::size_t> ids = denseGroups( regionGroup );
  GroupEcs ecs( regionGroup, regionHistograms );
  std::vector<std::size_t> groupRegions( ids.size(), 0 );
  for ( const std::size_t g : regionGroup )
    ++groupRegions[g];
  SplitCheck split( regionGroup.size() );

  // Termination: every move strictly lowers the suppressed records, a whole number from 0, so there
  // are at most suppressedBefore moves, hence at most suppressedBefore + 1 passes.
  for ( std::size_t moves = 1; moves > 0; ++result.passes )
  {
    moves = refinePass( regionGroup, adjacency, regionHistograms, k, ecs, groupRegions, split );
    result.moves += moves;
  }

  for ( std::size_t &g : regionGroup )
    g = ids[g];
  result.suppressedAfter = suppressedRecords( regionGroup, regionHistograms, k );
  result.regionGroup = std::move( regionGroup );
  return result;
}

} // namespace vbas
