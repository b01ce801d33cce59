// Contiguity of aggregates: the region adjacency, islands bridged, the fragments of a partition, the
// reassignment of detached fragments and the refinement of boundaries, on small hand-built adjacencies. Region r's aggregate is
// regionAggregate[r]; every border is listed with its length.
#include "algorithms/aggregation/contiguity.h"
#include "algorithms/aggregation/partition_search.h"
#include "algorithms/aggregation/release.h"
#include "tests/algorithms/test_util.h"

#include <map>
#include <random>

using namespace vbas;

class TestContiguity : public QObject
{
    Q_OBJECT

  private slots:
    void adjacencyIsCsr();
    void fragmentCounts();
    void detachedFragmentToLongestBorder();
    void borderSummedOverFragment();
    void islandsBridged();
    void repairMadeWhenSuppressionRises();
    void moveAllowedWhenSuppressionDoesNotRise();
    void neighbourTieGoesToLowerAggregate();
    void mainFragmentTies();
    void enclaveJoinsItsSurroundings();
    void isolatedFragmentStays();
    void everyDetachedFragmentMoves();
    void bridgedIslandJoins();
    void receivingAggregateWaitsForNextPass();
    void terminatesAtFixedPoint();
    void refinementLowersSuppression();
    void refinementPrefersLargestDrop();
    void refinementRefusesSplit();
    void refinementKeepsFragmentCount();
    void refinementNeedsStrictDrop();
    void refinementLaterPassEnablesMove();
    void refinementNeverRaisesSuppression();
};

namespace
{
//! Every region holds records of class 0 only, counts as given.
SparseHistograms classZero( const std::vector<std::int64_t> &counts )
{
  std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> rows;
  for ( const std::int64_t n : counts )
    rows.push_back( { { 0, n } } );
  return vbastest::histograms( rows );
}

using RegionAggregate = std::vector<std::size_t>;

//! Records suppressed by a partition, counted with a map of ECs (aggregate, class): every EC below k whole.
std::int64_t recountSuppressed( const RegionAggregate &regionAggregate, const SparseHistograms &h, std::int64_t k )
{
  std::map<std::pair<std::size_t, std::uint32_t>, std::int64_t> ecs;
  for ( std::size_t r = 0; r < regionAggregate.size(); ++r )
    for ( std::size_t e = h.offsets[r]; e < h.offsets[r + 1]; ++e )
      ecs[{ regionAggregate[r], h.classes[e] }] += h.counts[e];
  std::int64_t suppressed = 0;
  for ( const auto &ec : ecs )
    suppressed += ec.second < k ? ec.second : 0;
  return suppressed;
}

//! The fragments of each aggregate.
std::map<std::size_t, std::size_t> fragmentsByAggregate( const RegionAggregate &regionAggregate, const RegionAdjacency &a )
{
  std::map<std::size_t, std::size_t> counts;
  for ( const std::size_t g : fragments( regionAggregate, a ).fragmentAggregate )
    ++counts[g];
  return counts;
}

//! REFINE_BOUNDARIES on a partition of any ids, without constraints: what it did, and the partition after it.
struct Refined : BoundaryRefinement
{
    RegionAggregate regionAggregate;
};

Refined refine( RegionAggregate regionAggregate, const RegionAdjacency &a, const SparseHistograms &h, std::int64_t k )
{
  const std::vector<std::size_t> ids = denseAggregates( regionAggregate );
  const std::vector<Point> points( regionAggregate.size() );
  Partition partition( regionAggregate, std::vector<Point>( ids.size() ), points, h, a, k, AggregateConstraints() );
  Refined refined;
  static_cast<BoundaryRefinement &>( refined ) = refineBoundaries( partition );
  for ( std::size_t r = 0; r < regionAggregate.size(); ++r )
    refined.regionAggregate.push_back( ids[partition.aggregateOf( r )] );
  return refined;
}
} // namespace

void TestContiguity::adjacencyIsCsr()
{
  // Borders 0-1 (2), 2-1 (1.5) and 0-3 (0: a point contact, no adjacency). Rows: 0 -> {1}, 1 -> {0, 2}
  // (neighbours increasing whatever the order given), 2 -> {1}, 3 -> {}.
  const RegionAdjacency a = regionAdjacency( 4, { { 0, 1, 2.0 }, { 2, 1, 1.5 }, { 0, 3, 0.0 } } );
  QCOMPARE( a.regions(), std::size_t( 4 ) );
  QCOMPARE( a.offsets, std::vector<std::size_t>( { 0, 1, 3, 4, 4 } ) );
  QCOMPARE( a.neighbours, std::vector<std::size_t>( { 1, 0, 2, 1 } ) );
  QCOMPARE( a.borderLengths, std::vector<double>( { 2.0, 2.0, 1.5, 1.5 } ) );
}

