#include "plugin/inputs/vbaspgrows.h"

#include "plugin/support/vbasqgiscompat.h"

#include <qgsdatasourceuri.h>
#include <qgsexception.h>
#include <qgssqliteutils.h>
#include <qgsvectordataprovider.h>
#include <qgsvectorlayer.h>

#include <QSet>
#include <QtEndian>

#include <libpq-fe.h>

#include <cstring>
#include <memory>

namespace
{

//! QGIS's provider numbers the rows of a key of 32-bit whole numbers by the key, negative ones shifted above 2^31 (QgsPostgresUtils::int32pk_to_fid).
constexpr qint64 kInt32KeyOffset = qint64( 1 ) << 32;

//! The binary COPY's signature, before its flags and header extension.
constexpr char kSignature[] = "PGCOPY\n\377\r\n";
constexpr int kSignatureSize = sizeof kSignature; // with its closing NUL, which is part of the signature

//! A read field: where its value goes and the type QGIS's provider gives it.
struct Column
{
    int field = -1;
    vbasqgis::FieldType type = vbasqgis::Field::String;
    QVariant null; //!< the field's NULL, of its type, as QGIS's provider gives it
};

//! What to read: the connection, the COPY and how its columns are decoded.
struct Source
{
    QString connection; //!< libpq's connection string, an authentication configuration expanded
    QString table;      //!< as the messages name it
    QString copy;
    int fieldCount = 0;
    int key = -1; //!< the key's field
    QString keyName;
    bool keyRead = false; //!< the key is a read field
    QVector<Column> columns;
};

/**
 * The types whose value QGIS's provider reads as the text it asks for (QgsPostgresConn::fieldExpression)
 * and converts to the field's type (QgsPostgresProvider::convertValue), by the name QGIS gives the
 * column's type. Left to QGIS: timestamps and times (their text depends on the session's time zone,
 * and QGIS 3.22 to 3.44 read them alike only through QGIS), bytea, arrays, JSON, hstore, money, domains
 * and the types of extensions.
 */
bool decoded( const QgsField &field )
{
  static const QSet<QString> kTypes { QStringLiteral( "int2" ),      QStringLiteral( "int4" ),    QStringLiteral( "int8" ), QStringLiteral( "float4" ),
                                      QStringLiteral( "float8" ),    QStringLiteral( "numeric" ), QStringLiteral( "text" ), QStringLiteral( "varchar" ),
                                      QStringLiteral( "character" ), QStringLiteral( "date" ),    QStringLiteral( "bool" ) };
  return kTypes.contains( field.typeName() );
}

/**
 * The text QGIS's provider asks for a field (QgsPostgresConn::fieldExpression): a bool through boolout
 * ('t', 'f'), a 64-bit number as itself (read as its number, which prints as its text), the others as
 * their text. Every column is asked as text here, so that the COPY gives the very bytes QGIS parses.
 */
QString expression( const QgsField &field )
{
  const QString column = QgsSqliteUtils::quotedIdentifier( field.name() );
  return field.typeName() == QLatin1String( "bool" ) ? QStringLiteral( "boolout(%1)::text" ).arg( column ) : column + QStringLiteral( "::text" );
}

//! A value as QGIS's provider converts its text (QgsPostgresProvider::convertValue): 't' and 'f' for a bool, the others converted to the field's type, NULL where they do not convert.
QVariant value( const char *bytes, int size, const Column &column )
{
  const QString text = QString::fromUtf8( bytes, size );
  if ( column.type == vbasqgis::Field::Bool )
    return text == QLatin1String( "t" ) ? QVariant( true ) : text == QLatin1String( "f" ) ? QVariant( false ) : column.null;
  QVariant converted( text );
  return converted.convert( static_cast<int>( column.type ) ) ? converted : column.null;
}

//! What the server or libpq said about the last failure.
QString message( PGconn *connection, const PGresult *result = nullptr )
{
  const char *primary = result ? PQresultErrorField( result, PG_DIAG_MESSAGE_PRIMARY ) : nullptr;
  return QString::fromUtf8( primary ? primary : PQerrorMessage( connection ) ).trimmed();
}

/**
 * One COPY of the table in binary format: each value comes as its length and bytes, nothing escaped
 * (the text format would escape tabs, newlines and backslashes, to be undone here), and as every
 * column is asked as text, the bytes are the UTF-8 text QGIS's provider parses. The rows are read one
 * message at a time (PQgetCopyData, not asynchronous), never the whole table.
 */
class Copy
{
  public:
    explicit Copy( const Source &source )
      : mSource( source )
    {
    }
    ~Copy()
    {
      if ( mCopying ) // a refusal or a cancel mid-read: the server stops the COPY
        if ( PGcancel *cancel = PQgetCancel( mConnection.get() ) )
        {
          char error[256];
          PQcancel( cancel, error, sizeof error );
          PQfreeCancel( cancel );
        }
      PQfreemem( mMessage );
    }
    Copy( const Copy & ) = delete;
    Copy &operator=( const Copy & ) = delete;

