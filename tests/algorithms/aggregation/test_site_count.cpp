// Site number approximation, dynamic GAPS cutoff (paper sec. 3.1, eq. 1-6; docs/method.md, Details the paper leaves open).
#include "algorithms/base/geometry.h"
#include "algorithms/aggregation/site_count.h"
#include "tests/algorithms/test_util.h"

#include <cmath>

using namespace vbas;

class TestSiteCount : public QObject
{
    Q_OBJECT

  private slots:
    void roundHalfUpRule();
    void entropyNaturalLog();
    void entropyBase2();
    void entropyEdgeCases();
    void maxCombsProduct();
    void table1Presets();
    void westernCanada();
    void centralCanada();
    void easternCanada();
    void halfRoundsUp();
    void clampToOneAndRegions();
};

void TestSiteCount::roundHalfUpRule()
{
  // R(x) = floor(x + 0.5), halves go up (not to even).
  QCOMPARE( roundHalfUp( 2.5 ), 3.0 ); // to-even would give 2
  QCOMPARE( roundHalfUp( 3.5 ), 4.0 );
  QCOMPARE( roundHalfUp( 0.5 ), 1.0 ); // to-even would give 0
  QCOMPARE( roundHalfUp( 2.49 ), 2.0 );
  QCOMPARE( roundHalfUp( 2.51 ), 3.0 );
  QCOMPARE( roundHalfUp( 4.0 ), 4.0 );
  QCOMPARE( roundHalfUp( -0.5 ), 0.0 );  // floor(0) = 0
  QCOMPARE( roundHalfUp( -1.5 ), -1.0 ); // floor(-1) = -1
}

void TestSiteCount::entropyNaturalLog()
{
  // eq. 1 with t_1 = 2, t_2 = 1, N = 4: -(2 * 1/4 ln 1/4 + 1 * 2/4 ln 2/4) = 0.693147 + 0.346574 = 1.039721
  VBAS_COMPARE_NEAR( entropy( { 2, 1, 1 }, std::exp( 1.0 ) ), 1.039721, 1e-6 );
  // order of the ECs does not matter
  VBAS_COMPARE_NEAR( entropy( { 1, 2, 1 }, std::exp( 1.0 ) ), 1.039721, 1e-6 );
  // ECs 3,1 of N=4: -(0.75 ln 0.75 + 0.25 ln 0.25) = 0.215762 + 0.346574 = 0.562335
  VBAS_COMPARE_NEAR( entropy( { 3, 1 }, std::exp( 1.0 ) ), 0.562335, 1e-6 );
}

