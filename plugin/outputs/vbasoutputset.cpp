#include "outputs/vbasoutputset.h"
#include "support/vbasqgiscompat.h"

#include "outputs/vbasstyles.h"

#include <qgsabstractdatabaseproviderconnection.h>
#include <qgsdatasourceuri.h>
#include <qgsexception.h>
#include <qgsmemoryproviderutils.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>
#include <qgsprovidermetadata.h>
#include <qgsproviderregistry.h>
#include <qgsvectorfilewriter.h>
#include <qgsvectorlayer.h>
#include <qgsvectorlayerexporter.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSysInfo>

#include <cpl_error.h>
#include <cpl_vsi.h>
#include <gdal.h>
#include <ogr_api.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

namespace
{

//! This machine in the temporaries' names: a pid is only checked on the machine that made it.
QString hostTag()
{
  static const QString tag = QString::fromLatin1( QCryptographicHash::hash( QSysInfo::machineHostName().toUtf8(), QCryptographicHash::Md5 ).toHex().left( 8 ) );
  return tag;
}

//! Temporary files: ".vbas-partial-<host>-<pid>-<token>-<final name>"; staging tables: "vbas_partial_<host>_<pid>_<token>".
QString filePrefix( const QString &token )
{
  return QStringLiteral( ".vbas-partial-%1-%2-%3-" ).arg( hostTag() ).arg( ::getpid() ).arg( token );
}

QString stagingTable( const QString &token )
{
  return QStringLiteral( "vbas_partial_%1_%2_%3" ).arg( hostTag() ).arg( ::getpid() ).arg( token );
}

//! Whether name is a temporary of a VBAS run on this machine whose process no longer exists.
bool isStale( const QString &name, const QRegularExpression &pattern )
{
  const QRegularExpressionMatch match = pattern.match( name );
  if ( !match.hasMatch() || match.captured( 1 ) != hostTag() )
    return false;
  const pid_t pid = static_cast<pid_t>( match.captured( 2 ).toLongLong() );
  return pid != ::getpid() && ::kill( pid, 0 ) != 0 && errno == ESRCH;
}

int removeStaleFiles( const QString &folder )
{
  static const QRegularExpression kPattern( QStringLiteral( "^\\.vbas-partial-([0-9a-f]+)-(\\d+)-" ) );
  int removed = 0;
  for ( const QFileInfo &entry : QDir( folder ).entryInfoList( { QStringLiteral( ".vbas-partial-*" ) }, QDir::Files | QDir::Dirs | QDir::Hidden | QDir::NoDotAndDotDot | QDir::System ) )
  {
    if ( !isStale( entry.fileName(), kPattern ) )
      continue;
    const bool gone = entry.isDir() && !entry.isSymLink() ? QDir( entry.filePath() ).removeRecursively() : QFile::remove( entry.filePath() );
    removed += gone ? 1 : 0;
  }
  return removed;
}

std::unique_ptr<QgsAbstractDatabaseProviderConnection> connection( const QString &provider, const QString &uri )
{
  QgsProviderMetadata *metadata = QgsProviderRegistry::instance()->providerMetadata( provider );
  return std::unique_ptr<QgsAbstractDatabaseProviderConnection>( metadata ? static_cast<QgsAbstractDatabaseProviderConnection *>( metadata->createConnection( uri, QVariantMap() ) ) : nullptr );
}

int removeStaleTables( const QString &provider, const QString &uri, const QString &schema )
{
  static const QRegularExpression kPattern( QStringLiteral( "^vbas_partial_([0-9a-f]+)_(\\d+)_" ) );
  int removed = 0;
  try
  {
    const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = connection( provider, uri );
    for ( const QgsAbstractDatabaseProviderConnection::TableProperty &table : db ? db->tables( schema ) : QList<QgsAbstractDatabaseProviderConnection::TableProperty>() )
    {
      if ( isStale( table.tableName(), kPattern ) )
      {
        db->dropVectorTable( schema, table.tableName() );
        ++removed;
      }
    }
  }
  catch ( const QgsProviderConnectionException & )
  {
    // Not a database we can list: nothing of ours to remove there.
  }
  return removed;
}

//! The GDAL errors raised while it lives (GDAL reports some write failures only through them).
class GdalErrors
{
  public:
    GdalErrors() { CPLPushErrorHandlerEx( &GdalErrors::collect, this ); }
    ~GdalErrors() { CPLPopErrorHandler(); }
    QString failures() const { return mFailures.join( QStringLiteral( "; " ) ); }

