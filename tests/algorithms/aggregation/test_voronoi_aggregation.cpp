// Voronoi aggregation and suppression (paper sec. 3.3; nearest site, ties to the lower index).
#include "algorithms/aggregation/aggregation.h"
#include "algorithms/base/histograms.h"
#include "algorithms/aggregation/suppression.h"
#include "tests/algorithms/test_util.h"
#include "algorithms/aggregation/voronoi.h"

#include <stdexcept>

using namespace vbas;

namespace
{

//! True if every vertex of ring is one of the expected corners and every corner is a vertex.
bool sameCorners( const std::vector<Point> &ring, const std::vector<Point> &corners )
{
  const auto has = []( const std::vector<Point> &list, const Point &p ) {
    for ( const Point &q : list )
      if ( std::abs( q.x - p.x ) < 1e-9 && std::abs( q.y - p.y ) < 1e-9 )
        return true;
    return false;
  };
  for ( const Point &p : ring )
    if ( !has( corners, p ) )
      return false;
  for ( const Point &c : corners )
    if ( !has( ring, c ) )
      return false;
  return true;
}

} // namespace

class TestVoronoiAggregation : public QObject
{
    Q_OBJECT

  private slots:
    void emptySitesThrow();
    void nearestSite();
    void exactTieGoesToLowerIndex();
    void fourCocircularSitesTie();
    void duplicatedSitePosition();
    void oneSite();
    void collinearSites();
    void twoSitesTwoRectangles();
    void threeSitesCells();
    void locateRegionsByNearestSite();
    void aggregateMergesHistograms();
    void siteWithoutRegionsYieldsNoAggregate();
    void suppressBelowK();
    void summarizePerAggregate();
    void endToEnd();
};

void TestVoronoiAggregation::emptySitesThrow()
{
  QVERIFY_EXCEPTION_THROWN( VoronoiDiagram( {} ), std::invalid_argument );
}

void TestVoronoiAggregation::nearestSite()
{
  // Sites 0 (0,0), 1 (10,0), 2 (0,10).
  const VoronoiDiagram d( { { 0, 0 }, { 10, 0 }, { 0, 10 } } );
  QCOMPARE( d.siteCount(), std::size_t( 3 ) );
  QCOMPARE( d.nearestSite( { 1, 1 } ), std::size_t( 0 ) );     // d^2 = 2, 82, 82
  QCOMPARE( d.nearestSite( { 9, 1 } ), std::size_t( 1 ) );     // d^2 = 82, 2, 162
  QCOMPARE( d.nearestSite( { 1, 8 } ), std::size_t( 2 ) );     // d^2 = 65, 145, 5
  QCOMPARE( d.nearestSite( { 6, 5 } ), std::size_t( 1 ) );     // d^2 = 61, 41, 61
  QCOMPARE( d.nearestSite( { -50, -50 } ), std::size_t( 0 ) ); // far outside the hull
  // All three are pairwise Voronoi neighbours (one Delaunay triangle).
  QCOMPARE( d.neighbours( 0 ), std::vector<std::size_t>( { 1, 2 } ) );
  QCOMPARE( d.neighbours( 1 ), std::vector<std::size_t>( { 0, 2 } ) );
}

void TestVoronoiAggregation::exactTieGoesToLowerIndex()
{
  // q = (5,3) is at d^2 = 25 + 9 = 34 from both (0,0) and (10,0): lower site index wins, whatever its position.
  QCOMPARE( VoronoiDiagram( { { 0, 0 }, { 10, 0 } } ).nearestSite( { 5, 3 } ), std::size_t( 0 ) );
  QCOMPARE( VoronoiDiagram( { { 10, 0 }, { 0, 0 } } ).nearestSite( { 5, 3 } ), std::size_t( 0 ) );
  // With a third, farther site: (5,3) to (5,20) is d^2 = 289.
  QCOMPARE( VoronoiDiagram( { { 5, 20 }, { 10, 0 }, { 0, 0 } } ).nearestSite( { 5, 3 } ), std::size_t( 1 ) );
  QCOMPARE( VoronoiDiagram( { { 5, 20 }, { 0, 0 }, { 10, 0 } } ).nearestSite( { 5, 3 } ), std::size_t( 1 ) );
}

