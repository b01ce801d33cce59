// SIGTERM, SIGINT and SIGHUP during a headless run: the first one cancels the run,
// which removes every temporary and output as a failed run does, and the signal is raised again once
// that is done; a second one deletes the registered temporaries at once and ends the process.
// SIGXFSZ (a file-size limit) is ignored during the run, so an oversized write fails as a write
// error instead of killing the process.
#pragma once

#include <QString>

class QgsProcessingFeedback;

namespace VbasInterrupt
{

//! Installs the handlers for the lifetime of a headless run (qgis_process); restores them and raises a caught signal again when destroyed.
class Guard
{
  public:
    Guard();
    ~Guard();
    Guard( const Guard & ) = delete;
    Guard &operator=( const Guard & ) = delete;

  private:
    bool mInstalled = false;
};

//! The signal that interrupted the run, or 0.
int caught();

//! Throws a QgsProcessingException when the run was canceled or interrupted by a signal.
void throwIfCanceled( QgsProcessingFeedback *feedback );

//! A file the second signal deletes; unregister it once it is renamed into place or removed.
void registerFile( const QString &path );
void unregisterFile( const QString &path );

} // namespace VbasInterrupt
