// Random and ExternalShuffle: the release order must be reproducible for a seed, uniformly random, and
// independent of the input order, in memory and spilled to disk, and no record may be lost on the way.
#include "algorithms/base/random.h"
#include "algorithms/base/shuffle.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace vbas;

namespace
{
constexpr std::size_t kInMemory = std::size_t( 1 ) << 20;

//! The records in the order an ExternalShuffle emits them.
std::vector<std::string> shuffled( std::uint64_t seed, std::size_t budget, const QString &prefix, const std::vector<std::string> &records, bool *spilled = nullptr )
{
  ExternalShuffle shuffle( seed, budget, prefix.toStdString() );
  for ( const std::string &record : records )
    shuffle.add( record );
  if ( spilled )
    *spilled = shuffle.spilled();
  std::vector<std::string> out;
  shuffle.drain( [&out]( std::string_view record ) { out.emplace_back( record ); } );
  return out;
}

/**
 * The tests create thousands of small spill files: on tmpfs where there is one, as file creation and
 * removal on a disk (in a virtual machine above all) can take a millisecond each.
 */
QString spillDirTemplate()
{
  const QFileInfo shm( "/dev/shm" );
  return ( shm.isDir() && shm.isWritable() ? shm.filePath() : QDir::tempPath() ) + "/test_shuffle-XXXXXX";
}

QStringList filesIn( const QTemporaryDir &dir )
{
  return QDir( dir.path() ).entryList( QDir::Files | QDir::Hidden | QDir::System );
}

std::vector<std::string> sorted( std::vector<std::string> records )
{
  std::sort( records.begin(), records.end() );
  return records;
}

//! Pearson's chi-square statistic of observed counts against equal expected counts.
double chiSquare( const std::vector<double> &counts )
{
  double total = 0;
  for ( const double count : counts )
    total += count;
  const double expected = total / static_cast<double>( counts.size() );
  double chi = 0;
  for ( const double count : counts )
    chi += ( count - expected ) * ( count - expected ) / expected;
  return chi;
}

//! Records of up to 44 bytes, many with zero bytes, every tenth empty, then 1,000 zero bytes: over any tiny budget.
std::vector<std::string> awkwardRecords( std::size_t count )
{
  std::vector<std::string> records;
  for ( std::size_t i = 0; i < count; ++i )
  {
    std::string record = std::to_string( i );
    record.append( i % 41, i % 3 == 0 ? '\0' : 'x' );
    records.push_back( i % 10 == 0 ? std::string() : record );
  }
  records.push_back( std::string( 1000, '\0' ) );
  return records;
}
} // namespace

class TestShuffle : public QObject
{
    Q_OBJECT

  private slots:
    void randomMatchesReference();
    void belowIsInRangeAndUniform();
    void inMemoryEmitsEveryRecordOnce();
    void spilledEmitsEveryRecordOnceAndCleansUp();
    void sameSeedSameOrder();
    void permutationsAreUniform_data();
    void permutationsAreUniform();
    void unwritableSpillPrefixThrows();
    void spillFilesArePrivateAndNeverReplaced();
    void fullDiskThrows_data();
    void fullDiskThrows();
    void emitExceptionPropagatesAndFilesAreRemoved();
    void outputIndependentOfInputOrder_data();
    void outputIndependentOfInputOrder();
};