void TestVoronoiAggregation::fourCocircularSitesTie()
{
  // Corners of the square [0,2]^2 plus a far site; q = (1,1) is at d^2 = 2 from all four corners.
  const std::vector<Point> corners { { 0, 0 }, { 2, 0 }, { 2, 2 }, { 0, 2 } };
  for ( std::size_t first = 0; first < 4; ++first )
  {
    // The far site takes index 0; the corners follow in a rotated order starting at `first`,
    // so the lowest corner index is 1, at a different corner each time.
    std::vector<Point> sites { { 50, 50 } };
    for ( std::size_t i = 0; i < 4; ++i )
      sites.push_back( corners[( first + i ) % 4] );
    QCOMPARE( VoronoiDiagram( sites ).nearestSite( { 1, 1 } ), std::size_t( 1 ) );
    // reversed order: lowest corner index is still 1
    std::vector<Point> reversed { { 50, 50 } };
    for ( std::size_t i = 0; i < 4; ++i )
      reversed.push_back( corners[( first + 4 - i ) % 4] );
    QCOMPARE( VoronoiDiagram( reversed ).nearestSite( { 1, 1 } ), std::size_t( 1 ) );
  }
}

void TestVoronoiAggregation::duplicatedSitePosition()
{
  // Site 2 repeats site 0's position: it is never the nearest, has no cell and no neighbours.
  const VoronoiDiagram d( { { 0, 0 }, { 4, 0 }, { 0, 0 } } );
  QCOMPARE( d.siteCount(), std::size_t( 3 ) );
  QCOMPARE( d.nearestSite( { 1, 0 } ), std::size_t( 0 ) ); // d^2 = 1 to sites 0 and 2, 9 to site 1
  QCOMPARE( d.nearestSite( { 0, 0 } ), std::size_t( 0 ) );
  QCOMPARE( d.nearestSite( { 3, 1 } ), std::size_t( 1 ) );
  QVERIFY( d.neighbours( 2 ).empty() );
  const Extent extent { -2, -2, 6, 2 };
  QVERIFY( d.cell( 2, extent ).empty() );
  // Site 0's cell: x <= 2 within the extent: [-2,2] x [-2,2], area 16.
  VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( d.cell( 0, extent ) ) ), 16.0, 1e-9 );

  // The repeated position taking the higher index again when the first copy comes later.
  const VoronoiDiagram d2( { { 4, 0 }, { 0, 0 }, { 0, 0 } } );
  QCOMPARE( d2.nearestSite( { 1, 0 } ), std::size_t( 1 ) );
  QVERIFY( d2.cell( 2, extent ).empty() );
}

void TestVoronoiAggregation::oneSite()
{
  const VoronoiDiagram d( { { 3, 4 } } );
  QCOMPARE( d.nearestSite( { -100, 7 } ), std::size_t( 0 ) );
  QCOMPARE( d.nearestSite( { 3, 4 } ), std::size_t( 0 ) );
  QVERIFY( d.neighbours( 0 ).empty() );
  // The cell is the whole extent [0,10] x [0,5]: area 50.
  const std::vector<Point> ring = d.cell( 0, { 0, 0, 10, 5 } );
  QVERIFY( sameCorners( ring, { { 0, 0 }, { 10, 0 }, { 10, 5 }, { 0, 5 } } ) );
  VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( ring ) ), 50.0, 1e-9 );
}

