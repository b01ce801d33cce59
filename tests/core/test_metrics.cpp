// Evaluation (SPEC 3.4 first paragraph, eq. 20-23; SPEC 3.6 item 15).
//
// Worked example used throughout (two classes c0, c1; two aggregates; k = 2):
//
//   region  point    site of its aggregate  distance   records
//   r0      (0,0)    A (0,4)                4          c0:3  c1:1   (4)
//   r1      (3,4)    A (0,4)                3          c0:2         (2)
//   r2      (10,0)   B (6,3)                5 (3-4-5)  c0:1  c1:4   (5)
//   r3      (10,3)   B (6,3)                4          c1:2         (2)
//
//   A = {r0, r1}: ECs c0:5, c1:1      B = {r2, r3}: ECs c0:1, c1:6      N = 13
//   k = 2: suppressed A.c1 (1) and B.c0 (1) -> released 11, suppressed 2 (15.3846 %).
#include "aggregation.h"
#include "histograms.h"
#include "metrics.h"
#include "suppression.h"
#include "test_util.h"
#include "voronoi.h"

#include <cmath>

using namespace vbas;

namespace
{

struct Example
{
    std::vector<Point> regionPoints { { 0, 0 }, { 3, 4 }, { 10, 0 }, { 10, 3 } };
    std::vector<Point> sites { { 0, 4 }, { 6, 3 } };
    SparseHistograms histograms;
    Aggregation aggregation;
    Suppression suppression;
    std::vector<Point> regionSites;

    Example()
    {
      // region -> (class, records): r0 {c0:3, c1:1}, r1 {c0:2}, r2 {c0:1, c1:4}, r3 {c1:2}
      histograms = vbastest::histograms( { { { 0, 3 }, { 1, 1 } }, { { 0, 2 } }, { { 0, 1 }, { 1, 4 } }, { { 1, 2 } } } );
      const VoronoiDiagram diagram( sites );
      const std::vector<std::size_t> groups = locateRegions( regionPoints, diagram );
      aggregation = aggregate( groups, histograms );
      suppression = suppress( aggregation.ecs, 2 );
      for ( const std::size_t g : groups )
        regionSites.push_back( sites[g] );
    }
};

} // namespace

class TestMetrics : public QObject
{
    Q_OBJECT

  private slots:
    void exampleIsAsDrawn();
    void compactnessEq20();
    void discernibilityEq21();
    void nonUniformEntropyEq22And23();
    void nonUniformEntropyEdgeCases();
    void releasedPerRegion();
    void evaluateAll();
};

void TestMetrics::exampleIsAsDrawn()
{
  // Nearest sites: r0 d^2 16 vs 45; r1 9 vs 10; r2 116 vs 25; r3 101 vs 16 -> A, A, B, B.
  const Example ex;
  QCOMPARE( ex.aggregation.regionAggregate, std::vector<std::size_t>( { 0, 0, 1, 1 } ) );
  QCOMPARE( ex.aggregation.ecs.counts, std::vector<std::int64_t>( { 5, 1, 1, 6 } ) );
  QCOMPARE( ex.suppression.suppressed, std::vector<char>( { 0, 1, 1, 0 } ) );
}

void TestMetrics::compactnessEq20()
{
  // eq. 20: |r0 - A| + |r1 - A| + |r2 - B| + |r3 - B| = 4 + 3 + 5 + 4 = 16
  const Example ex;
  VBAS_COMPARE_NEAR( compactness( ex.regionPoints, ex.regionSites ), 16.0, 1e-12 );
  // a region at its own site adds nothing: (0,4) to (0,4) = 0; (1,1) to (0,0) = sqrt 2
  VBAS_COMPARE_NEAR( compactness( { { 0, 4 }, { 1, 1 } }, { { 0, 4 }, { 0, 0 } } ), std::sqrt( 2.0 ), 1e-12 );
}

void TestMetrics::discernibilityEq21()
{
  // eq. 21: released ECs 5 and 6: 5^2 + 6^2 = 25 + 36 = 61 (the suppressed ECs of 1 do not count)
  const Example ex;
  VBAS_COMPARE_NEAR( discernibility( ex.aggregation.ecs, ex.suppression ), 61.0, 1e-12 );
  // k = 1: nothing suppressed: 25 + 1 + 1 + 36 = 63
  VBAS_COMPARE_NEAR( discernibility( ex.aggregation.ecs, suppress( ex.aggregation.ecs, 1 ) ), 63.0, 1e-12 );
  // k = 7: everything suppressed: 0
  VBAS_COMPARE_NEAR( discernibility( ex.aggregation.ecs, suppress( ex.aggregation.ecs, 7 ) ), 0.0, 1e-12 );
}

