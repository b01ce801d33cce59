// One output of a run, written under a temporary name and moved into place: a temporary layer, a
// file (or several, for a shapefile) beside its destination, a staging table in the destination's
// database (renamed over the destination in one step), or a document written whole.
#include "plugin/outputs/vbasoutput.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/support/vbasdatabase.h"
#include "plugin/support/vbasfilekind.h"
#include "plugin/outputs/vbasgdal.h"
#include "plugin/outputs/vbasogrsink.h"
#include "plugin/outputs/vbaspgcopysink.h"
#include "plugin/outputs/vbastemporaries.h"

#include <qgsdatasourceuri.h>
#include <qgsexception.h>
#include <qgsmemoryproviderutils.h>
#include <qgsprocessingcontext.h>
#include <qgssqliteutils.h>
#include <qgsvectorlayer.h>
#include <qgsvectorlayerexporter.h>

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <cpl_vsi.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace
{

QString absolute( const QString &path )
{
  return QFileInfo( path ).absoluteFilePath();
}

//! A value of field's type, for the test row of a format.
QVariant testValue( const QgsField &field )
{
  const QDate date( 2000, 1, 1 );
  switch ( field.type() )
  {
    case vbasqgis::Field::String:
      return QStringLiteral( "x" );
    case vbasqgis::Field::Bool:
      return true;
    case vbasqgis::Field::Date:
      return date;
    case vbasqgis::Field::Time:
      return QTime( 12, 0 );
    case vbasqgis::Field::DateTime:
      return QDateTime( date, QTime( 12, 0 ) );
    case vbasqgis::Field::ByteArray:
      return QByteArray( "x" );
    case vbasqgis::Field::StringList:
      return QStringList { QStringLiteral( "x" ) };
    case vbasqgis::Field::Map:
      return QVariantMap { { QStringLiteral( "x" ), 1 } };
    default:
      break;
  }
  QVariant one( 1 ); // the numbers, and a list of them
  field.convertCompatible( one );
  return one;
}

//! A row with a value in every field and, unless the output is a table, a geometry of its type.
QgsFeature testRow( const VbasOutputSchema &schema )
{
  QgsFeature row( schema.fields );
  for ( int i = 0; i < schema.fields.count(); ++i )
    row.setAttribute( i, testValue( schema.fields.at( i ) ) );
  if ( schema.wkbType == vbasqgis::WkbType::NoGeometry )
    return row;
  const vbasqgis::GeometryType kind = QgsWkbTypes::geometryType( schema.wkbType );
  QgsGeometry geometry = QgsGeometry::fromWkt( kind == vbasqgis::PointGeometry     ? QStringLiteral( "Point (0 0)" )
                                               : kind == vbasqgis::PolygonGeometry ? QStringLiteral( "Polygon ((0 0, 1 0, 1 1, 0 0))" )
                                                                                   : QStringLiteral( "LineString (0 0, 1 1)" ) );
  if ( QgsWkbTypes::isMultiType( schema.wkbType ) )
    geometry.convertToMultiType();
  if ( QgsWkbTypes::hasZ( schema.wkbType ) )
    geometry.get()->addZValue( 0 );
  if ( QgsWkbTypes::hasM( schema.wkbType ) )
    geometry.get()->addMValue( 0 );
  row.setGeometry( geometry );
  return row;
}

//! The file a driver wrote when QGIS's writer asked for written: a shapefile without geometry is its .dbf alone.
QString mainFile( const QString &written, const QStringList &entries )
{
  const QString dbf = QFileInfo( written ).completeBaseName() + QStringLiteral( ".dbf" );
  return entries.contains( written ) || !entries.contains( dbf ) ? written : dbf;
}

//! The formats to suggest instead of driver's.
QString alternatives( const QString &driver )
{
  QStringList formats;
  if ( driver != QLatin1String( "GPKG" ) )
    formats << QObject::tr( "GeoPackage (.gpkg)" );
  if ( driver != QLatin1String( "CSV" ) )
    formats << QObject::tr( "CSV (.csv)" );
  return formats.join( QObject::tr( " or " ) );
}

} // namespace

