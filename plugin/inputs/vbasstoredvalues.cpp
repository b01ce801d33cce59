#include "plugin/inputs/vbasstoredvalues.h"
#include "plugin/inputs/vbasstoredrows.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/support/vbassqlitecatalog.h"

#include <qgsdatasourceuri.h>
#include <qgsexception.h>
#include <qgsfeaturesource.h>
#include <qgsprocessingutils.h>
#include <qgsproviderregistry.h>
#include <qgssqliteutils.h>
#include <qgsvectordataprovider.h>
#include <qgsvectorlayer.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <gdal.h>
#include <libpq-fe.h>
#include <ogr_api.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>

namespace
{

using Column = VbasStoredColumn;
using FileRows = VbasFileRows;
using CsvLayout = VbasCsvLayout;
using CsvRows = VbasCsvRows;
const auto plainText = vbasPlainText;

//! Appends the bytes of value to bytes.
template<typename T>
void appendBytes( std::string &bytes, T value )
{
  bytes.append( reinterpret_cast<const char *>( &value ), sizeof value );
}

class QgisRows : public VbasStoredRows
{
  public:
    QgisRows( QgsProcessingFeatureSource &source, const QList<Column> &columns )
    {
      QgsAttributeList read;
      for ( const Column &column : columns )
        read << column.field;
      QgsFeatureRequest request;
      request.setFlags( vbasqgis::NoGeometry ).setSubsetOfAttributes( read );
      mIt = source.getFeatures( request, vbasqgis::SkipGeometryValidityChecks );
    }

    bool next( QgsFeatureId &id, QgsAttributes &values ) override
    {
      QgsFeature f;
      if ( !mIt.nextFeature( f ) )
        return false;
      id = f.id();
      values = f.attributes();
      return true;
    }

