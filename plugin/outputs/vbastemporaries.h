// The names of a run's temporaries (files beside each destination, staging tables in its database), and
// the removal of those that killed runs left behind: a name holds this machine and the run's process id,
// so a temporary whose process no longer exists on this machine is a leftover.
#pragma once

#include <QString>

namespace VbasTemporaries
{
//! Temporary files: ".vbas-partial-<host>-<pid>-<token>-<final name>"; staging tables: "vbas_partial_<host>_<pid>_<token>".
QString filePrefix( const QString &token );
QString stagingTable( const QString &token );
//! Removes the temporaries of dead runs from folder; returns how many.
int removeStaleFiles( const QString &folder );
//! Removes the staging tables of dead runs from a database's schema; returns how many.
int removeStaleTables( const QString &provider, const QString &uri, const QString &schema );
} // namespace VbasTemporaries
