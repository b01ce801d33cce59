// AnonymityCheck (k-anonymity; distinct l-diversity and t-closeness by the earth
// mover's distance with equal ground distance).
//
// Worked example (EC key, sensitive value, records of the row):
//
//   A x 2,  A y 1,  A x 1     EC A: 4 records, x 3, y 1        l = 2
//   B x 1,  B z 0             EC B: 1 record,  x 1 (z holds 0) l = 1
//   C y 2,  C z 3             EC C: 5 records, y 2, z 3        l = 2
//   D x 0                     no records: no EC
//
//   Table: N = 10, x 4, y 3, z 3, so q = (0.4, 0.3, 0.3).
//   t(A) = 0.5 (|0.75 - 0.4| + |0.25 - 0.3| + |0 - 0.3|) = 0.5 (0.35 + 0.05 + 0.3) = 0.35
//   t(B) = 0.5 (|1 - 0.4| + 0.3 + 0.3)                   = 0.5 * 1.2             = 0.6
//   t(C) = 0.5 (0.4 + |0.4 - 0.3| + |0.6 - 0.3|)         = 0.5 * 0.8             = 0.4
#include "algorithms/metrics/anonymity_check.h"

#include "tests/algorithms/test_util.h"

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace vbas;

namespace
{

using Row = std::tuple<std::string, std::string, std::int64_t>;

const std::vector<Row> kExample = { { "A", "x", 2 }, { "A", "y", 1 }, { "A", "x", 1 }, { "B", "x", 1 }, { "B", "z", 0 }, { "C", "y", 2 }, { "C", "z", 3 }, { "D", "x", 0 } };

AnonymityCheck checked( const std::vector<Row> &rows, bool withSensitive )
{
  AnonymityCheck check( withSensitive );
  for ( const auto &[ec, value, records] : rows )
    check.add( ec, value, records );
  return check;
}

AnonymityThresholds thresholds( std::int64_t k, std::int64_t l = 1, double t = 1 )
{
  AnonymityThresholds th;
  th.k = k;
  th.l = l;
  th.t = t;
  return th;
}

//! "A:k" for each violating EC, in report order, with the criteria it fails.
QStringList violations( const AnonymityReport &report )
{
  QStringList list;
  for ( const EcMeasures &m : report.violations )
  {
    QStringList criteria;
    if ( m.violatesK )
      criteria << QStringLiteral( "k" );
    if ( m.violatesL )
      criteria << QStringLiteral( "l" );
    if ( m.violatesT )
      criteria << QStringLiteral( "t" );
    list << QString::fromStdString( m.key ) + ':' + criteria.join( ',' );
  }
  return list;
}

} // namespace

class TestAnonymityCheck : public QObject
{
    Q_OBJECT

  private slots:
    void ecSizesAndK();
    void diversityAndCloseness();
    void thresholdsOfLAndT();
    void closenessAtTheThresholdIsNoViolation();
    void countsWeighRows();
    void withoutSensitiveAttribute();
    void emptyTable();
    void keysAreComparedExactly();
    void badCounts();
};

void TestAnonymityCheck::ecSizesAndK()
{
  const AnonymityCheck check = checked( kExample, true );
  // k = 5: A (4) and B (1) fall short, C (5) does not; 3 ECs (D has no records), 10 records.
  const AnonymityReport report = check.report( thresholds( 5 ) );
  QCOMPARE( report.records, std::int64_t( 10 ) );
  QCOMPARE( report.ecs, std::size_t( 3 ) );
  QCOMPARE( *report.smallestEc, std::int64_t( 1 ) );
  QCOMPARE( report.violatingEcs, std::size_t( 2 ) );
  QCOMPARE( report.violatingRecords, std::int64_t( 5 ) );
  QCOMPARE( violations( report ), QStringList( { "A:k", "B:k" } ) );
  QCOMPARE( report.violations[0].records, std::int64_t( 4 ) );
  QCOMPARE( report.violations[1].records, std::int64_t( 1 ) );
  // k = 2: only B; k = 1 would pass everything (the plugin refuses it, the core does not care).
  QCOMPARE( violations( check.report( thresholds( 2 ) ) ), QStringList( { "B:k" } ) );
  QCOMPARE( check.report( thresholds( 1 ) ).violatingEcs, std::size_t( 0 ) );
}

void TestAnonymityCheck::diversityAndCloseness()
{
  // Every EC measured: k = 6 makes all three violate k, so all three are reported.
  const AnonymityReport report = checked( kExample, true ).report( thresholds( 6 ) );
  QCOMPARE( report.violations.size(), std::size_t( 3 ) );
  QCOMPARE( report.violations[0].l, std::int64_t( 2 ) );
  QCOMPARE( report.violations[1].l, std::int64_t( 1 ) ); // z's row holds 0 records
  QCOMPARE( report.violations[2].l, std::int64_t( 2 ) );
  VBAS_COMPARE_NEAR( report.violations[0].t, 0.35, 1e-12 );
  VBAS_COMPARE_NEAR( report.violations[1].t, 0.6, 1e-12 );
  VBAS_COMPARE_NEAR( report.violations[2].t, 0.4, 1e-12 );
  QCOMPARE( *report.smallestL, std::int64_t( 1 ) );
  VBAS_COMPARE_NEAR( *report.largestT, 0.6, 1e-12 );
}