  private:
    QgsFeatureIterator mIt;
};

/**
 * A GeoPackage or SQLite table through SQLite itself, read-only. A compared value becomes its SQL
 * literal, which names the storage class and the bytes exactly: 7, 7.0, 'F', X'46',
 * CAST(X'..' AS TEXT) for text that is not plain UTF-8 or holds NUL. -0.0 is 0.0, as SQLite compares them.
 */
class SqliteRows : public FileRows
{
  public:
    SqliteRows( const QString &path, const QString &table, const QString &fid, const QList<Column> &columns, int fieldCount )
      : FileRows( columns, fieldCount )
      , mPath( path )
    {
      sqlite3 *db = nullptr;
      // One thread uses the connection: without its mutex (NOMUTEX), as every value read would lock it.
      const int opened = sqlite3_open_v2( QFile::encodeName( path ).constData(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr );
      mDb.reset( db );
      if ( opened != SQLITE_OK )
        fail();
      QStringList select { QgsSqliteUtils::quotedIdentifier( fid ) };
      for ( const Column &column : columns )
        select << QgsSqliteUtils::quotedIdentifier( column.name );
      const QString sql = QStringLiteral( "SELECT %1 FROM %2" ).arg( select.join( QLatin1String( ", " ) ), QgsSqliteUtils::quotedIdentifier( table ) );
      sqlite3_stmt *statement = nullptr;
      const int prepared = sqlite3_prepare_v2( mDb.get(), sql.toUtf8().constData(), -1, &statement, nullptr );
      mStatement.reset( statement );
      if ( prepared != SQLITE_OK )
        fail();
      mRemembered.resize( static_cast<std::size_t>( columns.size() ) + 1 );
    }
    bool next( QgsFeatureId &id, QgsAttributes &values ) override
    {
      const int result = sqlite3_step( mStatement.get() );
      if ( result == SQLITE_DONE )
        return false;
      if ( result != SQLITE_ROW )
        fail();
      id = sqlite3_column_int64( mStatement.get(), 0 );
      if ( values.size() != mFieldCount )
        values = QgsAttributes( mFieldCount );
      for ( int i = 0; i < mColumns.size(); ++i )
        values[mColumns[i].field] = mColumns[i].compared ? remembered( i + 1 ) : native( i + 1 );
      return true;
    }

  private:
    [[noreturn]] void fail() const
    {
      throw QgsProcessingException( QObject::tr( "SQLite could not read the stored values of the table %1: %2" ).arg( mPath, QString::fromUtf8( sqlite3_errmsg( mDb.get() ) ) ) );
    }

    QByteArray bytes( int i ) const
    {
      const char *data = static_cast<const char *>( sqlite3_column_blob( mStatement.get(), i ) );
      return QByteArray( data, sqlite3_column_bytes( mStatement.get(), i ) );
    }

    /**
     * literal(i), remembered by the value's storage class and bytes: a column holds few distinct
     * values, and building each row's literal anew (number formatting, quoting) was most of the
     * recount's time. At most kRemembered values a column are kept (written by hand: a bounded map
     * of SQLite values is no library's).
     */
    QVariant remembered( int i )
    {
      sqlite3_stmt *statement = mStatement.get();
      const int type = sqlite3_column_type( statement, i );
      if ( type == SQLITE_NULL )
        return literal( i );
      mProbe.assign( 1, static_cast<char>( type ) );
      if ( type == SQLITE_INTEGER )
        appendBytes( mProbe, sqlite3_column_int64( statement, i ) );
      else if ( type == SQLITE_FLOAT )
        appendBytes( mProbe, sqlite3_column_double( statement, i ) );
      else
        mProbe.append( static_cast<const char *>( sqlite3_column_blob( statement, i ) ), static_cast<std::size_t>( sqlite3_column_bytes( statement, i ) ) );
      std::unordered_map<std::string, QVariant> &seen = mRemembered[static_cast<std::size_t>( i )];
      const auto found = seen.find( mProbe );
      if ( found != seen.end() )
        return found->second;
      const QVariant value = literal( i );
      if ( seen.size() < kRemembered )
        seen.emplace( mProbe, value );
      return value;
    }

    QVariant literal( int i ) const
    {
      switch ( sqlite3_column_type( mStatement.get(), i ) )
      {
        case SQLITE_INTEGER:
          return QString::number( sqlite3_column_int64( mStatement.get(), i ) );
        case SQLITE_FLOAT:
          return real( sqlite3_column_double( mStatement.get(), i ) );
        case SQLITE_TEXT:
        {
          const QByteArray text = bytes( i );
          const std::optional<QString> plain = plainText( text );
          return plain ? QStringLiteral( "'%1'" ).arg( QString( *plain ).replace( '\'', QLatin1String( "''" ) ) )
                       : QStringLiteral( "CAST(X'%1' AS TEXT)" ).arg( QString::fromLatin1( text.toHex().toUpper() ) );
        }
        case SQLITE_BLOB:
          return QStringLiteral( "X'%1'" ).arg( QString::fromLatin1( bytes( i ).toHex().toUpper() ) );
        default:
          return QVariant( QVariant::String );
      }
    }

    static QString real( double value )
    {
      if ( std::isinf( value ) )
        return value > 0 ? QStringLiteral( "9e999" ) : QStringLiteral( "-9e999" );
      const QString text = QString::number( value == 0 ? 0.0 : value, 'g', QLocale::FloatingPointShortest );
      return text.contains( '.' ) || text.contains( 'e' ) ? text : text + QStringLiteral( ".0" );
    }

    QVariant native( int i ) const
    {
      switch ( sqlite3_column_type( mStatement.get(), i ) )
      {
        case SQLITE_INTEGER:
          return static_cast<qlonglong>( sqlite3_column_int64( mStatement.get(), i ) );
        case SQLITE_FLOAT:
          return sqlite3_column_double( mStatement.get(), i );
        case SQLITE_TEXT:
          return QString::fromUtf8( bytes( i ) );
        case SQLITE_BLOB:
          return bytes( i );
        default:
          return QVariant();
      }
    }

    static constexpr std::size_t kRemembered = 1 << 16;
    std::string mProbe;                                                 //!< a value's storage class and bytes, reused from value to value
    std::vector<std::unordered_map<std::string, QVariant>> mRemembered; //!< by result column: literal() of the values met so far
    QString mPath;
    struct Close
    {
        void operator()( sqlite3 *db ) const { sqlite3_close_v2( db ); }
        void operator()( sqlite3_stmt *statement ) const { sqlite3_finalize( statement ); }
    };
    std::unique_ptr<sqlite3, Close> mDb; // declared first: closed after the statement is finalized
    std::unique_ptr<sqlite3_stmt, Close> mStatement;
};

/**
 * The records of a GeoJSON text sequence (GeoJSONSeq) as GDAL's driver splits them: at the record
 * separator (RS) when the file starts with one, else at each line end; blank records skipped, and the
 * JSON objects that are neither features nor geometries, which GDAL skips too.
 */
class JsonSequence
{
  public:
    explicit JsonSequence( const QString &path )
      : mFile( path )
    {
      if ( !mFile.open( QIODevice::ReadOnly ) )
        throw QgsProcessingException( QObject::tr( "Could not open the GeoJSON sequence %1 to read its JSON." ).arg( path ) );
      mSeparator = mFile.peek( 1 ) == QByteArray( 1, '\x1e' ) ? '\x1e' : '\n';
    }

