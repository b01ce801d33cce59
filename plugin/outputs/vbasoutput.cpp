// One output of a run, written under a temporary name and moved into place: a temporary layer, a
// file (or several, for a shapefile) beside its destination, a staging table in the destination's
// database (renamed over the destination in one step), or a document written whole.
#include "outputs/vbasoutput.h"
#include "support/vbasqgiscompat.h"

#include "support/vbasdatabase.h"
#include "outputs/vbasgdal.h"
#include "outputs/vbastemporaries.h"

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

#include <cpl_string.h>
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

void VbasOutput::checkFieldNames( const QString &driver, const QString &file, const QString &layerName )
{
  const QString folder = QStringLiteral( "/vsimem/vbas-probe-%1" ).arg( mToken );
  const QString requested = folder + '/' + file;
  QString written, writtenLayer;
  QString error;
  VSIMkdir( folder.toUtf8().constData(), 0700 ); // a driver writing one file (CSV) needs its folder to exist
  {
    const VbasGdal::Errors quiet;
    std::unique_ptr<QgsVectorFileWriter> probe( QgsVectorFileWriter::create( requested, mSchema.fields, mSchema.wkbType, mSchema.crs, QgsCoordinateTransformContext(),
                                                                             VbasGdal::saveOptions( driver, layerName, mCreateOptions ), QgsFeatureSink::SinkFlags(), &written, &writtenLayer ) );
    error = probe->hasError() ? probe->errorMessage() : QString();
  }
  const QStringList names = VbasGdal::fieldNames( written, writtenLayer.isEmpty() ? layerName : writtenLayer );
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

VbasLocation VbasOutput::check()
{
  mLocks.clear();
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
    checkFieldNames( mDriver, QFileInfo( mPath ).fileName(), QFileInfo( mPath ).completeBaseName() );
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
    mLocks.push_back( VbasTemporaries::Lock::onDatabase( mPath, mToken ) );
    if ( !mLocks.back()->error().isEmpty() )
      throw QgsProcessingException( QObject::tr( "%1: could not lock this run's staging table on the server: %2" ).arg( describe(), mLocks.back()->error() ) );
    return location;
  }
  // GDAL's SQLite driver keeps its own layer list and geometry metadata, which renaming a table in a
  // transaction leaves stale: the reversible replace holds only for GeoPackage's driver.
  if ( mDriver != QLatin1String( "GPKG" ) )
    throw QgsProcessingException( QObject::tr( "%1: tables are written into GeoPackage (.gpkg) files or PostgreSQL, not into a file named like %2. Nothing was written." )
                                    .arg( describe(), QFileInfo( mPath ).fileName() ) );
  checkFolder();
  refuseSpecialFile( mPath );
  checkFieldNames( mDriver, QFileInfo( mPath ).fileName(), mTable );
  mFiles.clear();
  return VbasLocation::ofSqliteTable( mSchema.name, mPath, mTable );
}

void VbasOutput::checkFolder()
{
  const QFileInfo folder( QFileInfo( mPath ).absolutePath() );
  if ( !folder.isDir() )
    throw QgsProcessingException( QObject::tr( "%1: the folder %2 does not exist." ).arg( describe(), folder.filePath() ) );
  if ( QFileInfo( mPath ).isDir() )
    throw QgsProcessingException( QObject::tr( "%1: %2 is a folder." ).arg( describe(), mPath ) );
  lockTemporaries( folder.filePath() ); // also proves the folder writable
}

void VbasOutput::lockTemporaries( const QString &folder )
{
  mLocks.push_back( VbasTemporaries::Lock::inFolder( folder, mToken ) );
  if ( !mLocks.back()->error().isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: cannot write in the folder %2: %3" ).arg( describe(), folder, mLocks.back()->error() ) );
}

void VbasOutput::refuseSpecialFile( const QString &path ) const
{
  struct stat st {};
  if ( ::lstat( QFile::encodeName( path ).constData(), &st ) != 0 || S_ISREG( st.st_mode ) )
    return;
  const QString kind = S_ISLNK( st.st_mode ) ? QObject::tr( "a symbolic link" ) : S_ISFIFO( st.st_mode ) ? QObject::tr( "a FIFO" ) : S_ISSOCK( st.st_mode ) ? QObject::tr( "a socket" )
                       : S_ISCHR( st.st_mode ) || S_ISBLK( st.st_mode )                                     ? QObject::tr( "a device" )
                                                                                                            : QObject::tr( "not a regular file" );
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
  return QFileInfo( path ).dir().filePath( VbasTemporaries::filePrefix( mToken ) + QFileInfo( path ).fileName() );
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
  const QString temporary = file.dir().filePath( VbasTemporaries::filePrefix( mToken ) + file.fileName() );
  for ( const QString &path : mFiles )
    VbasInterrupt::registerFile( QFileInfo( path ).dir().filePath( VbasTemporaries::filePrefix( mToken ) + QFileInfo( path ).fileName() ) );
  QString written, layer;
  std::unique_ptr<QgsVectorFileWriter> writer( QgsVectorFileWriter::create( temporary, mSchema.fields, mSchema.wkbType, mSchema.crs, context.transformContext(),
                                                                            VbasGdal::saveOptions( mDriver, file.completeBaseName(), mCreateOptions ), QgsFeatureSink::SinkFlags(), &written, &layer ) );
  if ( writer->hasError() )
    throw QgsProcessingException( QObject::tr( "%1: could not create the file: %2" ).arg( describe(), writer->errorMessage() ) );
  mSink = std::move( writer );
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
      return VbasGdal::countFeatures( file.dir().filePath( VbasTemporaries::filePrefix( mToken ) + file.fileName() ), file.completeBaseName() );
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
    struct stat st {};
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
