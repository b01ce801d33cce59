#include "plugin/outputs/vbastemporaries.h"

#include "plugin/outputs/vbasgdal.h"
#include "plugin/support/vbaslocation.h"

#include <qgsdatasourceuri.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QRegularExpression>
#include <QSysInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <libpq-fe.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace
{

//! This machine in the temporaries' names: its machine id (systemd's, else D-Bus's), hashed; the host name only if it has none.
QString machineTag()
{
  static const QString tag = [] {
    QByteArray id;
    for ( const char *path : { "/etc/machine-id", "/var/lib/dbus/machine-id" } )
    {
      QFile file( QString::fromLatin1( path ) );
      if ( id.isEmpty() && file.open( QIODevice::ReadOnly ) )
        id = file.readAll().trimmed();
    }
    if ( id.isEmpty() )
      id = QSysInfo::machineHostName().toUtf8();
    return QString::fromLatin1( QCryptographicHash::hash( id, QCryptographicHash::Sha256 ).toHex().left( 12 ) );
  }();
  return tag;
}

QString lockPath( const QString &folder, const QString &machine, const QString &pid, const QString &token )
{
  return QDir( folder ).filePath( QStringLiteral( ".vbas-partial-%1-%2-%3-lock" ).arg( machine, pid, token ) );
}

//! Whether the run that holds this lock file is gone: the file exists, is ours, and its lock can be taken.
bool runIsGone( const QString &lockFile )
{
  const int fd = ::open( QFile::encodeName( lockFile ).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC );
  if ( fd < 0 )
    return false; // no lock: nothing proves the run gone
  struct stat st
  {
  };
  const bool gone = ::fstat( fd, &st ) == 0 && S_ISREG( st.st_mode ) && ::flock( fd, LOCK_EX | LOCK_NB ) == 0;
  ::close( fd );
  return gone;
}

//! The advisory lock key of an output's token (64 random bits, in hex).
qint64 lockKey( const QString &token )
{
  return static_cast<qint64>( token.toULongLong( nullptr, 16 ) );
}

//! A libpq connection to the database of uri (an authentication configuration expanded), or nullptr with the reason.
PGconn *connectTo( const QString &uri, QString &error )
{
  PGconn *connection = PQconnectdb( QgsDataSourceUri( uri ).connectionInfo( true ).toUtf8().constData() );
  if ( PQstatus( connection ) == CONNECTION_OK )
    return connection;
  error = QString::fromUtf8( PQerrorMessage( connection ) ).trimmed();
  PQfinish( connection );
  return nullptr;
}

//! Runs a statement; its first value ("t", "f"), or empty on an error.
QString firstValue( PGconn *connection, const QString &sql )
{
  PGresult *result = PQexec( connection, sql.toUtf8().constData() );
  const bool rows = PQresultStatus( result ) == PGRES_TUPLES_OK && PQntuples( result ) > 0;
  const QString value = rows ? QString::fromUtf8( PQgetvalue( result, 0, 0 ) ) : QString( PQresultStatus( result ) == PGRES_COMMAND_OK ? "ok" : "" );
  PQclear( result );
  return value;
}

bool isRegularFile( const QString &path )
{
  struct stat st
  {
  };
  return ::lstat( QFile::encodeName( path ).constData(), &st ) == 0 && S_ISREG( st.st_mode );
}

} // namespace

QString VbasTemporaries::filePrefix( const QString &token )
{
  return QStringLiteral( ".vbas-partial-%1-%2-%3-" ).arg( machineTag() ).arg( ::getpid() ).arg( token );
}

QString VbasTemporaries::stagingTable( const QString &token )
{
  return QStringLiteral( "vbas_partial_%1_%2_%3" ).arg( machineTag() ).arg( ::getpid() ).arg( token );
}

QString VbasTemporaries::previousFile( const QString &token, const QString &path )
{
  const QFileInfo file( path );
  return file.dir().filePath( QStringLiteral( ".vbas-previous-%1-%2-%3-%4" ).arg( machineTag() ).arg( ::getpid() ).arg( token, file.fileName() ) );
}

QString VbasTemporaries::previousTable( const QString &token )
{
  return QStringLiteral( "vbas_previous_%1_%2_%3" ).arg( machineTag() ).arg( ::getpid() ).arg( token );
}