    //! The next feature or geometry object, or std::nullopt after the last.
    std::optional<QJsonObject> next()
    {
      static const QStringList kTypes { "Feature", "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon", "GeometryCollection" };
      while ( std::optional<QByteArray> record = read() )
      {
        if ( record->trimmed().isEmpty() )
          continue;
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson( *record, &error );
        if ( error.error != QJsonParseError::NoError )
          throw QgsProcessingException( QObject::tr( "Record %1 of the GeoJSON sequence %2 is not valid JSON: %3." ).arg( mRecord ).arg( mFile.fileName(), error.errorString() ) );
        if ( document.isObject() && kTypes.contains( document.object().value( QStringLiteral( "type" ) ).toString() ) )
          return document.object();
      }
      return std::nullopt;
    }

  private:
    //! The bytes up to the next separator, or std::nullopt at the end.
    std::optional<QByteArray> read()
    {
      QByteArray record;
      char c = 0;
      while ( mFile.getChar( &c ) && c != mSeparator )
        record += c;
      if ( record.isEmpty() && mFile.atEnd() && c != mSeparator )
        return std::nullopt;
      ++mRecord;
      return record;
    }

    QFile mFile;
    char mSeparator = '\n';
    qint64 mRecord = 0;
};

/**
 * A GeoJSON or GeoJSONSeq layer through GDAL, each feature's properties read from its own JSON (GeoJSON:
 * GDAL's NATIVE_DATA; GeoJSONSeq: the sequence's records, in step with GDAL's features): a compared
 * property becomes its compact JSON text (1, "1", true, [1,2]); null and a missing property are NULL.
 * JSON numbers are compared as numbers (1 and 1.0 are one value).
 */
class JsonRows : public FileRows
{
  public:
    JsonRows( const QString &path, const QString &layerName, bool sequence, const QList<Column> &columns, int fieldCount )
      : FileRows( columns, fieldCount )
      , mPath( path )
      , mSequence( sequence ? std::make_unique<JsonSequence>( path ) : nullptr ) // before the dataset, which a throw would leave open
    {
      const char *drivers[] = { sequence ? "GeoJSONSeq" : "GeoJSON", nullptr };
      const char *options[] = { sequence ? nullptr : "NATIVE_DATA=YES", nullptr };
      mDataset = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, drivers, options, nullptr );
      mLayer = !mDataset ? nullptr : layerName.isEmpty() || sequence ? GDALDatasetGetLayer( mDataset, 0 ) : GDALDatasetGetLayerByName( mDataset, layerName.toUtf8().constData() );
      if ( !mLayer )
      {
        if ( mDataset )
          GDALClose( mDataset );
        throw QgsProcessingException( QObject::tr( "GDAL could not read the GeoJSON file %1 as JSON." ).arg( path ) );
      }
    }
    ~JsonRows() override { GDALClose( mDataset ); }

