// Passwords out of every text the plugin writes (docs/outputs.md, "Passwords"): the report's parameters
// and command, the log, messages. A connection's password, or another secret of it, is removed, never
// shown masked; an authcfg= (a QGIS authentication configuration: an id, no secret) stays, so a command
// that uses one still runs.
#pragma once

#include <QString>

namespace VbasSecrets
{
/**
 * text (a data source, a destination, a message) without the passwords it holds: of a PostgreSQL data
 * source of QGIS (postgres://, postgis:), as QGIS reads it; of any key=value connection string (GDAL's
 * PG:, libpq's, ODBC's: password=, sslpassword=, pwd=); of a URL (scheme://user:password@host).
 * removed, when given, is set to whether there was any.
 */
QString withoutPasswords( const QString &text, bool *removed = nullptr );
} // namespace VbasSecrets
