// Site location selection by balanced density (paper sec. 3.2.1, eq. 7-13; docs/method.md, Details the paper leaves open).
// Every point set is small enough to draw: "pop" lists are in the order the walk visits the points.
#include "algorithms/aggregation/balanced_density.h"
#include "tests/algorithms/test_util.h"

#include <stdexcept>

using namespace vbas;

namespace
{

//! Row (bottom row = 0) of every point, read back from the cells.
std::vector<std::size_t> rowOfPoint( const Placement &placement, std::size_t points )
{
  std::vector<std::size_t> rows( points, std::size_t( -1 ) );
  for ( std::size_t c = 0; c < placement.cells.size(); ++c )
    for ( const std::size_t i : placement.cells[c] )
      rows[i] = placement.cellRow[c];
  return rows;
}

//! Cells as sorted point lists, in placement order.
std::vector<std::vector<std::size_t>> sortedCells( const Placement &placement )
{
  std::vector<std::vector<std::size_t>> cells = placement.cells;
  for ( auto &cell : cells )
    std::sort( cell.begin(), cell.end() );
  return cells;
}

using Cells = std::vector<std::vector<std::size_t>>;

//! Every placement must be a partition of the points with one site per cell.
void checkConsistent( const Placement &placement, std::size_t points, std::size_t sites )
{
  QCOMPARE( placement.sites.size(), sites );
  QCOMPARE( placement.cells.size(), sites );
  QCOMPARE( placement.cellRow.size(), sites );
  QCOMPARE( placement.cellPopulation.size(), sites );
  std::vector<int> seen( points, 0 );
  for ( const auto &cell : placement.cells )
  {
    QVERIFY( !cell.empty() ); // a cell keeps at least one point
    for ( const std::size_t i : cell )
      ++seen[i];
  }
  QCOMPARE( seen, std::vector<int>( points, 1 ) );
}

} // namespace

class TestBalancedDensity : public QObject
{
    Q_OBJECT

  private slots:
    void invalidArguments();
    void eq9KeepsPoint();
    void eq9LeavesPointForNextRow();
    void eq9TieKeepsPoint();
    void lastRowUnderHalfJoinsRowBelow();
    void lastRowAtHalfStaysARow();
    void moreRowsThanSitesMergesSmallestPair();
    void moreRowsThanSitesTieMergesLowerPair();
    void largestRemainderTakesCellFromLowerTiedRow();
    void largestRemainderGivesCellToLowerTiedRow();
    void lastCellKeepsExcess();
    void splitLargestCellWithTwoPoints();
    void splitLeftmostOnTies();
    void eightPointsFourSites();
    void sortTiesByXThenLayerOrder();
    void siteIsUnweightedMeanWithZeroPopulation();
    void medianOption();
    void hugePopulationKeepsSiteCount();
};

void TestBalancedDensity::invalidArguments()
{
  const std::vector<Point> points { { 0, 0 }, { 1, 1 }, { 2, 2 } };
  const std::vector<double> pop { 1, 1, 1 };
  QVERIFY_EXCEPTION_THROWN( balancedDensity( points, pop, 0, SitePosition::Mean ), std::invalid_argument );         // sites = 0
  QVERIFY_EXCEPTION_THROWN( balancedDensity( points, pop, 4, SitePosition::Mean ), std::invalid_argument );         // sites > points
  QVERIFY_EXCEPTION_THROWN( balancedDensity( points, { 0, 0, 0 }, 1, SitePosition::Mean ), std::invalid_argument ); // zero population
  QVERIFY_EXCEPTION_THROWN( balancedDensity( {}, {}, 1, SitePosition::Mean ), std::invalid_argument );              // no points
  // sites == points is allowed: 3 sites, r = R(sqrt 3) = 2 rows
  QCOMPARE( balancedDensity( points, pop, 3, SitePosition::Mean ).sites.size(), std::size_t( 3 ) );
}

// Points on the diagonal (i, i), so the walk visits them in index order.
static std::vector<Point> diagonal( std::size_t n )
{
  std::vector<Point> points;
  for ( std::size_t i = 0; i < n; ++i )
    points.push_back( { double( i ), double( i ) } );
  return points;
}

