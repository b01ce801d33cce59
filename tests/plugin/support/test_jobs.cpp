// vbasRunJobs, which runs vbas:compare's candidates side by side: the log reads in the jobs' order
// whatever order they end in, the heaviest start first, jobs do run at once on two threads, a failure
// comes back and stops the rest, a cancel reaches every job, and no more run at once than the memory
// available holds.
#include "plugin/support/vbasjobs.h"

#include <qgsexception.h>
#include <qgsprocessingfeedback.h>

#include <QElapsedTimer>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace
{

//! A feedback that keeps each message with its kind.
class Log : public QgsProcessingFeedback
{
  public:
    Log()
      : QgsProcessingFeedback( false )
    {
    }
    void pushInfo( const QString &info ) override { lines << QStringLiteral( "info: " ) + info; }
    void pushWarning( const QString &warning ) override { lines << QStringLiteral( "warning: " ) + warning; }
    QStringList lines;
};

//! Waits until done() holds, at most 10 s; false if it never did.
template<typename Done>
bool waitFor( Done done )
{
  QElapsedTimer timer;
  timer.start();
  while ( !done() )
  {
    if ( timer.elapsed() > 10000 )
      return false;
    std::this_thread::sleep_for( std::chrono::milliseconds( 5 ) );
  }
  return true;
}

//! The message of what vbasRunJobs threw, or nothing.
QString thrown( const std::vector<VbasJob> &jobs, QgsProcessingFeedback *feedback, int threads )
{
  try
  {
    vbasRunJobs( jobs, feedback, threads );
  }
  catch ( const QgsProcessingException &e )
  {
    return e.what();
  }
  return QString();
}

} // namespace

class TestJobs : public QObject
{
    Q_OBJECT

  private slots:
    void logInTheJobsOrder();
    void heaviestStartFirst();
    void jobsRunAtOnce();
    void failureStopsTheRest();
    void cancelReachesEveryJob();
    void atOnceWithinMemory();
};

void TestJobs::logInTheJobsOrder()
{
  // Job i sleeps (5 - i) * 30 ms: the last ends first. The log still reads job 0, 1, ..., each job's
  // messages in its order and of its kind; progress ends at 100.
  std::vector<VbasJob> jobs;
  for ( int i = 0; i < 5; ++i )
    jobs.push_back( { [i]( QgsProcessingFeedback *f ) {
      f->pushInfo( QStringLiteral( "job %1 starts" ).arg( i ) );
      std::this_thread::sleep_for( std::chrono::milliseconds( ( 5 - i ) * 30 ) );
      f->pushWarning( QStringLiteral( "job %1 ends" ).arg( i ) );
    } } );
  Log log;
  vbasRunJobs( jobs, &log, 2 );
  QStringList expected;
  for ( int i = 0; i < 5; ++i )
    expected << QStringLiteral( "info: job %1 starts" ).arg( i ) << QStringLiteral( "warning: job %1 ends" ).arg( i );
  QCOMPARE( log.lines, expected );
  QCOMPARE( log.progress(), 100.0 );
}

void TestJobs::heaviestStartFirst()
{
  // On one thread the jobs run one by one: by weight, heaviest first, equal weights in their order.
  const std::vector<double> weights { 0, 2, 1, 2, 0, 3 };
  std::vector<int> started;
  std::vector<VbasJob> jobs;
  for ( int i = 0; i < static_cast<int>( weights.size() ); ++i )
    jobs.push_back( { [i, &started]( QgsProcessingFeedback * ) { started.push_back( i ); }, weights[static_cast<std::size_t>( i )] } );
  Log log;
  vbasRunJobs( jobs, &log, 1 );
  QCOMPARE( started, ( std::vector<int> { 5, 1, 3, 2, 0, 4 } ) );
}

void TestJobs::jobsRunAtOnce()
{
  // Two jobs that each wait for the other to have started: they end only if both run at once.
  std::atomic<int> running { 0 };
  std::atomic<int> met { 0 };
  const auto job = [&]( QgsProcessingFeedback * ) {
    ++running;
    if ( waitFor( [&] { return running == 2; } ) )
      ++met;
  };
  Log log;
  vbasRunJobs( { { job }, { job } }, &log, 2 );
  QCOMPARE( met.load(), 2 );
}

void TestJobs::failureStopsTheRest()
{
  // Job 0 fails while job 1 runs until it is canceled; jobs 2 and 3 never start. The failure comes
  // back as it was thrown, and the log holds what job 0 logged before it failed.
  std::atomic<bool> secondCanceled { false };
  std::atomic<int> laterStarted { 0 };
  std::vector<VbasJob> jobs { { [&]( QgsProcessingFeedback *f ) {
                                 f->pushInfo( QStringLiteral( "job 0" ) );
                                 std::this_thread::sleep_for( std::chrono::milliseconds( 50 ) );
                                 throw QgsProcessingException( QStringLiteral( "RECORDS row 7: no region" ) );
                               },
                                3 },
                              { [&]( QgsProcessingFeedback *f ) { secondCanceled = waitFor( [f] { return f->isCanceled(); } ); }, 2 } };
  for ( int i = 0; i < 2; ++i )
    jobs.push_back( { [&]( QgsProcessingFeedback * ) { ++laterStarted; } } );
  Log log;
  QCOMPARE( thrown( jobs, &log, 2 ), QStringLiteral( "RECORDS row 7: no region" ) );
  QVERIFY( secondCanceled );
  QCOMPARE( laterStarted.load(), 0 );
  QCOMPARE( log.lines, QStringList() << QStringLiteral( "info: job 0" ) );
}

void TestJobs::cancelReachesEveryJob()
{
  // The caller's feedback is canceled while both jobs run: each sees its own canceled, the run ends
  // as canceled, and the job that had not started never does.
  std::atomic<int> canceled { 0 };
  std::atomic<int> running { 0 };
  std::atomic<bool> thirdStarted { false };
  const auto untilCanceled = [&]( QgsProcessingFeedback *f ) {
    ++running;
    if ( waitFor( [f] { return f->isCanceled(); } ) )
      ++canceled;
  };
  Log log;
  std::thread canceler( [&] {
    waitFor( [&] { return running == 2; } );
    log.cancel();
  } );
  const QString error = thrown( { { untilCanceled, 1 }, { untilCanceled, 1 }, { [&]( QgsProcessingFeedback * ) { thirdStarted = true; } } }, &log, 2 );
  canceler.join();
  QVERIFY2( error.startsWith( QStringLiteral( "Canceled" ) ), qPrintable( error ) );
  QCOMPARE( canceled.load(), 2 );
  QVERIFY( !thirdStarted );
}

void TestJobs::atOnceWithinMemory()
{
  // 8 cores, jobs of 400 MB: 2 GB available holds 5 of them, 100 bytes still 1; unknown memory: the cores.
  const std::uint64_t job = 400'000'000;
  QCOMPARE( vbasJobsAtOnce( 8, 2'000'000'000, job ), 5 );
  QCOMPARE( vbasJobsAtOnce( 8, 100'000'000'000, job ), 8 );
  QCOMPARE( vbasJobsAtOnce( 8, 100, job ), 1 );
  QCOMPARE( vbasJobsAtOnce( 8, std::nullopt, job ), 8 );
  QCOMPARE( vbasJobsAtOnce( 0, std::nullopt, job ), 1 );
  // This machine's memory is read (Linux's /proc/meminfo), and is more than nothing.
  const std::optional<std::uint64_t> available = vbasAvailableMemory();
  QVERIFY( available && *available > 0 );
}

QTEST_APPLESS_MAIN( TestJobs )
#include "test_jobs.moc"