void TestShuffle::randomMatchesReference()
{
  // Expected values from an independent Python reimplementation (/usr/bin/python3, exact integers):
  // splitmix64 seeding (its first output for seed 0, 0xe220a8397b1dcdaf, checked against the published
  // value) and xoshiro256** 1.0 as in https://prng.di.unimi.it/xoshiro256starstar.c, below( n ) as
  // Lemire's multiply-shift with rejection, Fisher-Yates from the last element down.
  const std::vector<std::pair<std::uint64_t, std::vector<std::uint64_t>>> firsts {
    { 0, { 0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL, 0x1a5f849d4933e6e0ULL, 0x6aa594f1262d2d2cULL, 0xbba5ad4a1f842e59ULL } },
    { 42, { 0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL, 0xae17533239e499a1ULL, 0xecb8ad4703b360a1ULL, 0xfde6dc7fe2ec5e64ULL } },
    { ~0ULL, { 0x8f5520d52a7ead08ULL, 0xc476a018caa1802dULL, 0x81de31c0d260469eULL, 0xbf658d7e065f3c2fULL, 0x913593fda1bca32aULL } },
  };
  for ( const auto &[seed, expected] : firsts )
  {
    Random random( seed );
    for ( const std::uint64_t value : expected )
      QCOMPARE( random.next(), value );
  }

  // One generator (seed 2024) through these calls in turn; 2^63 + 1 rejects two draws on the way.
  const std::vector<std::pair<std::uint64_t, std::vector<std::uint64_t>>> belows {
    { 1, { 0, 0, 0, 0 } },
    { 2, { 1, 0, 0, 0 } },
    { 10, { 5, 0, 7, 9 } },
    { 1000, { 0x371, 0x16e, 0x305, 0xbd } },
    { 0x8000000000000001ULL, { 0x57c3627be403684ULL, 0x538c91094a537173ULL, 0x337235cbbc24a811ULL, 0x26e91c5299f03446ULL } },
    { ~0ULL, { 0x31d577f9f5a4328dULL, 0x6b2d7e8e1d5356f5ULL, 0x7ae2a4865194eb62ULL, 0xb3f7974a7c92d4ULL } },
  };
  Random random( 2024 );
  for ( const auto &[n, expected] : belows )
    for ( const std::uint64_t value : expected )
      QCOMPARE( random.below( n ), value );

  Random shuffler( 7 );
  std::vector<int> values { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  shuffler.shuffle( values.begin(), values.end() );
  QCOMPARE( values, std::vector<int>( { 1, 8, 3, 0, 4, 5, 9, 6, 2, 7 } ) );
}

void TestShuffle::belowIsInRangeAndUniform()
{
  // 100,000 draws into 10 bins: chi-square with 9 degrees of freedom, 40 has p < 1e-5.
  Random random( 1 );
  for ( const std::uint64_t n : { std::uint64_t( 10 ), std::uint64_t( 1000 ), std::uint64_t( 0x8000000000000001ULL ) } )
  {
    std::vector<double> bins( 10 );
    for ( int i = 0; i < 100000; ++i )
    {
      const std::uint64_t value = random.below( n );
      QVERIFY( value < n );
      bins[static_cast<std::size_t>( value / ( n / 10 + ( n % 10 != 0 ) ) )] += 1;
    }
    const double chi = chiSquare( bins );
    QVERIFY2( chi < 40, qPrintable( QStringLiteral( "n = %1: chi-square %2" ).arg( n ).arg( chi ) ) );
  }
  for ( int i = 0; i < 100; ++i )
    QCOMPARE( random.below( 1 ), std::uint64_t( 0 ) );
}

void TestShuffle::inMemoryEmitsEveryRecordOnce()
{
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const std::vector<std::string> records = awkwardRecords( 300 );
  bool spilled = true;
  const std::vector<std::string> out = shuffled( 3, kInMemory, dir.path() + "/.x-shuffle-", records, &spilled );
  QVERIFY( !spilled );
  QCOMPARE( out.size(), records.size() );
  QVERIFY( sorted( out ) == sorted( records ) );
  QVERIFY( out != records );
  QVERIFY( filesIn( dir ).isEmpty() );
}

void TestShuffle::spilledEmitsEveryRecordOnceAndCleansUp()
{
  // 64 bytes hold 2 or 3 records: 600 records spill to 256 buckets, most split again in drain.
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const std::vector<std::string> records = awkwardRecords( 600 );
  std::vector<std::string> out;
  {
    ExternalShuffle shuffle( 3, 64, ( dir.path() + "/.x-shuffle-" ).toStdString() );
    for ( const std::string &record : records )
      shuffle.add( record );
    QVERIFY( shuffle.spilled() );
    QCOMPARE( shuffle.size(), records.size() );
    QVERIFY( !filesIn( dir ).isEmpty() );
    shuffle.drain( [&out]( std::string_view record ) { out.emplace_back( record ); } );
    QVERIFY2( filesIn( dir ).isEmpty(), qPrintable( filesIn( dir ).join( ' ' ) ) );
  }
  QCOMPARE( out.size(), records.size() );
  QVERIFY( sorted( out ) == sorted( records ) );
  QVERIFY( filesIn( dir ).isEmpty() );
}

void TestShuffle::sameSeedSameOrder()
{
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const QString prefix = dir.path() + "/.x-shuffle-";
  const std::vector<std::string> records = awkwardRecords( 300 );
  for ( const std::size_t budget : { kInMemory, std::size_t( 64 ) } )
  {
    const std::vector<std::string> first = shuffled( 7, budget, prefix, records );
    QVERIFY( first == shuffled( 7, budget, prefix, records ) );
    QVERIFY( first != shuffled( 8, budget, prefix, records ) );
  }
}

void TestShuffle::permutationsAreUniform_data()
{
  QTest::addColumn<std::size_t>( "budget" );
  QTest::addColumn<bool>( "spills" );
  QTest::addColumn<int>( "runs" );
  QTest::newRow( "in memory" ) << kInMemory << false << 24000;
  // 2 one-byte records fit, the third spills; fewer runs, as each creates and removes about 4 files.
  QTest::newRow( "spilled" ) << std::size_t( 40 ) << true << 4800;
}

void TestShuffle::permutationsAreUniform()
{
  // All 24 orders of 4 records over 24,000 (4,800) seeds, 1,000 (200) each expected: chi-square with 23
  // degrees of freedom, 60 has p < 1e-4.
  QFETCH( std::size_t, budget );
  QFETCH( bool, spills );
  QFETCH( int, runs );
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const QString prefix = dir.path() + "/.x-shuffle-";
  const std::vector<std::string> records { "a", "b", "c", "d" };
  std::map<std::vector<std::string>, double> counts;
  for ( std::uint64_t seed = 0; seed < static_cast<std::uint64_t>( runs ); ++seed )
  {
    bool spilled = false;
    counts[shuffled( seed, budget, prefix, records, &spilled )] += 1;
    QCOMPARE( spilled, spills );
  }
  std::vector<double> frequencies;
  for ( const auto &entry : counts )
    frequencies.push_back( entry.second );
  frequencies.resize( 24 ); // orders never seen count 0
  const double chi = chiSquare( frequencies );
  QVERIFY2( chi < 60, qPrintable( QStringLiteral( "%1 orders seen, chi-square %2" ).arg( counts.size() ).arg( chi ) ) );
  QVERIFY( filesIn( dir ).isEmpty() );
}

void TestShuffle::unwritableSpillPrefixThrows()
{
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const QString prefix = dir.path() + "/missing/.x-shuffle-";
  QString message;
  try
  {
    shuffled( 1, 64, prefix, awkwardRecords( 100 ) );
  }
  catch ( const std::runtime_error &error )
  {
    message = QString::fromStdString( error.what() );
  }
  QVERIFY2( message.contains( prefix ) && message.contains( "No such file or directory" ), qPrintable( message ) );
}

void TestShuffle::spillFilesArePrivateAndNeverReplaced()
{
  // The spill files hold the records of patients: readable by their owner only, whatever the umask,
  // and never one that already exists (another user's file or link at the same name).
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const mode_t previous = umask( 0022 );
  {
    ExternalShuffle shuffle( 3, 64, ( dir.path() + "/.x-shuffle-" ).toStdString() );
    for ( const std::string &record : awkwardRecords( 600 ) )
      shuffle.add( record );
    QVERIFY( shuffle.spilled() );
    for ( const QString &file : filesIn( dir ) )
    {
      struct stat status
      {
      };
      QCOMPARE( stat( QFile::encodeName( dir.filePath( file ) ).constData(), &status ), 0 );
      QCOMPARE( status.st_mode & 0777, mode_t( 0600 ) );
    }
  }
  umask( previous );
  QFile taken( dir.filePath( ".x-shuffle-0" ) ); // the first spill file's name
  QVERIFY( taken.open( QIODevice::WriteOnly ) );
  taken.write( "keep" );
  taken.close();
  QString message;
  try
  {
    shuffled( 1, 64, dir.path() + "/.x-shuffle-", awkwardRecords( 3000 ) ); // every one of the 256 buckets gets records
  }
  catch ( const std::runtime_error &error )
  {
    message = QString::fromStdString( error.what() );
  }
  QVERIFY2( message.contains( taken.fileName() ) && message.contains( "File exists" ), qPrintable( message ) );
  QVERIFY( taken.open( QIODevice::ReadOnly ) );
  QCOMPARE( taken.readAll(), QByteArray( "keep" ) );
}

void TestShuffle::fullDiskThrows_data()
{
  QTest::addColumn<int>( "recordSize" );
  QTest::newRow( "failing final flush" ) << 10; // records stay in the stdio buffers until fclose
  QTest::newRow( "failing write" ) << 100000;   // records larger than the buffers are written at once
}

void TestShuffle::fullDiskThrows()
{
  // A file-size limit of one byte fails every spill write (EFBIG), as a full disk would. Not one record
  // may be emitted as if nothing had happened.
  QFETCH( int, recordSize );
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const QString prefix = dir.path() + "/full-";
  std::vector<std::string> records;
  for ( int i = 0; i < 50; ++i )
    records.emplace_back( static_cast<std::size_t>( recordSize ), static_cast<char>( 'a' + i % 26 ) );
  QString message;
  std::size_t emitted = 0;
  std::signal( SIGXFSZ, SIG_IGN ); // the limit fails the write instead of ending the test
  rlimit previous {};
  getrlimit( RLIMIT_FSIZE, &previous );
  rlimit limit = previous;
  limit.rlim_cur = 1;
  QCOMPARE( setrlimit( RLIMIT_FSIZE, &limit ), 0 );
  try
  {
    ExternalShuffle shuffle( 1, 64, prefix.toStdString() );
    for ( const std::string &record : records )
      shuffle.add( record );
    shuffle.drain( [&emitted]( std::string_view ) { ++emitted; } );
  }
  catch ( const std::runtime_error &error )
  {
    message = QString::fromStdString( error.what() );
  }
  setrlimit( RLIMIT_FSIZE, &previous );
  QVERIFY2( message.contains( prefix ) && message.contains( "File too large" ), qPrintable( message ) );
  QCOMPARE( emitted, std::size_t( 0 ) );
  QVERIFY( filesIn( dir ).isEmpty() );
}

void TestShuffle::emitExceptionPropagatesAndFilesAreRemoved()
{
  struct Cancelled
  {
  };
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const std::string prefix = ( dir.path() + "/.x-shuffle-" ).toStdString();
  const std::vector<std::string> records = awkwardRecords( 400 );
  bool cancelled = false;
  int filesLeftWhenCancelled = 0;
  try
  {
    ExternalShuffle shuffle( 5, 64, prefix );
    for ( const std::string &record : records )
      shuffle.add( record );
    shuffle.drain( [&]( std::string_view ) {
      filesLeftWhenCancelled = filesIn( dir ).size();
      throw Cancelled();
    } );
  }
  catch ( const Cancelled & )
  {
    cancelled = true;
  }
  QVERIFY( cancelled );
  QVERIFY( filesLeftWhenCancelled > 0 );
  QVERIFY2( filesIn( dir ).isEmpty(), qPrintable( filesIn( dir ).join( ' ' ) ) );

  // Destroyed without a drain at all.
  {
    ExternalShuffle shuffle( 5, 64, prefix );
    for ( const std::string &record : records )
      shuffle.add( record );
    QVERIFY( !filesIn( dir ).isEmpty() );
  }
  QVERIFY( filesIn( dir ).isEmpty() );
}

void TestShuffle::outputIndependentOfInputOrder_data()
{
  QTest::addColumn<std::size_t>( "budget" );
  QTest::newRow( "in memory" ) << kInMemory;
  // 10,000 records of 21 bytes each against the budget: 256 buckets of about 820 bytes, each split again.
  QTest::newRow( "spilled twice" ) << std::size_t( 512 );
}

void TestShuffle::outputIndependentOfInputOrder()
{
  // 10,000 records in sorted order. Spearman's rank correlation between input and output positions has
  // a standard deviation of 1 / sqrt( n - 1 ) = 0.01 for a random order: |rho| < 0.05. And the share of
  // ascents (an output record greater than the previous one) is 1/2 with a standard deviation of
  // 0.003: within 0.02 (a bucket emitted in its input order would push it towards 1).
  QFETCH( std::size_t, budget );
  QTemporaryDir dir( spillDirTemplate() );
  QVERIFY( dir.isValid() );
  const std::size_t n = 10000;
  std::vector<std::string> records;
  for ( std::size_t i = 0; i < n; ++i )
    records.push_back( QStringLiteral( "%1" ).arg( i, 5, 10, QChar( '0' ) ).toStdString() );
  bool spilled = false;
  const std::vector<std::string> out = shuffled( 11, budget, dir.path() + "/.x-shuffle-", records, &spilled );
  QCOMPARE( spilled, budget != kInMemory );
  QVERIFY( sorted( out ) == records );
  double squares = 0;
  std::size_t ascents = 0;
  for ( std::size_t position = 0; position < n; ++position )
  {
    const double d = std::stod( out[position] ) - static_cast<double>( position );
    squares += d * d;
    if ( position > 0 && out[position - 1] < out[position] )
      ++ascents;
  }
  const double nn = static_cast<double>( n );
  const double rho = 1 - 6 * squares / ( nn * ( nn * nn - 1 ) );
  QVERIFY2( std::abs( rho ) < 0.05, qPrintable( QStringLiteral( "Spearman rho %1" ).arg( rho ) ) );
  const double ascentShare = static_cast<double>( ascents ) / ( nn - 1 );
  QVERIFY2( std::abs( ascentShare - 0.5 ) < 0.02, qPrintable( QStringLiteral( "ascent share %1" ).arg( ascentShare ) ) );
  QVERIFY( filesIn( dir ).isEmpty() );
}

QTEST_APPLESS_MAIN( TestShuffle )
#include "test_shuffle.moc"
