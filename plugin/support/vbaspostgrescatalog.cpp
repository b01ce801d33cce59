#include "plugin/support/vbaspostgrescatalog.h"

#include "plugin/support/vbasdatabase.h"

#include <qgsexception.h>

#include <QObject>

namespace
{

QString literal( const QString &text )
{
  return '\'' + QString( text ).replace( '\'', QLatin1String( "''" ) ) + '\'';
}

QString identifier( const QString &name )
{
  return '"' + QString( name ).replace( '"', QLatin1String( "\"\"" ) ) + '"';
}

QStringList column( QgsAbstractDatabaseProviderConnection &db, const QString &sql )
{
  QStringList values;
  for ( const QVariantList &row : db.executeSql( sql ) )
    values << ( row.isEmpty() || row.first().isNull() ? QString() : row.first().toString() );
  return values;
}

//! Every relation reading oid reads: the relations its rules (views) use and the children it scans.
const char *kReads = R"(WITH RECURSIVE r(oid) AS (SELECT %1::oid UNION
  SELECT n.oid FROM r, LATERAL (
    SELECT d.refobjid AS oid FROM pg_rewrite w JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid AND d.refclassid = 'pg_class'::regclass
      WHERE w.ev_class = r.oid AND d.refobjid <> r.oid
    UNION ALL SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = r.oid) n)
SELECT 'oid:' || oid FROM r)";

//! What breaks or blocks when oid is replaced: views over it, foreign keys to it, tables inheriting it.
const char *kDependents = R"(SELECT DISTINCT 'view ' || w.ev_class::regclass::text FROM pg_depend d JOIN pg_rewrite w ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
  WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = %1 AND w.ev_class <> %1
UNION SELECT 'foreign key ' || conname || ' of ' || conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' AND confrelid = %1 AND conrelid <> %1
UNION SELECT 'child table ' || inhrelid::regclass::text FROM pg_inherits WHERE inhparent = %1)";

} // namespace

VbasPostgresCatalog::Table VbasPostgresCatalog::table( const QString &uri, const QString &schema, const QString &table )
{
  Table result;
  const QString name = schema.isEmpty() ? identifier( table ) : identifier( schema ) + '.' + identifier( table );
  result.key = QStringLiteral( "name:" ) + ( schema.isEmpty() ? QString() : schema + '.' ) + table;
  try
  {
    const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = VbasDatabase::connection( QStringLiteral( "postgres" ), uri );
    if ( !db )
      return result;
    const QStringList server
      = column( *db, QStringLiteral( "SELECT pg_postmaster_start_time()::text || ' ' || d.oid || ' ' || current_schema() FROM pg_database d WHERE d.datname = current_database()" ) );
    if ( server.isEmpty() )
      return result;
    result.database = QStringLiteral( "postgres " ) + server.first().section( ' ', 0, -2 );
    if ( schema.isEmpty() ) // a new table goes to the first schema of the search path
      result.key = QStringLiteral( "name:%1.%2" ).arg( server.first().section( ' ', -1 ), table );
    const QStringList oid = column( *db, QStringLiteral( "SELECT to_regclass(%1)::oid" ).arg( literal( name ) ) );
    if ( oid.isEmpty() || oid.first().isEmpty() )
      return result;
    result.key = QStringLiteral( "oid:" ) + oid.first();
    const QStringList reads = column( *db, QString::fromLatin1( kReads ).arg( oid.first() ) );
    result.reads = QSet<QString>( reads.begin(), reads.end() );
    for ( const QString &dependent : column( *db, QString::fromLatin1( kDependents ).arg( oid.first() ) ) )
      result.dependents << QObject::tr( "the %1" ).arg( dependent );
  }
  catch ( const QgsProviderConnectionException &e )
  {
    // Fail closed: a table whose readers or dependents the server did not tell is taken to read every
    // table, and to have dependents (so it is never replaced); an unknown server leaves database empty.
    result.reads = { QStringLiteral( "*" ) };
    result.dependents << QObject::tr( "what the server could not tell (%1)" ).arg( e.what() );
  }
  return result;
}
