// Evaluation (paper sec. 3.4, eq. 20-23; the further metrics of docs/method.md; Prasser et al.).
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
//
//   Sensitive values (x, y, z) of the same records:
//   r0: c0 {x:2, y:1}, c1 {x:1}   r1: c0 {z:2}   r2: c0 {x:1}, c1 {x:1, y:3}   r3: c1 {y:2}
//   released ECs: A.c0 = {x:2, y:1, z:2} (5), B.c1 = {x:1, y:5} (6); released q = x 3/11, y 6/11, z 2/11
#include "algorithms/aggregation/aggregation.h"
#include "algorithms/base/histograms.h"
#include "algorithms/metrics/frontier.h"
#include "algorithms/metrics/metrics.h"
#include "algorithms/metrics/nue.h"
#include "algorithms/aggregation/release.h"
#include "algorithms/metrics/sensitive.h"
#include "algorithms/aggregation/suppression.h"
#include "tests/algorithms/test_util.h"
#include "algorithms/aggregation/voronoi.h"

#include <array>
#include <cmath>
#include <cstring>
#include <set>
#include <string>

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
    SensitiveHistograms sensitive;

    Example()
    {
      // region -> (class, value, records); values x = 0, y = 1, z = 2
      const std::vector<std::vector<std::array<std::uint32_t, 3>>> cells { { { 0, 0, 2 }, { 0, 1, 1 }, { 1, 0, 1 } }, { { 0, 2, 2 } }, { { 0, 0, 1 }, { 1, 0, 1 }, { 1, 1, 3 } }, { { 1, 1, 2 } } };
      SensitivePairs pairs;
      HistogramBuilder builder( cells.size() );
      for ( std::size_t r = 0; r < cells.size(); ++r )
        for ( const auto &[cls, value, count] : cells[r] )
          builder.add( static_cast<std::uint32_t>( r ), pairs.id( cls, value ), count );
      sensitive = pairs.finish( builder.build(), 3 );
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
    void frontierAndRecommendation();
    void compactnessEq20();
    void nonUniformEntropyEq22And23();
    void nonUniformEntropyEdgeCases();
    void releasedPerRegion();
    void recordsInSmallClasses();
    void sensitivePairsMergeToClasses();
    void measureExample();
    void measureSensitive();
    void risksAboveThreshold();
    void precAndDmOnAHierarchy();
    void nonUniformEntropySeedExample();
    void classificationMetricSeedExample();
    void genericNueLocalRecodingExample();
    void genericNueRisesLinearlyWithSuppression();
    void everyMetricDefinedOnce();
};

void TestMetrics::exampleIsAsDrawn()
{
  // Nearest sites: r0 d^2 16 vs 45; r1 9 vs 10; r2 116 vs 25; r3 101 vs 16 -> A, A, B, B.
  const Example ex;
  QCOMPARE( ex.aggregation.regionAggregateIndex, std::vector<std::size_t>( { 0, 0, 1, 1 } ) );
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

void TestMetrics::nonUniformEntropyEq22And23()
{
  const Example ex;
  // Over all records (before suppression): A has 4 + 2 = 6, B has 5 + 2 = 7 records.
  // eq. 22: Pr(r0|A) = 4/6, Pr(r1|A) = 2/6, Pr(r2|B) = 5/7, Pr(r3|B) = 2/7.
  // eq. 23: -(4 log2(2/3) + 2 log2(1/3) + 5 log2(5/7) + 2 log2(2/7))
  //       = 4*0.584963 + 2*1.584963 + 5*0.485427 + 2*1.807355
  //       = 2.339850 + 3.169925 + 2.427136 + 3.614710 = 11.551621
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 4, 2, 5, 2 }, { 0, 0, 1, 1 } ), 11.551621, 1e-5 );
  // Over the released records: r0 3 (its c1 is suppressed), r1 2, r2 4 (its c0 is suppressed), r3 2.
  // A has 5, B has 6 released records.
  // -(3 log2(3/5) + 2 log2(2/5) + 4 log2(4/6) + 2 log2(2/6))
  //       = 3*0.736966 + 2*1.321928 + 4*0.584963 + 2*1.584963
  //       = 2.210897 + 2.643856 + 2.339850 + 3.169925 = 10.364528
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 3, 2, 4, 2 }, { 0, 0, 1, 1 } ), 10.364528, 1e-5 );
}