    bool next( QgsFeatureId &id, QgsAttributes &values ) override
    {
      OGRFeatureH feature = OGR_L_GetNextFeature( mLayer );
      const std::optional<QJsonObject> object = !mSequence ? std::nullopt : mSequence->next();
      if ( !feature )
      {
        if ( object )
          throw QgsProcessingException( QObject::tr( "GDAL reads fewer features from the GeoJSON sequence %1 than it holds: save the layer as a GeoPackage and check that." ).arg( mPath ) );
        return false;
      }
      id = OGR_F_GetFID( feature );
      const char *native = OGR_F_GetNativeData( feature );
      const QJsonObject json = object ? *object : QJsonDocument::fromJson( QByteArray( native ? native : "" ) ).object();
      OGR_F_Destroy( feature );
      if ( mSequence && !object )
        throw QgsProcessingException( QObject::tr( "GDAL reads more features from the GeoJSON sequence %1 than it holds: save the layer as a GeoPackage and check that." ).arg( mPath ) );
      const QJsonObject properties = json.value( QStringLiteral( "properties" ) ).toObject();
      values = QgsAttributes( mFieldCount );
      for ( const Column &column : mColumns )
      {
        const QJsonValue value = properties.value( column.name );
        if ( value.isNull() || value.isUndefined() )
          values[column.field] = QVariant( QVariant::String );
        else if ( column.compared )
          values[column.field] = QString::fromUtf8( QJsonDocument( QJsonArray { value } ).toJson( QJsonDocument::Compact ).chopped( 1 ).mid( 1 ) );
        else
          values[column.field] = value.toVariant();
      }
      return true;
    }

  private:
    QString mPath;
    std::unique_ptr<JsonSequence> mSequence;
    GDALDatasetH mDataset = nullptr;
    OGRLayerH mLayer = nullptr;
};

/**
 * A PostgreSQL table through libpq, read with a cursor: a compared value becomes the server's text of
 * it (value::text), which keeps apart what the type's own comparison merges (citext's letter case,
 * timestamps to the microsecond, numeric 1.0 and 1.00). The count keeps its number. A row is named
 * by its whole-number key; the layer's subset string (an SQL condition) picks the rows, as QGIS's does.
 */
class PostgresRows : public FileRows
{
  public:
    PostgresRows( const QgsDataSourceUri &uri, const QString &key, const QList<Column> &columns, int fieldCount )
      : FileRows( columns, fieldCount )
      , mWhere( uri.schema().isEmpty() ? uri.table() : uri.schema() + '.' + uri.table() )
    {
      mConnection.reset( PQconnectdb( uri.connectionInfo( true ).toUtf8().constData() ) );
      QStringList select { QgsSqliteUtils::quotedIdentifier( key ) };
      for ( const Column &column : columns )
        select << QgsSqliteUtils::quotedIdentifier( column.name ) + ( column.compared ? QStringLiteral( "::text" ) : QString() );
      const QString from
        = uri.schema().isEmpty() ? QgsSqliteUtils::quotedIdentifier( uri.table() ) : QgsSqliteUtils::quotedIdentifier( uri.schema() ) + '.' + QgsSqliteUtils::quotedIdentifier( uri.table() );
      const QString where = uri.sql().trimmed().isEmpty() ? QString() : QStringLiteral( " WHERE (%1)" ).arg( uri.sql() );
      if ( PQstatus( mConnection.get() ) != CONNECTION_OK )
        fail( nullptr );
      run( QStringLiteral( "BEGIN READ ONLY" ), PGRES_COMMAND_OK );
      run( QStringLiteral( "DECLARE vbas_stored NO SCROLL CURSOR FOR SELECT %1 FROM %2%3" ).arg( select.join( QLatin1String( ", " ) ), from, where ), PGRES_COMMAND_OK );
    }

    bool next( QgsFeatureId &id, QgsAttributes &values ) override
    {
      if ( mRow >= PQntuples( mBatch.get() ) )
      {
        run( QStringLiteral( "FETCH 10000 FROM vbas_stored" ), PGRES_TUPLES_OK );
        mRow = 0;
        if ( PQntuples( mBatch.get() ) == 0 )
          return false;
      }
      PGresult *batch = mBatch.get();
      id = QString::fromLatin1( PQgetvalue( batch, mRow, 0 ) ).toLongLong();
      values = QgsAttributes( mFieldCount );
      for ( int i = 0; i < mColumns.size(); ++i )
        values[mColumns[i].field] = PQgetisnull( batch, mRow, i + 1 ) ? QVariant( QVariant::String ) : value( batch, i + 1, mColumns[i].compared );
      ++mRow;
      return true;
    }

