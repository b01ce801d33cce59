// A second thread for a long pass over rows. The thread that reads or writes through QGIS stays where
// it is, and the plugin's own work on the rows (keys, checks, the shuffle) runs beside it on the other
// core: batches go through a small bounded queue, and an exception in the worker comes back to the
// caller. Used by the release writer (VbasReleaseWriter), whose end-to-end time is otherwise the sum.
#pragma once

#include <qgsexception.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

template<typename Batch>
class VbasWorker
{
  public:
    //! Thrown inside the worker's work when the caller stopped it; ends the work quietly.
    struct Stopped
    {
    };

    //! Runs work( *this ) in a new thread.
    explicit VbasWorker( std::function<void( VbasWorker & )> work )
      : mThread( [this, work = std::move( work )] { run( work ); } )
    {
    }

    //! Stops the worker (if it still runs) and waits for it: safe while an exception unwinds.
    ~VbasWorker()
    {
      stop();
      if ( mThread.joinable() )
        mThread.join();
    }

    VbasWorker( const VbasWorker & ) = delete;
    VbasWorker &operator=( const VbasWorker & ) = delete;

    //! Hands a batch over, waiting while the queue is full; false once stopped, or once the worker is done.
    bool push( Batch batch )
    {
      std::unique_lock<std::mutex> lock( mMutex );
      mChanged.wait( lock, [this] { return mStopped || mDone || mQueue.size() < kCapacity; } );
      if ( mStopped || mDone )
        return false;
      mQueue.push_back( std::move( batch ) );
      mChanged.notify_all();
      return true;
    }

    //! The next batch, waiting for one; nothing once the queue is closed and empty, or stopped.
    std::optional<Batch> pop()
    {
      std::unique_lock<std::mutex> lock( mMutex );
      mChanged.wait( lock, [this] { return mStopped || mClosed || mDone || !mQueue.empty(); } );
      if ( mStopped || mQueue.empty() )
        return std::nullopt;
      Batch batch = std::move( mQueue.front() );
      mQueue.pop_front();
      mChanged.notify_all();
      return batch;
    }

    //! No more batches will be pushed.
    void close()
    {
      const std::lock_guard<std::mutex> lock( mMutex );
      mClosed = true;
      mChanged.notify_all();
    }

    //! Waits for the worker to end and throws its exception, if it had one, in this thread.
    void finish()
    {
      mThread.join();
      if ( mError )
        std::rethrow_exception( mError );
    }

  private:
    static constexpr std::size_t kCapacity = 4;

    void stop()
    {
      const std::lock_guard<std::mutex> lock( mMutex );
      mStopped = true;
      mChanged.notify_all();
    }

    void run( const std::function<void( VbasWorker & )> &work )
    {
      try
      {
        work( *this );
      }
      catch ( const Stopped & )
      {
        // the caller stopped the work: nothing to report
      }
      catch ( ... )
      {
        mError = std::current_exception();
      }
      const std::lock_guard<std::mutex> lock( mMutex );
      mDone = true;
      mStopped = mStopped || mError; // a failed worker stops the caller's side too
      mChanged.notify_all();
    }

    std::mutex mMutex;
    std::condition_variable mChanged;
    std::deque<Batch> mQueue;
    bool mClosed = false;
    bool mStopped = false;
    bool mDone = false;
    std::exception_ptr mError;
    std::thread mThread; // last: the thread starts once the rest is ready
};
