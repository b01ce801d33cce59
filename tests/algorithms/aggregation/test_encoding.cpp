// QI encoding and per-region sparse histograms (dense class ids, region -> class -> count).
#include "algorithms/base/histograms.h"
#include "algorithms/base/qi_encoding.h"
#include "algorithms/aggregation/site_count.h"
#include "tests/algorithms/test_util.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>

using namespace vbas;

class TestEncoding : public QObject
{
    Q_OBJECT

  private slots:
    void valueCodesAreDensePerQi();
    void nullIsACategoryOfItsOwn();
    void classIdsAreDenseAndStable();
    void classIdsWithThreeQis();
    void noQiMeansOneClass();
    void histogramBuilderMakesCsr();
    void tinyTableEntropyAndMaxCombs();
};

void TestEncoding::valueCodesAreDensePerQi()
{
  QiEncoder encoder( 2 );
  QCOMPARE( encoder.qiCount(), std::size_t( 2 ) );
  // Codes are handed out 0, 1, 2, ... in order of first appearance, independently per QI.
  QCOMPARE( encoder.valueCode( 0, std::string_view( "M" ) ), 0u );
  QCOMPARE( encoder.valueCode( 0, std::string_view( "F" ) ), 1u );
  QCOMPARE( encoder.valueCode( 0, std::string_view( "M" ) ), 0u );
  QCOMPARE( encoder.valueCode( 1, std::string_view( "M" ) ), 0u ); // same text, other QI: its own code space
  QCOMPARE( encoder.valueCode( 1, std::string_view( "40-49" ) ), 1u );
  QCOMPARE( encoder.categoryCount( 0 ), std::size_t( 2 ) );
  QCOMPARE( encoder.categoryCount( 1 ), std::size_t( 2 ) );
}

void TestEncoding::nullIsACategoryOfItsOwn()
{
  QiEncoder encoder( 1 );
  QCOMPARE( encoder.valueCode( 0, std::string_view( "a" ) ), 0u );
  QCOMPARE( encoder.valueCode( 0, std::nullopt ), 1u );
  QCOMPARE( encoder.valueCode( 0, std::string_view( "" ) ), 2u ); // empty string is not NULL
  QCOMPARE( encoder.valueCode( 0, std::nullopt ), 1u );
  // |q| (eq. 4) = distinct observed values: "a", NULL, "" -> 3.
  QCOMPARE( encoder.categoryCount( 0 ), std::size_t( 3 ) );
  // Each code gives its value back (the generalization hierarchies look them up).
  QCOMPARE( encoder.value( 0, 0 ), std::optional<std::string>( "a" ) );
  QCOMPARE( encoder.value( 0, 1 ), std::optional<std::string>() );
  QCOMPARE( encoder.value( 0, 2 ), std::optional<std::string>( "" ) );
}

void TestEncoding::classIdsAreDenseAndStable()
{
  QiEncoder encoder( 2 );
  const auto id = [&encoder]( const char *sex, const char *age ) {
    const std::uint32_t codes[2] { encoder.valueCode( 0, std::string_view( sex ) ), encoder.valueCode( 1, std::string_view( age ) ) };
    return encoder.classId( codes );
  };
  // Tuples (M,30), (F,40), (M,30), (M,40), (F,40): three distinct ECs -> ids 0, 1, 2.
  const std::uint32_t m30 = id( "M", "30" );
  const std::uint32_t f40 = id( "F", "40" );
  QCOMPARE( id( "M", "30" ), m30 );
  const std::uint32_t m40 = id( "M", "40" );
  QCOMPARE( id( "F", "40" ), f40 );
  QCOMPARE( encoder.classCount(), std::size_t( 3 ) );
  QCOMPARE( std::set<std::uint32_t>( { m30, f40, m40 } ), std::set<std::uint32_t>( { 0, 1, 2 } ) );
  // |sex| = 2 (M, F), |age| = 2 (30, 40).
  QCOMPARE( encoder.categoryCounts(), std::vector<std::size_t>( { 2, 2 } ) );
  // The codes of each class in id order: M = 0, F = 1; 30 = 0, 40 = 1.
  QCOMPARE( encoder.classCodes(), std::vector<std::uint32_t>( { 0, 0, 1, 1, 0, 1 } ) );
}

