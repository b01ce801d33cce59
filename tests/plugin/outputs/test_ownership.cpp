// Nothing the user owns is lost (docs/outputs.md), each case run through
// QgsProcessingAlgorithm::run: a destination is compared with the inputs by identity (a view over
// the destination, a table that a view, a trigger or a foreign key refers to), a failed last commit
// leaves the previous run's outputs as they were (file by file, table by table), temporaries are
// removed only by proof that their run is gone, special files are never replaced, and writing beside
// an input keeps that file's journal mode. Tables are read back with SQLite and GDAL here, not with
// the plugin's code.
#include "tests/plugin/qgis_test_util.h"

#include <QCryptographicHash>
#include <QProcess>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTemporaryDir>

#include <gdal.h>
#include <ogr_api.h>
#include <sqlite3.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using vbastest::Feedback;

namespace
{

const QStringList kFileSinks = { "SITE_POINTS", "AGGREGATED", "LOOKUP", "VORONOI", "EVALUATION", "REPORT" };

//! The machine tag of the plugin's temporary names, worked out here: the SHA-256 of the machine id, 12 hex digits.
QString machineTag()
{
  QByteArray id;
  for ( const QString &path : { QStringLiteral( "/etc/machine-id" ), QStringLiteral( "/var/lib/dbus/machine-id" ) } )
  {
    QFile file( path );
    if ( id.isEmpty() && file.open( QIODevice::ReadOnly ) )
      id = file.readAll().trimmed();
  }
  if ( id.isEmpty() )
    id = QSysInfo::machineHostName().toUtf8();
  return QString::fromLatin1( QCryptographicHash::hash( id, QCryptographicHash::Sha256 ).toHex().left( 12 ) );
}

QByteArray md5( const QString &path )
{
  QFile file( path );
  return file.open( QIODevice::ReadOnly ) ? QCryptographicHash::hash( file.readAll(), QCryptographicHash::Md5 ) : QByteArray( "missing" );
}

void touch( const QString &path )
{
  QFile file( path );
  QVERIFY( file.open( QIODevice::WriteOnly ) );
  file.write( "x" );
}

//! Runs SQL on an SQLite file; returns the first column of the rows.
QStringList sql( const QString &path, const QString &statement )
{
  sqlite3 *db = nullptr;
  QStringList values;
  if ( sqlite3_open( QFile::encodeName( path ).constData(), &db ) == SQLITE_OK )
  {
    sqlite3_stmt *s = nullptr;
    if ( sqlite3_prepare_v2( db, statement.toUtf8().constData(), -1, &s, nullptr ) == SQLITE_OK )
    {
      while ( sqlite3_step( s ) == SQLITE_ROW )
        values << QString::fromUtf8( reinterpret_cast<const char *>( sqlite3_column_text( s, 0 ) ) );
      sqlite3_finalize( s );
    }
    else
      values << QStringLiteral( "error: %1" ).arg( sqlite3_errmsg( db ) );
  }
  sqlite3_close( db );
  return values;
}

//! Every row of every table of a GDAL dataset, as text, per table: what "unchanged" means for a database file.
QMap<QString, QStringList> contents( const QString &path )
{
  QMap<QString, QStringList> tables;
  GDALDatasetH ds = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  for ( int i = 0; ds && i < GDALDatasetGetLayerCount( ds ); ++i )
  {
    OGRLayerH layer = GDALDatasetGetLayer( ds, i );
    QStringList &rows = tables[QString::fromUtf8( OGR_L_GetName( layer ) )];
    OGR_L_ResetReading( layer );
    while ( OGRFeatureH f = OGR_L_GetNextFeature( layer ) )
    {
      QString row = QString::number( OGR_F_GetFID( f ) );
      for ( int j = 0; j < OGR_F_GetFieldCount( f ); ++j )
        row += '|' + QString::fromUtf8( OGR_F_GetFieldAsString( f, j ) );
      if ( OGRGeometryH g = OGR_F_GetGeometryRef( f ) )
      {
        char *wkt = nullptr;
        OGR_G_ExportToWkt( g, &wkt );
        row += '|' + QString::fromUtf8( wkt );
        CPLFree( wkt );
      }
      rows << row;
      OGR_F_Destroy( f );
    }
  }
  if ( ds )
    GDALClose( ds );
  return tables;
}

//! The token of the only output that holds a lock in folder (".vbas-partial-<machine>-<pid>-<token>-lock"), as "<machine>-<pid>-<token>".
QString lockedToken( const QString &folder )
{
  const QStringList locks = QDir( folder ).entryList( { QStringLiteral( ".vbas-partial-*-lock" ) }, QDir::Files | QDir::Hidden );
  return locks.size() == 1 ? locks.first().mid( 14 ).chopped( 5 ) : QString();
}

} // namespace

