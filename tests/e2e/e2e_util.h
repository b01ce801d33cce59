// Helpers shared by the end-to-end tests (test_e2e, test_faults, test_desktop): an isolated QGIS profile with the
// freshly built plugin folder linked in and enabled, qgis_process runs in it with a timeout, their
// --json output, and tables read back with GDAL's OGR C API.
//
// The helpers that check something use QVERIFY/QFAIL: call them through CHECKED so that a failure
// stops the calling test function too.
//
// Privacy: nothing here prints the contents of a record; a failure message gives at most the tail of
// qgis_process's stderr (its own messages, which name fields and counts).
#pragma once

#include "tests/shared/checked.h"
#include "tests/shared/ctest_path.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <gdal.h>
#include <ogr_api.h>

namespace e2e
{

const QString kNull = QStringLiteral( "\x01<NULL>" ); // a NULL is a category of its own
const int kProcessTimeoutMs = 300000;

using vbastest::tail;

//! One attribute table read with OGR (first layer of the dataset).
struct Table
{
    bool ok = false;
    QString error;
    QStringList fieldNames;    // every field of the layer
    bool hasGeometry = false;  // geometry column or geometry type
    QVector<qint64> fids;      // the feature ids, in file order
    QVector<QStringList> rows; // the wanted fields, in the order asked, NULL as kNull; in file order
};

inline Table readTable( const QString &path, const QStringList &wanted )
{
  Table t;
  GDALDatasetH ds = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  if ( !ds )
  {
    t.error = QStringLiteral( "cannot open %1" ).arg( path );
    return t;
  }
  OGRLayerH layer = GDALDatasetGetLayerCount( ds ) > 0 ? GDALDatasetGetLayer( ds, 0 ) : nullptr;
  if ( !layer )
  {
    t.error = QStringLiteral( "no layer in %1" ).arg( path );
    GDALClose( ds );
    return t;
  }
  OGRFeatureDefnH defn = OGR_L_GetLayerDefn( layer );
  for ( int i = 0; i < OGR_FD_GetFieldCount( defn ); ++i )
    t.fieldNames << QString::fromUtf8( OGR_Fld_GetNameRef( OGR_FD_GetFieldDefn( defn, i ) ) );
  t.hasGeometry = OGR_FD_GetGeomFieldCount( defn ) > 0 || OGR_L_GetGeomType( layer ) != wkbNone;
  QVector<int> indexes;
  for ( const QString &name : wanted )
  {
    const int idx = OGR_FD_GetFieldIndex( defn, name.toUtf8().constData() );
    if ( idx < 0 )
    {
      t.error = QStringLiteral( "%1 has no field %2" ).arg( path, name );
      GDALClose( ds );
      return t;
    }
    indexes << idx;
  }
  OGR_L_ResetReading( layer );
  while ( OGRFeatureH f = OGR_L_GetNextFeature( layer ) )
  {
    QStringList row;
    row.reserve( indexes.size() );
    for ( int idx : indexes )
      row << ( OGR_F_IsFieldSetAndNotNull( f, idx ) ? QString::fromUtf8( OGR_F_GetFieldAsString( f, idx ) ) : kNull );
    t.fids << OGR_F_GetFID( f );
    t.rows << row;
    OGR_F_Destroy( f );
  }
  GDALClose( ds );
  t.ok = true;
  return t;
}

//! How a process ended and what it wrote.
struct ProcessResult
{
    int exitCode = -1; //!< the exit code of a normal exit, -1 when a signal ended the process
    int signal = 0;    //!< the signal that ended the process, 0 for a normal exit
    QByteArray out, err;
    qint64 ms = 0; //!< from start to end