    //! Connects and starts the COPY; false, with why set, when the server refuses either.
    bool start( QString &why )
    {
      mConnection.reset( PQconnectdb( mSource.connection.toUtf8().constData() ) );
      // Text in UTF-8, as QGIS's provider asks it; the session is otherwise the server's default, as QGIS's is.
      if ( PQstatus( mConnection.get() ) != CONNECTION_OK || PQsetClientEncoding( mConnection.get(), "UTF8" ) != 0 )
      {
        why = QObject::tr( "PostgreSQL could not be reached for a COPY: %1" ).arg( message( mConnection.get() ) );
        return false;
      }
      const std::unique_ptr<PGresult, decltype( &PQclear )> result( PQexec( mConnection.get(), mSource.copy.toUtf8().constData() ), &PQclear );
      mCopying = PQresultStatus( result.get() ) == PGRES_COPY_OUT;
      if ( !mCopying )
        why = QObject::tr( "PostgreSQL refused the COPY: %1" ).arg( message( mConnection.get(), result.get() ) );
      return mCopying;
    }

    bool next( QgsFeature &feature )
    {
      if ( mAt >= mSize && !fetch() )
        return false;
      const int count = take<qint16>();
      if ( count == -1 ) // the trailer: the COPY's end follows
      {
        if ( fetch() )
          fail( QObject::tr( "rows after the end of the COPY" ) );
        return false;
      }
      if ( count != mSource.columns.size() + 1 )
        fail( QObject::tr( "a row of %1 columns" ).arg( count ) );
      const int size = take<qint32>();
      if ( size < 0 ) // a view's key='...' may hold NULL, where QGIS's provider reads no number either
        throw QgsProcessingException( QObject::tr( "A records row of %1 has no key (its '%2' is NULL): give every row a key." ).arg( mSource.table, mSource.keyName ) );
      bool whole = false;
      const qint32 key = QByteArray::fromRawData( bytes( size ), size ).toInt( &whole );
      if ( !whole )
        fail( QObject::tr( "a row whose key is not a 32-bit whole number" ) );
      QgsAttributes attributes( mSource.fieldCount );
      if ( mSource.keyRead )
        attributes[mSource.key] = static_cast<qlonglong>( key ); // QGIS gives the key as the 64-bit feature id before its shift
      for ( const Column &column : mSource.columns )
      {
        const int length = take<qint32>();
        attributes[column.field] = length < 0 ? column.null : value( bytes( length ), length, column );
      }
      feature.setId( key >= 0 ? key : key + kInt32KeyOffset );
      feature.setAttributes( attributes );
      feature.setValid( true );
      return true;
    }

  private:
    //! The next message of the COPY, the binary header skipped in the first; false at its end, which the server confirms.
    bool fetch()
    {
      PQfreemem( mMessage );
      mMessage = nullptr;
      mAt = 0;
      mSize = PQgetCopyData( mConnection.get(), &mMessage, 0 );
      if ( mSize > 0 )
      {
        if ( mFirst )
          skipHeader();
        return mAt < mSize || fetch();
      }
      mCopying = false;
      const std::unique_ptr<PGresult, decltype( &PQclear )> result( PQgetResult( mConnection.get() ), &PQclear );
      if ( mSize != -1 || PQresultStatus( result.get() ) != PGRES_COMMAND_OK )
        throw QgsProcessingException( QObject::tr( "PostgreSQL stopped sending the records of %1: %2" ).arg( mSource.table, message( mConnection.get(), result.get() ) ) );
      return false;
    }

    void skipHeader()
    {
      mFirst = false;
      if ( std::memcmp( bytes( kSignatureSize ), kSignature, kSignatureSize ) != 0 )
        fail( QObject::tr( "no binary COPY header" ) );
      take<qint32>(); // flags
      bytes( take<qint32>() );
    }

    template<typename T>
    T take()
    {
      return qFromBigEndian<T>( bytes( sizeof( T ) ) );
    }

    //! The next size bytes of the message.
    const char *bytes( int size )
    {
      if ( size < 0 || size > mSize - mAt )
        fail( QObject::tr( "a row cut short" ) );
      mAt += size;
      return mMessage + mAt - size;
    }

    [[noreturn]] void fail( const QString &what ) const
    {
      throw QgsProcessingException( QObject::tr( "PostgreSQL's COPY of %1 gave %2: nothing was written. This is a fault of the plugin: please report it." ).arg( mSource.table, what ) );
    }

