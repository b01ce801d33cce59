#include "outputs/vbastemporaries.h"

#include "outputs/vbasgdal.h"
#include "support/vbasdatabase.h"
#include "support/vbaslocation.h"

#include <qgsabstractdatabaseproviderconnection.h>
#include <qgsexception.h>

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
  struct stat st {};
  const bool gone = ::fstat( fd, &st ) == 0 && S_ISREG( st.st_mode ) && ::flock( fd, LOCK_EX | LOCK_NB ) == 0;
  ::close( fd );
  return gone;
}

bool isRegularFile( const QString &path )
{
  struct stat st {};
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

VbasTemporaries::Lock::Lock( const QString &folder, const QString &token )
  : mPath( lockPath( folder, machineTag(), QString::number( ::getpid() ), token ) )
{
  mFd = ::open( QFile::encodeName( mPath ).constData(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600 );
  if ( mFd >= 0 && ::flock( mFd, LOCK_EX | LOCK_NB ) == 0 )
    return;
  mError = QString::fromLocal8Bit( std::strerror( errno ) );
  if ( mFd >= 0 )
    ::close( mFd );
  mFd = -1;
}

VbasTemporaries::Lock::~Lock()
{
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

void VbasTemporaries::removeStaleTables( const QString &provider, const QString &uri, const QString &schema, const QString &lockFolder, Cleanup &cleanup )
{
  static const QRegularExpression kPattern( QStringLiteral( "^vbas_(partial|previous)_([0-9a-f]+)_(\\d+)_([0-9a-f]+)$" ) );
  try
  {
    // A GeoPackage is only ever opened for update through GDAL itself: QGIS's own connection would switch it to WAL.
    const bool gdal = provider == QLatin1String( "ogr" );
    const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = gdal ? nullptr : VbasDatabase::connection( provider, uri );
    QStringList tables = gdal ? VbasGdal::tableNames( uri ) : QStringList();
    for ( const QgsAbstractDatabaseProviderConnection::TableProperty &table : db ? db->tables( schema ) : QList<QgsAbstractDatabaseProviderConnection::TableProperty>() )
      tables << table.tableName();
    for ( const QString &table : tables )
    {
      const QRegularExpressionMatch match = kPattern.match( table );
      if ( !match.hasMatch() || match.captured( 2 ) != machineTag() || !runIsGone( lockPath( lockFolder, match.captured( 2 ), match.captured( 3 ), match.captured( 4 ) ) ) )
        continue;
      if ( match.captured( 1 ) == QLatin1String( "previous" ) )
        cleanup.previous << table;
      else if ( gdal ? VbasGdal::dropTable( uri, table ) : ( db->dropVectorTable( schema, table ), true ) )
        ++cleanup.removed;
    }
  }
  catch ( const QgsProviderConnectionException & )
  {
    // Not a database we can list: nothing of ours to remove there.
  }
}
