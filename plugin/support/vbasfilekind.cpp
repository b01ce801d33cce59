#include "plugin/support/vbasfilekind.h"

#include <QFile>
#include <QObject>

#include <sys/stat.h>

QString vbasSpecialFileKind( const QString &path, VbasLinks links )
{
  struct stat st
  {
  };
  const QByteArray name = QFile::encodeName( path );
  if ( ( links == VbasLinks::Follow ? ::stat( name.constData(), &st ) : ::lstat( name.constData(), &st ) ) != 0 || S_ISREG( st.st_mode ) )
    return QString();
  if ( S_ISDIR( st.st_mode ) )
    return QObject::tr( "a folder" );
  if ( S_ISLNK( st.st_mode ) )
    return QObject::tr( "a symbolic link" );
  if ( S_ISFIFO( st.st_mode ) )
    return QObject::tr( "a FIFO" );
  if ( S_ISSOCK( st.st_mode ) )
    return QObject::tr( "a socket" );
  if ( S_ISCHR( st.st_mode ) || S_ISBLK( st.st_mode ) )
    return QObject::tr( "a device" );
  return QObject::tr( "not a regular file" );
}
