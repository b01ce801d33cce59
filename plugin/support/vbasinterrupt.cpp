#include "plugin/support/vbasinterrupt.h"

#include <qgsapplication.h>
#include <qgsexception.h>
#include <qgsprocessingfeedback.h>

#include <QFile>

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace
{

constexpr int kSignals[] = { SIGTERM, SIGINT, SIGHUP };
constexpr std::size_t kSignalCount = sizeof( kSignals ) / sizeof( kSignals[0] );

// The registry the second signal reads. A handler may only use async-signal-safe calls, so the paths
// sit in fixed buffers, published and withdrawn through atomic flags (no allocation, no lock).
constexpr std::size_t kSlots = 512;
constexpr std::size_t kPathBytes = 4096;
char sPaths[kSlots][kPathBytes];
std::atomic<bool> sUsed[kSlots];

volatile std::sig_atomic_t sCaught = 0;
struct sigaction sPrevious[kSignalCount];
struct sigaction sPreviousFileSize;

extern "C" void onSignal( int signal )
{
  if ( sCaught != 0 )
  {
    // A second signal: no time left for the orderly clean-up, delete what is registered and leave.
    for ( std::size_t i = 0; i < kSlots; ++i )
      if ( sUsed[i].load( std::memory_order_acquire ) )
        ::unlink( sPaths[i] );
    ::_exit( 128 + signal );
  }
  sCaught = signal;
}

//! Only qgis_process: QGIS desktop keeps its own signal handling.
bool headless()
{
  return QgsApplication::platform() == QLatin1String( "qgis_process" );
}

void raiseAgain( int signal )
{
  std::signal( signal, SIG_DFL );
  sigset_t set;
  sigemptyset( &set );
  sigaddset( &set, signal );
  pthread_sigmask( SIG_UNBLOCK, &set, nullptr );
  std::raise( signal );
  ::_exit( 128 + signal ); // only if the signal could not end the process
}

} // namespace

namespace VbasInterrupt
{

Guard::Guard()
{
  if ( !headless() )
    return;
  struct sigaction action
  {
  };
  action.sa_handler = onSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset( &action.sa_mask );
  for ( std::size_t i = 0; i < kSignalCount; ++i )
    sigaction( kSignals[i], &action, &sPrevious[i] );
  struct sigaction ignore
  {
  };
  ignore.sa_handler = SIG_IGN;
  sigaction( SIGXFSZ, &ignore, &sPreviousFileSize );
  mInstalled = true;
}

Guard::~Guard()
{
  if ( !mInstalled )
    return;
  for ( std::size_t i = 0; i < kSignalCount; ++i )
    sigaction( kSignals[i], &sPrevious[i], nullptr );
  sigaction( SIGXFSZ, &sPreviousFileSize, nullptr );
  if ( sCaught != 0 )
    raiseAgain( sCaught );
}

int caught()
{
  return sCaught;
}

void throwIfCanceled( QgsProcessingFeedback *feedback )
{
  if ( const int signal = caught() )
  {
    const QString message
      = QObject::tr( "Interrupted by signal %1 (%2): the run's temporary files and outputs are removed, no output was produced." ).arg( signal ).arg( QString::fromLocal8Bit( strsignal( signal ) ) );
    if ( feedback )
      feedback->reportError( message, true ); // the signal ends the process before QGIS could print the exception
    throw QgsProcessingException( message );
  }
  if ( feedback && feedback->isCanceled() )
    throw QgsProcessingException( QObject::tr( "Canceled: no output was produced." ) );
}

void registerFile( const QString &path )
{
  const QByteArray bytes = QFile::encodeName( path );
  if ( static_cast<std::size_t>( bytes.size() ) >= kPathBytes )
    return; // too long for the emergency registry; the next run removes it as a stale temporary
  for ( std::size_t i = 0; i < kSlots; ++i )
  {
    if ( sUsed[i].load( std::memory_order_acquire ) )
      continue;
    std::memcpy( sPaths[i], bytes.constData(), static_cast<std::size_t>( bytes.size() ) + 1 );
    sUsed[i].store( true, std::memory_order_release );
    return;
  }
}

void unregisterFile( const QString &path )
{
  const QByteArray bytes = QFile::encodeName( path );
  for ( std::size_t i = 0; i < kSlots; ++i )
    if ( sUsed[i].load( std::memory_order_acquire ) && bytes == sPaths[i] )
      sUsed[i].store( false, std::memory_order_release );
}

} // namespace VbasInterrupt