  private:
    //! A compared value's text; the count as a number when its column holds numbers.
    QVariant value( PGresult *batch, int i, bool compared ) const
    {
      const QString text = QString::fromUtf8( PQgetvalue( batch, mRow, i ), PQgetlength( batch, mRow, i ) );
      bool ok = false;
      const Oid type = PQftype( batch, i );
      const bool whole = type == 20 || type == 21 || type == 23;    // int8, int2, int4
      const bool real = type == 700 || type == 701 || type == 1700; // float4, float8, numeric
      const QVariant number = whole ? QVariant( text.toLongLong( &ok ) ) : real ? QVariant( text.toDouble( &ok ) ) : QVariant();
      return !compared && ok ? number : QVariant( text );
    }

    void run( const QString &sql, ExecStatusType expected )
    {
      mBatch.reset( PQexec( mConnection.get(), sql.toUtf8().constData() ) );
      if ( PQresultStatus( mBatch.get() ) != expected )
        fail( mBatch.get() );
    }

    [[noreturn]] void fail( const PGresult *result ) const
    {
      const QString why = QString::fromUtf8( result ? PQresultErrorMessage( result ) : PQerrorMessage( mConnection.get() ) ).trimmed();
      throw QgsProcessingException( QObject::tr( "PostgreSQL could not read the stored values of the table %1: %2" ).arg( mWhere, why ) );
    }

    struct Close
    {
        void operator()( PGconn *connection ) const { PQfinish( connection ); }
        void operator()( PGresult *result ) const { PQclear( result ); }
    };
    std::unique_ptr<PGconn, Close> mConnection; // declared first: closed after the last result is cleared
    std::unique_ptr<PGresult, Close> mBatch;
    QString mWhere;
    int mRow = 0;
};

/**
 * The key of a PostgreSQL table (not a query) that names its rows: its one primary key column (or
 * the layer's key='...') of whole numbers, or std::nullopt with why not in because.
 */
std::optional<QString> postgresKey( const QgsVectorLayer *layer, const QgsFields &fields, QString &because )
{
  const QgsVectorDataProvider *provider = layer->dataProvider();
  const QgsAttributeList keys = provider ? provider->pkAttributeIndexes() : QgsAttributeList();
  const int key = keys.size() == 1 ? fields.lookupField( provider->fields().at( keys.first() ).name() ) : -1;
  const bool whole = key >= 0 && ( fields.at( key ).type() == vbasqgis::Field::Int || fields.at( key ).type() == vbasqgis::Field::LongLong );
  if ( QgsDataSourceUri( layer->source() ).table().startsWith( '(' ) )
    because = QObject::tr( "it is an SQL query, not a table (check the table itself)" );
  else if ( !whole )
    because = QObject::tr( "the table's key is not one column of whole numbers (give it such a primary key, or name one with key='...' in the layer's source)" );
  else
    return fields.at( key ).name();
  return std::nullopt;
}

//! A source's reader: how it reads, the reader, the field naming a stored row (-1: the feature id), and why a readable source is read as QGIS gives it.
struct Choice
{
    VbasStoredValues::Reading reading = VbasStoredValues::Reading::Qgis;
    std::unique_ptr<VbasStoredRows> rows;
    int key = -1;
    QString fallback;
};

Choice choose( const QgsFields &fields, const QgsVectorLayer *layer, const QList<Column> &columns, bool typedCsv )
{
  using Reading = VbasStoredValues::Reading;
  Choice choice;
  const int fieldCount = fields.count();
  const QString provider = layer ? layer->providerType() : QString();
  const QString storage = provider == QLatin1String( "ogr" ) && layer->dataProvider() ? layer->dataProvider()->storageType() : QString();
  const QVariantMap parts = layer ? QgsProviderRegistry::instance()->decodeUri( provider, layer->source() ) : QVariantMap();
  const QString path = parts.value( QStringLiteral( "path" ) ).toString();
  QString because;
  if ( const std::optional<VbasSqliteCatalog::Table> table = VbasSqliteCatalog::ogrTable( layer ) )
    choice = { Reading::Sqlite, std::make_unique<SqliteRows>( table->path, table->name, table->fid.isEmpty() ? QStringLiteral( "rowid" ) : table->fid, columns, fieldCount ) };
  else if ( storage == QLatin1String( "CSV" ) && !typedCsv )
    choice = { Reading::CsvText, std::make_unique<CsvRows>( path, CsvLayout(), columns, fieldCount ) };
  else if ( provider == QLatin1String( "delimitedtext" ) && !typedCsv )
  {
    if ( const std::optional<CsvLayout> layout = vbasDelimitedTextLayout( parts.value( QStringLiteral( "openOptions" ) ).toStringList(), because ) )
      choice = { Reading::CsvText, std::make_unique<CsvRows>( path, *layout, columns, fieldCount ) };
  }
  else if ( provider == QLatin1String( "postgres" ) )
  {
    if ( const std::optional<QString> key = postgresKey( layer, fields, because ) )
      choice = { Reading::Postgres, std::make_unique<PostgresRows>( QgsDataSourceUri( layer->source() ), *key, columns, fieldCount ), fields.lookupField( *key ) };
  }
  else if ( storage == QLatin1String( "GeoJSON" ) || storage == QLatin1String( "GeoJSONSeq" ) )
    choice = { Reading::Json, std::make_unique<JsonRows>( path, parts.value( QStringLiteral( "layerName" ) ).toString(), storage == QLatin1String( "GeoJSONSeq" ), columns, fieldCount ) };
  if ( !because.isEmpty() )
    choice.fallback = QObject::tr( "The values of %1 are compared as QGIS reads them, not as stored: %2. QGIS may read alike values that are stored apart "
                                   "(see \"Which values are compared\" on the checker's page of the user guide)." )
                        .arg( layer->name(), because );
  return choice;
}

} // namespace