void TestVoronoiAggregation::collinearSites()
{
  // Sites on the x axis: 0 (0,0), 1 (2,0), 2 (4,0). Bisectors x = 1 and x = 3.
  const VoronoiDiagram d( { { 0, 0 }, { 2, 0 }, { 4, 0 } } );
  QCOMPARE( d.nearestSite( { 2.9, 5 } ), std::size_t( 1 ) );
  QCOMPARE( d.nearestSite( { 3.1, -5 } ), std::size_t( 2 ) );
  QCOMPARE( d.nearestSite( { -3, 100 } ), std::size_t( 0 ) );
  QCOMPARE( d.nearestSite( { 1, 7 } ), std::size_t( 0 ) );  // on the bisector x = 1: tie 0/1 -> 0
  QCOMPARE( d.nearestSite( { 3, -7 } ), std::size_t( 1 ) ); // on x = 3: tie 1/2 -> 1
  QCOMPARE( d.neighbours( 0 ), std::vector<std::size_t>( { 1 } ) );
  QCOMPARE( d.neighbours( 1 ), std::vector<std::size_t>( { 0, 2 } ) );
  QCOMPARE( d.neighbours( 2 ), std::vector<std::size_t>( { 1 } ) );
  // Cells clipped to [-1,5] x [-1,1]: strips [-1,1], [1,3], [3,5] of height 2 -> area 4 each.
  const Extent extent { -1, -1, 5, 1 };
  QVERIFY( sameCorners( d.cell( 0, extent ), { { -1, -1 }, { 1, -1 }, { 1, 1 }, { -1, 1 } } ) );
  QVERIFY( sameCorners( d.cell( 1, extent ), { { 1, -1 }, { 3, -1 }, { 3, 1 }, { 1, 1 } } ) );
  QVERIFY( sameCorners( d.cell( 2, extent ), { { 3, -1 }, { 5, -1 }, { 5, 1 }, { 3, 1 } } ) );
  for ( std::size_t s = 0; s < 3; ++s )
    VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( d.cell( s, extent ) ) ), 4.0, 1e-9 );
}

void TestVoronoiAggregation::twoSitesTwoRectangles()
{
  // Sites (1,1), (3,1) in the extent [0,4] x [0,2]: bisector x = 2 -> rectangles [0,2]x[0,2] and [2,4]x[0,2].
  const VoronoiDiagram d( { { 1, 1 }, { 3, 1 } } );
  const Extent extent { 0, 0, 4, 2 };
  const std::vector<Point> left = d.cell( 0, extent );
  const std::vector<Point> right = d.cell( 1, extent );
  QVERIFY( sameCorners( left, { { 0, 0 }, { 2, 0 }, { 2, 2 }, { 0, 2 } } ) );
  QVERIFY( sameCorners( right, { { 2, 0 }, { 4, 0 }, { 4, 2 }, { 2, 2 } } ) );
  VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( left ) ), 4.0, 1e-9 );
  VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( right ) ), 4.0, 1e-9 );
}

void TestVoronoiAggregation::threeSitesCells()
{
  // Sites 0 (0,0), 1 (4,0), 2 (0,4) in [-2,6] x [-2,6] (area 64).
  // Bisectors: 0|1 is x = 2, 0|2 is y = 2, 1|2 is y = x.
  // Cell 0 = {x <= 2, y <= 2} = [-2,2]^2: area 16.
  // Cell 1 = {x >= 2, y <= x}: the square [2,6]x[-2,2] (16) plus the triangle (2,2),(6,2),(6,6) (8) = 24.
  // Cell 2 = mirror of cell 1 about y = x: 24. Total 16 + 24 + 24 = 64.
  const VoronoiDiagram d( { { 0, 0 }, { 4, 0 }, { 0, 4 } } );
  const Extent extent { -2, -2, 6, 6 };
  QVERIFY( sameCorners( d.cell( 0, extent ), { { -2, -2 }, { 2, -2 }, { 2, 2 }, { -2, 2 } } ) );
  QVERIFY( sameCorners( d.cell( 1, extent ), { { 2, -2 }, { 6, -2 }, { 6, 6 }, { 2, 2 } } ) );
  VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( d.cell( 0, extent ) ) ), 16.0, 1e-9 );
  VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( d.cell( 1, extent ) ) ), 24.0, 1e-9 );
  VBAS_COMPARE_NEAR( std::abs( vbastest::ringArea( d.cell( 2, extent ) ) ), 24.0, 1e-9 );
}

void TestVoronoiAggregation::locateRegionsByNearestSite()
{
  // Sites 0 (0,0), 1 (10,0). Region points: (1,1) -> 0; (9,9) -> 1; (5,2) tie -> 0; (6,0) -> 1.
  const VoronoiDiagram d( { { 0, 0 }, { 10, 0 } } );
  QCOMPARE( locateRegions( { { 1, 1 }, { 9, 9 }, { 5, 2 }, { 6, 0 } }, d ), std::vector<std::size_t>( { 0, 1, 0, 1 } ) );
}

