// DistinctCount: the HyperLogLog estimate behind the "nearly unique field" warning. Its standard error
// is 1.04 / sqrt( 4096 ) = 1.6 %, so 5 % is three standard errors; the hash is fixed, so are the results.
#include "algorithms/metrics/distinct_count.h"

#include <QtTest>

#include <cmath>
#include <cstdint>
#include <string>

using namespace vbas;

namespace
{
//! Whether estimate is within share of expected, with a readable failure.
bool near( double estimate, double expected, double share )
{
  const bool ok = std::abs( estimate - expected ) <= share * expected;
  if ( !ok )
    qWarning( "estimate %f, expected %f", estimate, expected );
  return ok;
}
} // namespace

class TestDistinctCount : public QObject
{
    Q_OBJECT

  private slots:
    void emptyIsZero();
    void thousandDistinct();
    void hundredThousandDistinct();
    void repeatedValuesCountOnce();
    void duplicatesDoNotChangeTheEstimate();
    void everyByteAndTheLengthCount();
};

void TestDistinctCount::emptyIsZero()
{
  QCOMPARE( DistinctCount().estimate(), 0.0 );
}

void TestDistinctCount::thousandDistinct()
{
  DistinctCount count;
  for ( int i = 0; i < 1000; ++i )
    count.add( "patient-" + std::to_string( i ) );
  QVERIFY( near( count.estimate(), 1000, 0.05 ) );
}

void TestDistinctCount::hundredThousandDistinct()
{
  DistinctCount count;
  for ( int i = 0; i < 100000; ++i )
    count.add( "patient-" + std::to_string( i ) );
  QVERIFY( near( count.estimate(), 100000, 0.05 ) );
}

void TestDistinctCount::repeatedValuesCountOnce()
{
  // 100,000 records of a field with 10 values, e.g. an age group.
  DistinctCount count;
  for ( int i = 0; i < 100000; ++i )
    count.add( "group " + std::to_string( i % 10 ) );
  QVERIFY( near( count.estimate(), 10, 0.1 ) ); // within 1
}

void TestDistinctCount::duplicatesDoNotChangeTheEstimate()
{
  DistinctCount count;
  for ( int i = 0; i < 20000; ++i )
    count.add( std::to_string( i ) );
  const double once = count.estimate();
  for ( int i = 0; i < 20000; ++i )
    count.add( std::to_string( i ) );
  QCOMPARE( count.estimate(), once );
}

void TestDistinctCount::everyByteAndTheLengthCount()
{
  // Values that differ only in their length (runs of zero bytes, as in UTF-16 text), then 24-byte values
  // of zero bytes but two, one in the first word and one in the last: 1,000 and 50,000 distinct values.
  DistinctCount zeros;
  for ( std::size_t size = 0; size < 1000; ++size )
    zeros.add( std::string( size, '\0' ) );
  QVERIFY( near( zeros.estimate(), 1000, 0.05 ) );

  DistinctCount words;
  for ( int i = 0; i < 50000; ++i )
  {
    std::string value( 24, '\0' );
    value[3] = static_cast<char>( i & 0xff );
    value[20] = static_cast<char>( i >> 8 );
    words.add( value );
  }
  QVERIFY( near( words.estimate(), 50000, 0.05 ) );
}

QTEST_APPLESS_MAIN( TestDistinctCount )
#include "test_distinct_count.moc"