void TestBalancedDensity::eq9KeepsPoint()
{
  // s = 4: r = R(sqrt 4) = 2 (eq. 7); p = 10, p' = R(10 / 2) = 5 (eq. 8).
  // pop 1,2,3 | 1,1,2: rp' = 3, rp'' = 6: rp'' - p' = 1 <= p' - rp' = 2 -> point 2 kept in row 0.
  // Row 1 = 1+1+2 = 4 >= p'/2: stays.
  const Placement pl = balancedDensity( diagonal( 6 ), { 1, 2, 3, 1, 1, 2 }, 4, SitePosition::Mean );
  checkConsistent( pl, 6, 4 );
  QCOMPARE( rowOfPoint( pl, 6 ), std::vector<std::size_t>( { 0, 0, 0, 1, 1, 1 } ) );
}

void TestBalancedDensity::eq9LeavesPointForNextRow()
{
  // s = 4, r = 2, p = 10, p' = 5.
  // pop 2,2 | 3,1,2: rp' = 4, rp'' = 7: 7 - 5 = 2 > 5 - 4 = 1 -> point 2 left for row 1.
  // Row 1: 3, 4, 6 -> 6 - 5 = 1 <= 5 - 4 = 1 -> kept; row 1 = {2,3,4}.
  const Placement pl = balancedDensity( diagonal( 5 ), { 2, 2, 3, 1, 2 }, 4, SitePosition::Mean );
  checkConsistent( pl, 5, 4 );
  QCOMPARE( rowOfPoint( pl, 5 ), std::vector<std::size_t>( { 0, 0, 1, 1, 1 } ) );
}

void TestBalancedDensity::eq9TieKeepsPoint()
{
  // s = 4, r = 2, p = 10, p' = 5.
  // pop 1,3,2 | 2,2: rp' = 4, rp'' = 6: rp'' - p' = 1 == p' - rp' = 1 -> tie keeps point 2 in row 0.
  const Placement pl = balancedDensity( diagonal( 5 ), { 1, 3, 2, 2, 2 }, 4, SitePosition::Mean );
  checkConsistent( pl, 5, 4 );
  QCOMPARE( rowOfPoint( pl, 5 ), std::vector<std::size_t>( { 0, 0, 0, 1, 1 } ) );
}

