// A PostgreSQL + PostGIS server of a test's own: initdb in a temporary folder, listening on a Unix
// socket in that folder only (no TCP port, no system service), stopped when the test ends. A watchdog
// stops it too if the test process dies without cleaning up, so nothing is left running. The role
// custodian may connect only with its password (scram-sha-256); every other role is trusted.
// VBAS_PG_BIN names the folder of PostgreSQL's programs (tests/CMakeLists.txt).
#pragma once

#include "tests/shared/checked.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

//! A PostgreSQL server of the test's own, in a temporary folder.
class PgServer
{
  public:
    ~PgServer() { stop(); }

    //! PostgreSQL's programs (initdb, pg_ctl, psql, ...).
    static QString bin() { return QStringLiteral( VBAS_PG_BIN ); }

    //! initdb, start on a socket in the folder (the role custodian with its password only), create the database vbas with PostGIS.
    void start()
    {
      QVERIFY( mDir.isValid() );
      // The server runs as the postgres user when the test runs as root (initdb refuses root): it needs the folder.
      QVERIFY( QFile::setPermissions( mDir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner | QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther
                                                     | QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup ) );
      CHECKED( server( { bin() + "/initdb", "-D", data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C" } ) );
      QFile hba( mDir.filePath( QStringLiteral( "pg_hba.conf" ) ) );
      QVERIFY( hba.open( QIODevice::WriteOnly ) && hba.write( "local all custodian scram-sha-256\nlocal all all trust\n" ) > 0 );
      hba.close();
      CHECKED( server( { bin() + "/pg_ctl", "-D", data(), "-l", mDir.filePath( QStringLiteral( "server.log" ) ), "-w", "-t", "60", "-o",
                         QStringLiteral( "-k %1 -c listen_addresses='' -c fsync=off -c full_page_writes=off -c hba_file=%2" ).arg( mDir.path(), hba.fileName() ), "start" } ) );
      mRunning = true;
      watchdog();
      QString out;
      CHECKED( sql( QStringLiteral( "CREATE DATABASE vbas" ), out, QStringLiteral( "postgres" ) ) );
      CHECKED( sql( QStringLiteral( "CREATE EXTENSION postgis" ), out ) );
    }

    void stop()
    {
      if ( !mRunning )
        return;
      mRunning = false;
      const QStringList command = asServer( { bin() + "/pg_ctl", "-D", data(), "-m", "immediate", "-w", "stop" } );
      QProcess::execute( command.first(), command.mid( 1 ) );
    }

    //! The folder of the server's socket.
    QString socketFolder() const { return mDir.path(); }
    //! The connection, as QGIS data source URIs start.
    QString connection() const { return QStringLiteral( "dbname='vbas' host=%1 user='postgres'" ).arg( mDir.path() ); }
    //! The connection of role with its password, as QGIS data source URIs start (password as SQL writes it: '' for a quote).
    QString connection( const QString &role, const QString &password ) const
    {
      return QStringLiteral( "dbname='vbas' host=%1 user='%2' password='%3'" ).arg( mDir.path(), role, QString( password ).replace( QStringLiteral( "''" ), QStringLiteral( "\\'" ) ) );
    }
    //! The same for GDAL.
    QString gdal() const { return QStringLiteral( "PG:dbname=vbas host=%1 user=postgres" ).arg( mDir.path() ); }

    //! Runs statements through psql (unaligned, tuples only); records a failure unless they succeed.
    void sql( const QString &statements, QString &out, const QString &database = QStringLiteral( "vbas" ) ) const
    {
      QProcess p;
      p.start( bin() + "/psql", psqlArgs( statements, database ) );
      QVERIFY2( p.waitForFinished( 120000 ), "psql timed out" );
      out = QString::fromUtf8( p.readAllStandardOutput() ).trimmed();
      QVERIFY2( p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable( QStringLiteral( "psql failed: %1" ).arg( vbastest::tail( p.readAllStandardError() ) ) ) );
    }

    //! One number a query returns.
    qint64 number( const QString &query ) const
    {
      QString out;
      sql( query, out );
      bool ok = false;
      const qint64 n = out.toLongLong( &ok );
      if ( !ok )
        qWarning( "not a number from: %s", qPrintable( query ) );
      return ok ? n : -1;
    }

    //! psql's arguments for statements on database.
    QStringList psqlArgs( const QString &statements, const QString &database = QStringLiteral( "vbas" ) ) const
    {
      return { "-h", mDir.path(), "-U", "postgres", "-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", statements };
    }

  private:
    QString data() const { return mDir.filePath( QStringLiteral( "data" ) ); }

    //! A server command: as the postgres user when this test runs as root.
    static QStringList asServer( const QStringList &command ) { return ::geteuid() == 0 ? QStringList { "runuser", "-u", "postgres", "--" } + command : command; }

    void server( const QStringList &command ) const
    {
      const QStringList full = asServer( command );
      QProcess p;
      p.start( full.first(), full.mid( 1 ) );
      QVERIFY2( p.waitForFinished( 120000 ), qPrintable( command.first() + " timed out" ) );
      QVERIFY2( p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
                qPrintable( QStringLiteral( "%1 failed: %2" ).arg( command.first(), vbastest::tail( p.readAllStandardOutput() + p.readAllStandardError() ) ) ) );
    }

    //! A detached shell that stops the server once this process is gone, however it ended.
    void watchdog() const
    {
      const QString stop = asServer( { bin() + "/pg_ctl", "-D", data(), "-m", "immediate", "stop" } ).join( ' ' );
      QProcess::startDetached( QStringLiteral( "setsid" ), { "sh", "-c", QStringLiteral( "while kill -0 %1 2>/dev/null; do sleep 1; done; %2 >/dev/null 2>&1" ).arg( ::getpid() ).arg( stop ) } );
    }

    // Under /tmp whatever TMPDIR says: the postgres user must reach it, and a socket path has at most 107 bytes.
    QTemporaryDir mDir { QStringLiteral( "/tmp/vbas-pg-XXXXXX" ) };
    bool mRunning = false;
};
