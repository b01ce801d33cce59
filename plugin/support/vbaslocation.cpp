#include "support/vbaslocation.h"

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

QString absoluteInCanonicalFolder( const QString &path )
{
  const QFileInfo file( path );
  const QString folder = QFileInfo( file.absolutePath() ).canonicalFilePath();
  return ( folder.isEmpty() ? file.absolutePath() : folder ) + '/' + file.fileName();
}

} // namespace

VbasLocation VbasLocation::of( const QString &what, const QgsVectorLayer *layer )
{
  VbasLocation location;
  location.what = what;
  if ( !layer || layer->providerType() == QLatin1String( "memory" ) )
    return location;
  const QVariantMap parts = QgsProviderRegistry::instance()->decodeUri( layer->providerType(), layer->source() );
  const QString path = parts.value( QStringLiteral( "path" ) ).toString();
  if ( !path.isEmpty() )
  {
    location.path = QFileInfo( path ).absoluteFilePath();
    location.table = parts.value( QStringLiteral( "layerName" ) ).toString();
    return location;
  }
  const QgsDataSourceUri uri( layer->source() );
  location.server = layer->providerType() + ' ' + uri.connectionInfo( false );
  location.table = uri.schema() + '.' + uri.table();
  return location;
}

bool VbasLocation::overwrites( const VbasLocation &other ) const
{
  if ( !server.isEmpty() )
    return server == other.server && table.compare( other.table, Qt::CaseInsensitive ) == 0;
  if ( path.isEmpty() || other.path.isEmpty() )
    return false;
  bool shared = false;
  for ( const QString &mine : datasetFiles( path ) )
    for ( const QString &theirs : datasetFiles( other.path ) )
      shared = shared || sameFile( mine, theirs );
  return shared && ( table.isEmpty() || other.table.isEmpty() || table.compare( other.table, Qt::CaseInsensitive ) == 0 );
}

QString VbasLocation::describe() const
{
  const QString where = server.isEmpty() ? path : server;
  if ( where.isEmpty() )
    return what;
  return table.isEmpty() ? QStringLiteral( "%1 (%2)" ).arg( what, where ) : QObject::tr( "%1 (%2, table %3)" ).arg( what, where, table );
}

bool VbasLocation::sameFile( const QString &a, const QString &b )
{
  struct stat sa {}, sb {};
  if ( ::stat( QFile::encodeName( a ).constData(), &sa ) == 0 && ::stat( QFile::encodeName( b ).constData(), &sb ) == 0 )
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return absoluteInCanonicalFolder( a ) == absoluteInCanonicalFolder( b );
}
