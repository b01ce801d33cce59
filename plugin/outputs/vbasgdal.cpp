#include "plugin/outputs/vbasgdal.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgsexception.h>

#include <QFile>

#include <cpl_minixml.h>
#include <cpl_string.h>
#include <cpl_vsi.h>
#include <gdal.h>
#include <ogr_api.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace
{

//! The layer layerName of dataset, or its only layer.
OGRLayerH layerOf( GDALDatasetH dataset, const QString &layerName )
{
  OGRLayerH layer = GDALDatasetGetLayerByName( dataset, layerName.toUtf8().constData() );
  return !layer && GDALDatasetGetLayerCount( dataset ) == 1 ? GDALDatasetGetLayer( dataset, 0 ) : layer;
}

struct Dataset
{
    explicit Dataset( const QString &path, bool update )
      : handle( GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | ( update ? GDAL_OF_UPDATE : GDAL_OF_READONLY ), nullptr, nullptr, nullptr ) )
    {
    }
    ~Dataset()
    {
      if ( handle )
        GDALClose( handle );
    }
    Dataset( const Dataset & ) = delete;
    Dataset &operator=( const Dataset & ) = delete;
    GDALDatasetH handle;
};

QString quoted( const QString &name )
{
  return '"' + QString( name ).replace( '"', QLatin1String( "\"\"" ) ) + '"';
}

//! Runs a statement that returns no rows; false on a GDAL error.
bool execute( GDALDatasetH dataset, const QString &sql )
{
  CPLErrorReset();
  OGRLayerH result = GDALDatasetExecuteSQL( dataset, sql.toUtf8().constData(), nullptr, nullptr );
  if ( result )
    GDALDatasetReleaseResultSet( dataset, result );
  return CPLGetLastErrorType() < CE_Failure;
}

} // namespace

long long VbasGdal::countFeatures( const QString &path, const QString &layerName )
{
  return readBack( path, layerName ).features;
}

QString VbasGdal::layerName( const QString &path, const QString &layerName )
{
  const VbasGdal::Errors quiet;
  const Dataset dataset( path, false );
  OGRLayerH layer = dataset.handle ? layerOf( dataset.handle, layerName ) : nullptr;
  return layer ? QString::fromUtf8( OGR_L_GetName( layer ) ) : QString();
}

VbasGdal::ReadBack VbasGdal::readBack( const QString &path, const QString &layerName )
{
  const VbasGdal::Errors quiet;
  const Dataset dataset( path, false );
  OGRLayerH layer = dataset.handle ? layerOf( dataset.handle, layerName ) : nullptr;
  ReadBack result;
  if ( !layer )
    return result;
  OGRFeatureDefnH definition = OGR_L_GetLayerDefn( layer );
  for ( int i = 0; i < OGR_FD_GetFieldCount( definition ); ++i )
    result.fields << QString::fromUtf8( OGR_Fld_GetNameRef( OGR_FD_GetFieldDefn( definition, i ) ) );
  result.features = OGR_L_GetFeatureCount( layer, TRUE );
  result.geometry = OGR_L_GetGeomType( layer ) != wkbNone;
  return result;
}

QString VbasGdal::fidColumn( const QString &driver, const QStringList &layerOptions )
{
  for ( const QString &option : layerOptions )
    if ( option.startsWith( QLatin1String( "FID=" ), Qt::CaseInsensitive ) )
      return option.mid( 4 );
  GDALDriverH handle = GDALGetDriverByName( driver.toUtf8().constData() );
  const char *list = handle ? GDALGetMetadataItem( handle, GDAL_DS_LAYER_CREATIONOPTIONLIST, nullptr ) : nullptr;
  CPLXMLNode *root = list ? CPLParseXMLString( list ) : nullptr;
  QString column;
  for ( CPLXMLNode *option = root ? root->psChild : nullptr; option; option = option->psNext )
    if ( option->eType == CXT_Element && EQUAL( CPLGetXMLValue( option, "name", "" ), "FID" ) )
      column = QString::fromUtf8( CPLGetXMLValue( option, "default", "" ) );
  CPLDestroyXMLNode( root );
  return column;
}