void TestMetrics::nonUniformEntropyEdgeCases()
{
  // Every region its own aggregate: Pr = 1 for every record -> 0.
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 4, 2, 5 }, { 0, 1, 2 } ), 0.0, 1e-12 );
  // Two equal regions merged: 2 records each, Pr = 1/2 -> -(4 * log2(1/2)) = 4 bits.
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 2, 2 }, { 0, 0 } ), 4.0, 1e-12 );
  // A region with no records adds nothing: same as above.
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 2, 0, 2 }, { 0, 0, 0 } ), 4.0, 1e-12 );
}

void TestMetrics::releasedPerRegion()
{
  // r0: c0 3 released, c1 1 suppressed -> 3; r1: 2; r2: c1 4 released, c0 1 suppressed -> 4; r3: 2.
  const Example ex;
  QCOMPARE( vbas::releasedPerRegion( ex.histograms, ex.aggregation, ex.suppression ), std::vector<std::int64_t>( { 3, 2, 4, 2 } ) );
}

void TestMetrics::recordsInSmallClasses()
{
  // (region, class) cells below k = 3: r0 c1 (1); r1 c0 (2); r2 c0 (1); r3 c1 (2). r0 c0 3 and r2 c1 4 are not.
  const Example ex;
  QCOMPARE( vbas::recordsInSmallClasses( ex.histograms, 3 ), std::vector<std::int64_t>( { 1, 2, 1, 2 } ) );
  QCOMPARE( vbas::recordsInSmallClasses( ex.histograms, 1 ), std::vector<std::int64_t>( { 0, 0, 0, 0 } ) );
}

void TestMetrics::sensitivePairsMergeToClasses()
{
  // Merging the sensitive values gives back the QI-class histograms of the example.
  const Example ex;
  const SparseHistograms merged = ex.sensitive.classHistograms();
  QCOMPARE( merged.offsets, ex.histograms.offsets );
  QCOMPARE( merged.classes, ex.histograms.classes );
  QCOMPARE( merged.counts, ex.histograms.counts );
}

namespace
{
double metric( const MetricValues &values, const char *field )
{
  const std::optional<double> value = metricValue( values, field );
  if ( !value )
    QTest::qFail( field, __FILE__, __LINE__ );
  return value.value_or( -1 );
}
} // namespace