void TestMetrics::nonUniformEntropyEq22And23()
{
  const Example ex;
  // Over all records (before suppression): A has 4 + 2 = 6, B has 5 + 2 = 7 records.
  // eq. 22: Pr(r0|A) = 4/6, Pr(r1|A) = 2/6, Pr(r2|B) = 5/7, Pr(r3|B) = 2/7.
  // eq. 23: -(4 log2(2/3) + 2 log2(1/3) + 5 log2(5/7) + 2 log2(2/7))
  //       = 4*0.584963 + 2*1.584963 + 5*0.485427 + 2*1.807355
  //       = 2.339850 + 3.169925 + 2.427136 + 3.614710 = 11.551621
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 4, 2, 5, 2 }, { 0, 0, 1, 1 }, 2 ), 11.551621, 1e-5 );
  // Over the released records: r0 3 (its c1 is suppressed), r1 2, r2 4 (its c0 is suppressed), r3 2.
  // A has 5, B has 6 released records.
  // -(3 log2(3/5) + 2 log2(2/5) + 4 log2(4/6) + 2 log2(2/6))
  //       = 3*0.736966 + 2*1.321928 + 4*0.584963 + 2*1.584963
  //       = 2.210897 + 2.643856 + 2.339850 + 3.169925 = 10.364528
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 3, 2, 4, 2 }, { 0, 0, 1, 1 }, 2 ), 10.364528, 1e-5 );
}

void TestMetrics::nonUniformEntropyEdgeCases()
{
  // Every region its own aggregate: Pr = 1 for every record -> 0.
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 4, 2, 5 }, { 0, 1, 2 }, 3 ), 0.0, 1e-12 );
  // Two equal regions merged: 2 records each, Pr = 1/2 -> -(4 * log2(1/2)) = 4 bits.
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 2, 2 }, { 0, 0 }, 1 ), 4.0, 1e-12 );
  // A region with no records adds nothing: same as above.
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 2, 0, 2 }, { 0, 0, 0 }, 1 ), 4.0, 1e-12 );
}

void TestMetrics::releasedPerRegion()
{
  // r0: c0 3 released, c1 1 suppressed -> 3; r1: 2; r2: c1 4 released, c0 1 suppressed -> 4; r3: 2.
  const Example ex;
  QCOMPARE( vbas::releasedPerRegion( ex.histograms, ex.aggregation, ex.suppression ), std::vector<std::int64_t>( { 3, 2, 4, 2 } ) );
}

void TestMetrics::evaluateAll()
{
  const Example ex;
  const Evaluation ev = evaluate( ex.regionPoints, ex.regionSites, ex.histograms, ex.aggregation, ex.suppression );
  QCOMPARE( ev.records, std::int64_t( 13 ) );
  QCOMPARE( ev.releasedRecords, std::int64_t( 11 ) );
  QCOMPARE( ev.suppressedRecords, std::int64_t( 2 ) );
  VBAS_COMPARE_NEAR( ev.suppressedPercent, 15.384615, 1e-5 ); // 100 * 2/13
  VBAS_COMPARE_NEAR( ev.compactness, 16.0, 1e-12 );
  VBAS_COMPARE_NEAR( ev.discernibility, 61.0, 1e-12 );
  VBAS_COMPARE_NEAR( ev.nonUniformEntropy, 10.364528, 1e-5 );    // over released records
  VBAS_COMPARE_NEAR( ev.nonUniformEntropyAll, 11.551621, 1e-5 ); // over all records
  QCOMPARE( ev.aggregates, std::size_t( 2 ) );
  QCOMPARE( ev.releasedEcs, std::size_t( 2 ) );               // A.c0 (5), B.c1 (6)
  QCOMPARE( ev.smallestReleasedEc, std::int64_t( 5 ) );
}

QTEST_APPLESS_MAIN( TestMetrics )
#include "test_metrics.moc"