void TestContiguity::fragmentCounts()
{
  // A path 0-1-2-3-4-5 with aggregates 0 0 1 0 1 1: aggregate 0 is {0, 1} and {3}, aggregate 1 is {2} and {4, 5}.
  // Numbered by lowest region: {0, 1} = 0, {2} = 1, {3} = 2, {4, 5} = 3.
  const RegionAdjacency path = regionAdjacency( 6, { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 3, 1 }, { 3, 4, 1 }, { 4, 5, 1 } } );
  const Fragments f = fragments( { 0, 0, 1, 0, 1, 1 }, path );
  QCOMPARE( f.count(), std::size_t( 4 ) );
  QCOMPARE( f.regionFragment, std::vector<std::size_t>( { 0, 0, 1, 2, 3, 3 } ) );
  QCOMPARE( f.fragmentAggregate, std::vector<std::size_t>( { 0, 1, 0, 1 } ) );

  // Aggregate ids are any ids: 7 7 3 7 3 3 has the same fragments.
  QCOMPARE( fragments( { 7, 7, 3, 7, 3, 3 }, path ).fragmentAggregate, std::vector<std::size_t>( { 7, 3, 7, 3 } ) );

  // A 2 x 2 grid 0 1 / 2 3 with the diagonal 0, 3 in aggregate 0: they touch at a corner only (no border),
  // so aggregate 0 has two fragments and aggregate 1 ({1, 2}, also diagonal) two more.
  const RegionAdjacency square = regionAdjacency( 4, { { 0, 1, 1 }, { 0, 2, 1 }, { 1, 3, 1 }, { 2, 3, 1 } } );
  QCOMPARE( fragments( { 0, 1, 1, 0 }, square ).count(), std::size_t( 4 ) );
  QCOMPARE( fragments( { 0, 0, 1, 1 }, square ).count(), std::size_t( 2 ) );
}

void TestContiguity::detachedFragmentToLongestBorder()
{
  // Aggregate 0 = {0} (5 records) and {3} (2 records, detached); aggregate 1 = {1}, aggregate 2 = {2}.
  // Region 3 borders 1 over 1 and 2 over 3: it joins aggregate 2 although aggregate 1 is the lower one.
  // k = 2, one class: aggregate 0 goes from 7 to 5 records, aggregate 2 from 3 to 5: nothing suppressed.
  const RegionAdjacency a = regionAdjacency( 4, { { 0, 1, 1 }, { 1, 2, 1 }, { 3, 1, 1 }, { 3, 2, 3 } } );
  const Contiguity c = makeContiguous( { 0, 1, 2, 0 }, a, classZero( { 5, 3, 3, 2 } ), 2 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 1, 2, 2 } ) );
  QCOMPARE( c.fragmentsBefore, std::size_t( 4 ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 3 ) );
  QCOMPARE( c.reassigned, std::size_t( 1 ) );
  QCOMPARE( c.kept, std::size_t( 0 ) );
  QCOMPARE( c.suppressedBefore, std::int64_t( 0 ) );
  QCOMPARE( c.suppressedAfter, std::int64_t( 0 ) );
}

void TestContiguity::borderSummedOverFragment()
{
  // Aggregate 0's detached fragment {3, 4} borders aggregate 1 over 1 (region 3) + 1.5 (region 4) = 2.5 and
  // aggregate 2 over 2 (region 3): the fragment's whole border counts, so it joins aggregate 1, although
  // its longest single border is with aggregate 2.
  const RegionAdjacency a = regionAdjacency( 5, { { 0, 1, 1 }, { 0, 2, 1 }, { 1, 2, 1 }, { 3, 4, 1 }, { 3, 1, 1 }, { 4, 1, 1.5 }, { 3, 2, 2 } } );
  const Contiguity c = makeContiguous( { 0, 1, 2, 0, 0 }, a, classZero( { 10, 3, 3, 1, 1 } ), 2 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 1, 2, 1, 1 } ) );
  QCOMPARE( c.fragmentsBefore, std::size_t( 4 ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 3 ) );
  QCOMPARE( c.reassigned, std::size_t( 1 ) );
}