VbasStoredValues::VbasStoredValues( QgsProcessingFeatureSource &source, const QgsVectorLayer *layer, const QgsAttributeList &compared, int count, bool typedCsv, Rows rows )
  : mTypedCsv( typedCsv )
  , mSource( source )
  , mRows( rows )
{
  const QList<Column> columns = vbasStoredColumns( source.fields(), compared, count );
  Choice choice = choose( source.fields(), layer, columns, typedCsv );
  mReading = choice.reading;
  mReader = choice.rows ? std::move( choice.rows ) : std::make_unique<QgisRows>( source, columns );
  mKey = choice.key;
  mFallback = choice.fallback;
}

void VbasStoredValues::collectIds()
{
  // The rows QGIS reads decide which rows are checked (a selection, a filter, a subset string).
  QgsFeatureRequest request;
  request.setFlags( vbasqgis::NoGeometry ).setSubsetOfAttributes( mKey < 0 ? QgsAttributeList() : QgsAttributeList { mKey } );
  QgsFeatureIterator it = mSource.getFeatures( request, vbasqgis::SkipGeometryValidityChecks );
  mIds.reserve( static_cast<std::size_t>( std::max<long long>( mSource.featureCount(), 0 ) ) ); // a hint: a vector grown by doubling would hold up to twice the ids at once
  QgsFeature f;
  while ( it.nextFeature( f ) )
    mIds.emplace_back( mKey < 0 ? f.id() : f.attribute( mKey ).toLongLong(), f.id() );
  std::sort( mIds.begin(), mIds.end() );
  mSeen.assign( mIds.size(), false );
  mCollected = true;
}

VbasStoredValues::~VbasStoredValues() = default;

QString VbasStoredValues::describe() const
{
  switch ( mReading )
  {
    case Reading::Sqlite:
      return QObject::tr( "the values as the file stores them (SQLite storage class and bytes)" );
    case Reading::CsvText:
      return QObject::tr( "the text of the CSV file (TYPED_CSV compares its typed values)" );
    case Reading::Json:
      return QObject::tr( "the values as the file stores them (JSON type and value)" );
    case Reading::Postgres:
      return QObject::tr( "the values as the server writes them as text (value::text)" );
    case Reading::Qgis:
      break;
  }
  return mTypedCsv ? QObject::tr( "the values as QGIS types them (TYPED_CSV)" ) : QObject::tr( "the values as QGIS reads them" );
}