QStringList VbasGdal::filesIn( const QString &folder )
{
  QStringList names;
  char **entries = VSIReadDir( folder.toUtf8().constData() );
  for ( char **entry = entries; entry && *entry; ++entry )
    names << QString::fromUtf8( *entry );
  CSLDestroy( entries );
  return names;
}

QStringList VbasGdal::tableNames( const QString &path )
{
  const Errors quiet;
  const Dataset dataset( path, false );
  QStringList names;
  for ( int i = 0; dataset.handle && i < GDALDatasetGetLayerCount( dataset.handle ); ++i )
    names << QString::fromUtf8( OGR_L_GetName( GDALDatasetGetLayer( dataset.handle, i ) ) );
  return names;
}

bool VbasGdal::dropTable( const QString &path, const QString &table )
{
  const Errors quiet;
  const Dataset dataset( path, true );
  return dataset.handle && execute( dataset.handle, QStringLiteral( "DROP TABLE %1" ).arg( quoted( table ) ) );
}

QString VbasGdal::renameTables( const QString &path, const QStringList &drop, const QList<QPair<QString, QString>> &renames )
{
  const Errors errors;
  const Dataset dataset( path, true );
  bool done = dataset.handle && GDALDatasetStartTransaction( dataset.handle, FALSE ) == OGRERR_NONE;
  for ( const QString &table : drop )
    done = done && execute( dataset.handle, QStringLiteral( "DROP TABLE %1" ).arg( quoted( table ) ) );
  for ( const QPair<QString, QString> &rename : renames )
    done = done && execute( dataset.handle, QStringLiteral( "ALTER TABLE %1 RENAME TO %2" ).arg( quoted( rename.first ), quoted( rename.second ) ) );
  if ( done && GDALDatasetCommitTransaction( dataset.handle ) == OGRERR_NONE )
    return QString();
  if ( dataset.handle )
    GDALDatasetRollbackTransaction( dataset.handle );
  return errors.failures().isEmpty() ? QObject::tr( "GDAL could not open %1 for writing." ).arg( path ) : errors.failures();
}

void VbasGdal::syncFile( const QString &path )
{
  const int fd = ::open( QFile::encodeName( path ).constData(), O_RDONLY );
  if ( fd < 0 )
    return;
  const int result = ::fsync( fd );
  ::close( fd );
  if ( result != 0 )
    throw QgsProcessingException( QObject::tr( "Could not write %1 to the disk: %2" ).arg( path, QString::fromLocal8Bit( std::strerror( errno ) ) ) );
}

QgsVectorFileWriter::SaveVectorOptions VbasGdal::saveOptions( const QString &driver, const QString &layerName, const QVariantMap &createOptions )
{
  QgsVectorFileWriter::SaveVectorOptions options;
  options.driverName = driver;
  options.layerName = layerName;
  options.fileEncoding = createOptions.value( QStringLiteral( "fileEncoding" ), QStringLiteral( "UTF-8" ) ).toString();
  options.datasourceOptions = QgsVectorFileWriter::defaultDatasetOptions( driver );
  options.layerOptions = QgsVectorFileWriter::defaultLayerOptions( driver );
  // A CSV file gets its .csvt beside it, so that QGIS reads its numbers back as numbers; the probe of
  // the destination lists it, and the output set moves it into place (and back) with the .csv.
  options.layerOptions.replaceInStrings( QStringLiteral( "CREATE_CSVT=NO" ), QStringLiteral( "CREATE_CSVT=YES" ) );
  options.symbologyExport = vbasqgis::NoSymbology;
  options.actionOnExistingFile = QgsVectorFileWriter::CreateOrOverwriteFile;
  return options;
}