void TestContiguity::islandsBridged()
{
  // Regions 0-1 share a border; 2 and 3 are islands at (10, 0) and (11, 0); 4 sits on region 3's point.
  // Points 0 (0, 0), 1 (1, 0). Parts {0, 1}, {2}, {3}, {4}. Kruskal on the shortest links: 3-4 (0),
  // 2-3 (1), then 1-2 (9) joins the mainland. Bridges have border length 0; the real border stays.
  const RegionAdjacency a = regionAdjacency( 5, { { 0, 1, 2 } } );
  const BridgedAdjacency b = bridgeIslands( a, { { 0, 0 }, { 1, 0 }, { 10, 0 }, { 11, 0 }, { 11, 0 } } );
  QCOMPARE( b.bridges.size(), std::size_t( 3 ) );
  QCOMPARE( std::make_pair( b.bridges[0].a, b.bridges[0].b ), std::make_pair( std::size_t( 3 ), std::size_t( 4 ) ) );
  QCOMPARE( std::make_pair( b.bridges[1].a, b.bridges[1].b ), std::make_pair( std::size_t( 2 ), std::size_t( 3 ) ) );
  QCOMPARE( std::make_pair( b.bridges[2].a, b.bridges[2].b ), std::make_pair( std::size_t( 1 ), std::size_t( 2 ) ) );
  QCOMPARE( b.bridges[2].length, 9.0 );
  QCOMPARE( b.adjacency.neighbours, std::vector<std::size_t>( { 1, 0, 2, 1, 3, 2, 4, 3 } ) );
  QCOMPARE( b.adjacency.borderLengths, std::vector<double>( { 2, 2, 0, 0, 0, 0, 0, 0 } ) );
  QCOMPARE( fragments( { 0, 0, 0, 0, 0 }, b.adjacency ).count(), std::size_t( 1 ) );
  QCOMPARE( fragments( { 0, 0, 0, 0, 0 }, a ).count(), std::size_t( 4 ) );
  // Connected already: nothing to bridge.
  QCOMPARE( bridgeIslands( regionAdjacency( 2, { { 0, 1, 1 } } ), { { 0, 0 }, { 5, 5 } } ).bridges.size(), std::size_t( 0 ) );
}

void TestContiguity::repairMadeWhenSuppressionRises()
{
  // k = 3. Aggregate 0 = {0} (class 0 x3, class 1 x2) and the detached {2} (class 1 x1); aggregate 1 = {1}
  // (class 0 x3), the only neighbour of 2. Aggregate 0's class 1 holds 3 records, released. Moving 2
  // leaves 2 there (suppressed) and makes an EC of 1 in aggregate 1 (suppressed): 0 -> 3 suppressed. It is
  // the only repair that makes the aggregates contiguous, and it is made: contiguity is not traded away.
  const SparseHistograms h = vbastest::histograms( { { { 0, 3 }, { 1, 2 } }, { { 0, 3 } }, { { 1, 1 } } } );
  const RegionAdjacency a = regionAdjacency( 3, { { 0, 1, 1 }, { 1, 2, 1 } } );
  const Contiguity c = makeContiguous( { 0, 1, 0 }, a, h, 3 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 1, 1 } ) );
  QCOMPARE( c.fragmentsBefore, std::size_t( 3 ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 2 ) );
  QCOMPARE( c.reassigned, std::size_t( 1 ) );
  QCOMPARE( c.kept, std::size_t( 0 ) );
  QCOMPARE( c.suppressedBefore, std::int64_t( 0 ) );
  QCOMPARE( c.suppressedAfter, std::int64_t( 3 ) );
}

void TestContiguity::moveAllowedWhenSuppressionDoesNotRise()
{
  const RegionAdjacency a = regionAdjacency( 3, { { 0, 1, 1 }, { 1, 2, 1 } } );
  // k = 3. Aggregate 0 = {0} (class 0 x3) and the detached {2} (class 1 x1); aggregate 1 = {1} (class 0 x3,
  // class 1 x2). Before: class 1 has 1 record in aggregate 0 and 2 in aggregate 1, all 3 suppressed. After the
  // move aggregate 1's class 1 holds 3: nothing suppressed.
  const Contiguity lower = makeContiguous( { 0, 1, 0 }, a, vbastest::histograms( { { { 0, 3 } }, { { 0, 3 }, { 1, 2 } }, { { 1, 1 } } } ), 3 );
  QCOMPARE( lower.regionAggregate, RegionAggregate( { 0, 1, 1 } ) );
  QCOMPARE( lower.suppressedBefore, std::int64_t( 3 ) );
  QCOMPARE( lower.suppressedAfter, std::int64_t( 0 ) );

  // Aggregate 1 without class 1: the record is suppressed in aggregate 0 before and in aggregate 1 after (1 -> 1),
  // which is no rise: the fragment moves.
  const Contiguity same = makeContiguous( { 0, 1, 0 }, a, vbastest::histograms( { { { 0, 3 } }, { { 0, 3 } }, { { 1, 1 } } } ), 3 );
  QCOMPARE( same.regionAggregate, RegionAggregate( { 0, 1, 1 } ) );
  QCOMPARE( same.reassigned, std::size_t( 1 ) );
  QCOMPARE( same.suppressedBefore, std::int64_t( 1 ) );
  QCOMPARE( same.suppressedAfter, std::int64_t( 1 ) );
}

void TestContiguity::neighbourTieGoesToLowerAggregate()
{
  // Aggregate 5 = {0} (main) and {3}; region 3 borders region 1 (aggregate 7) and region 2 (aggregate 3) over 1
  // each: a tie, which the lower aggregate id, 3, wins, though region 1 comes first.
  const RegionAdjacency a = regionAdjacency( 4, { { 0, 1, 1 }, { 0, 2, 1 }, { 3, 1, 1 }, { 3, 2, 1 } } );
  const Contiguity c = makeContiguous( { 5, 7, 3, 5 }, a, classZero( { 5, 3, 3, 2 } ), 2 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 5, 7, 3, 3 } ) );
}

