#include "plugin/inputs/vbasunchangedfiles.h"

#include "plugin/support/vbassqlitecatalog.h"

#include <qgsexception.h>
#include <qgsproviderregistry.h>
#include <qgsvectorlayer.h>

#include <QDir>
#include <QFileInfo>

VbasUnchangedFiles VbasUnchangedFiles::of( const QgsVectorLayer *layer )
{
  VbasUnchangedFiles files;
  if ( !layer || layer->providerType() == QLatin1String( "memory" ) || layer->providerType() == QLatin1String( "postgres" ) || VbasSqliteCatalog::ogrTable( layer ) )
    return files; // a snapshot: a temporary layer's features are copied, a database reads in one transaction
  const QFileInfo path( QgsProviderRegistry::instance()->decodeUri( layer->providerType(), layer->source() ).value( QStringLiteral( "path" ) ).toString() );
  if ( !path.isFile() )
    return files;
  for ( const QFileInfo &file : path.dir().entryInfoList( { path.completeBaseName() + QStringLiteral( ".*" ) }, QDir::Files | QDir::Hidden ) )
    files.mPaths << file.absoluteFilePath();
  return files;
}

void VbasUnchangedFiles::checkUnchanged( const QVector<Stamp> &before ) const
{
  const QVector<Stamp> after = stamps();
  for ( int i = 0; i < after.size(); ++i )
    if ( !( after[i] == before[i] ) )
      throw QgsProcessingException( QObject::tr( "The records file %1 changed while it was read: the rows read may mix those before and after the edit. Nothing was "
                                                 "written. Run again when nobody edits it, or save the records as a GeoPackage, which is read as one snapshot." )
                                      .arg( after[i].path ) );
}

QVector<VbasUnchangedFiles::Stamp> VbasUnchangedFiles::stamps() const
{
  QVector<Stamp> stamps;
  for ( const QString &path : mPaths )
  {
    const QFileInfo file( path );
    stamps << Stamp { path, file.exists() ? file.size() : -1, file.fileTime( QFileDevice::FileModificationTime ) };
  }
  return stamps;
}