void TestSiteCount::entropyBase2()
{
  // eq. 1 in base 2, ECs 2,1,1 of N=4: -(0.5 log2 0.5 + 2 * 0.25 log2 0.25) = 0.5 + 1 = 1.5
  VBAS_COMPARE_NEAR( entropy( { 2, 1, 1 }, 2 ), 1.5, 1e-12 );
  // four singletons: -4 * 0.25 log2 0.25 = 2
  VBAS_COMPARE_NEAR( entropy( { 1, 1, 1, 1 }, 2 ), 2.0, 1e-12 );
  // base 10, ten singletons: -10 * 0.1 log10 0.1 = 1
  VBAS_COMPARE_NEAR( entropy( { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 10 ), 1.0, 1e-12 );
}

void TestSiteCount::entropyEdgeCases()
{
  // one EC holding everything: -(1 ln 1) = 0
  VBAS_COMPARE_NEAR( entropy( { 7 }, std::exp( 1.0 ) ), 0.0, 1e-12 );
  // empty classes (size 0, classes of the encoder absent from the data) contribute nothing:
  // same as ECs 2,1,1 -> 1.5 bits
  VBAS_COMPARE_NEAR( entropy( { 0, 2, 0, 1, 1 }, 2 ), 1.5, 1e-12 );
}

void TestSiteCount::maxCombsProduct()
{
  // eq. 4: |sex| = 2, |age group| = 3 -> 6
  QCOMPARE( maxCombs( { 2, 3 } ), 6.0 );
  QCOMPARE( maxCombs( { 2, 3, 4 } ), 24.0 );
  QCOMPARE( maxCombs( { 5 } ), 5.0 );
}

void TestSiteCount::table1Presets()
{
  // Table 1 (e^B0, B1)
  QCOMPARE( kWesternCanada.expB0, 1588.0 );
  QCOMPARE( kWesternCanada.b1, 0.42 );
  QCOMPARE( kCentralCanada.expB0, 1436.0 );
  QCOMPARE( kCentralCanada.b1, 0.43 );
  QCOMPARE( kEasternCanada.expB0, 1978.0 );
  QCOMPARE( kEasternCanada.b1, 0.304 );
}

void TestSiteCount::westernCanada()
{
  // X = MaxCombs of QIs with 2 and 3 categories = 6.
  // eq. 5: 6^0.42 = e^(0.42 * ln 6) = e^(0.42 * 1.791759) = e^0.752539 = 2.122382
  //        Cutoff = 1588 * 2.122382 = 3370.342
  const double c = cutoff( kWesternCanada, maxCombs( { 2, 3 } ) );
  VBAS_COMPARE_NEAR( c, 3370.342, 1e-3 );
  // eq. 6: Sites = R(10000 / 3370.342) = R(2.9671) = 3
  QCOMPARE( siteCount( 10000, c, 100 ), std::size_t( 3 ) );
}

void TestSiteCount::centralCanada()
{
  // X = MaxCombs of two binary QIs = 4.
  // eq. 5: 4^0.43 = e^(0.43 * 1.386294) = e^0.596107 = 1.815038; Cutoff = 1436 * 1.815038 = 2606.395
  const double c = cutoff( kCentralCanada, maxCombs( { 2, 2 } ) );
  VBAS_COMPARE_NEAR( c, 2606.395, 1e-3 );
  // eq. 6: R(10000 / 2606.395) = R(3.8367) = 4
  QCOMPARE( siteCount( 10000, c, 100 ), std::size_t( 4 ) );
  // X = Entropy (natural log) of ECs 2,1,1 = 1.039721 (eq. 1, 2):
  // 1.039721^0.43 = e^(0.43 * ln 1.039721) = e^(0.43 * 0.038952) = e^0.016749 = 1.016890; 1436 * 1.016890 = 1460.25
  VBAS_COMPARE_NEAR( cutoff( kCentralCanada, entropy( { 2, 1, 1 }, std::exp( 1.0 ) ) ), 1460.25, 1e-2 );
}

void TestSiteCount::easternCanada()
{
  // X = Entropy in base 2 of ECs 2,1,1 = 1.5 (eq. 1).
  // eq. 2: 1.5^0.304 = e^(0.304 * 0.405465) = e^0.123261 = 1.131180; Cutoff = 1978 * 1.131180 = 2237.474
  const double c = cutoff( kEasternCanada, entropy( { 2, 1, 1 }, 2 ) );
  VBAS_COMPARE_NEAR( c, 2237.474, 1e-3 );
  // eq. 3: R(5000 / 2237.474) = R(2.2347) = 2
  QCOMPARE( siteCount( 5000, c, 100 ), std::size_t( 2 ) );
}

void TestSiteCount::halfRoundsUp()
{
  // X = 1 makes the cutoff exactly e^B0 (1^B1 = 1), so P / Cutoff is an exact .5.
  QCOMPARE( cutoff( kWesternCanada, 1 ), 1588.0 );
  QCOMPARE( cutoff( kCentralCanada, 1 ), 1436.0 );
  QCOMPARE( cutoff( kEasternCanada, 1 ), 1978.0 );
  // Western: 3970 / 1588 = 2.5 -> R = 3 (to-even or truncation would give 2)
  QCOMPARE( siteCount( 3970, cutoff( kWesternCanada, 1 ), 100 ), std::size_t( 3 ) );
  // Central: 2154 / 1436 = 1.5 -> 2
  QCOMPARE( siteCount( 2154, cutoff( kCentralCanada, 1 ), 100 ), std::size_t( 2 ) );
  // Eastern: 4945 / 1978 = 2.5 -> 3
  QCOMPARE( siteCount( 4945, cutoff( kEasternCanada, 1 ), 100 ), std::size_t( 3 ) );
  // Eastern: 989 / 1978 = 0.5 -> R = 1 by rounding, not by the clamp
  QCOMPARE( siteCount( 989, cutoff( kEasternCanada, 1 ), 100 ), std::size_t( 1 ) );
}

void TestSiteCount::clampToOneAndRegions()
{
  // Sites clamped to [1, regions].
  // 100 / 3370.342 = 0.0297 -> R = 0 -> clamped up to 1
  QCOMPARE( siteCount( 100, cutoff( kWesternCanada, 6 ), 50 ), std::size_t( 1 ) );
  // 1e6 / 3370.342 = 296.70 -> R = 297 -> clamped down to 50 regions
  QCOMPARE( siteCount( 1e6, cutoff( kWesternCanada, 6 ), 50 ), std::size_t( 50 ) );
  // 1e6 / 2606.395 = 383.67 -> 384, not clamped with 1000 regions
  QCOMPARE( siteCount( 1e6, cutoff( kCentralCanada, 4 ), 1000 ), std::size_t( 384 ) );
  // exactly at the upper bound: 5 * 1978 / 1978 = 5 with 5 regions
  QCOMPARE( siteCount( 5 * 1978.0, cutoff( kEasternCanada, 1 ), 5 ), std::size_t( 5 ) );
}

QTEST_APPLESS_MAIN( TestSiteCount )
#include "test_site_count.moc"