void TestContiguity::mainFragmentTies()
{
  // Path 0-1-2-3. Aggregates 0 1 0 0: aggregate 0 = {0} (4 records) and {2, 3} (2 + 2 = 4 records): a tie on
  // records, which {2, 3} wins with more regions, so {0} is the detached one and joins aggregate 1.
  const RegionAdjacency path = regionAdjacency( 4, { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 3, 1 } } );
  const Contiguity byRegions = makeContiguous( { 0, 1, 0, 0 }, path, classZero( { 4, 5, 2, 2 } ), 2 );
  QCOMPARE( byRegions.regionAggregate, RegionAggregate( { 1, 1, 0, 0 } ) );

  // Aggregates 1 0 1 0, 5 or 3 records per region. Aggregate 1 = {0}, {2} (5 records each, one region each):
  // the fragment of the lowest region, {0}, is the main one. Aggregate 0 = {1}, {3}, main {1}. Pass 1:
  // {2} borders aggregate 0 over 1 + 1 and joins it; aggregate 0 received a fragment, so its {3} waits. Pass 2:
  // aggregate 0 = {1, 2, 3}, one fragment. The one move merged 3 fragments: 4 -> 2.
  const Contiguity byRegion = makeContiguous( { 1, 0, 1, 0 }, path, classZero( { 5, 3, 5, 3 } ), 2 );
  QCOMPARE( byRegion.regionAggregate, RegionAggregate( { 1, 0, 0, 0 } ) );
  QCOMPARE( byRegion.fragmentsBefore, std::size_t( 4 ) );
  QCOMPARE( byRegion.fragmentsAfter, std::size_t( 2 ) );
  QCOMPARE( byRegion.reassigned, std::size_t( 1 ) );
  QCOMPARE( byRegion.kept, std::size_t( 0 ) );
}

void TestContiguity::enclaveJoinsItsSurroundings()
{
  // Regions 0-3 (aggregate 0) form a ring around region 4 (aggregate 1), which borders all four; aggregate 1's
  // main fragment is region 5 (5 records), bordering region 2. The enclave {4} has aggregate 0 as its
  // only neighbour and joins it: 4 -> 5 records there, 6 -> 5 in aggregate 1, nothing suppressed (k = 2).
  const RegionAdjacency a = regionAdjacency( 6, { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 3, 1 }, { 3, 0, 1 }, { 4, 0, 1 }, { 4, 1, 1 }, { 4, 2, 1 }, { 4, 3, 1 }, { 5, 2, 1 } } );
  const Contiguity c = makeContiguous( { 0, 0, 0, 0, 1, 1 }, a, classZero( { 1, 1, 1, 1, 1, 5 } ), 2 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 0, 0, 0, 0, 1 } ) );
  QCOMPARE( c.fragmentsBefore, std::size_t( 3 ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 2 ) );
  QCOMPARE( c.reassigned, std::size_t( 1 ) );
}

void TestContiguity::isolatedFragmentStays()
{
  // Region 2 (aggregate 0, detached from region 0) has no border at all, an island: it stays.
  const Contiguity c = makeContiguous( { 0, 1, 0 }, regionAdjacency( 3, { { 0, 1, 1 } } ), classZero( { 3, 3, 1 } ), 2 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 1, 0 } ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 3 ) );
  QCOMPARE( c.reassigned, std::size_t( 0 ) );
  QCOMPARE( c.kept, std::size_t( 1 ) );
}

void TestContiguity::everyDetachedFragmentMoves()
{
  // k = 3. Aggregate 0 = {0} (class 0 x3, class 1 x2) + detached {2} (class 1 x1); aggregate 1 = {1} (class 0
  // x3); aggregate 2 = {3} (class 0 x3) + detached {4} (class 1 x2). Regions 2 and 4 border region 1 only.
  // Suppressed before: aggregate 2's class 1 (2). Pass 1: {2} joins aggregate 1 (aggregate 0's class 1 falls to 2,
  // suppressed; aggregate 1's class 1 is 1); {4}, of aggregate 2, which received nothing, joins aggregate 1 too
  // (aggregate 1's class 1 reaches 3, released). Pass 2 moves nothing. Suppressed after: aggregate 0's class 1 (2).
  const SparseHistograms h = vbastest::histograms( { { { 0, 3 }, { 1, 2 } }, { { 0, 3 } }, { { 1, 1 } }, { { 0, 3 } }, { { 1, 2 } } } );
  const RegionAdjacency a = regionAdjacency( 5, { { 0, 1, 1 }, { 1, 2, 1 }, { 1, 3, 1 }, { 1, 4, 1 } } );
  const Contiguity c = makeContiguous( { 0, 1, 0, 2, 2 }, a, h, 3 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 1, 1, 2, 1 } ) );
  QCOMPARE( c.fragmentsBefore, std::size_t( 5 ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 3 ) );
  QCOMPARE( c.reassigned, std::size_t( 2 ) );
  QCOMPARE( c.kept, std::size_t( 0 ) );
  QCOMPARE( c.suppressedBefore, std::int64_t( 2 ) );
  QCOMPARE( c.suppressedAfter, std::int64_t( 2 ) );
}