VbasOutput::VbasOutput( const VbasOutputSchema &schema, const QString &destination, QgsProject *project, const QString &layerName, const QVariantMap &createOptions )
  : mSchema( schema )
  , mProject( project )
  , mLayerName( layerName )
  , mCreateOptions( createOptions )
  , mToken( QString::number( QRandomGenerator::system()->generate64(), 16 ) )
{
  static const QRegularExpression kProviderUri( QStringLiteral( "^(\\w+)://(.+)$" ) );
  static const QRegularExpression kProviderColon( QStringLiteral( "^(\\w{3,}):(.*)$" ) );
  if ( schema.document )
  {
    mKind = Kind::Document;
    mPath = absolute( destination );
    return;
  }
  if ( destination.startsWith( QLatin1String( "memory:" ) ) )
  {
    mKind = Kind::Memory;
    mPath = destination.mid( 7 ).isEmpty() ? schema.name : destination.mid( 7 );
    return;
  }
  QRegularExpressionMatch match = kProviderUri.match( destination );
  if ( !match.hasMatch() )
    match = kProviderColon.match( destination );
  const QString provider = match.hasMatch() ? match.captured( 1 ) : QString();
  const QString uri = match.hasMatch() ? match.captured( 2 ) : destination;
  const QgsDataSourceUri source( uri );
  if ( provider == QLatin1String( "postgres" ) || provider == QLatin1String( "postgis" ) )
  {
    mKind = Kind::Table;
    mProvider = QStringLiteral( "postgres" );
    mPath = uri;
    mSchemaName = source.schema();
    mTable = source.table();
    return;
  }
  if ( !provider.isEmpty() && provider != QLatin1String( "ogr" ) )
    throw QgsProcessingException( QObject::tr( "%1: destinations of the '%2' provider are not supported; write to a file, an ogr: table or a postgres: table." ).arg( schema.name, provider ) );
  if ( provider == QLatin1String( "ogr" ) && !source.database().isEmpty() && !source.table().isEmpty() )
  {
    mKind = Kind::Table;
    mProvider = QStringLiteral( "ogr" );
    mPath = absolute( source.database() );
    mTable = source.table();
    mDriver = QgsVectorFileWriter::driverForExtension( QFileInfo( mPath ).suffix() );
    return;
  }
  mPath = absolute( provider.isEmpty() ? destination : ( source.database().isEmpty() ? uri : source.database() ) );
  mDriver = QgsVectorFileWriter::driverForExtension( QFileInfo( mPath ).suffix() );
  if ( mDriver.isEmpty() )
  {
    mDriver = QStringLiteral( "GPKG" ); // as QGIS does for a name without a known extension
    mPath += QLatin1String( ".gpkg" );
  }
}

VbasOutput::~VbasOutput()
{
  discard();
}

QString VbasOutput::describe() const
{
  switch ( mKind )
  {
    case Kind::Memory:
      return QObject::tr( "%1 (temporary layer)" ).arg( mSchema.name );
    case Kind::File:
    case Kind::Document:
      return QStringLiteral( "%1 (%2)" ).arg( mSchema.name, mPath );
    case Kind::Table:
      return QObject::tr( "%1 (%2, table %3)" ).arg( mSchema.name, mProvider == QLatin1String( "ogr" ) ? mPath : mProvider, mTable );
  }
  return mSchema.name;
}

