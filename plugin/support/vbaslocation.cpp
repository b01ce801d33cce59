#include "plugin/support/vbaslocation.h"

#include "plugin/support/vbaspostgrescatalog.h"
#include "plugin/support/vbassecrets.h"
#include "plugin/support/vbassqlitecatalog.h"

#include <qgsdatasourceuri.h>
#include <qgsproviderregistry.h>
#include <qgsvectorlayer.h>

#include <QDir>
#include <QFileInfo>

#include <sys/stat.h>

namespace
{

//! The files of a shapefile are one dataset: writing any of them changes the others.
QStringList datasetFiles( const QString &path )
{
  static const QStringList kShapefileParts = { "shp", "shx", "dbf", "prj", "cpg", "qpj", "qix", "sbn", "sbx" };
  const QFileInfo file( path );
  if ( !kShapefileParts.contains( file.suffix().toLower() ) )
    return { path };
  QStringList files;
  for ( const QString &part : kShapefileParts )
    files << file.dir().filePath( file.completeBaseName() + '.' + part );
  return files;
}

//! A file by its device and inode; a file not yet made by its absolute path, in its folder's canonical form.
QString fileKey( const QString &path )
{
  struct stat st
  {
  };
  if ( ::stat( QFile::encodeName( path ).constData(), &st ) == 0 )
    return QStringLiteral( "%1:%2" ).arg( st.st_dev ).arg( st.st_ino );
  const QFileInfo file( path );
  const QString folder = QFileInfo( file.absolutePath() ).canonicalFilePath();
  return QStringLiteral( "path:" ) + ( folder.isEmpty() ? file.absolutePath() : folder ) + '/' + file.fileName();
}

QStringList fileKeys( const QStringList &paths )
{
  QStringList keys;
  for ( const QString &path : paths )
    for ( const QString &file : datasetFiles( path ) )
      keys << fileKey( file );
  return keys;
}

} // namespace

VbasLocation VbasLocation::of( const QString &what, const QgsVectorLayer *layer )
{
  VbasLocation location { what, QString(), {}, QString(), {}, QString(), {} };
  if ( !layer || layer->providerType() == QLatin1String( "memory" ) )
    return location;
  if ( layer->providerType() == QLatin1String( "postgres" ) )
  {
    const QgsDataSourceUri uri( layer->source() );
    const VbasPostgresCatalog::Table table = VbasPostgresCatalog::table( layer->source(), uri.schema(), uri.table() );
    location.where = QStringLiteral( "%1, table %2" ).arg( uri.database(), uri.schema().isEmpty() ? uri.table() : uri.schema() + '.' + uri.table() );
    location.database = table.database.isEmpty() ? QStringLiteral( "postgres ?" ) : table.database;
    location.reads = table.key.startsWith( QLatin1String( "oid:" ) ) && !table.reads.isEmpty() ? table.reads : QSet<QString> { QStringLiteral( "*" ) }; // a query: it may read any table
    return location;
  }
  const QVariantMap parts = QgsProviderRegistry::instance()->decodeUri( layer->providerType(), layer->source() );
  const QString path = QFileInfo( parts.value( QStringLiteral( "path" ) ).toString() ).absoluteFilePath();
  const QString table = parts.value( QStringLiteral( "layerName" ) ).toString();
  if ( path.isEmpty() )
    return location;
  location.where = path;
  location.files = fileKeys( { path } );
  if ( table.isEmpty() || !VbasSqliteCatalog::isDatabase( path ) )
    return location; // the whole file
  location.where += QObject::tr( ", table %1" ).arg( table );
  location.database = QStringLiteral( "sqlite " ) + location.files.first();
  location.reads = VbasSqliteCatalog::reads( path, table ).value_or( QSet<QString> { QStringLiteral( "*" ) } );
  return location;
}

VbasLocation VbasLocation::ofFiles( const QString &what, const QStringList &paths )
{
  return { what, paths.value( 0 ), fileKeys( paths ), QString(), {}, QString(), {} };
}

VbasLocation VbasLocation::ofSqliteTable( const QString &what, const QString &path, const QString &table )
{
  VbasLocation location { what, QObject::tr( "%1, table %2" ).arg( path, table ), { fileKey( path ) }, QString(), {}, table.toLower(), {} };
  location.database = QStringLiteral( "sqlite " ) + location.files.first();
  if ( QFileInfo::exists( path ) )
    location.dependents = VbasSqliteCatalog::dependents( path, table );
  return location;
}

VbasLocation VbasLocation::ofPostgresTable( const QString &what, const QString &uri, const QString &schema, const QString &table )
{
  const VbasPostgresCatalog::Table found = VbasPostgresCatalog::table( uri, schema, table );
  const QString name = schema.isEmpty() ? table : schema + '.' + table;
  return { what, QStringLiteral( "%1, table %2" ).arg( QgsDataSourceUri( uri ).database(), name ), {}, found.database, {}, found.key, found.dependents };
}

bool VbasLocation::overwrites( const VbasLocation &other ) const
{
  bool sharesFile = false;
  for ( const QString &file : files )
    sharesFile = sharesFile || other.files.contains( file );
  if ( database.isEmpty() || other.database.isEmpty() )
    return sharesFile; // one of them is a whole file: its tables are gone with it
  return database == other.database && ( other.reads.contains( table ) || other.reads.contains( QStringLiteral( "*" ) ) || other.table == table );
}

QString VbasLocation::describe() const
{
  return where.isEmpty() ? what : QStringLiteral( "%1 (%2)" ).arg( what, VbasSecrets::withoutPasswords( where ) ); // an OGR source may be a connection string (PG:...)
}
