#include "plugin/support/vbasjobs.h"

#include "plugin/support/vbasinterrupt.h"

#include <qgsprocessingfeedback.h>

#include <QFile>
#include <QRegularExpression>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

namespace
{

//! A job's feedback: keeps what the job logs until it is passed on, and its progress for the caller's thread.
class JobFeedback : public QgsProcessingFeedback
{
  public:
    JobFeedback()
      : QgsProcessingFeedback( false )
    {
      connect(
        this, &QgsFeedback::progressChanged, this, [this]( double percent ) { mPercent = percent; }, Qt::DirectConnection );
    }

    void setProgressText( const QString & ) override {} // the caller's progress is the jobs' mean, without text
    void reportError( const QString &error, bool fatalError = false ) override
    {
      keep( [=]( QgsProcessingFeedback *to ) { to->reportError( error, fatalError ); } );
    }
    void pushWarning( const QString &warning ) override
    {
      keep( [=]( QgsProcessingFeedback *to ) { to->pushWarning( warning ); } );
    }
    void pushInfo( const QString &info ) override
    {
      keep( [=]( QgsProcessingFeedback *to ) { to->pushInfo( info ); } );
    }
    void pushCommandInfo( const QString &info ) override
    {
      keep( [=]( QgsProcessingFeedback *to ) { to->pushCommandInfo( info ); } );
    }
    void pushDebugInfo( const QString &info ) override
    {
      keep( [=]( QgsProcessingFeedback *to ) { to->pushDebugInfo( info ); } );
    }
    void pushConsoleInfo( const QString &info ) override
    {
      keep( [=]( QgsProcessingFeedback *to ) { to->pushConsoleInfo( info ); } );
    }

    //! Passes what the job logged on to feedback, in the order it was logged.
    void passOn( QgsProcessingFeedback *feedback ) const
    {
      for ( const auto &message : mLog )
        message( feedback );
    }
    double percent() const { return mPercent; }

  private:
    void keep( std::function<void( QgsProcessingFeedback * )> message ) { mLog.push_back( std::move( message ) ); }

    std::vector<std::function<void( QgsProcessingFeedback * )>> mLog; //!< written by the job's thread, read once it ended
    std::atomic<double> mPercent { 0 };
};

//! The jobs, the threads' shared queue of them, and what has ended.
class Runner
{
  public:
    explicit Runner( const std::vector<VbasJob> &jobs )
      : mJobs( jobs )
      , mStart( jobs.size() )
      , mEnded( jobs.size(), false )
    {
      std::iota( mStart.begin(), mStart.end(), std::size_t( 0 ) );
      std::stable_sort( mStart.begin(), mStart.end(), [&]( std::size_t a, std::size_t b ) { return jobs[a].weight > jobs[b].weight; } );
      for ( std::size_t i = 0; i < jobs.size(); ++i )
        mFeedbacks.push_back( std::make_unique<JobFeedback>() );
    }

    //! A thread's loop: the next job until none is left; once stopped, the rest are only marked ended.
    void work()
    {
      for ( ;; )
      {
        std::size_t job = 0;
        bool skip = false;
        {
          const std::lock_guard<std::mutex> lock( mMutex );
          if ( mNext == mStart.size() )
            return;
          job = mStart[mNext++];
          skip = mStopped;
        }
        std::exception_ptr error;
        if ( !skip )
        {
          try
          {
            mJobs[job].work( mFeedbacks[job].get() );
          }
          catch ( ... )
          {
            error = std::current_exception();
          }
        }
        const std::lock_guard<std::mutex> lock( mMutex );
        if ( error && !mError )
        {
          mError = error;
          mStopped = true;
        }
        mEnded[job] = true;
        mChanged.notify_all();
      }
    }

    //! The caller's loop until every job ended: passes the logs on in the jobs' order, reports progress, forwards a cancel.
    void follow( QgsProcessingFeedback *feedback )
    {
      std::size_t passed = 0;
      bool canceled = false;
      while ( passed < mJobs.size() )
      {
        bool stopped = false;
        {
          std::unique_lock<std::mutex> lock( mMutex );
          mChanged.wait_for( lock, std::chrono::milliseconds( 100 ), [&] { return mEnded[passed]; } );
          stopped = mStopped;
        }
        while ( passed < mJobs.size() && ended( passed ) )
          mFeedbacks[passed++]->passOn( feedback );
        if ( !canceled && ( stopped || feedback->isCanceled() || VbasInterrupt::caught() != 0 ) )
        {
          stop();
          canceled = true;
        }
        feedback->setProgress( progress() );
      }
    }

    //! No job starts any more, and those running are canceled.
    void stop()
    {
      {
        const std::lock_guard<std::mutex> lock( mMutex );
        mStopped = true;
      }
      for ( const std::unique_ptr<JobFeedback> &f : mFeedbacks )
        f->cancel();
    }

    //! Throws the first job's failure, if one failed.
    void rethrow() const
    {
      if ( mError )
        std::rethrow_exception( mError );
    }

  private:
    bool ended( std::size_t job )
    {
      const std::lock_guard<std::mutex> lock( mMutex );
      return mEnded[job];
    }

    double progress()
    {
      double sum = 0;
      for ( std::size_t i = 0; i < mJobs.size(); ++i )
        sum += ended( i ) ? 100 : mFeedbacks[i]->percent();
      return mJobs.empty() ? 100 : sum / static_cast<double>( mJobs.size() );
    }

    const std::vector<VbasJob> &mJobs;
    std::vector<std::size_t> mStart; //!< the jobs in the order they start
    std::vector<std::unique_ptr<JobFeedback>> mFeedbacks;
    std::mutex mMutex;
    std::condition_variable mChanged;
    std::vector<bool> mEnded;
    std::size_t mNext = 0;
    bool mStopped = false;
    std::exception_ptr mError;
};

} // namespace

void vbasRunJobs( const std::vector<VbasJob> &jobs, QgsProcessingFeedback *feedback, int threads )
{
  const std::size_t count = std::min<std::size_t>( jobs.size(), static_cast<std::size_t>( std::max( threads, 1 ) ) );
  Runner runner( jobs );
  std::vector<std::thread> running;
  try
  {
    for ( std::size_t t = 0; t < count; ++t )
      running.emplace_back( [&runner] { runner.work(); } );
    runner.follow( feedback );
  }
  catch ( ... )
  {
    runner.stop();
    for ( std::thread &thread : running )
      thread.join();
    throw;
  }
  for ( std::thread &thread : running )
    thread.join();
  runner.rethrow();
  VbasInterrupt::throwIfCanceled( feedback );
}

int vbasJobsAtOnce( int cores, std::optional<std::uint64_t> available, std::uint64_t perJob )
{
  const int atOnce = std::max( cores, 1 );
  if ( !available || perJob == 0 )
    return atOnce;
  return static_cast<int>( std::clamp<std::uint64_t>( *available / perJob, 1, static_cast<std::uint64_t>( atOnce ) ) );
}

std::optional<std::uint64_t> vbasAvailableMemory()
{
  QFile meminfo( QStringLiteral( "/proc/meminfo" ) );
  if ( !meminfo.open( QIODevice::ReadOnly ) )
    return std::nullopt;
  const QRegularExpressionMatch kb = QRegularExpression( QStringLiteral( "^MemAvailable:\\s+(\\d+) kB$" ), QRegularExpression::MultilineOption ).match( QString::fromLatin1( meminfo.readAll() ) );
  if ( !kb.hasMatch() )
    return std::nullopt;
  return kb.captured( 1 ).toULongLong() * 1024;
}