  private:
    static void CPL_STDCALL collect( CPLErr level, CPLErrorNum, const char *message )
    {
      if ( level >= CE_Failure )
        static_cast<GdalErrors *>( CPLGetErrorHandlerUserData() )->mFailures << QString::fromUtf8( message );
    }
    QStringList mFailures;
};

//! Features in a layer of a GDAL dataset, counted by reading it; -1 if it cannot be read.
long long countFeatures( const QString &path, const QString &layerName )
{
  const GdalErrors quiet;
  GDALDatasetH dataset = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  if ( !dataset )
    return -1;
  OGRLayerH layer = GDALDatasetGetLayerByName( dataset, layerName.toUtf8().constData() );
  if ( !layer && GDALDatasetGetLayerCount( dataset ) == 1 )
    layer = GDALDatasetGetLayer( dataset, 0 );
  const long long count = layer ? OGR_L_GetFeatureCount( layer, TRUE ) : -1;
  GDALClose( dataset );
  return count;
}

//! The field names of a layer of a GDAL dataset.
QStringList fieldNames( const QString &path, const QString &layerName )
{
  QStringList names;
  GDALDatasetH dataset = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  if ( !dataset )
    return names;
  OGRLayerH layer = GDALDatasetGetLayerByName( dataset, layerName.toUtf8().constData() );
  if ( !layer && GDALDatasetGetLayerCount( dataset ) == 1 )
    layer = GDALDatasetGetLayer( dataset, 0 );
  OGRFeatureDefnH definition = layer ? OGR_L_GetLayerDefn( layer ) : nullptr;
  for ( int i = 0; definition && i < OGR_FD_GetFieldCount( definition ); ++i )
    names << QString::fromUtf8( OGR_Fld_GetNameRef( OGR_FD_GetFieldDefn( definition, i ) ) );
  GDALClose( dataset );
  return names;
}

void syncFile( const QString &path )
{
  const int fd = ::open( QFile::encodeName( path ).constData(), O_RDONLY );
  if ( fd < 0 )
    return;
  const int result = ::fsync( fd );
  ::close( fd );
  if ( result != 0 )
    throw QgsProcessingException( QObject::tr( "Could not write %1 to the disk: %2" ).arg( path, QString::fromLocal8Bit( std::strerror( errno ) ) ) );
}

QgsVectorFileWriter::SaveVectorOptions saveOptions( const QString &driver, const QString &layerName, const QVariantMap &createOptions )
{
  QgsVectorFileWriter::SaveVectorOptions options;
  options.driverName = driver;
  options.layerName = layerName;
  options.fileEncoding = createOptions.value( QStringLiteral( "fileEncoding" ), QStringLiteral( "UTF-8" ) ).toString();
  options.datasourceOptions = QgsVectorFileWriter::defaultDatasetOptions( driver );
  options.layerOptions = QgsVectorFileWriter::defaultLayerOptions( driver );
  options.symbologyExport = vbasqgis::NoSymbology;
  options.actionOnExistingFile = QgsVectorFileWriter::CreateOrOverwriteFile;
  return options;
}

QString absolute( const QString &path )
{
  return QFileInfo( path ).absoluteFilePath();
}

} // namespace

// ---------------------------------------------------------------------------------------------
// VbasOutput

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
  if ( mState != State::Committed )
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