void TestMetrics::measureExample()
{
  const Example ex;
  const MetricValues v = measure( { ex.regionPoints, ex.regionSites, ex.histograms, ex.aggregation, ex.suppression, 2, 0.2, nullptr, 1.5 } );
  QCOMPARE( v.size(), metrics().size() );
  VBAS_COMPARE_NEAR( metric( v, "records" ), 13.0, 0 );
  VBAS_COMPARE_NEAR( metric( v, "released" ), 11.0, 0 );
  VBAS_COMPARE_NEAR( metric( v, "suppressed" ), 2.0, 0 );
  VBAS_COMPARE_NEAR( metric( v, "suppressed_pct" ), 15.384615, 1e-5 ); // 100 * 2/13
  VBAS_COMPARE_NEAR( metric( v, "compactness" ), 16.0, 1e-12 );
  // eq. 21: released ECs 5 and 6: 25 + 36 (the suppressed ECs of 1 do not count)
  VBAS_COMPARE_NEAR( metric( v, "discernibility" ), 61.0, 1e-12 );
  VBAS_COMPARE_NEAR( metric( v, "nue" ), 10.364528, 1e-5 );     // over released records (above)
  VBAS_COMPARE_NEAR( metric( v, "nue_all" ), 11.551621, 1e-5 ); // over all records
  VBAS_COMPARE_NEAR( metric( v, "aggregates" ), 2.0, 0 );
  VBAS_COMPARE_NEAR( metric( v, "released_ecs" ), 2.0, 0 ); // A.c0 (5), B.c1 (6)
  VBAS_COMPARE_NEAR( metric( v, "smallest_ec" ), 5.0, 0 );
  VBAS_COMPARE_NEAR( metric( v, "k" ), 2.0, 0 );
  VBAS_COMPARE_NEAR( metric( v, "runtime_s" ), 1.5, 0 );
  // DM: 25 + 36 released, each of the 2 suppressed records penalised by N = 13: 61 + 26 = 87
  VBAS_COMPARE_NEAR( metric( v, "dm" ), 87.0, 1e-12 );
  // DM*: every EC before suppression: 25 + 1 + 1 + 36 = 63
  VBAS_COMPARE_NEAR( metric( v, "dm_star" ), 63.0, 1e-12 );
  // C_AVG: (11 released / 2 ECs) / k = 5.5 / 2
  VBAS_COMPARE_NEAR( metric( v, "c_avg" ), 2.75, 1e-12 );
  // Prec: both aggregates hold 2 regions: 11 released at h = 1, 2 suppressed at h = 2; |DGH| = 2:
  // 1 - (11 * 1/2 + 2 * 2/2) / 13 = 1 - 7.5 / 13
  VBAS_COMPARE_NEAR( metric( v, "prec" ), 1.0 - 7.5 / 13.0, 1e-12 );
  // generic NUE: level 1 holds every record: the step region -> aggregate over all = nue_all 11.551621;
  // level 2 holds the 2 suppressed (r0 in A, r2 in B): aggregate -> root within them: 2 * -log2(1/2) = 2.
  VBAS_COMPARE_NEAR( metric( v, "generic_nue" ), 13.551621, 1e-5 );
  // everything suppressed: -sum_r n_r log2(n_r / 13), n = 4, 2, 5, 2:
  // 4*1.700440 + 2*2.700440 + 5*1.378512 + 2*2.700440 = 24.496076
  VBAS_COMPARE_NEAR( metric( v, "generic_nue_norm" ), 13.551621 / 24.496076, 1e-6 );
  VBAS_COMPARE_NEAR( metric( v, "max_risk" ), 0.2, 1e-12 );        // 1 / 5
  VBAS_COMPARE_NEAR( metric( v, "avg_risk" ), 2.0 / 11.0, 1e-12 ); // 2 ECs / 11 records
  VBAS_COMPARE_NEAR( metric( v, "risk_threshold" ), 0.2, 0 );
  VBAS_COMPARE_NEAR( metric( v, "risk_above_pct" ), 0.0, 0 ); // 1/5 is not above 0.2, 1/6 neither
  // No sensitive field: CM, l and t do not apply.
  QVERIFY( !metricValue( v, "cm" ) );
  QVERIFY( !metricValue( v, "l_diversity" ) );
  QVERIFY( !metricValue( v, "t_closeness" ) );
}

void TestMetrics::measureSensitive()
{
  const Example ex;
  const MetricValues v = measure( { ex.regionPoints, ex.regionSites, ex.histograms, ex.aggregation, ex.suppression, 2, 0.2, &ex.sensitive, 0 } );
  // CM: minorities A.c0 5 - 2 (x or z) = 3, B.c1 6 - 5 (y) = 1; plus the 2 suppressed records: 6
  VBAS_COMPARE_NEAR( metric( v, "cm" ), 6.0, 0 );
  // l: A.c0 holds x, y, z (3), B.c1 holds x, y (2): 2
  VBAS_COMPARE_NEAR( metric( v, "l_diversity" ), 2.0, 0 );
  // t: A.c0 p = (2/5, 1/5, 2/5) vs q = (3/11, 6/11, 2/11): 0.5 (0.127273 + 0.345455 + 0.218182) = 0.345455;
  //    B.c1 p = (1/6, 5/6, 0): 0.5 (0.106061 + 0.287879 + 0.181818) = 0.287879; the larger.
  VBAS_COMPARE_NEAR( metric( v, "t_closeness" ), 0.345455, 1e-6 );

  const EcDiversity d = ecDiversity( ex.sensitive, ex.aggregation, ex.suppression );
  // EC entries: A.c0, A.c1 (x:1), B.c0 (x:1), B.c1
  QCOMPARE( d.distinct, std::vector<std::int64_t>( { 3, 1, 1, 2 } ) );
  QCOMPARE( d.majority, std::vector<std::int64_t>( { 2, 1, 1, 5 } ) );
  VBAS_COMPARE_NEAR( d.emd[3], 0.287879, 1e-6 );
  const AggregateDiversity a = aggregateDiversity( d, ex.aggregation, ex.suppression );
  QCOMPARE( a.smallestL, std::vector<std::int64_t>( { 3, 2 } ) );
  VBAS_COMPARE_NEAR( a.largestT[0], 0.345455, 1e-6 );
  VBAS_COMPARE_NEAR( a.largestT[1], 0.287879, 1e-6 );
}

