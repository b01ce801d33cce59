#include "outputs/vbastemporaries.h"

#include "outputs/vbasdatabase.h"

#include <qgsabstractdatabaseproviderconnection.h>
#include <qgsexception.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSysInfo>

#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace
{

//! This machine in the temporaries' names: a pid is only checked on the machine that made it.
QString hostTag()
{
  static const QString tag = QString::fromLatin1( QCryptographicHash::hash( QSysInfo::machineHostName().toUtf8(), QCryptographicHash::Md5 ).toHex().left( 8 ) );
  return tag;
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

} // namespace

QString VbasTemporaries::filePrefix( const QString &token )
{
  return QStringLiteral( ".vbas-partial-%1-%2-%3-" ).arg( hostTag() ).arg( ::getpid() ).arg( token );
}

QString VbasTemporaries::stagingTable( const QString &token )
{
  return QStringLiteral( "vbas_partial_%1_%2_%3" ).arg( hostTag() ).arg( ::getpid() ).arg( token );
}

int VbasTemporaries::removeStaleFiles( const QString &folder )
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

int VbasTemporaries::removeStaleTables( const QString &provider, const QString &uri, const QString &schema )
{
  static const QRegularExpression kPattern( QStringLiteral( "^vbas_partial_([0-9a-f]+)_(\\d+)_" ) );
  int removed = 0;
  try
  {
    const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = VbasDatabase::connection( provider, uri );
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
