#include "plugin/support/vbassecrets.h"

#include <qgsdatasourceuri.h>

#include <QRegularExpression>
#include <QStringList>

namespace
{

//! The keys of a connection string whose value is a secret (sslpassword: of the client's SSL key; pwd: ODBC's).
const QStringList kSecretKeys { QStringLiteral( "password" ), QStringLiteral( "sslpassword" ), QStringLiteral( "pwd" ) };

/**
 * A PostgreSQL data source of QGIS, re-encoded by QgsDataSourceUri without its password: QGIS's own
 * parser decides what the password is, as the postgres provider reads it (quotes, escapes, spaces).
 * Any other text, or one without a password, unchanged.
 */
QString withoutPostgresPassword( const QString &text )
{
  static const QRegularExpression kPostgres( QStringLiteral( "^(postgres://|postgres:|postgis:)(.*)$" ), QRegularExpression::DotMatchesEverythingOption );
  const QRegularExpressionMatch match = kPostgres.match( text );
  if ( !match.hasMatch() )
    return text;
  QgsDataSourceUri uri( match.captured( 2 ) );
  bool secret = !uri.password().isEmpty();
  for ( const QString &key : kSecretKeys )
    secret = uri.removeParam( key ) > 0 || secret;
  if ( !secret )
    return text;
  uri.setPassword( QString() );
  return match.captured( 1 ) + uri.uri( false );
}

/**
 * Every secret key of a key=value connection string with its value, as libpq reads one: quoted
 * ('...', backslash escapes; unterminated: to the end) or up to the next white space, or the next |
 * (where QGIS's ogr provider ends the GDAL connection string of a source: PG:...|layername=...).
 */
QString withoutSecretValues( const QString &text )
{
  static const QRegularExpression kSecret( QStringLiteral( "(?<=^|[\\s|:;,?&])(?:%1)\\s*=\\s*(?:'(?:[^'\\\\]|\\\\.)*'?|(?:[^\\s|\\\\]|\\\\.)*)\\s*" ).arg( kSecretKeys.join( '|' ) ),
                                           QRegularExpression::CaseInsensitiveOption | QRegularExpression::DotMatchesEverythingOption );
  return QString( text ).replace( kSecret, QString() );
}

//! The password of every URL's user (scheme://user:password@host: libpq's postgresql://, GDAL's /vsicurl/https://).
QString withoutUrlPasswords( const QString &text )
{
  static const QRegularExpression kUserInfo( QStringLiteral( "(\\b[A-Za-z][A-Za-z0-9+.-]*://[^\\s/@:]*):[^\\s/]*@" ) );
  return QString( text ).replace( kUserInfo, QStringLiteral( "\\1@" ) );
}

} // namespace

QString VbasSecrets::withoutPasswords( const QString &text, bool *removed )
{
  const QString result = withoutUrlPasswords( withoutSecretValues( withoutPostgresPassword( text ) ) );
  if ( removed )
    *removed = result != text;
  return result;
}