void TestEncoding::classIdsWithThreeQis()
{
  QiEncoder encoder( 3 );
  const auto id = [&encoder]( const char *a, const char *b, const char *c ) {
    const std::uint32_t codes[3] { encoder.valueCode( 0, std::string_view( a ) ), encoder.valueCode( 1, std::string_view( b ) ), encoder.valueCode( 2, std::string_view( c ) ) };
    return encoder.classId( codes );
  };
  // Tuples sharing a prefix or a suffix are still different ECs: 5 distinct tuples -> ids {0..4}.
  std::set<std::uint32_t> ids;
  ids.insert( id( "x", "y", "z" ) );
  ids.insert( id( "x", "y", "w" ) );
  ids.insert( id( "x", "v", "z" ) );
  ids.insert( id( "u", "y", "z" ) );
  ids.insert( id( "u", "v", "w" ) );
  QCOMPARE( ids, std::set<std::uint32_t>( { 0, 1, 2, 3, 4 } ) );
  QCOMPARE( encoder.classCount(), std::size_t( 5 ) );
  QCOMPARE( id( "x", "v", "z" ), id( "x", "v", "z" ) );
  QCOMPARE( encoder.classCount(), std::size_t( 5 ) );
  // |q| = 2 for each QI -> MaxCombs = 2*2*2 = 8.
  QCOMPARE( maxCombs( encoder.categoryCounts() ), 8.0 );
}

void TestEncoding::noQiMeansOneClass()
{
  QiEncoder encoder( 0 );
  QCOMPARE( encoder.classId( nullptr ), 0u );
  QCOMPARE( encoder.classCount(), std::size_t( 1 ) );
}

void TestEncoding::histogramBuilderMakesCsr()
{
  HistogramBuilder builder( 3 );
  // Unordered stream: (row, class, count).
  builder.add( 2, 5, 1 );
  builder.add( 0, 3, 2 );
  builder.add( 0, 1, 1 );
  builder.add( 2, 5, 2 );
  builder.add( 0, 3, 1 );
  const SparseHistograms h = builder.build();
  // row 0: class 1 -> 1, class 3 -> 2+1 = 3; row 1: empty; row 2: class 5 -> 1+2 = 3.
  QCOMPARE( h.rows(), std::size_t( 3 ) );
  QCOMPARE( h.offsets, std::vector<std::size_t>( { 0, 2, 2, 3 } ) );
  QCOMPARE( h.classes, std::vector<std::uint32_t>( { 1, 3, 5 } ) );
  QCOMPARE( h.counts, std::vector<std::int64_t>( { 1, 3, 3 } ) );
  QCOMPARE( h.rowTotal( 0 ), std::int64_t( 4 ) );
  QCOMPARE( h.rowTotal( 1 ), std::int64_t( 0 ) );
  QCOMPARE( h.rowTotal( 2 ), std::int64_t( 3 ) );
  QCOMPARE( h.total(), std::int64_t( 7 ) );
  QCOMPARE( h.find( 0, 3 ), std::size_t( 1 ) );
  QCOMPARE( h.find( 2, 5 ), std::size_t( 2 ) );
  QCOMPARE( h.find( 1, 3 ), SparseHistograms::npos );
  QCOMPARE( h.find( 0, 2 ), SparseHistograms::npos );
  // EC sizes over the non-geographic QIs: class 1 -> 1, class 3 -> 3, class 5 -> 3.
  QCOMPARE( h.classTotals( 6 ), std::vector<std::int64_t>( { 0, 1, 0, 3, 0, 3 } ) );
}

void TestEncoding::tinyTableEntropyAndMaxCombs()
{
  // Records (region, sex, age): (0,M,30) (0,M,30) (1,F,40) (1,M,40).
  QiEncoder encoder( 2 );
  HistogramBuilder builder( 2 );
  const struct
  {
      std::uint32_t region;
      const char *sex;
      const char *age;
  } records[] { { 0, "M", "30" }, { 0, "M", "30" }, { 1, "F", "40" }, { 1, "M", "40" } };
  for ( const auto &r : records )
  {
    const std::uint32_t codes[2] { encoder.valueCode( 0, std::string_view( r.sex ) ), encoder.valueCode( 1, std::string_view( r.age ) ) };
    builder.add( r.region, encoder.classId( codes ), 1 );
  }
  const SparseHistograms h = builder.build();
  std::vector<std::int64_t> ecSizes = h.classTotals( encoder.classCount() );
  std::sort( ecSizes.begin(), ecSizes.end() );
  QCOMPARE( ecSizes, std::vector<std::int64_t>( { 1, 1, 2 } ) );
  // eq. 1: ECs 2,1,1 of N=4: -(0.5 ln 0.5 + 2 * 0.25 ln 0.25) = 0.346574 + 0.693147 = 1.039721
  VBAS_COMPARE_NEAR( entropy( ecSizes, std::exp( 1.0 ) ), 1.039721, 1e-6 );
  // eq. 4: |sex| = 2, |age| = 2 -> MaxCombs = 4
  QCOMPARE( maxCombs( encoder.categoryCounts() ), 4.0 );
}

QTEST_APPLESS_MAIN( TestEncoding )
#include "test_encoding.moc"