namespace
{

QString shortest( double value )
{
  return QString::number( value, 'g', QLocale::FloatingPointShortest );
}

//! An SQL literal of SqliteRows back to its text: 'F' is F, CAST(X'..' AS TEXT) its UTF-8, 7.0 is 7; a BLOB stays its literal.
QString sqliteText( const QString &literal )
{
  if ( literal.startsWith( '\'' ) )
    return literal.mid( 1, literal.size() - 2 ).replace( QLatin1String( "''" ), QLatin1String( "'" ) );
  if ( literal.startsWith( QLatin1String( "CAST(X'" ) ) )
    return QString::fromUtf8( QByteArray::fromHex( literal.mid( 7, literal.indexOf( '\'', 7 ) - 7 ).toLatin1() ) );
  if ( literal.startsWith( QLatin1String( "X'" ) ) || !( literal.contains( '.' ) || literal.contains( 'e' ) ) )
    return literal;
  return shortest( literal.toDouble() );
}

//! A JSON value's text (JsonRows): a string's characters, a number's shortest digits, true or false; null for null.
QString jsonText( const QString &json )
{
  const QJsonValue value = QJsonDocument::fromJson( ( '[' + json + ']' ).toUtf8() ).array().at( 0 );
  if ( value.isString() )
    return value.toString();
  if ( value.isDouble() )
    return shortest( value.toDouble() );
  if ( value.isBool() )
    return value.toBool() ? QStringLiteral( "true" ) : QStringLiteral( "false" );
  return value.isNull() ? QString() : json;
}

} // namespace

QString VbasStoredValues::plainText( const QVariant &compared ) const
{
  if ( compared.isNull() )
    return QString();
  const QString text = compared.toString();
  switch ( mReading )
  {
    case Reading::Sqlite:
      return sqliteText( text );
    case Reading::Json:
      return jsonText( text );
    case Reading::Qgis:
      return compared.userType() == QMetaType::Double ? shortest( compared.toDouble() ) : text;
    case Reading::CsvText:
    case Reading::Postgres:
      break;
  }
  return text;
}

QString VbasStoredValues::code() const
{
  switch ( mReading )
  {
    case Reading::Sqlite:
      return QStringLiteral( "sqlite" );
    case Reading::CsvText:
      return QStringLiteral( "csv-text" );
    case Reading::Json:
      return QStringLiteral( "json" );
    case Reading::Postgres:
      return QStringLiteral( "postgresql-text" );
    case Reading::Qgis:
      break;
  }
  return mTypedCsv ? QStringLiteral( "csv-typed" ) : QStringLiteral( "qgis" );
}

bool VbasStoredValues::next( QgsFeatureId &id, QgsAttributes &values )
{
  if ( mReading != Reading::Qgis && mRows == Rows::AsQgisReads && !mCollected )
    collectIds();
  while ( mReader->next( id, values ) )
  {
    if ( mReading == Reading::Qgis || mRows == Rows::EveryStored )
      return true;
    const auto at = std::lower_bound( mIds.begin(), mIds.end(), std::make_pair( static_cast<qint64>( id ), std::numeric_limits<QgsFeatureId>::min() ) );
    if ( at == mIds.end() || at->first != id )
      continue; // a row QGIS does not read (not selected, filtered out)
    const std::size_t i = static_cast<std::size_t>( at - mIds.begin() );
    id = at->second;
    if ( mSeen[i] )
      throw QgsProcessingException( QObject::tr( "The file stores two rows of feature id %1: their stored values cannot be told apart." ).arg( id ) );
    mSeen[i] = true;
    return true;
  }
  const auto missing = std::find( mSeen.begin(), mSeen.end(), false );
  if ( missing != mSeen.end() )
    throw QgsProcessingException( QObject::tr( "The row of feature id %1 was not found where the file stores its values: check the table as QGIS reads it (save it as a GeoPackage first)." )
                                    .arg( mIds[static_cast<std::size_t>( missing - mSeen.begin() )].second ) );
  return false;
}