void VbasOutput::checkFieldNames( const QString &driver, const QString &file, const QString &layerName )
{
  const QString folder = QStringLiteral( "/vsimem/vbas-probe-%1" ).arg( mToken );
  const QString requested = folder + '/' + file;
  QString written, writtenLayer;
  QString error;
  VSIMkdir( folder.toUtf8().constData(), 0700 ); // a driver writing one file (CSV) needs its folder to exist
  {
    const GdalErrors quiet;
    std::unique_ptr<QgsVectorFileWriter> probe( QgsVectorFileWriter::create( requested, mSchema.fields, mSchema.wkbType, mSchema.crs, QgsCoordinateTransformContext(),
                                                                             saveOptions( driver, layerName, mCreateOptions ), QgsFeatureSink::SinkFlags(), &written, &writtenLayer ) );
    error = probe->hasError() ? probe->errorMessage() : QString();
  }
  const QStringList names = fieldNames( written, writtenLayer.isEmpty() ? layerName : writtenLayer );
  char **entries = VSIReadDir( folder.toUtf8().constData() );
  for ( char **entry = entries; entry && *entry; ++entry )
    mFiles << QFileInfo( mPath ).dir().filePath( QString::fromUtf8( *entry ) );
  CSLDestroy( entries );
  VSIRmdirRecursive( folder.toUtf8().constData() );
  if ( !error.isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: the %2 format cannot hold this output: %3" ).arg( describe(), driver, error ) );
  if ( written != requested || !mFiles.contains( QFileInfo( mPath ).dir().filePath( file ) ) )
    throw QgsProcessingException( QObject::tr( "%1: the %2 driver would write %3, not the file asked for%4. Choose a GeoPackage (.gpkg) or CSV (.csv) file." )
                                    .arg( describe(), driver, QFileInfo( written ).fileName(), mSchema.wkbType == vbasqgis::WkbType::NoGeometry ? QObject::tr( " (a table without geometry is no shapefile)" ) : QString() ) );
  QStringList lost;
  for ( const QgsField &field : mSchema.fields )
    if ( !names.contains( field.name() ) )
      lost << field.name();
  if ( !lost.isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: the %2 format would rename or drop the field(s) %3 (it keeps %4). Choose a format that keeps every name, such as GeoPackage (.gpkg) or CSV (.csv)." )
                                    .arg( describe(), driver, lost.join( QStringLiteral( ", " ) ), names.join( QStringLiteral( ", " ) ) ) );
}

QList<VbasLocation> VbasOutput::check()
{
  switch ( mKind )
  {
    case Kind::Memory:
      return {};
    case Kind::Table:
    {
      if ( mTable.isEmpty() )
        throw QgsProcessingException( QObject::tr( "%1: the destination names no table." ).arg( describe() ) );
      if ( mProvider == QLatin1String( "postgres" ) )
        return { VbasLocation { mSchema.name, QString(), mSchemaName + '.' + mTable, mProvider + ' ' + QgsDataSourceUri( mPath ).connectionInfo( false ) } };
      if ( mDriver.isEmpty() )
        throw QgsProcessingException( QObject::tr( "%1: no GDAL driver writes tables into a file named like %2." ).arg( describe(), QFileInfo( mPath ).fileName() ) );
      checkFieldNames( mDriver, QFileInfo( mPath ).fileName(), mTable );
      mFiles.clear();
      return { VbasLocation { mSchema.name, mPath, mTable, QString() } };
    }
    case Kind::File:
    case Kind::Document:
      break;
  }
  const QFileInfo file( mPath );
  const QFileInfo folder( file.absolutePath() );
  if ( !folder.isDir() )
    throw QgsProcessingException( QObject::tr( "%1: the folder %2 does not exist." ).arg( describe(), folder.filePath() ) );
  if ( file.isDir() )
    throw QgsProcessingException( QObject::tr( "%1: %2 is a folder." ).arg( describe(), mPath ) );
  const QString probe = folder.filePath() + '/' + filePrefix( mToken ) + QStringLiteral( "probe" );
  const int fd = ::open( QFile::encodeName( probe ).constData(), O_CREAT | O_EXCL | O_WRONLY, 0600 );
  if ( fd < 0 )
    throw QgsProcessingException( QObject::tr( "%1: cannot write in the folder %2: %3" ).arg( describe(), folder.filePath(), QString::fromLocal8Bit( std::strerror( errno ) ) ) );
  ::close( fd );
  ::unlink( QFile::encodeName( probe ).constData() );
  if ( mKind == Kind::Document )
    mFiles = QStringList { mPath };
  else
    checkFieldNames( mDriver, file.fileName(), file.completeBaseName() );
  QList<VbasLocation> locations;
  for ( const QString &path : mFiles )
    locations << VbasLocation { mSchema.name, path, QString(), QString() };
  return locations;
}

QString VbasOutput::scratchPrefix() const
{
  const QString folder = isFile() ? QFileInfo( mPath ).absolutePath() : QDir::tempPath();
  return folder + '/' + filePrefix( mToken ) + QStringLiteral( "scratch-" );
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
      createTable();
      return;
    case Kind::Document:
      VbasInterrupt::registerFile( temporaryPath( mPath ) );
      return;
  }
}

