// A connection to the database of a table output (GeoPackage/SQLite through ogr, PostgreSQL through
// postgres), for staging tables, renames and clean-up.
#pragma once

#include <qgsabstractdatabaseproviderconnection.h>

#include <memory>

namespace VbasDatabase
{
//! The provider's connection to uri; nullptr when the provider has none.
std::unique_ptr<QgsAbstractDatabaseProviderConnection> connection( const QString &provider, const QString &uri );
} // namespace VbasDatabase