class TestOwnership : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void failedLastCommitKeepsThePreviousOutputs_data();
    void failedLastCommitKeepsThePreviousOutputs();
    void destinationIsComparedByIdentity_data();
    void destinationIsComparedByIdentity();
    void temporariesNeedProofThatTheirRunIsGone();
    void inputNamedLikeATemporaryIsKept_data();
    void inputNamedLikeATemporaryIsKept();
    void specialFilesAreRefused_data();
    void specialFilesAreRefused();
    void journalModeOfTheInputIsKept();
    void sqliteTableIsRefused();

  private:
    //! vbas:anonymize of records (by region, QI sex) on the grid, one site, k = 2.
    QVariantMap parameters( QgsVectorLayer *records ) const;
    std::unique_ptr<QgsVectorLayer> records( int perRegion ) const;

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mGrid;
};

void TestOwnership::initTestCase()
{
  vbastest::initQgisWithProvider();
  mGrid = vbastest::grid();
}

std::unique_ptr<QgsVectorLayer> TestOwnership::records( int perRegion ) const
{
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      for ( int i = 0; i < perRegion; ++i )
        rows << QVariantList { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), QString( i % 2 ? "M" : "F" ) };
  return vbastest::table( QStringLiteral( "field=region:string&field=sex:string" ), rows );
}

QVariantMap TestOwnership::parameters( QgsVectorLayer *records ) const
{
  QVariantMap p = vbastest::gridParameters( mGrid.get(), records );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 1 );
  p.insert( QStringLiteral( "K" ), 2 );
  return p;
}

// ---------------------------------------------------------------------------------------------
// A run that fails while committing its last output (the release) puts back every output it had
// already committed: the previous run's set stays whole. The release's commit is made to fail from
// outside: once the run has locked its temporaries, the name its previous release would be moved
// aside to is taken (a folder, or a table), so that move fails.

void TestOwnership::failedLastCommitKeepsThePreviousOutputs_data()
{
  QTest::addColumn<bool>( "tables" );
  QTest::newRow( "files" ) << false;
  QTest::newRow( "tables of a GeoPackage" ) << true;
}