    QString ending() const { return signal ? QStringLiteral( "killed by signal %1" ).arg( signal ) : QStringLiteral( "exit %1" ).arg( exitCode ); }
};

/**
 * Parses the --json output of qgis_process (whatever precedes the first brace is skipped); records a
 * failure naming what when there is none or it has no 'results' object.
 */
inline void parseJson( const QString &what, const ProcessResult &r, QJsonObject &document )
{
  const int brace = r.out.indexOf( '{' );
  QVERIFY2( brace >= 0, qPrintable( QStringLiteral( "%1 wrote no JSON; stderr:\n%2" ).arg( what, tail( r.err ) ) ) );
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson( r.out.mid( brace ), &parseError );
  QVERIFY2( parseError.error == QJsonParseError::NoError, qPrintable( QStringLiteral( "%1: bad JSON: %2" ).arg( what, parseError.errorString() ) ) );
  QVERIFY2( doc.isObject() && doc.object().value( QStringLiteral( "results" ) ).isObject(), qPrintable( QStringLiteral( "%1: the JSON has no 'results' object" ).arg( what ) ) );
  document = doc.object();
}

/**
 * An isolated QGIS profile (a temporary folder) in which the build's plugin folder is linked and
 * enabled, and qgis_process runs in it (headless: QT_QPA_PLATFORM=offscreen).
 */
class QgisProcess
{
  public:
    //! Links VBAS_PLUGIN_DIR into the profile, enables the plugin and checks that qgis_process lists every one of algorithms.
    void setUp( const QStringList &algorithms )
    {
      QVERIFY( mProfile.isValid() );
      const QString pluginDir = ctestPath( "VBAS_PLUGIN_DIR" );
      QVERIFY2( QFileInfo::exists( pluginDir + "/" VBAS_LIBRARY ), qPrintable( pluginDir + "/" VBAS_LIBRARY " is missing: build vbas_provider" ) );
      QVERIFY2( QFileInfo::exists( pluginDir + "/metadata.txt" ), qPrintable( pluginDir + "/metadata.txt is missing" ) );
      CHECKED( install( pluginDir ) );
      ProcessResult r;
      CHECKED( run( { QStringLiteral( "list" ) }, mProfile.path(), r ) );
      QVERIFY2( r.exitCode == 0, qPrintable( "list failed:\n" + tail( r.err ) ) );
      const QString listing = QString::fromUtf8( r.out );
      for ( const QString &alg : algorithms )
        QVERIFY2( listing.contains( alg ), qPrintable( alg + " is not in qgis_process list; stderr:\n" + tail( r.err ) ) );
    }

    //! Links pluginDir into the profile as the plugin vbas and enables it.
    void install( const QString &pluginDir )
    {
      const QString plugins = mProfile.filePath( QStringLiteral( "profiles/default/python/plugins" ) );
      QVERIFY( QDir().mkpath( plugins ) );
      QVERIFY( QFile::link( pluginDir, plugins + "/vbas" ) );

      mEnv = QProcessEnvironment::systemEnvironment();
      mEnv.insert( QStringLiteral( "QT_QPA_PLATFORM" ), QStringLiteral( "offscreen" ) );
      mEnv.insert( QStringLiteral( "QGIS_CUSTOM_CONFIG_PATH" ), mProfile.path() );

      ProcessResult r;
      CHECKED( run( { QStringLiteral( "plugins" ), QStringLiteral( "enable" ), QStringLiteral( "vbas" ) }, mProfile.path(), r ) );
      QVERIFY2( r.exitCode == 0, qPrintable( "plugins enable vbas failed:\n" + tail( r.out + r.err ) ) );
    }

    /**
     * Starts program (qgis_process when empty) with args in workingDir and the profile's environment,
     * without waiting for it to end.
     */
    void start( QProcess &p, const QStringList &args, const QString &workingDir, const QString &program = QString() ) const
    {
      const QString executable = program.isEmpty() ? QStringLiteral( VBAS_QGIS_PROCESS ) : program;
      p.setProcessEnvironment( mEnv );
      p.setWorkingDirectory( workingDir );
      p.start( executable, args );
      QVERIFY2( p.waitForStarted( 30000 ), qPrintable( QStringLiteral( "cannot start %1" ).arg( executable ) ) );
    }

    //! Waits for a started process; kills it and records a failure naming what when it takes longer than timeoutMs.
    static void finish( QProcess &p, const QString &what, const QElapsedTimer &timer, int timeoutMs, ProcessResult &r )
    {
      if ( !p.waitForFinished( std::max<qint64>( 1, timeoutMs - timer.elapsed() ) ) )
      {
        p.kill();
        p.waitForFinished( 10000 );
        QFAIL( qPrintable( QStringLiteral( "%1 timed out" ).arg( what ) ) );
      }
      r.out = p.readAllStandardOutput();
      r.err = p.readAllStandardError();
      r.ms = timer.elapsed();
      const bool normal = p.exitStatus() == QProcess::NormalExit;
      r.exitCode = normal ? p.exitCode() : -1;
      r.signal = normal ? 0 : p.exitCode(); // Qt reports the terminating signal as the exit code of a crash
      qInfo( "%s: %s, %.1f s", qPrintable( what ), qPrintable( r.ending() ), r.ms / 1000.0 );
    }

