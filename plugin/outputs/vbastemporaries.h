// The names of a run's temporaries (files beside each destination, staging tables in its database, the
// previous outputs moved aside while the new set is committed), the lock that proves a run alive, and
// the removal of what dead runs left (docs/outputs.md). A name holds this machine (its machine id) and
// the output's token; each output holds a lock file, locked with flock for as long as its run lives, in
// every folder where it keeps temporaries, and a PostgreSQL output an advisory lock on its database. A
// leftover is removed only when it is a regular file or table of the plugin's own naming, not one of
// the current run's inputs or outputs, and its lock can be taken (its run is gone): a file's or a
// GeoPackage table's only when made on this machine, a PostgreSQL staging table from any machine. Nothing is removed
// recursively; previous outputs that a killed run had moved aside are never removed, only reported.
#pragma once

#include <QSet>
#include <QString>
#include <QStringList>

#include <memory>

struct pg_conn; // libpq's connection (PGconn)

namespace VbasTemporaries
{
//! Temporary files: ".vbas-partial-<machine>-<pid>-<token>-<final name>"; staging tables: "vbas_partial_<machine>_<pid>_<token>".
QString filePrefix( const QString &token );
QString stagingTable( const QString &token );
//! A previous output moved aside during the commit: ".vbas-previous-<machine>-<pid>-<token>-<final name>", "vbas_previous_...".
QString previousFile( const QString &token, const QString &path );
QString previousTable( const QString &token );

/**
 * A lock that an output holds while it lives: a lock file in a folder where it keeps temporaries
 * (flock'ed, removed with it), or a session-level advisory lock on the PostgreSQL database of its
 * staging table, keyed by its token, on a libpq connection of its own (QGIS's pooled connections cannot
 * hold one for a run's life; the server releases it when the run's process dies, on any machine).
 */
class Lock
{
  public:
    static std::unique_ptr<Lock> inFolder( const QString &folder, const QString &token );
    static std::unique_ptr<Lock> onDatabase( const QString &uri, const QString &token );
    ~Lock();
    Lock( const Lock & ) = delete;
    Lock &operator=( const Lock & ) = delete;
    //! Why the lock could not be taken (the folder is not writable, the key is taken, ...); empty when held.
    const QString &error() const { return mError; }

  private:
    Lock() = default;
    QString mPath; //!< the lock file
    QString mError;
    int mFd = -1;
    pg_conn *mConnection = nullptr;
};

//! What the clean-up found.
struct Cleanup
{
    int removed = 0;
    QStringList previous; //!< previous outputs that killed runs left moved aside: reported, never removed
};

//! Removes the temporaries of dead runs from folder, except the files of keep (VbasLocation file keys).
void removeStaleFiles( const QString &folder, const QSet<QString> &keep, Cleanup &cleanup );
//! Removes the staging tables of dead runs from a database's schema (a GeoPackage's lock files are in its folder; PostgreSQL's are advisory locks).
void removeStaleTables( const QString &provider, const QString &uri, const QString &schema, Cleanup &cleanup );
//! The same for a PostgreSQL schema: a staging table whose advisory lock can be taken.
void removeStalePostgresTables( const QString &uri, const QString &schema, Cleanup &cleanup );
} // namespace VbasTemporaries