void TestBalancedDensity::lastRowUnderHalfJoinsRowBelow()
{
  // a(3,0) pop 1, b(1,1) pop 9, c(0,2) pop 1, d(2,3) pop 1; s = 4.
  // r = 2, p = 12, p' = 6. Walk by y: a 1, b 10 >= 6: 10-6 = 4 <= 6-1 = 5 keep -> row 0 = {a,b}.
  // c, d: 2 < 6, points run out; 2 < p'/2 = 3 -> joins row 0 (under-filled last row): one row.
  // Cells: r_c = R(4 * 12/12) = 4; target R(12/4) = 3. By x: c 1, b 9, d 1, a 1.
  //   c: 1 < 3; b: 10 >= 3, 10-3 = 7 > 3-1 = 2 -> leave -> {c}; {b}: 9 >= 3 alone (one point at least) -> {b};
  //   {d, a} = 2: points run out -> 3 cells. Split the largest: {d,a} (only cell with 2 points),
  //   target R(2/2) = 1: d reaches 1 -> {d}, {a}.
  // Sites = the single points, left to right: c(0,2), b(1,1), d(2,3), a(3,0).
  const std::vector<Point> points { { 3, 0 }, { 1, 1 }, { 0, 2 }, { 2, 3 } };
  const Placement pl = balancedDensity( points, { 1, 9, 1, 1 }, 4, SitePosition::Mean );
  checkConsistent( pl, 4, 4 );
  QCOMPARE( pl.cellRow, std::vector<std::size_t>( { 0, 0, 0, 0 } ) );
  QCOMPARE( sortedCells( pl ), Cells( { { 2 }, { 1 }, { 3 }, { 0 } } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 0, 2 );
  VBAS_COMPARE_POINT( pl.sites[1], 1, 1 );
  VBAS_COMPARE_POINT( pl.sites[2], 2, 3 );
  VBAS_COMPARE_POINT( pl.sites[3], 3, 0 );
  QCOMPARE( pl.cellPopulation, std::vector<double>( { 1, 9, 1, 1 } ) );
}

void TestBalancedDensity::lastRowAtHalfStaysARow()
{
  // a(0,0) pop 1, b(1,1) pop 8, c(0,2) pop 1, d(1,3) pop 2; s = 4.
  // r = 2, p = 12, p' = 6. a 1, b 9 >= 6: 3 <= 5 keep -> row 0 = {a,b} = 9.
  // Row 1 = {c,d} = 3, not < p'/2 = 3 -> stays a row.
  // Cells (eq. 11, clamped): row 0: R(4*9/12) = R(3) = 3 clamped to its 2 points -> 2; row 1: R(4*3/12) = 1.
  //   Sum 3 < 4: give one; row 0 is full, row 1 (s*r_alpha - r_c = 0) gets it -> 2, 2.
  // Row 0 target R(9/2) = R(4.5) = 5: a 1, b 9 >= 5: 4 <= 4 keep -> one cell {a,b};
  //   split the largest: {a,b}, target 5 again -> one group; both halves stay non-empty -> {a}, {b}.
  // Row 1 target R(3/2) = R(1.5) = 2: c 1, d 3: 1 <= 1 keep -> {c,d}; split, target 2 -> {c}, {d}.
  const std::vector<Point> points { { 0, 0 }, { 1, 1 }, { 0, 2 }, { 1, 3 } };
  const Placement pl = balancedDensity( points, { 1, 8, 1, 2 }, 4, SitePosition::Mean );
  checkConsistent( pl, 4, 4 );
  QCOMPARE( pl.cellRow, std::vector<std::size_t>( { 0, 0, 1, 1 } ) );
  QCOMPARE( sortedCells( pl ), Cells( { { 0 }, { 1 }, { 2 }, { 3 } } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 0, 0 );
  VBAS_COMPARE_POINT( pl.sites[1], 1, 1 );
  VBAS_COMPARE_POINT( pl.sites[2], 0, 2 );
  VBAS_COMPARE_POINT( pl.sites[3], 1, 3 );
}

void TestBalancedDensity::moreRowsThanSitesMergesSmallestPair()
{
  // Populations in units of u = 1/16 (exact in binary): 1,3,2,2,1 -> p = 9u = 0.5625; s = 4.
  // r = 2, p' = R(0.5625 / 2) = R(0.28) = 0: every point reaches p' alone -> 5 rows of one point.
  // Too many rows: 5 rows > 4 sites. Joint populations (0,1) = 4u, (1,2) = 5u, (2,3) = 4u, (3,4) = 3u
  //   -> merge rows 3 and 4. Rows {0},{1},{2},{3,4}.
  // Cells: s * r_alpha = 4 * (1,3,2,3)/9 = 0.44, 1.33, 0.89, 1.33 -> R = 0,1,1,1, clamped to >= 1 -> 1,1,1,1.
  // Sites: the points, and the mean of (3,3),(4,4) = (3.5, 3.5).
  const double u = 1.0 / 16;
  const Placement pl = balancedDensity( diagonal( 5 ), { 1 * u, 3 * u, 2 * u, 2 * u, 1 * u }, 4, SitePosition::Mean );
  checkConsistent( pl, 5, 4 );
  QCOMPARE( rowOfPoint( pl, 5 ), std::vector<std::size_t>( { 0, 1, 2, 3, 3 } ) );
  VBAS_COMPARE_POINT( pl.sites[3], 3.5, 3.5 );
}

void TestBalancedDensity::moreRowsThanSitesTieMergesLowerPair()
{
  // u = 1/16; pops 1,2,1,2,3 -> p = 9u, s = 4, r = 2, p' = R(4.5u) = 0 -> 5 single-point rows.
  // Joint populations (0,1) = 3u, (1,2) = 3u, (2,3) = 3u, (3,4) = 5u: tie -> lower index pair (0,1).
  const double u = 1.0 / 16;
  const Placement pl = balancedDensity( diagonal( 5 ), { 1 * u, 2 * u, 1 * u, 2 * u, 3 * u }, 4, SitePosition::Mean );
  checkConsistent( pl, 5, 4 );
  QCOMPARE( rowOfPoint( pl, 5 ), std::vector<std::size_t>( { 0, 0, 1, 2, 3 } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 0.5, 0.5 );
}

void TestBalancedDensity::largestRemainderTakesCellFromLowerTiedRow()
{
  // s = 7: r = R(sqrt 7) = R(2.646) = 3; p = 30, p' = R(30/3) = 10.
  // Points (x, y, pop):
  //   row 0: p0 (0,0) 1, p1 (4,1) 3, p2 (2,2) 4
  //   row 1: p3 (1,10) 5, p4 (3,11) 1, p5 (5,12) 5
  //   row 2: p6 (0,20) 5, p7 (2,21) 1, p8 (4,22) 5
  // Rows: 1, 4, 8, then p3: 13 - 10 = 3 > 10 - 8 = 2 -> leave: row 0 = {p0,p1,p2} = 8.
  //       5, 6, 11: 1 <= 4 keep: row 1 = {p3,p4,p5} = 11; likewise row 2 = {p6,p7,p8} = 11.
  // Cells (eq. 10-11): s*r_alpha = 7*8/30 = 1.867, 7*11/30 = 2.567, 2.567 -> R = 2, 3, 3; sum 8 > 7.
  //   Largest remainder: take from the largest r_c - s*r_alpha = 0.133, 0.433, 0.433 -> tie -> row 1. Cells 2, 2, 3.
  // Row 0 (target R(8/2) = 4), by x: p0 1, p2 5: 1 <= 3 keep -> {p0,p2}; rest {p1}.
  //   sites: ((0+2)/2, (0+2)/2) = (1,1) (unweighted: pops 1 and 4 do not matter); (4,1).
  // Row 1 (target R(11/2) = R(5.5) = 6), by x: p3 5, p4 6: 0 <= 1 keep -> {p3,p4}; rest {p5}.
  //   sites: ((1+3)/2, (10+11)/2) = (2, 10.5); (5, 12).
  // Row 2 (target R(11/3) = R(3.67) = 4), by x: p6 5 >= 4 alone -> {p6}; p7 1, p8 6: 2 <= 3 keep -> {p7,p8}.
  //   Only 2 cells of 3: splitting the largest cuts {p7,p8} (pop 6), target 3: p7 1, p8 6: 3 > 2 -> leave -> {p7},{p8}.
  //   sites: (0,20), (2,21), (4,22).
  const std::vector<Point> points { { 0, 0 }, { 4, 1 }, { 2, 2 }, { 1, 10 }, { 3, 11 }, { 5, 12 }, { 0, 20 }, { 2, 21 }, { 4, 22 } };
  const Placement pl = balancedDensity( points, { 1, 3, 4, 5, 1, 5, 5, 1, 5 }, 7, SitePosition::Mean );
  checkConsistent( pl, 9, 7 );
  QCOMPARE( pl.cellRow, std::vector<std::size_t>( { 0, 0, 1, 1, 2, 2, 2 } ) );
  QCOMPARE( sortedCells( pl ), Cells( { { 0, 2 }, { 1 }, { 3, 4 }, { 5 }, { 6 }, { 7 }, { 8 } } ) );
  QCOMPARE( pl.cellPopulation, std::vector<double>( { 5, 3, 6, 5, 5, 1, 5 } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 1, 1 );
  VBAS_COMPARE_POINT( pl.sites[1], 4, 1 );
  VBAS_COMPARE_POINT( pl.sites[2], 2, 10.5 );
  VBAS_COMPARE_POINT( pl.sites[3], 5, 12 );
  VBAS_COMPARE_POINT( pl.sites[4], 0, 20 );
  VBAS_COMPARE_POINT( pl.sites[5], 2, 21 );
  VBAS_COMPARE_POINT( pl.sites[6], 4, 22 );
}

void TestBalancedDensity::largestRemainderGivesCellToLowerTiedRow()
{
  // s = 7, r = 3; 12 unit-population points on a 4 x 3 grid, x = 0..3, y = 0..2 (index = 4y + x).
  // p = 12, p' = 4: each grid row is one row of 4 (4 reaches p' exactly: keep).
  // s*r_alpha = 7*4/12 = 2.333 each -> R = 2 -> sum 6 < 7: give one to the largest
  //   s*r_alpha - r_c = 0.333 (tie) -> row 0 -> cells 3, 2, 2.
  // Row 0, target R(4/3) = 1: {0}, {1}, then the last cell keeps {2,3}.
  //   sites (0,0), (1,0), (2.5,0).
  // Rows 1, 2, target R(4/2) = 2: {4,5}, {6,7} -> (0.5,1), (2.5,1); {8,9}, {10,11} -> (0.5,2), (2.5,2).
  std::vector<Point> points;
  for ( int y = 0; y < 3; ++y )
    for ( int x = 0; x < 4; ++x )
      points.push_back( { double( x ), double( y ) } );
  const Placement pl = balancedDensity( points, std::vector<double>( 12, 1 ), 7, SitePosition::Mean );
  checkConsistent( pl, 12, 7 );
  QCOMPARE( pl.cellRow, std::vector<std::size_t>( { 0, 0, 0, 1, 1, 2, 2 } ) );
  QCOMPARE( sortedCells( pl ), Cells( { { 0 }, { 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 }, { 8, 9 }, { 10, 11 } } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 0, 0 );
  VBAS_COMPARE_POINT( pl.sites[1], 1, 0 );
  VBAS_COMPARE_POINT( pl.sites[2], 2.5, 0 );
  VBAS_COMPARE_POINT( pl.sites[3], 0.5, 1 );
  VBAS_COMPARE_POINT( pl.sites[4], 2.5, 1 );
  VBAS_COMPARE_POINT( pl.sites[5], 0.5, 2 );
  VBAS_COMPARE_POINT( pl.sites[6], 2.5, 2 );
}

void TestBalancedDensity::lastCellKeepsExcess()
{
  // s = 2: r = R(1.414) = 1; one row of p = 8 (p' = 8, reached exactly at the last point: kept).
  // r_c = R(2 * 8/8) = 2; cell target R(8/2) = 4.
  // By x: p0 3, p1 6: 6-4 = 2 > 4-3 = 1 -> leave -> {p0}; then the last cell keeps all the rest
  //   {p1,p2,p3} = 3+1+1 = 5 > 4 (the last cell keeps any excess; it is not cut into a third cell).
  // Sites: (0,0); ((2+4+6)/3, (1+0+2)/3) = (4, 1).
  const std::vector<Point> points { { 0, 0 }, { 2, 1 }, { 4, 0 }, { 6, 2 } };
  const Placement pl = balancedDensity( points, { 3, 3, 1, 1 }, 2, SitePosition::Mean );
  checkConsistent( pl, 4, 2 );
  QCOMPARE( sortedCells( pl ), Cells( { { 0 }, { 1, 2, 3 } } ) );
  QCOMPARE( pl.cellPopulation, std::vector<double>( { 3, 5 } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 0, 0 );
  VBAS_COMPARE_POINT( pl.sites[1], 4, 1 );
}

void TestBalancedDensity::splitLargestCellWithTwoPoints()
{
  // s = 4: r = 2. q0 (0,0) 1, q1 (1,1) 1, q2 (2,2) 1, q3 (3,3) 9, q4 (0,10) 4; p = 16, p' = 8.
  // Rows by y: 1, 2, 3, 12: 12-8 = 4 <= 8-3 = 5 keep -> row 0 = {q0..q3} = 12; row 1 = {q4} = 4 >= p'/2.
  // Cells: 4*12/16 = 3 -> 3; 4*4/16 = 1 -> 1; sum 4.
  // Row 0, target R(12/3) = 4, by x: 1, 2, 3, 12: 8 > 1 -> leave -> {q0,q1,q2}; {q3} = 9 alone.
  //   Population ran out with 2 cells of 3 (split the largest): the largest cell with >= 2 points is {q0,q1,q2}
  //   (pop 3; {q3} = 9 has one point). Target R(3/2) = R(1.5) = 2: 1, 2 keep -> {q0,q1}, {q2}.
  // Sites: (0.5, 0.5), (2, 2), (3, 3), (0, 10).
  const std::vector<Point> points { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 3 }, { 0, 10 } };
  const Placement pl = balancedDensity( points, { 1, 1, 1, 9, 4 }, 4, SitePosition::Mean );
  checkConsistent( pl, 5, 4 );
  QCOMPARE( pl.cellRow, std::vector<std::size_t>( { 0, 0, 0, 1 } ) );
  QCOMPARE( sortedCells( pl ), Cells( { { 0, 1 }, { 2 }, { 3 }, { 4 } } ) );
  QCOMPARE( pl.cellPopulation, std::vector<double>( { 2, 1, 9, 4 } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 0.5, 0.5 );
  VBAS_COMPARE_POINT( pl.sites[1], 2, 2 );
  VBAS_COMPARE_POINT( pl.sites[2], 3, 3 );
  VBAS_COMPARE_POINT( pl.sites[3], 0, 10 );
}

void TestBalancedDensity::splitLeftmostOnTies()
{
  // s = 4: r = 2. q0 (0,0), q1 (1,0), q2 (2,0), q3 (3,0) pop 2 each; q4 (0,5) pop 6. p = 14, p' = 7.
  // Rows (y ties by x): 2, 4, 6, 8: 8-7 = 1 <= 7-6 = 1 keep -> row 0 = {q0..q3} = 8; row 1 = {q4} = 6.
  // Cells: 4*8/14 = 2.29 -> 2; 4*6/14 = 1.71 -> 2, clamped to its 1 point -> 1; sum 3 < 4:
  //   give to row 0 (0.29; row 1 is full) -> 3, 1.
  // Row 0 target R(8/3) = R(2.67) = 3: 2; 4: 1 <= 1 keep -> {q0,q1}; 2; 4 keep -> {q2,q3}: 2 cells.
  //   Split the largest: both have pop 4 and 2 points -> leftmost {q0,q1}, target R(4/2) = 2: {q0}, {q1}.
  // Sites: (0,0), (1,0), (2.5,0), (0,5).
  const std::vector<Point> points { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 }, { 0, 5 } };
  const Placement pl = balancedDensity( points, { 2, 2, 2, 2, 6 }, 4, SitePosition::Mean );
  checkConsistent( pl, 5, 4 );
  QCOMPARE( pl.cellRow, std::vector<std::size_t>( { 0, 0, 0, 1 } ) );
  QCOMPARE( sortedCells( pl ), Cells( { { 0 }, { 1 }, { 2, 3 }, { 4 } } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 0, 0 );
  VBAS_COMPARE_POINT( pl.sites[1], 1, 0 );
  VBAS_COMPARE_POINT( pl.sites[2], 2.5, 0 );
  VBAS_COMPARE_POINT( pl.sites[3], 0, 5 );
}

void TestBalancedDensity::eightPointsFourSites()
{
  // Unit population, s = 4: r = 2, p = 8, p' = 4.
  //   p0 (0,0), p1 (4,1), p2 (2,2), p3 (6,3) | p4 (1,5), p5 (5,6), p6 (3,7), p7 (7,8)
  // Rows by y: {p0..p3} reaches 4 exactly (kept), {p4..p7} = 4.
  // Cells: 4 * 4/8 = 2 per row; target R(4/2) = 2.
  //   Row 0 by x: p0, p2 | p1, p3 -> sites ((0+2)/2, (0+2)/2) = (1,1); ((4+6)/2, (1+3)/2) = (5,2).
  //   Row 1 by x: p4, p6 | p5, p7 -> sites ((1+3)/2, (5+7)/2) = (2,6); ((5+7)/2, (6+8)/2) = (6,7).
  const std::vector<Point> points { { 0, 0 }, { 4, 1 }, { 2, 2 }, { 6, 3 }, { 1, 5 }, { 5, 6 }, { 3, 7 }, { 7, 8 } };
  const Placement pl = balancedDensity( points, std::vector<double>( 8, 1 ), 4, SitePosition::Mean );
  checkConsistent( pl, 8, 4 );
  QCOMPARE( pl.cellRow, std::vector<std::size_t>( { 0, 0, 1, 1 } ) );
  QCOMPARE( sortedCells( pl ), Cells( { { 0, 2 }, { 1, 3 }, { 4, 6 }, { 5, 7 } } ) );
  QCOMPARE( pl.cellPopulation, std::vector<double>( { 2, 2, 2, 2 } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 1, 1 );
  VBAS_COMPARE_POINT( pl.sites[1], 5, 2 );
  VBAS_COMPARE_POINT( pl.sites[2], 2, 6 );
  VBAS_COMPARE_POINT( pl.sites[3], 6, 7 );
}

void TestBalancedDensity::sortTiesByXThenLayerOrder()
{
  // Ties: rows sort by (y, x, layer order); cells by (x, y, layer order).
  // p0 (5,0), p1 (1,0), p2 (3,0), p3 (0,1); unit pop, s = 4: r = 2, p' = 2.
  // Walk by (y, x): p1, p2 | p0, p3 -> row 0 = {p1,p2}, row 1 = {p0,p3} (layer order would give {p0,p1}).
  // Cells: 2 per row, one point each; row 1 by x: p3 (x 0) then p0 (x 5).
  const std::vector<Point> points { { 5, 0 }, { 1, 0 }, { 3, 0 }, { 0, 1 } };
  const Placement pl = balancedDensity( points, { 1, 1, 1, 1 }, 4, SitePosition::Mean );
  checkConsistent( pl, 4, 4 );
  QCOMPARE( rowOfPoint( pl, 4 ), std::vector<std::size_t>( { 1, 0, 0, 1 } ) );
  VBAS_COMPARE_POINT( pl.sites[0], 1, 0 );
  VBAS_COMPARE_POINT( pl.sites[1], 3, 0 );
  VBAS_COMPARE_POINT( pl.sites[2], 0, 1 );
  VBAS_COMPARE_POINT( pl.sites[3], 5, 0 );

  // Identical positions fall back to layer order: q0, q1 at (0,0), q2 (1,0), q3 (1,0); s = 4, unit pop.
  // Rows: (q0, q1) | (q2, q3); cells one point each, layer order within equal (x, y).
  const Placement same = balancedDensity( { { 0, 0 }, { 0, 0 }, { 1, 0 }, { 1, 0 } }, { 1, 1, 1, 1 }, 4, SitePosition::Mean );
  checkConsistent( same, 4, 4 );
  QCOMPARE( same.cells, Cells( { { 0 }, { 1 }, { 2 }, { 3 } } ) );
}

void TestBalancedDensity::siteIsUnweightedMeanWithZeroPopulation()
{
  // s = 1: one row, one cell with all points (zero-population regions count).
  // Points (0,0) pop 2, (3,3) pop 0, (6,0) pop 1: mean = ((0+3+6)/3, (0+3+0)/3) = (3, 1).
  // (A population-weighted mean would be (2, 0).)
  const Placement pl = balancedDensity( { { 0, 0 }, { 3, 3 }, { 6, 0 } }, { 2, 0, 1 }, 1, SitePosition::Mean );
  checkConsistent( pl, 3, 1 );
  VBAS_COMPARE_POINT( pl.sites[0], 3, 1 );
  QCOMPARE( pl.cellPopulation, std::vector<double>( { 3 } ) );
}

void TestBalancedDensity::medianOption()
{
  // s = 1: one cell with all points.
  // x = {0, 1, 8}, y = {0, 3, 0}: mean (3, 1); median (1, 0).
  const std::vector<Point> points { { 0, 0 }, { 1, 3 }, { 8, 0 } };
  VBAS_COMPARE_POINT( balancedDensity( points, { 1, 1, 1 }, 1, SitePosition::Mean ).sites[0], 3, 1 );
  VBAS_COMPARE_POINT( balancedDensity( points, { 1, 1, 1 }, 1, SitePosition::Median ).sites[0], 1, 0 );
  // Even count: x = {10, 0, 3, 1} -> sorted 0,1,3,10 -> median (1+3)/2 = 2 (mean 3.5);
  //             y = {0, 4, 1, 2} -> sorted 0,1,2,4 -> median 1.5 (mean 1.75).
  const std::vector<Point> four { { 10, 0 }, { 0, 4 }, { 3, 1 }, { 1, 2 } };
  VBAS_COMPARE_POINT( balancedDensity( four, { 1, 1, 1, 1 }, 1, SitePosition::Median ).sites[0], 2, 1.5 );
  VBAS_COMPARE_POINT( balancedDensity( four, { 1, 1, 1, 1 }, 1, SitePosition::Mean ).sites[0], 3.5, 1.75 );
}

void TestBalancedDensity::hugePopulationKeepsSiteCount()
{
  // One region of population 1e308 among eleven of 1: s x p_row / p overflowed to infinity (eq. 10),
  // and the largest-remainder step then placed one site too many. Every s from 2 to 10 gives s sites.
  std::vector<Point> points;
  std::vector<double> pop( 12, 1 );
  for ( std::size_t i = 0; i < 12; ++i )
    points.push_back( { double( ( i * 7 ) % 13 ), double( ( i * 5 ) % 11 ) + double( i ) / 100 } );
  pop[11] = 1e308;
  for ( std::size_t s = 2; s <= 10; ++s )
    checkConsistent( balancedDensity( points, pop, s, SitePosition::Mean ), 12, s );
  // Populations adding up beyond the largest double are refused.
  pop[0] = 1e308;
  QVERIFY_EXCEPTION_THROWN( balancedDensity( points, pop, 2, SitePosition::Mean ), std::invalid_argument );
}

QTEST_APPLESS_MAIN( TestBalancedDensity )
#include "test_balanced_density.moc"