void TestContiguity::bridgedIslandJoins()
{
  // Region 2 (aggregate 0) is an island, detached from region 0; bridged to its nearest region point,
  // region 1's (aggregate 1), it joins aggregate 1 over the bridge, the only link it has.
  const BridgedAdjacency b = bridgeIslands( regionAdjacency( 3, { { 0, 1, 1 } } ), { { 0, 0 }, { 1, 0 }, { 3, 0 } } );
  const Contiguity c = makeContiguous( { 0, 1, 0 }, b.adjacency, classZero( { 3, 3, 1 } ), 2 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 1, 1 } ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 2 ) );
  QCOMPARE( c.kept, std::size_t( 0 ) );
}

void TestContiguity::receivingAggregateWaitsForNextPass()
{
  // Path 0-1-2-3, aggregates 0 1 0 1, records 5 1 1 5 (k = 2). Aggregate 0 = {0} (main) + {2}; aggregate 1 = {3}
  // (main) + {1}. Pass 1: {1} borders aggregate 0 over 1 + 1 and joins it, which connects {2} to aggregate 0's
  // main part through region 1. So {2}, computed before the move, is no detached fragment any more:
  // aggregate 0 received a fragment and its fragments wait for pass 2, where aggregate 0 is {0, 1, 2}, one
  // fragment. (Moved in pass 1, region 2 would have joined aggregate 1, its longest border, 3.)
  const RegionAdjacency path = regionAdjacency( 4, { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 3, 3 } } );
  const Contiguity c = makeContiguous( { 0, 1, 0, 1 }, path, classZero( { 5, 1, 1, 5 } ), 2 );
  QCOMPARE( c.regionAggregate, RegionAggregate( { 0, 0, 0, 1 } ) );
  QCOMPARE( c.fragmentsBefore, std::size_t( 4 ) );
  QCOMPARE( c.fragmentsAfter, std::size_t( 2 ) );
  QCOMPARE( c.reassigned, std::size_t( 1 ) );
}

void TestContiguity::terminatesAtFixedPoint()
{
  // A 30 x 30 grid (borders of random lengths) with random aggregates and classes: the passes end, no
  // aggregate is lost, each move removed at least one fragment, the counts
  // agree with a release of the new partition, and a second run moves nothing.
  std::mt19937 random( 6 );
  const std::size_t side = 30, n = side * side;
  std::vector<Border> borders;
  for ( std::size_t r = 0; r < n; ++r )
  {
    if ( r % side + 1 < side )
      borders.push_back( { r, r + 1, 1.0 + random() % 4 } );
    if ( r + side < n )
      borders.push_back( { r, r + side, 1.0 + random() % 4 } );
  }
  const RegionAdjacency a = regionAdjacency( n, borders );
  RegionAggregate regionAggregate;
  std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> rows;
  for ( std::size_t r = 0; r < n; ++r )
  {
    regionAggregate.push_back( random() % 40 );
    rows.push_back( { { static_cast<std::uint32_t>( random() % 3 ), static_cast<std::int64_t>( 1 + random() % 3 ) } } );
  }
  const SparseHistograms h = vbastest::histograms( rows );
  const std::int64_t k = 5;
  const Contiguity c = makeContiguous( regionAggregate, a, h, k );

  RegionAggregate before = regionAggregate, after = c.regionAggregate;
  std::sort( before.begin(), before.end() );
  std::sort( after.begin(), after.end() );
  before.erase( std::unique( before.begin(), before.end() ), before.end() );
  after.erase( std::unique( after.begin(), after.end() ), after.end() );
  QCOMPARE( after, before );
  QVERIFY( c.reassigned > 0 );
  QVERIFY( c.fragmentsBefore - c.fragmentsAfter >= c.reassigned );
  QCOMPARE( c.fragmentsAfter, fragments( c.regionAggregate, a ).count() );
  QCOMPARE( c.kept, c.fragmentsAfter - after.size() );
  QCOMPARE( c.suppressedBefore, release( regionAggregate, h, k ).suppression.suppressedRecords );
  QCOMPARE( c.suppressedAfter, release( c.regionAggregate, h, k ).suppression.suppressedRecords );

  const Contiguity again = makeContiguous( c.regionAggregate, a, h, k );
  QCOMPARE( again.reassigned, std::size_t( 0 ) );
  QCOMPARE( again.regionAggregate, c.regionAggregate );
  QCOMPARE( again.fragmentsBefore, c.fragmentsAfter );
}