void TestOwnership::failedLastCommitKeepsThePreviousOutputs()
{
  QFETCH( bool, tables );
  QTemporaryDir dir;
  QDir( dir.path() ).mkdir( QStringLiteral( "release" ) );
  const QString out = dir.filePath( QStringLiteral( "out.gpkg" ) );
  const QString releaseFolder = dir.filePath( QStringLiteral( "release" ) );
  const QString release = releaseFolder + ( tables ? QStringLiteral( "/release.gpkg" ) : QStringLiteral( "/anonymized.gpkg" ) );
  auto first = records( 2 );
  QVariantMap p = parameters( first.get() );
  for ( const QString &sink : kFileSinks )
  {
    const bool table = tables && sink != QLatin1String( "REPORT" );
    const QString file = dir.filePath( sink.toLower() + ( sink == QLatin1String( "EVALUATION" ) ? ".csv" : sink == QLatin1String( "REPORT" ) ? ".html" : ".gpkg" ) );
    p.insert( sink, table ? QStringLiteral( "ogr:dbname='%1' table=\"%2\"" ).arg( out, sink.toLower() ) : file );
  }
  p.insert( QStringLiteral( "ANONYMIZED" ), tables ? QStringLiteral( "ogr:dbname='%1' table=\"anonymized\"" ).arg( release ) : release );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );

  QMap<QString, QByteArray> files;
  for ( const QString &name : vbastest::entries( dir.path() ) )
    if ( QFileInfo( dir.filePath( name ) ).isFile() )
      files[name] = name == QLatin1String( "out.gpkg" ) ? QByteArray() : md5( dir.filePath( name ) ); // a database file: compared table by table below
  const QByteArray releaseBytes = md5( release );
  const QMap<QString, QStringList> outTables = contents( out ), releaseTables = contents( release );

  // A second run with other records, its release's commit blocked.
  auto second = records( 4 );
  p.insert( QStringLiteral( "RECORDS" ), vbastest::layerValue( second.get() ) );
  Feedback feedback;
  bool planted = false;
  QObject::connect( &feedback, &QgsFeedback::progressChanged, [&]( double ) {
    const QString token = lockedToken( releaseFolder );
    if ( planted || token.isEmpty() )
      return;
    planted = true;
    if ( tables )
      QCOMPARE( sql( release, QStringLiteral( "CREATE TABLE \"vbas_previous_%1\" (x)" ).arg( QString( token ).replace( '-', '_' ) ) ), QStringList() );
    else
      QVERIFY( QDir( releaseFolder ).mkpath( QStringLiteral( ".vbas-previous-%1-anonymized.gpkg/taken" ).arg( token ) ) );
  } );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( planted, "the release's lock was never seen" );
  QVERIFY2( feedback.error().contains( QStringLiteral( "ANONYMIZED" ) ), qPrintable( feedback.error() ) );

  for ( auto it = files.cbegin(); it != files.cend(); ++it )
    QVERIFY2( it.value().isEmpty() || md5( dir.filePath( it.key() ) ) == it.value(), qPrintable( it.key() + " changed or is gone" ) );
  QStringList expected = QStringList( files.keys() ) << QStringLiteral( "release" );
  expected.sort();
  QCOMPARE( vbastest::entries( dir.path() ), expected );
  if ( tables )
  {
    QCOMPARE( contents( out ), outTables ); // table by table, row by row
    QMap<QString, QStringList> now = contents( release );
    QCOMPARE( now.value( QStringLiteral( "anonymized" ) ), releaseTables.value( QStringLiteral( "anonymized" ) ) );
    QCOMPARE( sql( release, QStringLiteral( "SELECT name FROM sqlite_master WHERE name LIKE 'vbas_partial%'" ) ), QStringList() );
  }
  else
  {
    QCOMPARE( md5( release ), releaseBytes );
    QCOMPARE( QDir( releaseFolder ).entryList( { QStringLiteral( ".vbas-partial*" ) }, QDir::AllEntries | QDir::Hidden ), QStringList() );
  }
}

// ---------------------------------------------------------------------------------------------
// A destination is refused when it is an input under another name, or when a view, a trigger or a
// foreign key refers to it (replacing it would break or drop them).

void TestOwnership::destinationIsComparedByIdentity_data()
{
  QTest::addColumn<QString>( "setup" );       // SQL statements run on records.gpkg before the run, separated by ";; "
  QTest::addColumn<QString>( "input" );       // the layer of RECORDS in records.gpkg
  QTest::addColumn<QString>( "destination" ); // the table of ANONYMIZED in records.gpkg
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "release over the table a view input reads" )
    << "CREATE VIEW v_records AS SELECT * FROM records;; INSERT INTO gpkg_contents (table_name, data_type, identifier) VALUES ('v_records', 'attributes', 'v_records')"
    << "v_records"
    << "records"
    << "would overwrite the input RECORDS";
  QTest::newRow( "release over the table, upper case" ) << ""
                                                        << "records"
                                                        << "RECORDS"
                                                        << "would overwrite the input RECORDS";
  QTest::newRow( "release over a view's table, two views deep" )
    << "CREATE VIEW v1 AS SELECT * FROM records;; CREATE VIEW v2 AS SELECT * FROM v1;; INSERT INTO gpkg_contents (table_name, data_type, identifier) VALUES ('v2', 'attributes', 'v2')"
    << "v2"
    << "records"
    << "would overwrite the input RECORDS";
  QTest::newRow( "a dashboard view over the old release" ) << "CREATE TABLE release (a);; CREATE VIEW dashboard AS SELECT count(*) FROM release"
                                                           << "records"
                                                           << "release"
                                                           << "the view dashboard";
  QTest::newRow( "a foreign key to the old release" ) << "CREATE TABLE release (a PRIMARY KEY);; CREATE TABLE notes (b REFERENCES release(a))"
                                                      << "records"
                                                      << "release"
                                                      << "a foreign key of the table notes";
  QTest::newRow( "a trigger writing the old release" ) << "CREATE TABLE release (a);; CREATE TABLE log (b);; CREATE TRIGGER keep AFTER INSERT ON log BEGIN INSERT INTO release VALUES (1); END"
                                                       << "records"
                                                       << "release"
                                                       << "the trigger keep";
}