void TestMetrics::risksAboveThreshold()
{
  // Threshold 0.19: the EC of 5 (risk 0.2) is above it, the EC of 6 (0.1667) not: 5 of 11 released.
  const Example ex;
  const MetricValues v = measure( { ex.regionPoints, ex.regionSites, ex.histograms, ex.aggregation, ex.suppression, 2, 0.19 } );
  VBAS_COMPARE_NEAR( metric( v, "risk_above_pct" ), 100.0 * 5.0 / 11.0, 1e-9 );
  // k = 7: nothing released: risk 0, no EC to average over.
  const Suppression none = suppress( ex.aggregation.ecs, 7 );
  const MetricValues w = measure( { ex.regionPoints, ex.regionSites, ex.histograms, ex.aggregation, none, 7, 0.2, &ex.sensitive } );
  VBAS_COMPARE_NEAR( metric( w, "max_risk" ), 0.0, 0 );
  VBAS_COMPARE_NEAR( metric( w, "smallest_ec" ), 0.0, 0 );
  VBAS_COMPARE_NEAR( metric( w, "generic_nue_norm" ), 1.0, 1e-12 ); // everything suppressed
  VBAS_COMPARE_NEAR( metric( w, "prec" ), 0.0, 1e-12 );
  VBAS_COMPARE_NEAR( metric( w, "cm" ), 13.0, 0 ); // every record suppressed
  QVERIFY( !metricValue( w, "c_avg" ) );
  QVERIFY( !metricValue( w, "l_diversity" ) );
}

void TestMetrics::precAndDmOnAHierarchy()
{
  // r0 {c0:5} alone in X; r1 {c0:2, c1:1} and r2 {c0:3} in Y; k = 3; N = 11.
  // X.c0 5 released (h = 0: X is r0 alone), Y.c0 5 released (h = 1), Y.c1 1 suppressed (h = 2).
  const SparseHistograms h = vbastest::histograms( { { { 0, 5 } }, { { 0, 2 }, { 1, 1 } }, { { 0, 3 } } } );
  const Release rel = release( { 0, 1, 1 }, h, 3 );
  const std::vector<Point> points( 3, Point { 0, 0 } );
  const MetricValues v = measure( { points, points, h, rel.aggregation, rel.suppression, 3 } );
  // Prec = 1 - (5 * 0 + 5 * 1/2 + 1 * 2/2) / 11 = 1 - 3.5 / 11
  VBAS_COMPARE_NEAR( metric( v, "prec" ), 1.0 - 3.5 / 11.0, 1e-12 );
  // DM = 5^2 + 5^2 + 11 * 1 = 61; DM* = 25 + 25 + 1 = 51; C_AVG = (10 / 2) / 3
  VBAS_COMPARE_NEAR( metric( v, "dm" ), 61.0, 1e-12 );
  VBAS_COMPARE_NEAR( metric( v, "dm_star" ), 51.0, 1e-12 );
  VBAS_COMPARE_NEAR( metric( v, "c_avg" ), 5.0 / 3.0, 1e-12 );
}