std::unique_ptr<VbasTemporaries::Lock> VbasTemporaries::Lock::inFolder( const QString &folder, const QString &token )
{
  std::unique_ptr<Lock> lock( new Lock() );
  lock->mPath = lockPath( folder, machineTag(), QString::number( ::getpid() ), token );
  lock->mFd = ::open( QFile::encodeName( lock->mPath ).constData(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600 );
  if ( lock->mFd >= 0 && ::flock( lock->mFd, LOCK_EX | LOCK_NB ) == 0 )
    return lock;
  lock->mError = QString::fromLocal8Bit( std::strerror( errno ) );
  if ( lock->mFd >= 0 )
    ::close( lock->mFd );
  lock->mFd = -1;
  return lock;
}

std::unique_ptr<VbasTemporaries::Lock> VbasTemporaries::Lock::onDatabase( const QString &uri, const QString &token )
{
  std::unique_ptr<Lock> lock( new Lock() );
  lock->mConnection = connectTo( uri, lock->mError );
  if ( lock->mConnection && firstValue( lock->mConnection, QStringLiteral( "SELECT pg_try_advisory_lock(%1)" ).arg( lockKey( token ) ) ) != QLatin1String( "t" ) )
    lock->mError = QObject::tr( "the advisory lock %1 is taken" ).arg( lockKey( token ) );
  return lock;
}

VbasTemporaries::Lock::~Lock()
{
  if ( mConnection )
    PQfinish( mConnection ); // the session ends: the server releases its lock
  if ( mFd < 0 )
    return;
  ::unlink( QFile::encodeName( mPath ).constData() ); // unlinked while locked: no other run can take it in between
  ::close( mFd );
}

void VbasTemporaries::removeStaleFiles( const QString &folder, const QSet<QString> &keep, Cleanup &cleanup )
{
  static const QRegularExpression kPattern( QStringLiteral( "^\\.vbas-(partial|previous)-([0-9a-f]+)-(\\d+)-([0-9a-f]+)-(.+)$" ) );
  const QDir dir( folder );
  QMap<QString, int> left; // per lock file of a dead run: the temporaries it still has
  for ( const QString &name : dir.entryList( { QStringLiteral( ".vbas-*" ) }, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot ) )
  {
    const QRegularExpressionMatch match = kPattern.match( name );
    const QString path = dir.filePath( name );
    if ( !match.hasMatch() || match.captured( 2 ) != machineTag() || !isRegularFile( path ) || keep.contains( VbasLocation::ofFiles( QString(), { path } ).files.value( 0 ) ) )
      continue;
    const QString lock = lockPath( folder, match.captured( 2 ), match.captured( 3 ), match.captured( 4 ) );
    if ( path == lock || !runIsGone( lock ) )
    {
      left[lock] += path == lock ? 0 : 1;
      continue;
    }
    const bool previous = match.captured( 1 ) == QLatin1String( "previous" );
    if ( previous )
      cleanup.previous << path;
    else if ( QFile::remove( path ) )
      ++cleanup.removed;
    left[lock] += previous ? 1 : 0;
  }
  for ( auto it = left.cbegin(); it != left.cend(); ++it )
    if ( it.value() == 0 && runIsGone( it.key() ) )
      QFile::remove( it.key() ); // a dead run's lock with nothing left to guard
}

void VbasTemporaries::removeStaleTables( const QString &provider, const QString &uri, const QString &schema, Cleanup &cleanup )
{
  if ( provider != QLatin1String( "ogr" ) )
  {
    removeStalePostgresTables( uri, schema, cleanup );
    return;
  }
  // A GeoPackage is only ever opened for update through GDAL itself: QGIS's own connection would switch it to WAL.
  static const QRegularExpression kPattern( QStringLiteral( "^vbas_(partial|previous)_([0-9a-f]+)_(\\d+)_([0-9a-f]+)$" ) );
  for ( const QString &table : VbasGdal::tableNames( uri ) )
  {
    const QRegularExpressionMatch match = kPattern.match( table );
    if ( !match.hasMatch() || match.captured( 2 ) != machineTag() || !runIsGone( lockPath( QFileInfo( uri ).absolutePath(), match.captured( 2 ), match.captured( 3 ), match.captured( 4 ) ) ) )
      continue;
    if ( match.captured( 1 ) == QLatin1String( "previous" ) )
      cleanup.previous << table;
    else if ( VbasGdal::dropTable( uri, table ) )
      ++cleanup.removed;
  }
}

void VbasTemporaries::removeStalePostgresTables( const QString &uri, const QString &schema, Cleanup &cleanup )
{
  // The advisory lock is the server's: a staging table of any machine whose lock can be taken is a dead run's.
  static const QRegularExpression kPattern( QStringLiteral( "^vbas_(partial|previous)_[0-9a-f]{12}_\\d+_([0-9a-f]+)$" ) );
  QString error;
  PGconn *connection = connectTo( uri, error );
  if ( !connection )
    return; // not a database we can reach: nothing of ours to remove there
  const QString inSchema = schema.isEmpty() ? QStringLiteral( "current_schema()" ) : QStringLiteral( "'%1'" ).arg( QString( schema ).replace( '\'', QLatin1String( "''" ) ) );
  PGresult *tables = PQexec( connection, QStringLiteral( "SELECT tablename FROM pg_tables WHERE schemaname = %1 AND tablename LIKE 'vbas\\_%'" ).arg( inSchema ).toUtf8().constData() );
  for ( int row = 0; PQresultStatus( tables ) == PGRES_TUPLES_OK && row < PQntuples( tables ); ++row )
  {
    const QString table = QString::fromUtf8( PQgetvalue( tables, row, 0 ) );
    const QRegularExpressionMatch match = kPattern.match( table );
    if ( !match.hasMatch() || firstValue( connection, QStringLiteral( "SELECT pg_try_advisory_lock(%1)" ).arg( lockKey( match.captured( 2 ) ) ) ) != QLatin1String( "t" ) )
      continue; // held: its run lives, on whatever machine
    if ( match.captured( 1 ) == QLatin1String( "previous" ) )
      cleanup.previous << table;
    else if ( !firstValue( connection, QStringLiteral( "DROP TABLE %1\"%2\"" ).arg( schema.isEmpty() ? QString() : '"' + QString( schema ).replace( '"', QLatin1String( "\"\"" ) ) + "\".", table ) )
                 .isEmpty() )
      ++cleanup.removed;
  }
  PQclear( tables );
  PQfinish( connection ); // releases the locks taken here
}