void TestOwnership::destinationIsComparedByIdentity()
{
  QFETCH( QString, setup );
  QFETCH( QString, input );
  QFETCH( QString, destination );
  QFETCH( QString, message );
  QTemporaryDir dir;
  const QString file = dir.filePath( QStringLiteral( "records.gpkg" ) );
  auto layer = records( 2 );
  vbastest::save( layer.get(), file, QStringLiteral( "records" ) );
  for ( const QString &statement : setup.split( QStringLiteral( ";; " ), Qt::SkipEmptyParts ) )
    QCOMPARE( sql( file, statement ), QStringList() );
  const QMap<QString, QStringList> before = contents( file );
  const QString schema = sql( file, QStringLiteral( "SELECT group_concat(sql, ';') FROM sqlite_master" ) ).value( 0 );
  QgsVectorLayer records( file + QStringLiteral( "|layername=" ) + input, QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVERIFY( records.isValid() );
  QVariantMap p = parameters( &records );
  p.insert( QStringLiteral( "ANONYMIZED" ), QStringLiteral( "ogr:dbname='%1' table=\"%2\"" ).arg( file, destination ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( message ) && feedback.error().contains( QStringLiteral( "Nothing was written" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( contents( file ), before );
  QCOMPARE( sql( file, QStringLiteral( "SELECT group_concat(sql, ';') FROM sqlite_master" ) ).value( 0 ), schema );
}

// ---------------------------------------------------------------------------------------------
// Temporaries are removed only when their run's lock can be taken, on this machine, regular files only.

void TestOwnership::temporariesNeedProofThatTheirRunIsGone()
{
  QTemporaryDir dir;
  const QString m = machineTag();
  const auto name = [&]( const QString &machine, const QString &token, const QString &rest ) { return dir.filePath( QStringLiteral( ".vbas-partial-%1-77-%2-%3" ).arg( machine, token, rest ) ); };
  const QString dead = name( m, QStringLiteral( "a1" ), QStringLiteral( "anonymized.gpkg" ) );
  const QString live = name( m, QStringLiteral( "b2" ), QStringLiteral( "anonymized.gpkg" ) ); // its run lives, in another PID namespace
  const QString other = name( QStringLiteral( "000000000000" ), QStringLiteral( "c3" ), QStringLiteral( "anonymized.gpkg" ) );
  const QString unlocked = name( m, QStringLiteral( "d4" ), QStringLiteral( "anonymized.gpkg" ) ); // no lock file: nothing proves its run gone
  const QString folder = name( m, QStringLiteral( "e5" ), QStringLiteral( "folder" ) );
  const QString previous = dir.filePath( QStringLiteral( ".vbas-previous-%1-77-f6-anonymized.gpkg" ).arg( m ) );
  for ( const QString &path : { dead, live, other, unlocked, previous, dir.filePath( QStringLiteral( "mine.txt" ) ) } )
    touch( path );
  QVERIFY( QDir().mkpath( folder + QStringLiteral( "/inside" ) ) );
  for ( const char *token : { "a1", "b2", "e5", "f6" } )
    touch( name( m, QString::fromLatin1( token ), QStringLiteral( "lock" ) ) );
  touch( name( QStringLiteral( "000000000000" ), QStringLiteral( "c3" ), QStringLiteral( "lock" ) ) );
  // The live run's lock, held by a process in a PID namespace of its own (where root may make one),
  // else by another open file of this process.
  QProcess holder;
  const QString liveLock = name( m, QStringLiteral( "b2" ), QStringLiteral( "lock" ) );
  int held = -1;
  if ( ::geteuid() == 0 && !QStandardPaths::findExecutable( QStringLiteral( "unshare" ) ).isEmpty() )
  {
    holder.start( QStringLiteral( "unshare" ), { "--pid", "--fork", "--kill-child", "flock", "-x", liveLock, "-c", "echo locked; sleep 120" } );
    QVERIFY( holder.waitForReadyRead( 20000 ) );
    QCOMPARE( holder.readAllStandardOutput().trimmed(), QByteArray( "locked" ) );
  }
  else
  {
    held = ::open( QFile::encodeName( liveLock ).constData(), O_RDONLY );
    QVERIFY( held >= 0 && ::flock( held, LOCK_EX ) == 0 );
  }

  auto layer = records( 2 );
  QVariantMap p = parameters( layer.get() );
  p.insert( QStringLiteral( "ANONYMIZED" ), dir.filePath( QStringLiteral( "release.gpkg" ) ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
  if ( held >= 0 )
    ::close( held );
  holder.kill();
  holder.waitForFinished( 10000 );

  QVERIFY( !QFile::exists( dead ) );
  QVERIFY( !QFile::exists( name( m, QStringLiteral( "a1" ), QStringLiteral( "lock" ) ) ) );
  for ( const QString &path : { live, other, unlocked, previous, folder + QStringLiteral( "/inside" ), dir.filePath( QStringLiteral( "mine.txt" ) ) } )
    QVERIFY2( QFileInfo::exists( path ), qPrintable( path + " was removed" ) );
  QVERIFY2( feedback.saw( QStringLiteral( "Removed 1 temporary file(s)" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  QVERIFY2( feedback.warned( QFileInfo( previous ).fileName() ), qPrintable( feedback.warnings.join( '\n' ) ) );
}

void TestOwnership::inputNamedLikeATemporaryIsKept_data()
{
  QTest::addColumn<QString>( "name" );
  QTest::newRow( "this machine's naming, its lock free" ) << QStringLiteral( ".vbas-partial-%1-77-a1-" ).arg( machineTag() );
  // Earlier versions named temporaries by the MD5 of the host name and a process id that no longer exists.
  QTest::newRow( "the naming of earlier versions" )
    << QStringLiteral( ".vbas-partial-%1-4194304-0-" ).arg( QString::fromLatin1( QCryptographicHash::hash( QSysInfo::machineHostName().toUtf8(), QCryptographicHash::Md5 ).toHex().left( 8 ) ) );
}

void TestOwnership::inputNamedLikeATemporaryIsKept()
{
  // What a user checking a killed run's leftover would do: vbas:checkanonymity on it, its lock free.
  QFETCH( QString, name );
  QTemporaryDir dir;
  const QString prefix = dir.filePath( name );
  auto layer = records( 2 );
  vbastest::save( layer.get(), prefix + QStringLiteral( "anonymized.gpkg" ), QStringLiteral( "anonymized" ) );
  touch( prefix + QStringLiteral( "lock" ) );
  const QByteArray before = md5( prefix + QStringLiteral( "anonymized.gpkg" ) );
  QVariantMap p;
  p.insert( QStringLiteral( "INPUT" ), prefix + QStringLiteral( "anonymized.gpkg" ) );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "region" ), QStringLiteral( "sex" ) } );
  p.insert( QStringLiteral( "K" ), 2 );
  p.insert( QStringLiteral( "VIOLATIONS" ), dir.filePath( QStringLiteral( "violations.gpkg" ) ) );
  vbastest::run( QStringLiteral( "vbas:checkanonymity" ), p, mContext, true );
  QCOMPARE( md5( prefix + QStringLiteral( "anonymized.gpkg" ) ), before );
}

// ---------------------------------------------------------------------------------------------
// A FIFO, a device node or a link as a destination is refused by name and left as it is.

void TestOwnership::specialFilesAreRefused_data()
{
  QTest::addColumn<QString>( "kind" );
  QTest::newRow( "FIFO" ) << "FIFO";
  QTest::newRow( "device node" ) << "device";
  QTest::newRow( "symbolic link" ) << "symbolic link";
}

void TestOwnership::specialFilesAreRefused()
{
  QFETCH( QString, kind );
  QTemporaryDir dir; // never the system's /dev
  const QString report = dir.filePath( QStringLiteral( "report.html" ) );
  const QByteArray path = QFile::encodeName( report );
  if ( kind == QLatin1String( "FIFO" ) )
    QCOMPARE( ::mkfifo( path.constData(), 0600 ), 0 );
  else if ( kind == QLatin1String( "device" ) && ::mknod( path.constData(), S_IFCHR | 0600, makedev( 1, 3 ) ) != 0 )
    QSKIP( "mknod needs root" );
  else if ( kind == QLatin1String( "symbolic link" ) )
  {
    touch( dir.filePath( QStringLiteral( "target.html" ) ) );
    QVERIFY( QFile::link( dir.filePath( QStringLiteral( "target.html" ) ), report ) );
  }
  struct stat before
  {
  };
  QCOMPARE( ::lstat( path.constData(), &before ), 0 );
  auto layer = records( 2 );
  QVariantMap p = parameters( layer.get() );
  p.insert( QStringLiteral( "REPORT" ), report );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "is a %1" ).arg( kind == QLatin1String( "device" ) ? QStringLiteral( "a device" ).mid( 2 ) : kind ) ), qPrintable( feedback.error() ) );
  struct stat after
  {
  };
  QCOMPARE( ::lstat( path.constData(), &after ), 0 );
  QCOMPARE( after.st_ino, before.st_ino );
  QCOMPARE( after.st_mode, before.st_mode );
}

// ---------------------------------------------------------------------------------------------
// A release table written into the records' own GeoPackage leaves that file's journal mode as it was.

void TestOwnership::journalModeOfTheInputIsKept()
{
  QTemporaryDir dir;
  const QString file = dir.filePath( QStringLiteral( "records.gpkg" ) );
  auto layer = records( 2 );
  vbastest::save( layer.get(), file, QStringLiteral( "records" ) );
  QCOMPARE( sql( file, QStringLiteral( "PRAGMA journal_mode" ) ), QStringList { QStringLiteral( "delete" ) } );
  QgsVectorLayer records( file + QStringLiteral( "|layername=records" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVariantMap p = parameters( &records );
  p.insert( QStringLiteral( "ANONYMIZED" ), QStringLiteral( "ogr:dbname='%1' table=\"release\"" ).arg( file ) );
  p.insert( QStringLiteral( "LOOKUP" ), QStringLiteral( "ogr:dbname='%1' table=\"lookup\"" ).arg( file ) );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( sql( file, QStringLiteral( "PRAGMA journal_mode" ) ), QStringList { QStringLiteral( "delete" ) } );
  QVERIFY( !QFile::exists( file + QStringLiteral( "-wal" ) ) );
  QVERIFY( !QFile::exists( file + QStringLiteral( "-shm" ) ) );
  QCOMPARE( contents( file ).value( QStringLiteral( "release" ) ).size(), 18 );
}

// A table destination in a plain SQLite file is refused before anything is written: GDAL's SQLite
// driver does not keep its metadata through the renames of the reversible replace (the staging table
// was left behind and no release written).
void TestOwnership::sqliteTableIsRefused()
{
  QTemporaryDir dir;
  const QString file = dir.filePath( QStringLiteral( "out.sqlite" ) );
  auto layer = records( 2 );
  QVariantMap p = parameters( layer.get() );
  p.insert( QStringLiteral( "ANONYMIZED" ), QStringLiteral( "ogr:dbname='%1' table=\"release\"" ).arg( file ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "tables are written into GeoPackage (.gpkg) files or PostgreSQL" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( vbastest::entries( dir.path() ), QStringList() );
}

QTEST_MAIN( TestOwnership )
#include "test_ownership.moc"