void TestMetrics::nonUniformEntropySeedExample()
{
  // A worked example: 1,000 records, sex generalised to "person".
  // 50/950: -(50 log2(50/1000) + 950 log2(950/1000)) = 50 * 4.321928 + 950 * 0.074001 = 216.096 + 70.301 = 286.4
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 50, 950 }, { 0, 0 } ), 286.397, 1e-3 );
  // 500/500: 1000 * -log2(1/2) = 1000
  VBAS_COMPARE_NEAR( nonUniformEntropy( { 500, 500 }, { 0, 0 } ), 1000.0, 1e-9 );
}

void TestMetrics::classificationMetricSeedExample()
{
  // The same 1,000 records in one EC ("person"), the class being the sex:
  // CM counts the minority: 50 for 50/950, 500 for 500/500.
  for ( const auto &[men, women, cm] : std::vector<std::array<std::int64_t, 3>> { { 50, 950, 50 }, { 500, 500, 500 } } )
  {
    SensitivePairs pairs;
    HistogramBuilder builder( 1 );
    builder.add( 0, pairs.id( 0, 0 ), men );
    builder.add( 0, pairs.id( 0, 1 ), women );
    const SensitiveHistograms sensitive = pairs.finish( builder.build(), 2 );
    const SparseHistograms h = sensitive.classHistograms();
    const Release rel = release( { 0 }, h, 5 );
    const std::vector<Point> points( 1, Point { 0, 0 } );
    const MetricValues v = measure( { points, points, h, rel.aggregation, rel.suppression, 5, 0.2, &sensitive } );
    VBAS_COMPARE_NEAR( metric( v, "cm" ), static_cast<double>( cm ), 0 );
  }
}

void TestMetrics::genericNueLocalRecodingExample()
{
  // Prasser et al., Figures 2-3: ages 20, 65, 55, 40, 65, 65 recoded locally (D_l) to
  // 20-79, 20-79 (level 2), 40-59, 40-59 (level 1), 65, 65 (level 0).
  // Nodes: level 0 the age; level 1 the band 20-39 (0), 40-59 (1), 60-79 (2); level 2 20-79 (0).
  const std::vector<Generalised> dl { { 1, { 20, 0, 0 }, 2 }, { 1, { 65, 2, 0 }, 2 }, { 1, { 55, 1, 0 }, 1 }, { 1, { 40, 1, 0 }, 1 }, { 1, { 65, 2, 0 }, 0 }, { 1, { 65, 2, 0 }, 0 } };
  // Plain NUE: rows 0, 2, 3: -log2(1/2) = 1 each; rows 1, 4, 5: f(D, 65) = 3 over f(D_l, x) = 2:
  // -log2(3/2) = -0.584963 each, a gain, although rows 4 and 5 were not generalised at all.
  // 3 - 3 * 0.584963 = 1.245112
  VBAS_COMPARE_NEAR( nonUniformEntropy( dl ), 1.245112, 1e-6 );
  // Generic: level 1 holds rows 0-3: 20, 65, 55, 40 -> 20-39, 60-79, 40-59, 40-59:
  //   rows 0, 1: 1/1 -> 0; rows 2, 3: 1/2 -> 1 each: 2.
  // Level 2 holds rows 0, 1: 20-39, 60-79 -> 20-79, 20-79: 1/2 each -> 2. Total 4, no gain.
  VBAS_COMPARE_NEAR( genericNonUniformEntropy( dl ), 4.0, 1e-12 );
  // Nothing generalised: 0 for both.
  const std::vector<Generalised> d { { 1, { 20, 0, 0 }, 0 }, { 3, { 65, 2, 0 }, 0 } };
  VBAS_COMPARE_NEAR( nonUniformEntropy( d ), 0.0, 1e-12 );
  VBAS_COMPARE_NEAR( genericNonUniformEntropy( d ), 0.0, 1e-12 );
}