void TestVoronoiAggregation::aggregateMergesHistograms()
{
  // Regions -> groups: r0 -> 2, r1 -> 0, r2 -> 2, r3 -> 5.
  // r0 {c0:2, c1:1}, r1 {c1:3}, r2 {c0:1, c2:4}, r3 {c1:1}.
  // Aggregates in increasing group order: a0 = group 0 = {r1}, a1 = group 2 = {r0, r2}, a2 = group 5 = {r3}.
  // a0 {c1:3}; a1 {c0:2+1 = 3, c1:1, c2:4}; a2 {c1:1}.
  const SparseHistograms h = vbastest::histograms( { { { 0, 2 }, { 1, 1 } }, { { 1, 3 } }, { { 0, 1 }, { 2, 4 } }, { { 1, 1 } } } );
  const Aggregation agg = aggregate( { 2, 0, 2, 5 }, h );
  QCOMPARE( agg.aggregateId, std::vector<std::size_t>( { 0, 2, 5 } ) );
  QCOMPARE( agg.regionAggregateIndex, std::vector<std::size_t>( { 1, 0, 1, 2 } ) );
  QCOMPARE( agg.ecs.rows(), std::size_t( 3 ) );
  QCOMPARE( agg.ecs.offsets, std::vector<std::size_t>( { 0, 1, 4, 5 } ) );
  QCOMPARE( agg.ecs.classes, std::vector<std::uint32_t>( { 1, 0, 1, 2, 1 } ) );
  QCOMPARE( agg.ecs.counts, std::vector<std::int64_t>( { 3, 3, 1, 4, 1 } ) );
  QCOMPARE( agg.ecs.total(), h.total() ); // 12 records either way
}

void TestVoronoiAggregation::siteWithoutRegionsYieldsNoAggregate()
{
  // Sites 0 (0,0), 1 (100,0), 2 (10,0); regions at (1,0), (9,0), (11,0): none near site 1.
  // -> groups 0, 2, 2: two aggregates for three sites (an empty cell makes none).
  const VoronoiDiagram d( { { 0, 0 }, { 100, 0 }, { 10, 0 } } );
  const std::vector<std::size_t> groups = locateRegions( { { 1, 0 }, { 9, 0 }, { 11, 0 } }, d );
  QCOMPARE( groups, std::vector<std::size_t>( { 0, 2, 2 } ) );
  const Aggregation agg = aggregate( groups, vbastest::histograms( { { { 0, 1 } }, { { 0, 2 } }, { { 1, 5 } } } ) );
  QCOMPARE( agg.aggregateId, std::vector<std::size_t>( { 0, 2 } ) );
  QCOMPARE( agg.regionAggregateIndex, std::vector<std::size_t>( { 0, 1, 1 } ) );
  // a0 {c0:1}; a1 {c0:2, c1:5}
  QCOMPARE( agg.ecs.offsets, std::vector<std::size_t>( { 0, 1, 3 } ) );
  QCOMPARE( agg.ecs.counts, std::vector<std::int64_t>( { 1, 2, 5 } ) );
}

void TestVoronoiAggregation::suppressBelowK()
{
  // ECs of aggregateMergesHistograms: a0 {c1:3}, a1 {c0:3, c1:1, c2:4}, a2 {c1:1}; k = 3.
  // Released: 3 (size exactly k), 3 (exactly k), 4; suppressed: 1, 1.
  const SparseHistograms h = vbastest::histograms( { { { 0, 2 }, { 1, 1 } }, { { 1, 3 } }, { { 0, 1 }, { 2, 4 } }, { { 1, 1 } } } );
  const Aggregation agg = aggregate( { 2, 0, 2, 5 }, h );
  const Suppression s = suppress( agg.ecs, 3 );
  QCOMPARE( s.suppressed, std::vector<char>( { 0, 0, 1, 0, 1 } ) );
  QCOMPARE( s.releasedRecords, std::int64_t( 3 + 3 + 4 ) );
  QCOMPARE( s.suppressedRecords, std::int64_t( 1 + 1 ) );
  QCOMPARE( s.releasedRecords + s.suppressedRecords, h.total() ); // 12
  // k = 4: also the two ECs of size 3 go: released 4, suppressed 3+3+1+1 = 8.
  const Suppression s4 = suppress( agg.ecs, 4 );
  QCOMPARE( s4.suppressed, std::vector<char>( { 1, 1, 1, 0, 1 } ) );
  QCOMPARE( s4.releasedRecords, std::int64_t( 4 ) );
  QCOMPARE( s4.suppressedRecords, std::int64_t( 8 ) );
}

