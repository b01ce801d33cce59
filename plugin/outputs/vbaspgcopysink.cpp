#include "plugin/outputs/vbaspgcopysink.h"

#include <qgsdatasourceuri.h>
#include <qgsexception.h>
#include <qgssqliteutils.h>

#include <QObject>
#include <QStringList>
#include <QVariant>

#include <libpq-fe.h>

#include <cstring>

namespace
{

//! The rows are sent to the server in pieces of about this many bytes.
constexpr int kSendBytes = 1 << 20;

//! Appends text to rows as a value of COPY's text format: backslash, tab, newline and carriage return escaped.
void appendCopyText( QByteArray &rows, const QByteArray &text )
{
  if ( std::strpbrk( text.constData(), "\\\t\n\r" ) == nullptr )
  {
    rows += text;
    return;
  }
  for ( const char c : text )
  {
    switch ( c )
    {
      case '\\':
        rows += "\\\\";
        break;
      case '\t':
        rows += "\\t";
        break;
      case '\n':
        rows += "\\n";
        break;
      case '\r':
        rows += "\\r";
        break;
      default:
        rows += c;
    }
  }
}

//! The text QGIS's provider binds for a value that is not NULL: its QVariant text, read by libpq up to its first NUL.
QByteArray parameterText( const QVariant &value )
{
  QByteArray text = value.toString().toUtf8();
  text.truncate( static_cast<int>( std::strlen( text.constData() ) ) );
  return text;
}

//! What the server or libpq said about the last failure.
QString message( pg_conn *connection, const PGresult *result = nullptr )
{
  const char *primary = result ? PQresultErrorField( result, PG_DIAG_MESSAGE_PRIMARY ) : nullptr;
  return QString::fromUtf8( primary ? primary : PQerrorMessage( connection ) ).trimmed();
}

} // namespace

void VbasPgCopySink::Finish::operator()( pg_conn *connection ) const
{
  PQfinish( connection ); // before COMMIT, the server rolls the rows back
}

bool VbasPgCopySink::writes( const QgsFields &fields, vbasqgis::WkbType wkbType )
{
  return textAndNumbers( fields, wkbType );
}

VbasPgCopySink::VbasPgCopySink( const QString &uri, const QgsFields &fields )
  : mFields( fields.count() )
{
  const QgsDataSourceUri source( uri );
  const QString table = ( source.schema().isEmpty() ? QString() : QgsSqliteUtils::quotedIdentifier( source.schema() ) + '.' ) + QgsSqliteUtils::quotedIdentifier( source.table() );
  // connectionInfo( true ) resolves an authentication configuration; libpq's messages never hold the password.
  mConnection.reset( PQconnectdb( source.connectionInfo( true ).toUtf8().constData() ) );
  if ( PQstatus( mConnection.get() ) != CONNECTION_OK )
    throw QgsProcessingException( QObject::tr( "Could not connect to the database to write %1: %2" ).arg( table, message( mConnection.get() ) ) );
  QStringList columns;
  for ( const QgsField &field : fields )
    columns << QgsSqliteUtils::quotedIdentifier( field.name() );
  // Text in UTF-8, as QGIS's provider sends it.
  if ( PQsetClientEncoding( mConnection.get(), "UTF8" ) != 0 || !execute( QStringLiteral( "BEGIN" ), PGRES_COMMAND_OK )
       || !execute( QStringLiteral( "COPY %1 (%2) FROM STDIN" ).arg( table, columns.join( ',' ) ), PGRES_COPY_IN ) )
    throw QgsProcessingException( QObject::tr( "Could not begin writing %1: %2" ).arg( table, mError.isEmpty() ? message( mConnection.get() ) : mError ) );
  mCopying = true;
}

bool VbasPgCopySink::addFeature( QgsFeature &feature, QgsFeatureSink::Flags )
{
  if ( !mCopying )
    return fail( mError.isEmpty() ? QObject::tr( "The rows were committed already." ) : mError );
  const QgsAttributes attributes = feature.attributes();
  for ( int i = 0; i < mFields; ++i )
  {
    const QVariant value = i < attributes.size() ? attributes.at( i ) : QVariant();
    if ( i > 0 )
      mRows += '\t';
    if ( value.isNull() )
    {
      mRows += "\\N";
      continue;
    }
    // Lists and maps QGIS's provider writes in forms of its own (arrays, hstore, JSON): refused, not copied.
    const int type = value.userType();
    if ( type == QMetaType::QStringList || type == QMetaType::QVariantList || type == QMetaType::QVariantMap )
    {
      mCopying = false;
      return fail( QObject::tr( "A list or a map was handed to a field of text, whole numbers or reals." ) );
    }
    appendCopyText( mRows, parameterText( value ) );
  }
  mRows += '\n';
  return mRows.size() < kSendBytes || send();
}

bool VbasPgCopySink::flushBuffer()
{
  if ( !mCopying )
    return mError.isEmpty();
  mCopying = false;
  if ( !send() )
    return false;
  if ( PQputCopyEnd( mConnection.get(), nullptr ) != 1 )
    return fail( message( mConnection.get() ) );
  // COPY's own result, then none: a value the server refused fails it, and nothing was written.
  PGresult *result = PQgetResult( mConnection.get() );
  const bool copied = PQresultStatus( result ) == PGRES_COMMAND_OK;
  if ( !copied )
    mError = message( mConnection.get(), result );
  PQclear( result );
  while ( ( result = PQgetResult( mConnection.get() ) ) )
    PQclear( result );
  return copied && execute( QStringLiteral( "COMMIT" ), PGRES_COMMAND_OK );
}

bool VbasPgCopySink::execute( const QString &sql, int status )
{
  PGresult *result = PQexec( mConnection.get(), sql.toUtf8().constData() );
  const bool ok = PQresultStatus( result ) == status;
  if ( !ok )
    mError = message( mConnection.get(), result );
  PQclear( result );
  return ok;
}

bool VbasPgCopySink::send()
{
  if ( PQputCopyData( mConnection.get(), mRows.constData(), mRows.size() ) != 1 )
  {
    mCopying = false;
    return fail( message( mConnection.get() ) );
  }
  mRows.clear();
  return true;
}

bool VbasPgCopySink::fail( const QString &error )
{
  mError = error;
  return false;
}