void TestAnonymityCheck::thresholdsOfLAndT()
{
  const AnonymityCheck check = checked( kExample, true );
  // k = 2, L = 2, T = 0.5: B fails all three (1 record, l 1, t 0.6); A and C pass.
  QCOMPARE( violations( check.report( thresholds( 2, 2, 0.5 ) ) ), QStringList( { "B:k,l,t" } ) );
  // k = 2, L = 3: every EC has fewer than 3 values. T = 0.3: A (0.35), B (0.6) and C (0.4) are farther.
  QCOMPARE( violations( check.report( thresholds( 2, 3 ) ) ), QStringList( { "A:l", "B:k,l", "C:l" } ) );
  QCOMPARE( violations( check.report( thresholds( 2, 1, 0.3 ) ) ), QStringList( { "A:t", "B:k,t", "C:t" } ) );
  const AnonymityReport report = check.report( thresholds( 2, 3 ) );
  QCOMPARE( report.violatingEcs, std::size_t( 3 ) );
  QCOMPARE( report.violatingRecords, std::int64_t( 10 ) );
}

void TestAnonymityCheck::closenessAtTheThresholdIsNoViolation()
{
  // t(C) = 0.4 by hand; computed from quotients it may come out a rounding above 0.4, which is no violation.
  const AnonymityCheck check = checked( kExample, true );
  QCOMPARE( violations( check.report( thresholds( 2, 1, 0.4 ) ) ), QStringList( { "B:k,t" } ) );
  QCOMPARE( violations( check.report( thresholds( 2, 1, 0.4 - 1e-9 ) ) ), QStringList( { "B:k,t", "C:t" } ) );
}

void TestAnonymityCheck::countsWeighRows()
{
  // The example with one row per record (counts 1) measures the same; a row of 3 is 3 records.
  std::vector<Row> expanded;
  for ( const auto &[ec, value, records] : kExample )
    for ( std::int64_t i = 0; i < records; ++i )
      expanded.emplace_back( ec, value, 1 );
  QCOMPARE( expanded.size(), std::size_t( 10 ) );
  const AnonymityReport weighted = checked( kExample, true ).report( thresholds( 6 ) );
  const AnonymityReport single = checked( expanded, true ).report( thresholds( 6 ) );
  QCOMPARE( single.records, weighted.records );
  QCOMPARE( violations( single ), violations( weighted ) );
  for ( std::size_t i = 0; i < 3; ++i )
  {
    QCOMPARE( single.violations[i].records, weighted.violations[i].records );
    QCOMPARE( single.violations[i].l, weighted.violations[i].l );
    VBAS_COMPARE_NEAR( single.violations[i].t, weighted.violations[i].t, 1e-12 );
  }
  // Weighting changes t: E x 9 and F y 1 give q = (0.9, 0.1); t(F) = 0.5 (0.9 + 0.9) = 0.9, t(E) = 0.5 (0.1 + 0.1) = 0.1.
  const AnonymityReport skewed = checked( { { "E", "x", 9 }, { "F", "y", 1 } }, true ).report( thresholds( 10 ) );
  VBAS_COMPARE_NEAR( skewed.violations[0].t, 0.1, 1e-12 );
  VBAS_COMPARE_NEAR( skewed.violations[1].t, 0.9, 1e-12 );
}

void TestAnonymityCheck::withoutSensitiveAttribute()
{
  // The sensitive keys are ignored: no l, no t, and thresholds for them change nothing.
  const AnonymityReport report = checked( kExample, false ).report( thresholds( 5, 3, 0.1 ) );
  QCOMPARE( violations( report ), QStringList( { "A:k", "B:k" } ) );
  QVERIFY( !report.smallestL );
  QVERIFY( !report.largestT );
  QCOMPARE( report.violations[0].l, std::int64_t( 0 ) );
}

void TestAnonymityCheck::emptyTable()
{
  const AnonymityReport report = checked( { { "A", "x", 0 } }, true ).report( thresholds( 5, 2, 0.5 ) );
  QCOMPARE( report.records, std::int64_t( 0 ) );
  QCOMPARE( report.ecs, std::size_t( 0 ) );
  QVERIFY( !report.smallestEc );
  QVERIFY( !report.smallestL );
  QVERIFY( !report.largestT );
  QCOMPARE( report.violatingEcs, std::size_t( 0 ) );
}

void TestAnonymityCheck::keysAreComparedExactly()
{
  // Keys differing in one byte, in length, or in an embedded NUL are different ECs and values.
  const std::string nul( "a\0b", 3 );
  const AnonymityReport report = checked( { { "a", "v", 1 }, { "a ", "v", 1 }, { nul, "v", 1 }, { "a", std::string( "v\0", 2 ), 1 } }, true ).report( thresholds( 3 ) );
  QCOMPARE( report.ecs, std::size_t( 3 ) );
  QCOMPARE( report.violations[0].records, std::int64_t( 2 ) );
  QCOMPARE( report.violations[0].l, std::int64_t( 2 ) );
  QCOMPARE( report.violations[2].key, nul );
}

void TestAnonymityCheck::badCounts()
{
  AnonymityCheck check( false );
  QVERIFY_EXCEPTION_THROWN( check.add( "A", "", -1 ), std::invalid_argument );
  check.add( "A", "", std::int64_t( 1 ) << 62 );
  check.add( "B", "", ( std::int64_t( 1 ) << 62 ) - 1 );
  // 2^62 + 2^62 - 1 = 2^63 - 1 fits; one more does not.
  QVERIFY_EXCEPTION_THROWN( check.add( "C", "", 1 ), std::overflow_error );
}

QTEST_APPLESS_MAIN( TestAnonymityCheck )
#include "test_anonymity_check.moc"