    //! The environment of its runs: the isolated profile (QGIS_CUSTOM_CONFIG_PATH), headless.
    QProcessEnvironment environment() const { return mEnv; }

    /**
     * Runs qgis_process with args in workingDir and waits for it (timeoutMs at the most). Of a "run",
     * every input file (a parameter that is no destination, naming an existing file) must be the same,
     * byte for byte, afterwards, whether the run succeeded or not, with no -wal or -shm file new beside it.
     */
    void run( const QStringList &args, const QString &workingDir, ProcessResult &r, int timeoutMs = kProcessTimeoutMs ) const
    {
      QMap<QString, QByteArray> inputs;
      CHECKED( inputFiles( args, workingDir, inputs ) );
      QProcess p;
      QElapsedTimer timer;
      timer.start();
      CHECKED( start( p, args, workingDir ) );
      finish( p, QStringLiteral( "qgis_process %1" ).arg( args.mid( 0, 3 ).join( ' ' ) ), timer, timeoutMs, r );
      for ( auto it = inputs.cbegin(); it != inputs.cend(); ++it )
        QVERIFY2( fingerprint( it.key() ) == it.value(), qPrintable( QStringLiteral( "the input %1 changed (%2)" ).arg( it.key(), r.ending() ) ) );
    }

    //! Runs "qgis_process --json run algorithm -- params", which must succeed; document is its whole JSON output.
    void runJson( const QString &algorithm, const QStringList &params, const QString &workingDir, QJsonObject &document, ProcessResult &r, int timeoutMs = kProcessTimeoutMs ) const
    {
      CHECKED( run( QStringList { QStringLiteral( "--json" ), QStringLiteral( "run" ), algorithm, QStringLiteral( "--" ) } + params, workingDir, r, timeoutMs ) );
      QVERIFY2( r.exitCode == 0, qPrintable( QStringLiteral( "%1 exited with %2; stderr:\n%3" ).arg( algorithm ).arg( r.exitCode ).arg( tail( r.err ) ) ) );
      parseJson( algorithm, r, document );
    }

  private:
    //! A file's MD5, and which of its -wal and -shm companions exist.
    static QByteArray fingerprint( const QString &path )
    {
      QFile file( path );
      if ( !file.open( QIODevice::ReadOnly ) )
        return QByteArray( "unreadable" );
      QCryptographicHash hash( QCryptographicHash::Md5 );
      hash.addData( &file );
      return hash.result().toHex() + ( QFileInfo::exists( path + "-wal" ) ? "+wal" : "" ) + ( QFileInfo::exists( path + "-shm" ) ? "+shm" : "" );
    }

    //! The files that the input parameters of a "run" name, with their fingerprints.
    void inputFiles( const QStringList &args, const QString &workingDir, QMap<QString, QByteArray> &files ) const
    {
      const int at = args.indexOf( QStringLiteral( "run" ) );
      if ( at < 0 || at + 1 >= args.size() )
        return;
      const QString algorithm = args.at( at + 1 );
      if ( !mDestinations.contains( algorithm ) )
      {
        ProcessResult help;
        CHECKED( run( { QStringLiteral( "--json" ), QStringLiteral( "help" ), algorithm }, workingDir, help ) );
        const int brace = help.out.indexOf( '{' ); // none for a model file: every existing file it names is then an input
        const QJsonObject parameters = brace < 0 ? QJsonObject() : QJsonDocument::fromJson( help.out.mid( brace ) ).object().value( QStringLiteral( "parameters" ) ).toObject();
        QSet<QString> destinations;
        for ( auto it = parameters.begin(); it != parameters.end(); ++it )
          if ( it.value().toObject().value( QStringLiteral( "is_destination" ) ).toBool() )
            destinations.insert( it.key() );
        mDestinations.insert( algorithm, destinations );
      }
      for ( const QString &arg : args.mid( at + 2 ) )
      {
        const QString name = arg.section( '=', 0, 0 ), value = arg.section( '=', 1 ).section( '|', 0, 0 );
        const QString path = QDir( workingDir ).absoluteFilePath( value );
        if ( arg.contains( '=' ) && !mDestinations.value( algorithm ).contains( name ) && !value.isEmpty() && QFileInfo( path ).isFile() )
          files.insert( path, fingerprint( path ) );
      }
    }

    QTemporaryDir mProfile;
    QProcessEnvironment mEnv;
    mutable QMap<QString, QSet<QString>> mDestinations; //!< per algorithm: its destination parameters
};

} // namespace e2e