void TestContiguity::refinementLowersSuppression()
{
  // Path 0-1-2-3, aggregates 0 0 1 1, k = 3. Region 0: class 0 x3; 1: class 1 x1; 2: class 0 x3, class 1 x2;
  // 3: class 0 x3. Suppressed: class 1 in aggregate 0 (1) and in aggregate 1 (2): 3. Pass 1: region 0 borders
  // no other aggregate; region 1 to aggregate 1: aggregate 0's class 1 goes (-1), aggregate 1's reaches 3 (-2): a drop
  // of 3, and aggregate 0 keeps region 0: moved. Regions 2 and 3 border aggregate 1 only. Pass 2: region 0 is
  // aggregate 0's last region, so it stays; region 1 back to aggregate 0 would raise suppression by 3. Nothing
  // moves: 1 move, 2 passes, 3 -> 0 suppressed.
  const SparseHistograms h = vbastest::histograms( { { { 0, 3 } }, { { 1, 1 } }, { { 0, 3 }, { 1, 2 } }, { { 0, 3 } } } );
  const RegionAdjacency path = regionAdjacency( 4, { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 3, 1 } } );
  const Refined b = refine( { 0, 0, 1, 1 }, path, h, 3 );
  QCOMPARE( b.regionAggregate, RegionAggregate( { 0, 1, 1, 1 } ) );
  QCOMPARE( b.moves, std::size_t( 1 ) );
  QCOMPARE( b.passes, std::size_t( 2 ) );
  QCOMPARE( b.suppressedBefore, std::int64_t( 3 ) );
  QCOMPARE( b.suppressedAfter, std::int64_t( 0 ) );
}

void TestContiguity::refinementPrefersLargestDrop()
{
  // k = 3. Aggregate 5 = {0, 1}: region 0 class 1 x1, region 1 class 0 x3 (bordering region 0 only).
  // Region 0 borders region 2 (aggregate 7) and region 3 (aggregate 3). Region 2: class 0 x3, class 1 x1;
  // region 3: class 0 x3, class 1 x2. To aggregate 7: aggregate 5's class 1 goes (-1), aggregate 7's becomes 2,
  // still suppressed (+1): no drop. To aggregate 3: -1, and aggregate 3's class 1 reaches 3 (-2): a drop of 3.
  // Region 0 joins aggregate 3 although its border with aggregate 7 (3) is the longer one.
  const RegionAdjacency a = regionAdjacency( 4, { { 0, 1, 1 }, { 0, 2, 3 }, { 0, 3, 1 } } );
  const Refined largest = refine( { 5, 5, 7, 3 }, a, vbastest::histograms( { { { 1, 1 } }, { { 0, 3 } }, { { 0, 3 }, { 1, 1 } }, { { 0, 3 }, { 1, 2 } } } ), 3 );
  QCOMPARE( largest.regionAggregate, RegionAggregate( { 3, 5, 7, 3 } ) );
  QCOMPARE( largest.suppressedBefore, std::int64_t( 4 ) );
  QCOMPARE( largest.suppressedAfter, std::int64_t( 1 ) );

  // Region 2 with class 1 x2 too: both moves drop 3. The longer border wins: aggregate 7 (3 against 1).
  const SparseHistograms tie = vbastest::histograms( { { { 1, 1 } }, { { 0, 3 } }, { { 0, 3 }, { 1, 2 } }, { { 0, 3 }, { 1, 2 } } } );
  QCOMPARE( refine( { 5, 5, 7, 3 }, a, tie, 3 ).regionAggregate, RegionAggregate( { 7, 5, 7, 3 } ) );
  // Borders of 1 each: the lower aggregate id, 3, wins, though region 2 comes first.
  const RegionAdjacency even = regionAdjacency( 4, { { 0, 1, 1 }, { 0, 2, 1 }, { 0, 3, 1 } } );
  QCOMPARE( refine( { 5, 5, 7, 3 }, even, tie, 3 ).regionAggregate, RegionAggregate( { 3, 5, 7, 3 } ) );
}