void VbasOutput::checkFormat( const QString &driver, const QString &file, const QString &layerName )
{
  const QgsVectorFileWriter::SaveVectorOptions options = VbasGdal::saveOptions( driver, layerName, mCreateOptions );
  refuseFidField( driver, VbasGdal::fidColumn( driver, options.layerOptions ) );
  // A test row written and read back: a format without a schema of its own (GeoJSON, XLSX, ODS) shows
  // its field names only in its rows, and a format may drop rows it cannot hold.
  const QString folder = QStringLiteral( "/vsimem/vbas-probe-%1" ).arg( mToken );
  QString written, writtenLayer, error;
  VSIMkdir( folder.toUtf8().constData(), 0700 ); // a driver writing one file (CSV) needs its folder to exist
  {
    const VbasGdal::Errors quiet;
    std::unique_ptr<QgsVectorFileWriter> probe( QgsVectorFileWriter::create( folder + '/' + file, mSchema.fields, mSchema.wkbType, mSchema.crs, QgsCoordinateTransformContext(), options,
                                                                             QgsFeatureSink::SinkFlags(), &written, &writtenLayer ) );
    QgsFeature row = testRow( mSchema );
    error = probe->hasError() ? probe->errorMessage() : !probe->addFeature( row ) ? probe->lastError() : QString();
  }
  const QStringList entries = VbasGdal::filesIn( folder );
  const QString main = mainFile( QFileInfo( written ).fileName(), entries );
  const VbasGdal::ReadBack back = VbasGdal::readBack( folder + '/' + main, writtenLayer.isEmpty() ? layerName : writtenLayer );
  VSIRmdirRecursive( folder.toUtf8().constData() );
  if ( !error.isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: the %2 format cannot hold this output: %3" ).arg( describe(), driver, error ) );
  placeFiles( driver, file, main, entries );
  if ( back.features != 1 )
    throw QgsProcessingException( QObject::tr( "%1: the %2 format does not give the rows of this output back as written%3: a test row written to it reads back as %4. Choose another "
                                               "format, such as %5." )
                                    .arg( describe(), driver, back.features == 0 && mSchema.wkbType == vbasqgis::WkbType::NoGeometry ? QObject::tr( " (it keeps no row without geometry)" ) : QString(),
                                          back.features < 0 ? QObject::tr( "an unreadable file" ) : QObject::tr( "%1 rows" ).arg( back.features ) /* never 1 */, alternatives( driver ) ) );
  if ( mSchema.wkbType != vbasqgis::WkbType::NoGeometry && !back.geometry )
    mWarning
      = QObject::tr( "%1: the %2 format keeps no geometry: the file holds the attributes only. Choose GeoPackage (.gpkg) or GeoJSON (.geojson) to keep the geometries." ).arg( describe(), driver );
  QStringList lost;
  for ( const QgsField &field : mSchema.fields )
    if ( !back.fields.contains( field.name() ) )
      lost << named( field.name() );
  if ( !lost.isEmpty() )
    throw QgsProcessingException(
      QObject::tr( "%1: the %2 format would rename or drop the field(s) %3 (a test row written to it reads back with %4). Choose a format that keeps every name, such as %5." )
        .arg( describe(), driver, lost.join( QStringLiteral( ", " ) ),
              back.fields.isEmpty() ? QObject::tr( "no field" ) : QObject::tr( "the fields %1" ).arg( back.fields.join( QStringLiteral( ", " ) ) ), alternatives( driver ) ) );
}

QString VbasOutput::named( const QString &field ) const
{
  const QString parameter = mSchema.namedBy.value( field );
  return parameter.isEmpty() ? field : QObject::tr( "%1 (named in %2)" ).arg( field, parameter );
}

void VbasOutput::refuseFidField( const QString &driver, const QString &fidColumn ) const
{
  for ( const QgsField &field : mSchema.fields )
  {
    if ( fidColumn.isEmpty() || field.name().compare( fidColumn, Qt::CaseInsensitive ) != 0 )
      continue;
    const QString remedy = mSchema.namedBy.value( field.name() ) == QLatin1String( "RELEASE_FIELDS" ) ? QObject::tr( "Leave it out of RELEASE_FIELDS, rename it in the input, or" )
                                                                                                      : QObject::tr( "Rename it in the input, or" );
    throw QgsProcessingException( QObject::tr( "%1: the %2 format keeps each feature's own id in a column named %3, so the field %4 cannot be written beside it. %5 choose a "
                                               "format without such a column, such as %6. Nothing was written." )
                                    .arg( describe(), driver, fidColumn, named( field.name() ), remedy, alternatives( driver ) ) );
  }
}

void VbasOutput::placeFiles( const QString &driver, const QString &file, const QString &written, const QStringList &entries )
{
  // QGIS's writer appends the driver's usual extension to a name it does not expect (out.json is
  // written as out.json.geojson, its sidecars as out.json.*): each is moved into place under the name
  // asked for (out.json; out.*).
  const bool appended = written.startsWith( file + '.' );
  const QString base = QFileInfo( file ).completeBaseName();
  QStringList names;
  for ( const QString &entry : entries )
    names << ( !appended ? entry : entry == written ? file : entry.startsWith( file + '.' ) ? base + entry.mid( file.size() ) : entry );
  if ( !entries.contains( written ) || ( written != file && !appended ) || QStringList( names ).removeDuplicates() > 0 )
    throw QgsProcessingException(
      QObject::tr( "%1: the %2 driver writes %3 for this output, not the file asked for%4. Choose a GeoPackage (.gpkg) or CSV (.csv) file." )
        .arg( describe(), driver, entries.join( QStringLiteral( ", " ) ),
              driver == QLatin1String( "ESRI Shapefile" ) && mSchema.wkbType == vbasqgis::WkbType::NoGeometry ? QObject::tr( " (a shapefile without geometry is its .dbf file alone)" ) : QString() ) );
  mFiles.clear();
  mWrittenAs.clear();
  const QDir folder = QFileInfo( mPath ).dir();
  for ( int i = 0; i < entries.size(); ++i )
  {
    mFiles << folder.filePath( names[i] );
    if ( names[i] != entries[i] )
      mWrittenAs.insert( mFiles.back(), entries[i] );
  }
}

VbasLocation VbasOutput::check()
{
  mLocks.clear();
  mLockedFolders.clear();
  lockTemporaries( QDir::tempPath() );
  switch ( mKind )
  {
    case Kind::Memory:
      return VbasLocation { mSchema.name, QString(), {}, QString(), {}, QString(), {} };
    case Kind::Table:
      return checkTable();
    case Kind::File:
    case Kind::Document:
      break;
  }
  checkFolder();
  if ( mKind == Kind::Document )
    mFiles = QStringList { mPath };
  else
    checkFormat( mDriver, QFileInfo( mPath ).fileName(), QFileInfo( mPath ).completeBaseName() );
  for ( const QString &path : mFiles )
    refuseSpecialFile( path );
  return VbasLocation::ofFiles( mSchema.name, mFiles );
}

VbasLocation VbasOutput::checkTable()
{
  if ( mTable.isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: the destination names no table." ).arg( describe() ) );
  if ( mProvider == QLatin1String( "postgres" ) )
  {
    const VbasLocation location = VbasLocation::ofPostgresTable( mSchema.name, mPath, mSchemaName, mTable );
    if ( location.database.isEmpty() )
      throw QgsProcessingException( QObject::tr( "%1: could not ask the database server which table this is." ).arg( describe() ) );
    checkPostgresRights();
    mLocks.push_back( VbasTemporaries::Lock::onDatabase( mPath, mToken ) );
    if ( !mLocks.back()->error().isEmpty() )
      throw QgsProcessingException( QObject::tr( "%1: could not lock this run's staging table on the server: %2" ).arg( describe(), mLocks.back()->error() ) );
    return location;
  }
  // GDAL's SQLite driver keeps its own layer list and geometry metadata, which renaming a table in a
  // transaction leaves stale: the reversible replace holds only for GeoPackage's driver.
  if ( mDriver != QLatin1String( "GPKG" ) )
    throw QgsProcessingException(
      QObject::tr( "%1: tables are written into GeoPackage (.gpkg) files or PostgreSQL, not into a file named like %2. Nothing was written." ).arg( describe(), QFileInfo( mPath ).fileName() ) );
  checkFolder();
  refuseSpecialFile( mPath );
  checkFormat( mDriver, QFileInfo( mPath ).fileName(), mTable );
  mFiles.clear();
  return VbasLocation::ofSqliteTable( mSchema.name, mPath, mTable );
}

void VbasOutput::checkPostgresRights() const
{
  const QString sql = QStringLiteral( "SELECT current_user, s.nspname, has_schema_privilege(s.oid, 'CREATE')::text, c.oid::regclass::text, "
                                      "CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' "
                                      "WHEN 'S' THEN 'sequence' ELSE 'relation of kind ' || c.relkind::text END, "
                                      "pg_has_role(c.relowner, 'USAGE')::text, pg_get_userbyid(c.relowner) "
                                      "FROM pg_namespace s LEFT JOIN pg_class c ON c.oid = to_regclass(%1) WHERE s.nspname = %2" )
                        .arg( QgsSqliteUtils::quotedString( quotedPostgres( mTable ) ), mSchemaName.isEmpty() ? QStringLiteral( "current_schema()" ) : QgsSqliteUtils::quotedString( mSchemaName ) );
  QList<QVariantList> rows;
  try
  {
    const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = VbasDatabase::connection( mProvider, mPath );
    if ( !db )
      throw QgsProviderConnectionException( QObject::tr( "no connection to the database" ) );
    rows = db->executeSql( sql );
  }
  catch ( const QgsProviderConnectionException &e )
  {
    throw QgsProcessingException( QObject::tr( "%1: could not ask the database server whether the table can be written: %2" ).arg( describe(), e.what() ) );
  }
  if ( rows.isEmpty() )
    throw QgsProcessingException( mSchemaName.isEmpty()
                                    ? QObject::tr( "%1: no schema of the connection's search path exists to create the table in. Name a schema. Nothing was read or written." ).arg( describe() )
                                    : QObject::tr( "%1: the schema %2 does not exist. Nothing was read or written." ).arg( describe(), mSchemaName ) );
  const QStringList row = QVariant( rows.first() ).toStringList();
  const QString &user = row[0], &schema = row[1], &table = row[3], &kind = row[4], &owner = row[6];
  if ( row[2] != QLatin1String( "true" ) )
    throw QgsProcessingException( QObject::tr( "%1: the user %2 may not create tables in the schema %3 (no CREATE privilege there), and every output is first written as a new table "
                                               "beside its destination. Ask the database's administrator for it (GRANT CREATE ON SCHEMA %3 TO %2), or choose a schema where %2 may "
                                               "create tables. Nothing was read or written." )
                                    .arg( describe(), user, schema ) );
  if ( !table.isEmpty() && kind != QLatin1String( "table" ) )
    throw QgsProcessingException( QObject::tr( "%1: %2 is a %3, and an output replaces only a table. Choose another name. Nothing was read or written." ).arg( describe(), table, kind ) );
  if ( !table.isEmpty() && row[5] != QLatin1String( "true" ) )
    throw QgsProcessingException( QObject::tr( "%1: the table %2 exists and belongs to %3, and only its owner may replace it; the user %4 is not. Choose another table name, or ask %3 "
                                               "to drop it or to grant you its role. Nothing was read or written." )
                                    .arg( describe(), table, owner, user ) );
}

void VbasOutput::checkFolderExists() const
{
  if ( !isFile() )
    return;
  const QFileInfo folder( QFileInfo( mPath ).absolutePath() );
  if ( !folder.isDir() )
    throw QgsProcessingException( QObject::tr( "%1: the folder %2 does not exist." ).arg( describe(), folder.filePath() ) );
}

void VbasOutput::checkFolder()
{
  checkFolderExists();
  const QFileInfo folder( QFileInfo( mPath ).absolutePath() );
  if ( QFileInfo( mPath ).isDir() )
    throw QgsProcessingException( QObject::tr( "%1: %2 is a folder." ).arg( describe(), mPath ) );
  lockTemporaries( folder.filePath() ); // also proves the folder writable
}

void VbasOutput::lockTemporaries( const QString &folder )
{
  const QString canonical = QFileInfo( folder ).canonicalFilePath();
  if ( mLockedFolders.contains( canonical ) )
    return;
  mLockedFolders << canonical;
  mLocks.push_back( VbasTemporaries::Lock::inFolder( folder, mToken ) );
  if ( !mLocks.back()->error().isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: cannot write in the folder %2: %3" ).arg( describe(), folder, mLocks.back()->error() ) );
}

void VbasOutput::refuseSpecialFile( const QString &path ) const
{
  const QString kind = vbasSpecialFileKind( path, VbasLinks::AsFile );
  if ( !kind.isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: %2 is %3, and an output replaces only regular files: choose a file name. Nothing was written." ).arg( describe(), path, kind ) );
}

QString VbasOutput::scratchPrefix() const
{
  const QString folder = isFile() ? QFileInfo( mPath ).absolutePath() : QDir::tempPath();
  return folder + '/' + VbasTemporaries::filePrefix( mToken ) + QStringLiteral( "scratch-" );
}

void VbasOutput::create( QgsProcessingContext &context )
{
  mState = State::Created;
  switch ( mKind )
  {
    case Kind::Memory:
      mMemoryLayer.reset( QgsMemoryProviderUtils::createMemoryLayer( mPath, mSchema.fields, mSchema.wkbType, mSchema.crs ) );
      if ( !mMemoryLayer || !mMemoryLayer->isValid() )
        throw QgsProcessingException( QObject::tr( "%1: could not create the temporary layer." ).arg( describe() ) );
      // A temporary layer has no map fields: it holds maps (and lists it cannot type) as JSON text.
      for ( int i = 0; i < mSchema.fields.count(); ++i )
        if ( mMemoryLayer->fields().at( i ).type() == vbasqgis::Field::String && mSchema.fields.at( i ).type() != vbasqgis::Field::String )
          mAsJson.append( i );
      return;
    case Kind::File:
      createFile( context );
      return;
    case Kind::Table:
      createTable( context );
      return;
    case Kind::Document:
      VbasInterrupt::registerFile( temporaryPath( mPath ) );
      return;
  }
}

QString VbasOutput::temporaryPath( const QString &path ) const
{
  return QFileInfo( path ).dir().filePath( VbasTemporaries::filePrefix( mToken ) + mWrittenAs.value( path, QFileInfo( path ).fileName() ) );
}

void VbasOutput::write( const QByteArray &content )
{
  QFile file( temporaryPath( mPath ) );
  if ( !file.open( QIODevice::WriteOnly | QIODevice::Truncate ) || file.write( content ) != content.size() || !file.flush() )
    throw QgsProcessingException( QObject::tr( "Could not write to %1: %2" ).arg( describe(), file.errorString() ) );
  file.close();
  VbasGdal::syncFile( file.fileName() );
  mState = State::Finished;
}

void VbasOutput::createFile( QgsProcessingContext &context )
{
  const QFileInfo file( mPath );
  const QString temporary = file.dir().filePath( VbasTemporaries::filePrefix( mToken ) + file.fileName() ); // the driver may add its extension (mWrittenAs)
  for ( const QString &path : mFiles )
    VbasInterrupt::registerFile( temporaryPath( path ) );
  QString written, layer;
  std::unique_ptr<QgsVectorFileWriter> writer( QgsVectorFileWriter::create( temporary, mSchema.fields, mSchema.wkbType, mSchema.crs, context.transformContext(),
                                                                            VbasGdal::saveOptions( mDriver, file.completeBaseName(), mCreateOptions ), QgsFeatureSink::SinkFlags(), &written,
                                                                            &layer ) );
  if ( writer->hasError() )
    throw QgsProcessingException( QObject::tr( "%1: could not create the file: %2" ).arg( describe(), writer->errorMessage() ) );
  mSink = std::move( writer );
  fillStraight( written, layer );
}

void VbasOutput::createTable( QgsProcessingContext &context )
{
  if ( mProvider == QLatin1String( "ogr" ) )
  {
    // Through GDAL's writer, not QGIS's provider: the provider would switch the file to WAL for good.
    mDatabaseExisted = QFileInfo::exists( mPath );
    QgsVectorFileWriter::SaveVectorOptions options = VbasGdal::saveOptions( mDriver, VbasTemporaries::stagingTable( mToken ), mCreateOptions );
    options.actionOnExistingFile = mDatabaseExisted ? QgsVectorFileWriter::CreateOrOverwriteLayer : QgsVectorFileWriter::CreateOrOverwriteFile;
    std::unique_ptr<QgsVectorFileWriter> writer( QgsVectorFileWriter::create( mPath, mSchema.fields, mSchema.wkbType, mSchema.crs, context.transformContext(), options ) );
    if ( writer->hasError() )
      throw QgsProcessingException( QObject::tr( "%1: could not create the staging table: %2" ).arg( describe(), writer->errorMessage() ) );
    mSink = std::move( writer );
    fillStraight( mPath, VbasTemporaries::stagingTable( mToken ) );
    return;
  }
  QVariantMap options = mCreateOptions;
  options.insert( QStringLiteral( "fileEncoding" ), mCreateOptions.value( QStringLiteral( "fileEncoding" ), QStringLiteral( "UTF-8" ) ) );
  QgsDataSourceUri staging( mPath );
  staging.setTable( VbasTemporaries::stagingTable( mToken ) );
  auto exporter = std::make_unique<QgsVectorLayerExporter>( staging.uri( false ), mProvider, mSchema.fields, mSchema.wkbType, mSchema.crs, true, options );
  if ( exporter->errorCode() != Qgis::VectorExportResult::Success )
    throw QgsProcessingException( QObject::tr( "%1: could not create the staging table: %2" ).arg( describe(), exporter->errorMessage() ) );
  mSink = std::move( exporter );
  if ( !VbasPgCopySink::writes( mSchema.fields, mSchema.wkbType ) )
    return;
  mSink.reset(); // QGIS's exporter made the table; closed with no rows
  mSink = std::make_unique<VbasPgCopySink>( staging.uri( false ), mSchema.fields );
}

void VbasOutput::fillStraight( const QString &path, const QString &layerName )
{
  if ( !VbasOgrSink::writes( mDriver, mSchema.fields, mSchema.wkbType, VbasGdal::saveOptions( mDriver, layerName, mCreateOptions ).fileEncoding ) )
    return;
  mSink.reset(); // QGIS's writer made the layer; closed with no rows
  // A shapefile without geometry is its .dbf alone, whatever name QGIS's writer gives (mainFile).
  const QFileInfo file( path );
  mSink = std::make_unique<VbasOgrSink>( mDriver, file.dir().filePath( mainFile( file.fileName(), VbasGdal::filesIn( file.path() ) ) ), layerName, mSchema.fields );
}

void VbasOutput::add( QgsFeature &feature )
{
  for ( const int i : mAsJson )
  {
    const QVariant value = feature.attribute( i );
    if ( !value.isNull() && value.userType() != QMetaType::QString )
      feature.setAttribute( i, QString::fromUtf8( QJsonDocument::fromVariant( value ).toJson( QJsonDocument::Compact ) ) );
  }
  QgsFeatureSink *sink = mMemoryLayer ? static_cast<QgsFeatureSink *>( mMemoryLayer->dataProvider() ) : mSink.get();
  if ( !sink->addFeature( feature, QgsFeatureSink::FastInsert ) )
    throw QgsProcessingException( QObject::tr( "Could not write to %1: %2" ).arg( describe(), sink->lastError() ) );
  ++mWritten;
}

void VbasOutput::finish()
{
  QString failures;
  {
    const VbasGdal::Errors errors;
    if ( mSink && !mSink->flushBuffer() )
      throw QgsProcessingException( QObject::tr( "Could not write to %1: %2" ).arg( describe(), mSink->lastError() ) );
    mSink.reset(); // closes the file or commits the table
    // A file that fails to close (its last pages, its commit) says so only through GDAL errors. A
    // table's exporter reports through flushBuffer, then raises a harmless error trying to index a
    // table without geometry; the count below checks it.
    failures = mKind == Kind::File ? errors.failures() : QString();
  }
  if ( !failures.isEmpty() )
    throw QgsProcessingException( QObject::tr( "Could not write to %1: %2" ).arg( describe(), failures ) );
  const long long stored = countWritten();
  if ( stored != mWritten )
    throw QgsProcessingException( QObject::tr( "%1: %2 features were written but %3 reached it (is the disk full?). Nothing is kept." )
                                    .arg( describe() )
                                    .arg( mWritten )
                                    .arg( stored < 0 ? QObject::tr( "none readable" ) : QString::number( stored ) ) );
  for ( const QString &path : mKind == Kind::File ? mFiles : QStringList() )
  {
    const QString temporary = temporaryPath( path );
    if ( QFileInfo::exists( temporary ) )
      VbasGdal::syncFile( temporary );
  }
  mState = State::Finished;
}

void VbasOutput::readWritten( const std::function<void( QgsVectorLayer &layer )> &read ) const
{
  if ( mState != State::Finished )
    throw QgsProcessingException( QObject::tr( "%1 was not written completely." ).arg( describe() ) );
  if ( mKind == Kind::Memory )
    return read( *mMemoryLayer );
  QString uri;
  if ( mKind == Kind::File )
  {
    const QString path = temporaryPath( mPath );
    uri = path + QStringLiteral( "|layername=" ) + VbasGdal::layerName( path, QFileInfo( mPath ).completeBaseName() );
  }
  else if ( mKind == Kind::Table && mProvider == QLatin1String( "ogr" ) )
    uri = mPath + QStringLiteral( "|layername=" ) + VbasTemporaries::stagingTable( mToken );
  else if ( mKind == Kind::Table )
  {
    QgsDataSourceUri staging( mPath );
    staging.setTable( VbasTemporaries::stagingTable( mToken ) );
    uri = staging.uri( false );
  }
  QgsVectorLayer::LayerOptions options;
  options.loadDefaultStyle = false;
  QgsVectorLayer layer( uri, QStringLiteral( "written" ), mKind == Kind::Table ? mProvider : QStringLiteral( "ogr" ), options );
  if ( !layer.isValid() )
    throw QgsProcessingException( QObject::tr( "%1: the written rows could not be read back to be recounted. Nothing was kept." ).arg( describe() ) );
  read( layer );
}

long long VbasOutput::countWritten() const
{
  switch ( mKind )
  {
    case Kind::Document:
      return mWritten;
    case Kind::Memory:
      return mMemoryLayer->dataProvider()->featureCount();
    case Kind::File:
    {
      return VbasGdal::countFeatures( temporaryPath( mPath ), QFileInfo( mPath ).completeBaseName() );
    }
    case Kind::Table:
      if ( mProvider == QLatin1String( "ogr" ) )
        return VbasGdal::countFeatures( mPath, VbasTemporaries::stagingTable( mToken ) );
      QgsDataSourceUri staging( mPath );
      staging.setTable( VbasTemporaries::stagingTable( mToken ) );
      const QgsVectorLayer layer( staging.uri( false ), QStringLiteral( "staging" ), mProvider );
      return layer.isValid() ? layer.featureCount() : -1;
  }
  return -1;
}

QString VbasOutput::commit( QgsProcessingContext &context )
{
  if ( mState != State::Finished )
    throw QgsProcessingException( QObject::tr( "%1 was not written completely." ).arg( describe() ) );
  QString id;
  switch ( mKind )
  {
    case Kind::Memory:
      id = mMemoryLayer->id();
      context.temporaryLayerStore()->addMapLayer( mMemoryLayer.release() );
      break;
    case Kind::File:
    case Kind::Document:
      mState = State::Committed; // from the first rename on, a failure puts the previous files back
      id = commitFile();
      break;
    case Kind::Table:
      id = commitTable();
      break;
  }
  mState = State::Committed;
  return id;
}

//! rename(2), throwing with the reason.
void VbasOutput::renameFile( const QString &from, const QString &to ) const
{
  if ( ::rename( QFile::encodeName( from ).constData(), QFile::encodeName( to ).constData() ) != 0 )
    throw QgsProcessingException( QObject::tr( "%1: could not rename %2 to %3: %4" ).arg( describe(), from, to, QString::fromLocal8Bit( std::strerror( errno ) ) ) );
}

QString VbasOutput::commitFile()
{
  for ( const QString &path : mFiles )
  {
    const QString temporary = temporaryPath( path );
    if ( !QFileInfo::exists( temporary ) )
      continue;
    struct stat st
    {
    };
    if ( ::lstat( QFile::encodeName( path ).constData(), &st ) == 0 )
    {
      renameFile( path, VbasTemporaries::previousFile( mToken, path ) ); // kept until the whole set is in place
      mPrevious << path;
    }
    renameFile( temporary, path );
    mPlaced << path;
    VbasInterrupt::unregisterFile( temporary );
  }
  VbasGdal::syncFile( QFileInfo( mPath ).absolutePath() ); // the renames themselves reach the disk
  removeScratch();
  return mPath;
}

QString VbasOutput::quotedPostgres( const QString &table ) const
{
  return ( mSchemaName.isEmpty() ? QString() : QgsSqliteUtils::quotedIdentifier( mSchemaName ) + '.' ) + QgsSqliteUtils::quotedIdentifier( table );
}

void VbasOutput::executePostgres( const QString &sql ) const
{
  const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = VbasDatabase::connection( mProvider, mPath );
  if ( !db )
    throw QgsProcessingException( QObject::tr( "%1: no connection to the database." ).arg( describe() ) );
  db->executeSql( sql ); // the statements of one query string are one transaction: all or nothing
}

QString VbasOutput::commitTable()
{
  const QString staging = VbasTemporaries::stagingTable( mToken );
  const QString previous = VbasTemporaries::previousTable( mToken );
  try
  {
    if ( mProvider == QLatin1String( "postgres" ) )
    {
      mHadPrevious = VbasLocation::ofPostgresTable( QString(), mPath, mSchemaName, mTable ).table.startsWith( QLatin1String( "oid:" ) );
      const QString aside = mHadPrevious ? QStringLiteral( "ALTER TABLE %1 RENAME TO %2; " ).arg( quotedPostgres( mTable ), QgsSqliteUtils::quotedIdentifier( previous ) ) : QString();
      executePostgres( aside + QStringLiteral( "ALTER TABLE %1 RENAME TO %2" ).arg( quotedPostgres( staging ), QgsSqliteUtils::quotedIdentifier( mTable ) ) );
    }
    else
    {
      QList<QPair<QString, QString>> renames;
      for ( const QString &table : VbasGdal::tableNames( mPath ) )
        if ( table.compare( mTable, Qt::CaseInsensitive ) == 0 )
          renames << qMakePair( table, previous );
      mHadPrevious = !renames.isEmpty();
      const QString error = VbasGdal::renameTables( mPath, {}, renames << qMakePair( staging, mTable ) );
      if ( !error.isEmpty() )
        throw QgsProviderConnectionException( error );
    }
  }
  catch ( const QgsProviderConnectionException &e )
  {
    throw QgsProcessingException( QObject::tr( "%1: could not move the staging table into place: %2" ).arg( describe(), e.what() ) );
  }
  if ( mProvider == QLatin1String( "ogr" ) )
    return mPath + QStringLiteral( "|layername=" ) + mTable;
  QgsDataSourceUri uri( mPath );
  uri.setTable( mTable );
  return QStringLiteral( "postgres://" ) + uri.uri( false );
}

void VbasOutput::restore()
{
  if ( isFile() )
    restoreFiles();
  else if ( mKind == Kind::Table )
    restoreTable();
}

void VbasOutput::restoreFiles()
{
  for ( const QString &path : mPlaced )
    ::unlink( QFile::encodeName( path ).constData() );
  for ( const QString &path : mPrevious )
    renameFile( VbasTemporaries::previousFile( mToken, path ), path );
  VbasGdal::syncFile( QFileInfo( mPath ).absolutePath() );
}

void VbasOutput::restoreTable()
{
  const QString previous = VbasTemporaries::previousTable( mToken );
  try
  {
    if ( mProvider == QLatin1String( "postgres" ) )
      executePostgres( QStringLiteral( "DROP TABLE %1" ).arg( quotedPostgres( mTable ) )
                       + ( mHadPrevious ? QStringLiteral( "; ALTER TABLE %1 RENAME TO %2" ).arg( quotedPostgres( previous ), QgsSqliteUtils::quotedIdentifier( mTable ) ) : QString() ) );
    else if ( const QString error = VbasGdal::renameTables( mPath, { mTable }, mHadPrevious ? QList<QPair<QString, QString>> { qMakePair( previous, mTable ) } : QList<QPair<QString, QString>>() );
              !error.isEmpty() )
      throw QgsProviderConnectionException( error );
  }
  catch ( const QgsProviderConnectionException &e )
  {
    throw QgsProcessingException( QObject::tr( "%1: could not put the previous table back (it is kept as %2): %3" ).arg( describe(), previous, e.what() ) );
  }
}

void VbasOutput::finalize()
{
  if ( mState != State::Committed )
    return;
  mState = State::Final;
  for ( const QString &path : mPrevious )
    ::unlink( QFile::encodeName( VbasTemporaries::previousFile( mToken, path ) ).constData() );
  if ( mKind != Kind::Table || !mHadPrevious )
    return;
  const QString previous = VbasTemporaries::previousTable( mToken );
  if ( mProvider == QLatin1String( "ogr" ) )
  {
    VbasGdal::dropTable( mPath, previous );
    return;
  }
  try
  {
    executePostgres( QStringLiteral( "DROP TABLE %1" ).arg( quotedPostgres( previous ) ) );
  }
  catch ( const QgsProviderConnectionException & )
  {
    // The new set is in place; a previous table left behind is reported by the next run.
  }
}

void VbasOutput::removeScratch() const
{
  const QString prefix = VbasTemporaries::filePrefix( mToken );
  QStringList folders { QDir::tempPath() };
  if ( isFile() )
    folders << QFileInfo( mPath ).absolutePath();
  for ( const QString &folder : folders )
  {
    for ( const QFileInfo &entry : QDir( folder ).entryInfoList( { prefix + '*' }, QDir::Files | QDir::Hidden | QDir::System ) )
    {
      if ( entry.fileName().endsWith( QLatin1String( "-lock" ) ) )
        continue; // the lock goes with the output
      QFile::remove( entry.filePath() );
      VbasInterrupt::unregisterFile( entry.filePath() );
    }
  }
}

void VbasOutput::dropStaging()
{
  const QString staging = VbasTemporaries::stagingTable( mToken );
  if ( mProvider == QLatin1String( "ogr" ) )
    VbasGdal::dropTable( mPath, staging );
  else
  {
    try
    {
      executePostgres( QStringLiteral( "DROP TABLE IF EXISTS %1" ).arg( quotedPostgres( staging ) ) );
    }
    catch ( const QgsException & ) // QGIS's connection errors and ours: called from destructors, never throw
    {
      // The next run removes a staging table left behind, once this run's lock is gone.
    }
  }
  if ( !mDatabaseExisted )
    QFile::remove( mPath );
}

void VbasOutput::discard()
{
  if ( mState == State::Prepared || mState == State::Discarded || mState == State::Final )
  {
    mLocks.clear();
    return;
  }
  const bool committed = mState == State::Committed;
  mState = State::Discarded;
  try
  {
    if ( committed )
      restore(); // a committed output is withdrawn only by putting the previous one back
  }
  catch ( const QgsException & )
  {
    // Called from destructors: never throw. A previous output that could not be put back stays under
    // its .vbas-previous / vbas_previous name, never deleted; the next run names it in a warning.
  }
  mSink.reset();
  mMemoryLayer.reset();
  if ( mKind == Kind::Table && !committed )
    dropStaging();
  removeScratch();
  mLocks.clear();
}
