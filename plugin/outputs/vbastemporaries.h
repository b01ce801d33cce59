// The names of a run's temporaries (files beside each destination, staging tables in its database, the
// previous outputs moved aside while the new set is committed), the lock that proves a run alive, and
// the removal of what dead runs left (issue 17 item 3). A name holds this machine (its machine id) and
// the output's token; each output holds a lock file, locked with flock for as long as its run lives, in
// every folder where it keeps temporaries. A leftover is removed only when it is a regular file or
// table of the plugin's own naming, made on this machine, not one of the current run's inputs or
// outputs, and its output's lock file exists and can be locked (its run is gone). Nothing is removed
// recursively; previous outputs that a killed run had moved aside are never removed, only reported.
#pragma once

#include <QSet>
#include <QString>
#include <QStringList>

namespace VbasTemporaries
{
//! Temporary files: ".vbas-partial-<machine>-<pid>-<token>-<final name>"; staging tables: "vbas_partial_<machine>_<pid>_<token>".
QString filePrefix( const QString &token );
QString stagingTable( const QString &token );
//! A previous output moved aside during the commit: ".vbas-previous-<machine>-<pid>-<token>-<final name>", "vbas_previous_...".
QString previousFile( const QString &token, const QString &path );
QString previousTable( const QString &token );

//! The lock of an output's temporaries in a folder, held while it lives; its file is removed with it.
class Lock
{
  public:
    Lock( const QString &folder, const QString &token );
    ~Lock();
    Lock( const Lock & ) = delete;
    Lock &operator=( const Lock & ) = delete;
    //! Why the lock file could not be made (the folder is not writable, ...); empty when held.
    const QString &error() const { return mError; }

  private:
    QString mPath;
    QString mError;
    int mFd = -1;
};

//! What the clean-up found.
struct Cleanup
{
    int removed = 0;
    QStringList previous; //!< previous outputs that killed runs left moved aside: reported, never removed
};

//! Removes the temporaries of dead runs from folder, except the files of keep (VbasLocation file keys).
void removeStaleFiles( const QString &folder, const QSet<QString> &keep, Cleanup &cleanup );
//! Removes the staging tables of dead runs from a database's schema; lockFolder holds their lock files.
void removeStaleTables( const QString &provider, const QString &uri, const QString &schema, const QString &lockFolder, Cleanup &cleanup );
} // namespace VbasTemporaries
