// StringIndex: the map behind QI value codes, class ids and region ids. Two different strings must
// never share an id (that would merge different QI values into one equivalence class). And FlatMap,
// the table behind it and ADC's and the search's EC counts: it holds what a standard map holds.
#include "algorithms/base/flat_map.h"
#include "algorithms/base/string_index.h"

#include <QtTest>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace vbas;

class TestStringIndex : public QObject
{
    Q_OBJECT

  private slots:
    void idsAreDenseInInsertionOrder();
    void everyByteTellsStringsApart();
    void embeddedZeroBytes();
    void flatMapHoldsWhatAStandardMapHolds();
};

void TestStringIndex::idsAreDenseInInsertionOrder()
{
  StringIndex index;
  QCOMPARE( index.insert( "F" ), 0u );
  QCOMPARE( index.insert( "M" ), 1u );
  QCOMPARE( index.insert( "F" ), 0u );
  QCOMPARE( index.insert( "" ), 2u );
  QCOMPARE( index.size(), std::size_t( 3 ) );
  QCOMPARE( index.find( "M" ), std::optional<std::uint32_t>( 1 ) );
  QCOMPARE( index.find( "" ), std::optional<std::uint32_t>( 2 ) );
  QVERIFY( !index.find( "X" ) );
  QVERIFY( !index.find( "FF" ) );
}

void TestStringIndex::everyByteTellsStringsApart()
{
  // For every length 0..40, a string of 'a's and, for every position, the same string with a 'b'
  // there. Strings up to 24 bytes are identified by their size and three words (first, second and
  // last 8 bytes), longer ones are checked byte by byte: either way all sum(n + 1) = 861 strings are
  // different and must get 861 ids.
  StringIndex index;
  std::vector<std::string> strings;
  for ( std::size_t n = 0; n <= 40; ++n )
  {
    strings.emplace_back( n, 'a' );
    for ( std::size_t i = 0; i < n; ++i )
    {
      std::string variant( n, 'a' );
      variant[i] = 'b';
      strings.push_back( variant );
    }
  }
  QCOMPARE( strings.size(), std::size_t( 861 ) );
  for ( std::size_t s = 0; s < strings.size(); ++s )
    QCOMPARE( index.insert( strings[s] ), static_cast<std::uint32_t>( s ) );
  QCOMPARE( index.size(), std::size_t( 861 ) );
  for ( std::size_t s = 0; s < strings.size(); ++s )
  {
    QCOMPARE( index.insert( strings[s] ), static_cast<std::uint32_t>( s ) );
    QCOMPARE( index.find( strings[s] ), std::optional<std::uint32_t>( static_cast<std::uint32_t>( s ) ) );
    QCOMPARE( index.text( static_cast<std::uint32_t>( s ) ), strings[s] ); // every byte given back, short or long
  }
}

void TestStringIndex::embeddedZeroBytes()
{
  // UTF-16 text is full of zero bytes: "A" is 41 00, "A\0" would be 41 00 00 00.
  StringIndex index;
  const std::string a( "A\0", 2 ), b( "A\0\0\0", 4 ), c( "\0A", 2 );
  QCOMPARE( index.insert( a ), 0u );
  QCOMPARE( index.insert( b ), 1u );
  QCOMPARE( index.insert( c ), 2u );
  QCOMPARE( index.insert( "A" ), 3u );
  QCOMPARE( index.find( b ), std::optional<std::uint32_t>( 1 ) );
  QCOMPARE( index.text( 1 ), b );
  QCOMPARE( index.text( 2 ), c );
}

void TestStringIndex::flatMapHoldsWhatAStandardMapHolds()
{
  // Random inserts, updates and erases over 46 keys in a table of 64 slots, nearly full, so that probe
  // runs are long, erases fall inside them and runs wrap past the table's end; 50 draws of the keys.
  // After each step, every key of the draw is found exactly when the standard map has it, with its value.
  std::mt19937_64 random( 7 );
  for ( int draw = 0; draw < 50; ++draw )
  {
    FlatMap<std::int64_t> table;
    std::map<std::uint64_t, std::int64_t> expected;
    std::vector<std::uint64_t> keys;
    for ( int i = 0; i < 46; ++i )
      keys.push_back( random() % 2 ? random() : static_cast<std::uint64_t>( i ) << 32 ); // some keys alike in their low bits
    for ( int step = 0; step < 2000; ++step )
    {
      const std::uint64_t key = keys[random() % keys.size()];
      if ( random() % 3 == 0 )
      {
        table.erase( key );
        expected.erase( key );
      }
      else
      {
        const std::int64_t add = static_cast<std::int64_t>( random() % 100 );
        table.findOrInsert( key, 0 ) += add;
        expected[key] += add;
      }
      QCOMPARE( table.size(), expected.size() );
      for ( const std::uint64_t k : keys )
      {
        const std::int64_t *found = table.find( k );
        const auto it = expected.find( k );
        QCOMPARE( found != nullptr, it != expected.end() );
        if ( found )
          QCOMPARE( *found, it->second );
      }
    }
  }
}

QTEST_APPLESS_MAIN( TestStringIndex )
#include "test_string_index.moc"