void TestContiguity::refinementRefusesSplit()
{
  // k = 3. Path 0-1-2 in aggregate 0, region 3 (aggregate 1) bordering region 1. Regions 0, 2: class 0 x3;
  // region 1: class 1 x1; region 3: class 0 x3, class 1 x2. Region 1 to aggregate 1 would drop suppression
  // by 3 (1 in aggregate 0, 2 in aggregate 1), but would cut aggregate 0 into {0} and {2}: refused. Regions 0 and
  // 2 border no other aggregate; region 3 is aggregate 1's only region. 1 pass, nothing moves.
  const SparseHistograms h = vbastest::histograms( { { { 0, 3 } }, { { 1, 1 } }, { { 0, 3 } }, { { 0, 3 }, { 1, 2 } } } );
  const Refined path = refine( { 0, 0, 0, 1 }, regionAdjacency( 4, { { 0, 1, 1 }, { 1, 2, 1 }, { 1, 3, 1 } } ), h, 3 );
  QCOMPARE( path.regionAggregate, RegionAggregate( { 0, 0, 0, 1 } ) );
  QCOMPARE( path.moves, std::size_t( 0 ) );
  QCOMPARE( path.passes, std::size_t( 1 ) );
  QCOMPARE( path.suppressedAfter, std::int64_t( 3 ) );

  // With a border 0-2 as well, {0, 2} stays connected without region 1: it moves, 3 -> 0.
  const Refined ring = refine( { 0, 0, 0, 1 }, regionAdjacency( 4, { { 0, 1, 1 }, { 1, 2, 1 }, { 1, 3, 1 }, { 0, 2, 1 } } ), h, 3 );
  QCOMPARE( ring.regionAggregate, RegionAggregate( { 0, 1, 0, 1 } ) );
  QCOMPARE( ring.suppressedAfter, std::int64_t( 0 ) );
}

void TestContiguity::refinementKeepsFragmentCount()
{
  // Aggregate 0 already in two fragments: the path 0-1-2 and the detached region 4; region 3 (aggregate 1)
  // borders regions 1 and 4. k = 3; region 3: class 0 x3, class 1 x2; regions 0, 2: class 0 x3.
  // Region 1 with class 1 x1, region 4 with class 0 x3: region 1 to aggregate 1 would drop suppression by
  // 3 but cut {0, 1, 2} in two, 2 -> 3 fragments: refused, although aggregate 0 is not contiguous anyway.
  // Region 4 to aggregate 1 drops nothing. Nothing moves.
  const RegionAdjacency a = regionAdjacency( 5, { { 0, 1, 1 }, { 1, 2, 1 }, { 1, 3, 1 }, { 3, 4, 1 } } );
  const Refined split = refine( { 0, 0, 0, 1, 0 }, a, vbastest::histograms( { { { 0, 3 } }, { { 1, 1 } }, { { 0, 3 } }, { { 0, 3 }, { 1, 2 } }, { { 0, 3 } } } ), 3 );
  QCOMPARE( split.regionAggregate, RegionAggregate( { 0, 0, 0, 1, 0 } ) );
  QCOMPARE( split.moves, std::size_t( 0 ) );

  // The class 1 record in region 4 instead (region 1: class 0 x3): region 4 is a fragment of its own,
  // and its move to aggregate 1 drops suppression by 3 and aggregate 0's fragments from 2 to 1.
  const Refined detached = refine( { 0, 0, 0, 1, 0 }, a, vbastest::histograms( { { { 0, 3 } }, { { 0, 3 } }, { { 0, 3 } }, { { 0, 3 }, { 1, 2 } }, { { 1, 1 } } } ), 3 );
  QCOMPARE( detached.regionAggregate, RegionAggregate( { 0, 0, 0, 1, 1 } ) );
  QCOMPARE( detached.suppressedBefore, std::int64_t( 3 ) );
  QCOMPARE( detached.suppressedAfter, std::int64_t( 0 ) );
  QCOMPARE( fragments( detached.regionAggregate, a ).count(), std::size_t( 2 ) );
}

void TestContiguity::refinementNeedsStrictDrop()
{
  // Path 0-1-2, aggregates 0 0 1, k = 3. Region 0: class 0 x3; region 1: class 1 x1; region 2: class 0 x3.
  // Region 1 to aggregate 1: its record is suppressed in aggregate 0 before and in aggregate 1 after (1 -> 1), no
  // strict drop: it stays (makeContiguous would move a detached fragment on such a tie).
  const Refined b = refine( { 0, 0, 1 }, regionAdjacency( 3, { { 0, 1, 1 }, { 1, 2, 1 } } ), vbastest::histograms( { { { 0, 3 } }, { { 1, 1 } }, { { 0, 3 } } } ), 3 );
  QCOMPARE( b.regionAggregate, RegionAggregate( { 0, 0, 1 } ) );
  QCOMPARE( b.moves, std::size_t( 0 ) );
  QCOMPARE( b.passes, std::size_t( 1 ) );
  QCOMPARE( b.suppressedBefore, std::int64_t( 1 ) );
  QCOMPARE( b.suppressedAfter, std::int64_t( 1 ) );
}