void TestMetrics::genericNueRisesLinearlyWithSuppression()
{
  // Regions r0 40, r1 40 in aggregate A; r2 20, r3 100 in B (N = 200). A fraction p of every
  // region's records is suppressed (level 2), the rest released at level 1.
  // Generic NUE: level 1 holds all records: 40 + 40 + 20 log2 6 + 100 log2 1.2 = 158.002691;
  // level 2 holds the suppressed, spread like the whole: p * 200 * H(A 0.4, B 0.6) = p * 194.190119.
  const std::int64_t n[] = { 40, 40, 20, 100 };
  const std::uint32_t aggregate[] = { 0, 0, 1, 1 };
  double previousPlain = 0;
  for ( int quarter = 0; quarter <= 4; ++quarter )
  {
    std::vector<Generalised> records;
    for ( std::uint32_t r = 0; r < 4; ++r )
    {
      const std::int64_t suppressed = n[r] * quarter / 4;
      records.push_back( { n[r] - suppressed, { r, aggregate[r], 0 }, 1 } );
      records.push_back( { suppressed, { r, aggregate[r], 0 }, 2 } );
    }
    VBAS_COMPARE_NEAR( genericNonUniformEntropy( records ), 158.002691 + quarter / 4.0 * 194.190119, 1e-5 );
    // Plain NUE first measures a gain: released frequencies shrink while the original ones stay.
    const double plain = nonUniformEntropy( records );
    if ( quarter == 1 )
      QVERIFY2( plain < previousPlain, qPrintable( QStringLiteral( "plain NUE %1 then %2" ).arg( previousPlain ).arg( plain ) ) );
    previousPlain = plain;
  }
}

void TestMetrics::everyMetricDefinedOnce()
{
  // Fields and outputs are unique, and every metric says what it is.
  std::set<std::string> fields, outputs;
  for ( const Metric &m : metrics() )
  {
    QVERIFY2( fields.insert( m.field ).second, m.field );
    QVERIFY2( !m.output || outputs.insert( m.output ).second, m.field );
    QVERIFY2( std::strlen( m.label ) > 0 && std::strlen( m.formula ) > 0 && std::strlen( m.meaning ) > 0, m.field );
  }
  // Every metric is there.
  for ( const char *field : { "suppressed", "compactness", "discernibility", "dm", "dm_star", "c_avg", "prec", "nue", "generic_nue", "generic_nue_norm", "cm", "max_risk", "avg_risk", "risk_above_pct",
                              "l_diversity", "t_closeness" } )
    QVERIFY2( fields.count( field ), field );
}

void TestMetrics::frontierAndRecommendation()
{
  // (suppressed, loss, meets): a (10, 5), b (20, 3), c (20, 5), d (10, 5) alike a, e (0, 9), and f (5, 1)
  // that does not meet the stated k. f beats a, b, c and d (fewer suppressed and less lost); nothing
  // suppresses as few as e: the front is e and f, since it shows every candidate. Without f, a, b and d
  // trade records for loss against e and one another, and c is beaten by a.
  const std::vector<CandidateScore> candidates { { 10, 5, true }, { 20, 3, true }, { 20, 5, true }, { 10, 5, true }, { 0, 9, true }, { 5, 1, false } };
  QCOMPARE( paretoFront( candidates ), std::vector<char>( { 0, 0, 0, 0, 1, 1 } ) );
  // Least loss among those that meet: b (3).
  QCOMPARE( recommend( candidates ), std::optional<std::size_t>( 1 ) );
  // Without b: a and d tie at 5 with 10 suppressed, c at 5 with 20: the first of a and d.
  QCOMPARE( recommend( { candidates[0], candidates[2], candidates[3], candidates[4] } ), std::optional<std::size_t>( 0 ) );
  QCOMPARE( recommend( { { 1, 1, false } } ), std::optional<std::size_t>() );
  QCOMPARE( paretoFront( { candidates[0], candidates[1], candidates[2], candidates[3], candidates[4] } ), std::vector<char>( { 1, 1, 0, 1, 1 } ) );
}

QTEST_APPLESS_MAIN( TestMetrics )
#include "test_metrics.moc"