    Source mSource;
    std::unique_ptr<PGconn, decltype( &PQfinish )> mConnection { nullptr, &PQfinish };
    bool mCopying = false;
    bool mFirst = true;
    char *mMessage = nullptr;
    int mSize = 0;
    int mAt = 0;
};

//! Why QGIS's provider does not number layer's rows by one key column of 16- or 32-bit whole numbers (QGIS's PktInt), or nothing.
QString notIntegerKey( const QgsVectorLayer &layer )
{
  const QgsAttributeList keys = layer.dataProvider()->pkAttributeIndexes();
  if ( keys.size() != 1 )
    return keys.isEmpty() ? QObject::tr( "it has no key (give it a primary key, or name one with key='...' in the layer's source)" )
                          : QObject::tr( "its key has several columns, whose rows QGIS numbers through a map of its own" );
  const QgsField key = layer.fields().at( keys.first() );
  if ( key.type() != vbasqgis::Field::Int || ( key.typeName() != QLatin1String( "int2" ) && key.typeName() != QLatin1String( "int4" ) ) )
    return QObject::tr( "its key '%1' is of type %2, whose rows QGIS numbers through a map of its own" ).arg( key.name(), key.typeName() );
  return QString();
}

//! Why layer's rows are read through QGIS, or nothing.
QString notCopied( const QgsVectorLayer &layer, const QgsAttributeList &read )
{
  const QgsDataSourceUri uri( layer.source() );
  if ( uri.table().startsWith( '(' ) )
    return QObject::tr( "it is an SQL query, not a table" );
  if ( !layer.subsetString().isEmpty() )
    return QObject::tr( "the layer has a subset string" );
  if ( layer.isModified() )
    return QObject::tr( "the layer has unsaved edits" );
  if ( !uri.geometryColumn().isEmpty() && ( !uri.srid().isEmpty() || uri.wkbType() != vbasqgis::WkbType::Unknown ) )
    return QObject::tr( "QGIS may keep only the rows of the geometry type and SRID its source names" );
  const QString key = notIntegerKey( layer );
  if ( !key.isEmpty() )
    return key;
  const QgsFields fields = layer.fields();
  for ( const int i : read )
  {
    if ( fields.fieldOrigin( i ) != vbasqgis::OriginProvider )
      return QObject::tr( "its field '%1' is not the table's own (an expression or a join)" ).arg( fields.at( i ).name() );
    if ( !decoded( fields.at( i ) ) )
      return QObject::tr( "its field '%1' is of type %2, which QGIS reads itself" ).arg( fields.at( i ).name(), fields.at( i ).typeName() );
  }
  return QString();
}

} // namespace

std::optional<VbasStreamedRows> VbasPgRows::plan( const QgsVectorLayer *layer, const QgsAttributeList &read, QString &why )
{
  if ( !layer || !layer->dataProvider() || layer->providerType() != QLatin1String( "postgres" ) )
    why = QObject::tr( "its provider is not PostgreSQL's (postgres)" );
  else
    why = notCopied( *layer, read );
  if ( !why.isEmpty() )
    return std::nullopt;
  const QgsDataSourceUri uri( layer->source() );
  const QgsFields fields = layer->fields();
  Source source;
  source.connection = uri.connectionInfo( true );
  source.table = uri.schema().isEmpty() ? uri.table() : uri.schema() + '.' + uri.table();
  source.fieldCount = fields.count();
  source.key = layer->dataProvider()->pkAttributeIndexes().first();
  source.keyName = fields.at( source.key ).name();
  QStringList columns { QgsSqliteUtils::quotedIdentifier( source.keyName ) + QStringLiteral( "::text" ) };
  for ( const int i : read )
  {
    source.keyRead = source.keyRead || i == source.key;
    if ( i == source.key ) // QGIS reads the key once, as the feature id
      continue;
    columns << expression( fields.at( i ) );
    source.columns.append( { i, fields.at( i ).type(), vbasqgis::nullOf( fields.at( i ).type() ) } );
  }
  const QString from = ( uri.schema().isEmpty() ? QString() : QgsSqliteUtils::quotedIdentifier( uri.schema() ) + '.' ) + QgsSqliteUtils::quotedIdentifier( uri.table() );
  source.copy = QStringLiteral( "COPY (SELECT %1 FROM %2) TO STDOUT (FORMAT binary)" ).arg( columns.join( QLatin1String( ", " ) ), from );
  return VbasStreamedRows { QObject::tr( "PostgreSQL's COPY" ), read, [source]( QString &why ) {
                             // Destroyed mid-read (a refusal, a cancel of the run), the reader cancels the COPY.
                             const std::shared_ptr<Copy> copy = std::make_shared<Copy>( source );
                             return copy->start( why ) ? VbasRows( [copy]( QgsFeature &f ) { return copy->next( f ); } ) : VbasRows();
                           } };
}