void TestVoronoiAggregation::summarizePerAggregate()
{
  // Same ECs, k = 3: a0 records 3, released 3, smallest released EC 3;
  // a1 records 8, released 3+4 = 7, suppressed 1, smallest released 3; a2 records 1, all suppressed, smallest 0.
  const SparseHistograms h = vbastest::histograms( { { { 0, 2 }, { 1, 1 } }, { { 1, 3 } }, { { 0, 1 }, { 2, 4 } }, { { 1, 1 } } } );
  const Aggregation agg = aggregate( { 2, 0, 2, 5 }, h );
  const std::vector<AggregateSummary> sums = summarize( agg.ecs, suppress( agg.ecs, 3 ) );
  QCOMPARE( sums.size(), std::size_t( 3 ) );
  QCOMPARE( sums[0].records, std::int64_t( 3 ) );
  QCOMPARE( sums[0].released, std::int64_t( 3 ) );
  QCOMPARE( sums[0].suppressed, std::int64_t( 0 ) );
  QCOMPARE( sums[0].smallestReleasedEc, std::int64_t( 3 ) );
  QCOMPARE( sums[1].records, std::int64_t( 8 ) );
  QCOMPARE( sums[1].released, std::int64_t( 7 ) );
  QCOMPARE( sums[1].suppressed, std::int64_t( 1 ) );
  QCOMPARE( sums[1].smallestReleasedEc, std::int64_t( 3 ) );
  QCOMPARE( sums[2].records, std::int64_t( 1 ) );
  QCOMPARE( sums[2].released, std::int64_t( 0 ) );
  QCOMPARE( sums[2].suppressed, std::int64_t( 1 ) );
  QCOMPARE( sums[2].smallestReleasedEc, std::int64_t( 0 ) );
}

void TestVoronoiAggregation::endToEnd()
{
  // Six regions on a line, two sites 0 (1,0) and 1 (7,0): bisector x = 4.
  // r0 (0,0), r1 (2,0), r2 (4,0) [tie -> site 0], r3 (5,0), r4 (6,0), r5 (9,0).
  // Histograms (class: count): r0 {0:2}, r1 {0:1, 1:1}, r2 {1:1}, r3 {0:3}, r4 {1:1}, r5 {0:1, 1:1}.
  // a0 = {r0,r1,r2}: {0:3, 1:2}; a1 = {r3,r4,r5}: {0:4, 1:2}.
  // k = 3: suppress the two ECs of 2 -> released 3 + 4 = 7, suppressed 4, total 11.
  const VoronoiDiagram d( { { 1, 0 }, { 7, 0 } } );
  const std::vector<std::size_t> groups = locateRegions( { { 0, 0 }, { 2, 0 }, { 4, 0 }, { 5, 0 }, { 6, 0 }, { 9, 0 } }, d );
  QCOMPARE( groups, std::vector<std::size_t>( { 0, 0, 0, 1, 1, 1 } ) );
  const SparseHistograms h = vbastest::histograms( { { { 0, 2 } }, { { 0, 1 }, { 1, 1 } }, { { 1, 1 } }, { { 0, 3 } }, { { 1, 1 } }, { { 0, 1 }, { 1, 1 } } } );
  const Aggregation agg = aggregate( groups, h );
  QCOMPARE( agg.ecs.counts, std::vector<std::int64_t>( { 3, 2, 4, 2 } ) );
  const Suppression s = suppress( agg.ecs, 3 );
  QCOMPARE( s.releasedRecords, std::int64_t( 7 ) );
  QCOMPARE( s.suppressedRecords, std::int64_t( 4 ) );
  QCOMPARE( s.releasedRecords + s.suppressedRecords, std::int64_t( 11 ) );
}

QTEST_APPLESS_MAIN( TestVoronoiAggregation )
#include "test_voronoi_aggregation.moc"