void TestContiguity::refinementLaterPassEnablesMove()
{
  // k = 3. Aggregate 0 = {0, 1, 2, 6}, aggregate 1 = {3}, aggregate 2 = {4, 5}. Borders: 0-1, 0-2, 0-3, 1-4, 2-4,
  // 4-5, 1-6. Region 0: class 1 x1; 1, 2, 5: class 0 x3; 3: class 0 x3, class 1 x2; 4: class 2 x2;
  // 6: class 2 x1. Suppressed: aggregate 0's class 1 (1) and class 2 (1), aggregate 1's class 1 (2), aggregate 2's
  // class 2 (2): 6.
  // Pass 1: region 0 to aggregate 1 drops 3, but aggregate 0 would fall into {1, 6} and {2}: refused. Regions 1
  // and 2 to aggregate 2 move class 0 only: no drop. Region 4 to aggregate 0 (aggregate 2 keeps region 5): aggregate 2's
  // class 2 goes (-2), aggregate 0's reaches 3 (-1): moved. Pass 2: {1, 2, 4, 6} is connected without
  // region 0 now (1-4-2), so region 0 joins aggregate 1 (-3). Pass 3 moves nothing: 2 moves, 6 -> 0.
  const RegionAdjacency a = regionAdjacency( 7, { { 0, 1, 1 }, { 0, 2, 1 }, { 0, 3, 1 }, { 1, 4, 1 }, { 2, 4, 1 }, { 4, 5, 1 }, { 1, 6, 1 } } );
  const SparseHistograms h = vbastest::histograms( { { { 1, 1 } }, { { 0, 3 } }, { { 0, 3 } }, { { 0, 3 }, { 1, 2 } }, { { 2, 2 } }, { { 0, 3 } }, { { 2, 1 } } } );
  const Refined b = refine( { 0, 0, 0, 1, 2, 2, 0 }, a, h, 3 );
  QCOMPARE( b.regionAggregate, RegionAggregate( { 1, 0, 0, 1, 0, 2, 0 } ) );
  QCOMPARE( b.moves, std::size_t( 2 ) );
  QCOMPARE( b.passes, std::size_t( 3 ) );
  QCOMPARE( b.suppressedBefore, std::int64_t( 6 ) );
  QCOMPARE( b.suppressedAfter, std::int64_t( 0 ) );
}

void TestContiguity::refinementNeverRaisesSuppression()
{
  // 30 x 30 grids (borders of random lengths), random classes, and aggregates either at random (scattered
  // in many fragments) or as 3 x 3 blocks (contiguous), then made contiguous: the passes end, every
  // aggregate keeps a region, no aggregate gains fragments, each move drops suppression by at least 1, the
  // counts agree with an independent recount, and a second run moves nothing in one pass.
  const std::size_t side = 30, n = side * side;
  const std::int64_t k = 10;
  for ( unsigned seed = 1; seed <= 6; ++seed )
  {
    std::mt19937 random( seed );
    std::vector<Border> borders;
    for ( std::size_t r = 0; r < n; ++r )
    {
      if ( r % side + 1 < side )
        borders.push_back( { r, r + 1, 1.0 + random() % 4 } );
      if ( r + side < n )
        borders.push_back( { r, r + side, 1.0 + random() % 4 } );
    }
    const RegionAdjacency a = regionAdjacency( n, borders );
    RegionAggregate regionAggregate;
    std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> rows;
    for ( std::size_t r = 0; r < n; ++r )
    {
      regionAggregate.push_back( seed % 2 ? random() % 60 : ( r / side / 3 ) * 10 + r % side / 3 );
      rows.emplace_back();
      for ( std::uint32_t cls = 0; cls < 8; ++cls )
        if ( random() % 3 == 0 )
          rows.back().emplace_back( cls, static_cast<std::int64_t>( 1 + random() % 3 ) );
    }
    const SparseHistograms h = vbastest::histograms( rows );
    if ( seed > 4 )
      regionAggregate = makeContiguous( regionAggregate, a, h, k ).regionAggregate;
    const Refined b = refine( regionAggregate, a, h, k );

    QCOMPARE( b.suppressedBefore, recountSuppressed( regionAggregate, h, k ) );
    QCOMPARE( b.suppressedAfter, recountSuppressed( b.regionAggregate, h, k ) );
    QVERIFY( b.moves > 0 );
    QVERIFY( b.suppressedBefore - b.suppressedAfter >= static_cast<std::int64_t>( b.moves ) );
    const std::map<std::size_t, std::size_t> before = fragmentsByAggregate( regionAggregate, a ), after = fragmentsByAggregate( b.regionAggregate, a );
    QCOMPARE( after.size(), before.size() ); // every aggregate keeps a region
    for ( const auto &[id, count] : after )
      QVERIFY2( count <= before.at( id ), qPrintable( QStringLiteral( "seed %1, aggregate %2: %3 -> %4 fragments" ).arg( seed ).arg( id ).arg( before.at( id ) ).arg( count ) ) );

    const Refined again = refine( b.regionAggregate, a, h, k );
    QCOMPARE( again.moves, std::size_t( 0 ) );
    QCOMPARE( again.passes, std::size_t( 1 ) );
    QCOMPARE( again.regionAggregate, b.regionAggregate );
  }
}

QTEST_APPLESS_MAIN( TestContiguity )
#include "test_contiguity.moc"
