#include "plugin/support/vbassqlitecatalog.h"

#include <qgsproviderregistry.h>
#include <qgsvectorlayer.h>

#include <QFile>
#include <QObject>
#include <QRegularExpression>

#include <gdal.h>
#include <ogr_api.h>
#include <sqlite3.h>

#include <memory>

namespace
{

struct Close
{
    void operator()( sqlite3 *db ) const { sqlite3_close_v2( db ); }
};
using Database = std::unique_ptr<sqlite3, Close>;

Database open( const QString &path )
{
  sqlite3 *db = nullptr;
  if ( sqlite3_open_v2( QFile::encodeName( path ).constData(), &db, SQLITE_OPEN_READONLY, nullptr ) != SQLITE_OK )
  {
    sqlite3_close_v2( db );
    return nullptr;
  }
  return Database( db );
}

//! The rows of a query of one or two text columns.
QList<QStringList> rows( sqlite3 *db, const QString &sql )
{
  QList<QStringList> result;
  sqlite3_stmt *statement = nullptr;
  if ( sqlite3_prepare_v2( db, sql.toUtf8().constData(), -1, &statement, nullptr ) != SQLITE_OK )
    return result;
  while ( sqlite3_step( statement ) == SQLITE_ROW )
  {
    QStringList row;
    for ( int i = 0; i < sqlite3_column_count( statement ); ++i )
      row << QString::fromUtf8( reinterpret_cast<const char *>( sqlite3_column_text( statement, i ) ) );
    result << row;
  }
  sqlite3_finalize( statement );
  return result;
}

QString quoted( const QString &name )
{
  return '"' + QString( name ).replace( '"', QLatin1String( "\"\"" ) ) + '"';
}

//! SQLite's authorizer reports every table a statement reads, through views too.
int collectRead( void *tables, int action, const char *table, const char *, const char *, const char * )
{
  if ( action == SQLITE_READ && table )
    static_cast<QSet<QString> *>( tables )->insert( QString::fromUtf8( table ).toLower() );
  return SQLITE_OK;
}

std::optional<QSet<QString>> readsOf( sqlite3 *db, const QString &table )
{
  QSet<QString> tables { table.toLower() };
  sqlite3_set_authorizer( db, &collectRead, &tables );
  sqlite3_stmt *statement = nullptr;
  const int result = sqlite3_prepare_v2( db, QStringLiteral( "SELECT * FROM %1" ).arg( quoted( table ) ).toUtf8().constData(), -1, &statement, nullptr );
  sqlite3_finalize( statement );
  sqlite3_set_authorizer( db, nullptr, nullptr );
  if ( result != SQLITE_OK )
    return std::nullopt; // a view calling functions of SpatiaLite or GDAL that plain SQLite lacks
  return tables;
}

bool mentions( const QString &sql, const QString &table )
{
  return QRegularExpression( QStringLiteral( "(^|[^\\w$])[\"'`\\[]?%1[\"'`\\]]?($|[^\\w$])" ).arg( QRegularExpression::escape( table ) ), QRegularExpression::CaseInsensitiveOption )
    .match( sql )
    .hasMatch();
}

//! GDAL's own triggers on a table (its spatial index, its feature count) go with it.
bool isOwnTrigger( const QString &trigger, const QString &table )
{
  const QString name = trigger.toLower();
  return name.startsWith( QStringLiteral( "rtree_%1_" ).arg( table.toLower() ) ) || name.startsWith( QLatin1String( "trigger_insert_feature_count_" ) )
         || name.startsWith( QLatin1String( "trigger_delete_feature_count_" ) );
}

} // namespace

bool VbasSqliteCatalog::isDatabase( const QString &path )
{
  const Database db = open( path );
  return db && sqlite3_exec( db.get(), "SELECT 1 FROM sqlite_master LIMIT 1", nullptr, nullptr, nullptr ) == SQLITE_OK;
}

std::optional<QSet<QString>> VbasSqliteCatalog::reads( const QString &path, const QString &table )
{
  const Database db = open( path );
  return db ? readsOf( db.get(), table ) : std::nullopt;
}

QStringList VbasSqliteCatalog::dependents( const QString &path, const QString &table )
{
  const Database db = open( path );
  if ( !db )
    return { QObject::tr( "what SQLite could not tell (the file does not open)" ) }; // fail closed: never replaced blind
  QStringList found;
  const QString lower = table.toLower();
  for ( const QStringList &object : rows( db.get(), QStringLiteral( "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('view', 'trigger', 'table')" ) ) )
  {
    const QString &type = object[0], &name = object[1], &on = object[2], &sql = object[3];
    if ( name.toLower() == lower )
      continue;
    if ( type == QLatin1String( "view" ) )
    {
      const std::optional<QSet<QString>> read = readsOf( db.get(), name );
      if ( read ? read->contains( lower ) : mentions( sql, table ) )
        found << QObject::tr( "the view %1" ).arg( name );
    }
    else if ( type == QLatin1String( "trigger" ) )
    {
      if ( on.toLower() == lower ? !isOwnTrigger( name, table ) : mentions( sql, table ) )
        found << QObject::tr( "the trigger %1" ).arg( name );
    }
    else if ( !rows( db.get(), QStringLiteral( "SELECT 1 FROM pragma_foreign_key_list(%1) WHERE lower(\"table\") = %2" )
                                 .arg( quoted( name ), '\'' + QString( lower ).replace( '\'', QLatin1String( "''" ) ) + '\'' ) )
                 .isEmpty() )
      found << QObject::tr( "a foreign key of the table %1" ).arg( name );
  }
  return found;
}

std::optional<VbasSqliteCatalog::Table> VbasSqliteCatalog::ogrTable( const QgsVectorLayer *layer )
{
  if ( !layer || layer->providerType() != QLatin1String( "ogr" ) || ( layer->storageType() != QLatin1String( "GPKG" ) && layer->storageType() != QLatin1String( "SQLite" ) ) )
    return std::nullopt;
  const QVariantMap parts = QgsProviderRegistry::instance()->decodeUri( layer->providerType(), layer->source() );
  Table table { parts.value( QStringLiteral( "path" ) ).toString(), parts.value( QStringLiteral( "layerName" ) ).toString(), QString() };
  const std::unique_ptr<void, decltype( &GDALClose )> dataset( GDALOpenEx( table.path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr ), &GDALClose );
  OGRLayerH found = !dataset               ? nullptr
                    : table.name.isEmpty() ? GDALDatasetGetLayer( dataset.get(), parts.value( QStringLiteral( "layerId" ), 0 ).toInt() )
                                           : GDALDatasetGetLayerByName( dataset.get(), table.name.toUtf8().constData() );
  if ( !found )
    return std::nullopt;
  table.name = QString::fromUtf8( OGR_L_GetName( found ) );
  table.fid = QString::fromUtf8( OGR_L_GetFIDColumn( found ) );
  return table;
}