QString VbasOutput::temporaryPath( const QString &path ) const
{
  return QFileInfo( path ).dir().filePath( filePrefix( mToken ) + QFileInfo( path ).fileName() );
}

void VbasOutput::write( const QByteArray &content )
{
  QFile file( temporaryPath( mPath ) );
  if ( !file.open( QIODevice::WriteOnly | QIODevice::Truncate ) || file.write( content ) != content.size() || !file.flush() )
    throw QgsProcessingException( QObject::tr( "Could not write to %1: %2" ).arg( describe(), file.errorString() ) );
  file.close();
  syncFile( file.fileName() );
  mState = State::Finished;
}

void VbasOutput::createFile( QgsProcessingContext &context )
{
  const QFileInfo file( mPath );
  const QString temporary = file.dir().filePath( filePrefix( mToken ) + file.fileName() );
  for ( const QString &path : mFiles )
    VbasInterrupt::registerFile( QFileInfo( path ).dir().filePath( filePrefix( mToken ) + QFileInfo( path ).fileName() ) );
  QString written, layer;
  std::unique_ptr<QgsVectorFileWriter> writer( QgsVectorFileWriter::create( temporary, mSchema.fields, mSchema.wkbType, mSchema.crs, context.transformContext(),
                                                                            saveOptions( mDriver, file.completeBaseName(), mCreateOptions ), QgsFeatureSink::SinkFlags(), &written, &layer ) );
  if ( writer->hasError() )
    throw QgsProcessingException( QObject::tr( "%1: could not create the file: %2" ).arg( describe(), writer->errorMessage() ) );
  mSink = std::move( writer );
}

void VbasOutput::createTable()
{
  QVariantMap options = mCreateOptions;
  options.insert( QStringLiteral( "fileEncoding" ), mCreateOptions.value( QStringLiteral( "fileEncoding" ), QStringLiteral( "UTF-8" ) ) );
  QString uri = mPath;
  if ( mProvider == QLatin1String( "ogr" ) )
  {
    mDatabaseExisted = QFileInfo::exists( mPath );
    options.insert( QStringLiteral( "layerName" ), stagingTable( mToken ) );
    options.insert( QStringLiteral( "driverName" ), mDriver );
    options.insert( QStringLiteral( "update" ), true );
  }
  else
  {
    QgsDataSourceUri staging( mPath );
    staging.setTable( stagingTable( mToken ) );
    uri = staging.uri( false );
  }
  auto exporter = std::make_unique<QgsVectorLayerExporter>( uri, mProvider, mSchema.fields, mSchema.wkbType, mSchema.crs, true, options );
  if ( exporter->errorCode() != Qgis::VectorExportResult::Success )
    throw QgsProcessingException( QObject::tr( "%1: could not create the staging table: %2" ).arg( describe(), exporter->errorMessage() ) );
  mSink = std::move( exporter );
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
    const GdalErrors errors;
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
      syncFile( temporary );
  }
  mState = State::Finished;
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
      const QFileInfo file( mPath );
      return countFeatures( file.dir().filePath( filePrefix( mToken ) + file.fileName() ), file.completeBaseName() );
    }
    case Kind::Table:
      if ( mProvider == QLatin1String( "ogr" ) )
        return countFeatures( mPath, stagingTable( mToken ) );
      QgsDataSourceUri staging( mPath );
      staging.setTable( stagingTable( mToken ) );
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
      id = commitFile();
      break;
    case Kind::Table:
      id = commitTable();
      break;
  }
  mState = State::Committed;
  return id;
}

QString VbasOutput::commitFile()
{
  const QString folder = QFileInfo( mPath ).absolutePath();
  for ( const QString &path : mFiles )
  {
    const QString temporary = temporaryPath( path );
    if ( !QFileInfo::exists( temporary ) )
      continue;
    if ( ::rename( QFile::encodeName( temporary ).constData(), QFile::encodeName( path ).constData() ) != 0 )
      throw QgsProcessingException( QObject::tr( "%1: could not move %2 into place: %3" ).arg( describe(), temporary, QString::fromLocal8Bit( std::strerror( errno ) ) ) );
    VbasInterrupt::unregisterFile( temporary );
  }
  syncFile( folder ); // the renames themselves reach the disk
  removeScratch();
  return mPath;
}

QString VbasOutput::commitTable()
{
  try
  {
    const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = connection( mProvider, mPath );
    if ( !db )
      throw QgsProcessingException( QObject::tr( "%1: no connection to the database." ).arg( describe() ) );
    if ( mProvider == QLatin1String( "postgres" ) )
    {
      // PostgreSQL's DDL is transactional, and the statements of one query string are one transaction:
      // the old table is dropped only if the staging table takes its name.
      const auto quoted = []( const QString &name ) { return '"' + QString( name ).replace( '"', QLatin1String( "\"\"" ) ) + '"'; };
      const QString schema = mSchemaName.isEmpty() ? QString() : quoted( mSchemaName ) + '.';
      db->executeSql( QStringLiteral( "DROP TABLE IF EXISTS %1%2; ALTER TABLE %1%3 RENAME TO %2" ).arg( schema, quoted( mTable ), quoted( stagingTable( mToken ) ) ) );
    }
    else
    {
      const GdalErrors quiet; // GDAL's GeoPackage rename also tries a style table that may not exist
      if ( db->tableExists( mSchemaName, mTable ) )
        db->dropVectorTable( mSchemaName, mTable );
      db->renameVectorTable( mSchemaName, stagingTable( mToken ), mTable );
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

void VbasOutput::removeScratch() const
{
  const QString prefix = filePrefix( mToken );
  QStringList folders { QDir::tempPath() };
  if ( isFile() )
    folders << QFileInfo( mPath ).absolutePath();
  for ( const QString &folder : folders )
  {
    for ( const QFileInfo &entry : QDir( folder ).entryInfoList( { prefix + '*' }, QDir::Files | QDir::Hidden | QDir::System ) )
    {
      QFile::remove( entry.filePath() );
      VbasInterrupt::unregisterFile( entry.filePath() );
    }
  }
}

void VbasOutput::discard()
{
  if ( mState == State::Prepared || mState == State::Discarded )
    return;
  const bool committed = mState == State::Committed;
  mState = State::Discarded;
  mSink.reset();
  mMemoryLayer.reset();
  if ( committed )
  {
    // Withdraw an output already in place when a later one could not be: all or nothing.
    for ( const QString &path : isFile() ? mFiles : QStringList() )
      QFile::remove( path );
  }
  if ( mKind == Kind::Table )
  {
    try
    {
      const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = connection( mProvider, mPath );
      const QString table = committed ? mTable : stagingTable( mToken );
      if ( db && db->tableExists( mSchemaName, table ) )
        db->dropVectorTable( mSchemaName, table );
    }
    catch ( const QgsProviderConnectionException & )
    {
      // The table was never created.
    }
    if ( !mDatabaseExisted )
      QFile::remove( mPath );
  }
  removeScratch();
}

// ---------------------------------------------------------------------------------------------
// VbasOutputSet

namespace
{

struct Requested
{
    QString destination;
    QgsProject *project = nullptr;
    QString layerName;
    QVariantMap createOptions;
};

//! The destination of a sink parameter, as QgsProcessingParameters::parameterAsSink reads it.
Requested requested( const QgsProcessingParameterDefinition *definition, const QVariantMap &parameters, QgsProcessingContext &context )
{
  Requested result;
  QVariant value = parameters.value( definition->name() );
  if ( value.canConvert<QgsProcessingOutputLayerDefinition>() )
  {
    const QgsProcessingOutputLayerDefinition output = value.value<QgsProcessingOutputLayerDefinition>();
    result.project = output.destinationProject;
    result.layerName = output.destinationName;
    result.createOptions = output.createOptions;
    value = QVariant::fromValue( output.sink );
  }
  result.destination = value.canConvert<QgsProperty>() ? value.value<QgsProperty>().valueAsString( context.expressionContext(), definition->defaultValue().toString() ) : value.toString();
  if ( result.destination.isEmpty() || result.destination == QgsProcessing::TEMPORARY_OUTPUT )
    result.destination = static_cast<const QgsProcessingDestinationParameter *>( definition )->generateTemporaryDestination();
  if ( result.layerName.isEmpty() )
    result.layerName = definition->description();
  return result;
}

bool overlap( const VbasLocation &a, const VbasLocation &b )
{
  return a.overwrites( b ) || b.overwrites( a );
}

} // namespace

VbasOutputSet::~VbasOutputSet()
{
  discard();
}

void VbasOutputSet::prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QList<VbasOutputSchema> &schemas,
                             const QList<VbasLocation> &inputs, QgsProcessingFeedback *feedback )
{
  mOutputs.clear();
  for ( const VbasOutputSchema &schema : schemas )
  {
    const Requested r = requested( algorithm.parameterDefinition( schema.name ), parameters, context );
    mOutputs.push_back( std::make_unique<VbasOutput>( schema, r.destination, r.project, r.layerName, r.createOptions ) );
  }
  QList<VbasLocation> written;
  std::set<QString> folders { QDir::tempPath() };
  int stale = 0;
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
  {
    const QList<VbasLocation> locations = output->check();
    for ( const VbasLocation &location : locations )
    {
      for ( const VbasLocation &input : inputs )
        if ( overlap( location, input ) )
          throw QgsProcessingException( QObject::tr( "%1 would overwrite the input %2: choose another destination. Nothing was written." ).arg( output->describe(), input.describe() ) );
      for ( const VbasLocation &other : written )
        if ( overlap( location, other ) )
          throw QgsProcessingException( QObject::tr( "%1 and %2 have the same destination: each output needs its own. Nothing was written." ).arg( other.what, output->describe() ) );
      if ( !location.path.isEmpty() )
        folders.insert( QFileInfo( location.path ).absolutePath() );
    }
    written += locations;
    if ( output->mKind == VbasOutput::Kind::Table && ( output->mProvider != QLatin1String( "ogr" ) || QFileInfo::exists( output->mPath ) ) )
      stale += removeStaleTables( output->mProvider, output->mPath, output->mSchemaName );
  }
  for ( const QString &folder : folders )
    stale += removeStaleFiles( folder );
  if ( stale > 0 )
    feedback->pushInfo( QObject::tr( "Removed %n temporary file(s) or table(s) left by interrupted VBAS runs.", nullptr, stale ) );
}

VbasOutput &VbasOutputSet::output( const QString &name )
{
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
    if ( output->mSchema.name == name )
      return *output;
  throw QgsProcessingException( QObject::tr( "No output %1 was prepared." ).arg( name ) );
}

VbasOutput &VbasOutputSet::create( const QString &name, QgsProcessingContext &context )
{
  VbasOutput &result = output( name );
  result.create( context );
  return result;
}

void VbasOutputSet::commit( QgsProcessingContext &context, QVariantMap &outputs )
{
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
  {
    const QString id = output->commit( context ); // on failure VbasRun discards: the outputs already in place are withdrawn
    outputs.insert( output->mSchema.name, id );
    if ( output->mProject && output->mKind != VbasOutput::Kind::Document )
    {
      QgsProcessingContext::LayerDetails details( output->mLayerName, output->mProject, output->mSchema.name, QgsProcessingUtils::LayerHint::Vector );
      details.setPostProcessor( VbasStyles::postProcessor( output->mSchema.name ).release() ); // the context owns it
      context.addLayerToLoadOnCompletion( id, details );
    }
  }
  mOutputs.clear(); // committed: nothing left to discard
}

void VbasOutputSet::discard()
{
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
    output->discard();
  mOutputs.clear();
}

// ---------------------------------------------------------------------------------------------
// VbasRun

VbasRun::VbasRun( VbasOutputSet &outputs )
  : mOutputs( outputs )
{
}

VbasRun::~VbasRun()
{
  mOutputs.discard();
}
