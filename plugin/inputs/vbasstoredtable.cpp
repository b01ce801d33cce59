#include "plugin/inputs/vbasstoredtable.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/inputs/vbasstoredrows.h"
#include "plugin/support/vbasdatabase.h"
#include "plugin/support/vbassqlitecatalog.h"

#include <qgsdatasourceuri.h>
#include <qgsproviderregistry.h>
#include <qgsvectordataprovider.h>

#include <qgsexception.h>
#include <qgssqliteutils.h>
#include <qgsvectorlayer.h>

#include <cpl_error.h>
#include <gdal.h>
#include <ogr_api.h>
#include <shapefil.h>

#include <QFile>
#include <QFileInfo>

#include <cmath>
#include <memory>

namespace
{

//! Why a stored value would not read back as it is stored (VbasStoredTable::check).
enum StoredProblem
{
  Fine,
  WrongType,
  HoldsNul,
  StartsWithBom,
  Mixed,
};

//! The SQLite condition under which a column's stored value reads back unchanged as a value of type.
QString storedTypeCondition( vbasqgis::FieldType type, const QString &column )
{
  switch ( type )
  {
    case vbasqgis::Field::Int:
    case vbasqgis::Field::UInt:
    case vbasqgis::Field::LongLong:
    case vbasqgis::Field::ULongLong:
      return QStringLiteral( "typeof(%1) = 'integer'" ).arg( column );
    case vbasqgis::Field::Bool:
      return QStringLiteral( "typeof(%1) = 'integer' AND %1 IN (0, 1)" ).arg( column );
    case vbasqgis::Field::Double:
      return QStringLiteral( "typeof(%1) IN ('integer', 'real')" ).arg( column );
    case vbasqgis::Field::ByteArray:
      return QStringLiteral( "typeof(%1) = 'blob'" ).arg( column );
    case vbasqgis::Field::Date: // QGIS reads a DATE that is not a valid YYYY-MM-DD as NULL
      return QStringLiteral( "typeof(%1) = 'text' AND date(%1) IS %1" ).arg( column );
    case vbasqgis::Field::DateTime: // and a DATETIME that is no date and time
      return QStringLiteral( "typeof(%1) = 'text' AND %1 GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]*' AND julianday(%1) IS NOT NULL" ).arg( column );
    default: // text
      return QStringLiteral( "typeof(%1) = 'text'" ).arg( column );
  }
}

//! The StoredProblem of a column's value, as SQLite computes it.
QString storedProblem( vbasqgis::FieldType type, const QString &column )
{
  return QStringLiteral( "CASE WHEN %1 IS NULL THEN %2 WHEN NOT (%3) THEN %4 WHEN typeof(%1) = 'text' AND instr(CAST(%1 AS BLOB), X'00') > 0 THEN %5 "
                         "WHEN typeof(%1) = 'text' AND substr(CAST(%1 AS BLOB), 1, 3) = X'EFBBBF' THEN %6 ELSE %2 END" )
    .arg( column, QString::number( Fine ), storedTypeCondition( type, column ), QString::number( WrongType ), QString::number( HoldsNul ), QString::number( StartsWithBom ) );
}

/**
 * The condition that a column's value reads back as stored: storedProblem() is Fine. Cheaper than
 * storedProblem(), for the scan: the text checks are on the text itself (instr() of a text steps over
 * whole UTF-8 characters, and a NUL byte always starts one), and a BOM's bytes are compared only where
 * the first character decodes as U+FEFF (which an overlong encoding also does).
 */
QString storedFine( vbasqgis::FieldType type, const QString &column )
{
  return QStringLiteral( "(%1 IS NULL OR ((%2) AND (typeof(%1) <> 'text' OR (instr(%1, char(0)) = 0 AND NOT (unicode(%1) = 65279 AND substr(CAST(%1 AS BLOB), 1, 3) = X'EFBBBF')))))" )
    .arg( column, storedTypeCondition( type, column ) );
}

//! What a value that would not read back as stored is told; other: an earlier value of the column written another way (Mixed).
QString storedMessage( StoredProblem problem, const QString &row, const QgsField &field, const QString &storage, const QString &quoted, const QString &other = QString() )
{
  switch ( problem )
  {
    case WrongType:
      return QObject::tr( "%1: the field '%2' is of type %3 but stores the %4 value %5, which QGIS would read as another value (0 or NULL, say). Correct the value, "
                          "or give the field a type that holds it (text, say)." )
        .arg( row, field.name(), vbasqgis::typeName( field ), storage, quoted.left( 40 ) );
    case HoldsNul:
      return QObject::tr( "%1: the field '%2' holds text with a NUL character (U+0000), after which QGIS drops the rest of the text. Remove the NUL from the value." ).arg( row, field.name() );
    case Mixed:
      return QObject::tr( "%1: the field '%2' is of type %3 and stores %4, written another way than the earlier value %5 of the field, and QGIS would read both ways alike. "
                          "Write every value of the field one way." )
        .arg( row, field.name(), vbasqgis::typeName( field ), quoted.left( 40 ), other.left( 40 ) );
    default:
      return QObject::tr( "%1: the field '%2' holds text that begins with U+FEFF (a byte order mark), which QGIS drops. Remove it from the value." ).arg( row, field.name() );
  }
}

QString rowName( const QString &rowKind, QgsFeatureId fid )
{
  return QObject::tr( "%1 with feature id %2" ).arg( rowKind ).arg( fid );
}

QString quotedText( const QString &text )
{
  return '\'' + text + '\'';
}

//! A GeoPackage or SQLite table, read with SQLite's typeof() through GDAL.
class SqliteTable : public VbasStoredTable
{
  public:
    SqliteTable( const VbasSqliteCatalog::Table &table, const QString &filter )
      : mTable( table )
      , mFilter( filter )
    {
    }

    void check( const QgsFields &fields, const QgsAttributeList &checked, const QString &rowKind ) const override
    {
      QStringList columns, fine;
      for ( const int i : checked )
      {
        const QString column = QgsSqliteUtils::quotedIdentifier( fields.at( i ).name() );
        columns
          << QStringLiteral( "%1 AS vbas_problem%2, typeof(%3) AS vbas_type%2, quote(%3) AS vbas_value%2" ).arg( storedProblem( fields.at( i ).type(), column ) ).arg( fine.size() ).arg( column );
        fine << storedFine( fields.at( i ).type(), column );
      }
      if ( columns.isEmpty() )
        return;
      const QString sql
        = QStringLiteral( "SELECT %1 AS vbas_fid, %2 FROM %3 WHERE %4NOT (%5) LIMIT 1" )
            .arg( mTable.fid.isEmpty() ? QStringLiteral( "rowid" ) : QgsSqliteUtils::quotedIdentifier( mTable.fid ), columns.join( QStringLiteral( ", " ) ),
                  QgsSqliteUtils::quotedIdentifier( mTable.name ), mFilter.isEmpty() ? QString() : QStringLiteral( "(%1) AND " ).arg( mFilter ), fine.join( QStringLiteral( " AND " ) ) );
      std::unique_ptr<void, decltype( &GDALClose )> dataset( GDALOpenEx( mTable.path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr ), &GDALClose );
      OGRLayerH result = dataset ? GDALDatasetExecuteSQL( dataset.get(), sql.toUtf8().constData(), nullptr, nullptr ) : nullptr;
      if ( !result )
        throw QgsProcessingException( QObject::tr( "The values of %1 as stored could not be checked: %2" ).arg( mTable.name, QString::fromUtf8( CPLGetLastErrorMsg() ) ) );
      OGRFeatureH row = OGR_L_GetNextFeature( result );
      // OGR may take the feature id column as the result's FID rather than as a field.
      const auto field = [row]( const QString &name ) { return OGR_F_GetFieldIndex( row, name.toUtf8().constData() ); };
      const GIntBig fid = row && field( QStringLiteral( "vbas_fid" ) ) >= 0 ? OGR_F_GetFieldAsInteger64( row, field( QStringLiteral( "vbas_fid" ) ) ) : row ? OGR_F_GetFID( row ) : 0;
      QString message;
      for ( int q = 0; row && q < checked.size() && message.isEmpty(); ++q )
      {
        const auto problem = static_cast<StoredProblem>( OGR_F_GetFieldAsInteger( row, field( QStringLiteral( "vbas_problem%1" ).arg( q ) ) ) );
        if ( problem != Fine )
          message = storedMessage( problem, rowName( rowKind, fid ), fields.at( checked[q] ), QString::fromUtf8( OGR_F_GetFieldAsString( row, field( QStringLiteral( "vbas_type%1" ).arg( q ) ) ) ),
                                   QString::fromUtf8( OGR_F_GetFieldAsString( row, field( QStringLiteral( "vbas_value%1" ).arg( q ) ) ) ) );
      }
      if ( row && message.isEmpty() )
        message = QObject::tr( "%1: the check of the values as stored found a value it could not name. This is a fault of the plugin: please report it." ).arg( rowName( rowKind, fid ) );
      if ( row )
        OGR_F_Destroy( row );
      GDALDatasetReleaseResultSet( dataset.get(), result );
      if ( !message.isEmpty() )
        throw QgsProcessingException( message );
    }

  private:
    VbasSqliteCatalog::Table mTable;
    QString mFilter; //!< the layer's subset string
    QStringList mKey;
};

//! The bits of the spellings in formats that text is of a value of type T (bit i: formats[i]).
template<typename T>
unsigned spelledAs( const QString &text, std::initializer_list<const char *> formats )
{
  unsigned bits = 0, bit = 1;
  for ( const char *format : formats )
  {
    const T value = T::fromString( text, QLatin1String( format ) );
    if ( value.isValid() && value.toString( QLatin1String( format ) ) == text )
      bits |= bit;
    bit <<= 1;
  }
  return bits;
}

/**
 * The spellings of its value that a CSV typed column's text is (bit i: the i-th way of writing it), 0
 * when none: the text GDAL writes for the value it reads (1, 1.5, 1e-05, 1.50 in a Real(10.2), 2020/01/02, 2020/01/02 10:00:00)
 * or a plain decimal (0.00001), ISO 8601 (2020-01-02, 2020-01-02T10:00:00, 2020-01-02 10:00:00) and true/false.
 */
unsigned csvSpellings( const QgsField &field, const QString &text )
{
  bool ok = false;
  switch ( field.type() )
  {
    case vbasqgis::Field::Int:
      return QString::number( text.toInt( &ok ) ) == text && ok ? 1 : 0;
    case vbasqgis::Field::LongLong:
      return QString::number( text.toLongLong( &ok ) ) == text && ok ? 1 : 0;
    case vbasqgis::Field::Bool:
      return text == QLatin1String( "0" ) || text == QLatin1String( "1" ) ? 1 : text == QLatin1String( "false" ) || text == QLatin1String( "true" ) ? 2 : 0;
    case vbasqgis::Field::Double:
    {
      const double value = text.toDouble( &ok );
      if ( !ok || !std::isfinite( value ) )
        return 0;
      const bool decimals = field.precision() > 0 && QString::number( value, 'f', field.precision() ) == text; // Real(10.2): 1.50
      return ( QString::number( value, 'g', 15 ) == text ? 1 : 0 ) | ( QString::number( value, 'f', QLocale::FloatingPointShortest ) == text ? 2 : 0 ) | ( decimals ? 4 : 0 );
    }
    case vbasqgis::Field::Date:
      return spelledAs<QDate>( text, { "yyyy/MM/dd", "yyyy-MM-dd" } );
    case vbasqgis::Field::Time:
      return spelledAs<QTime>( text, { "HH:mm:ss" } );
    case vbasqgis::Field::DateTime:
    {
      const unsigned date = spelledAs<QDate>( text.left( 10 ), { "yyyy/MM/dd", "yyyy-MM-dd" } );
      if ( text.size() != 19 || !spelledAs<QTime>( text.mid( 11 ), { "HH:mm:ss" } ) )
        return 0;
      const QChar separator = text.at( 10 );
      return ( date & 1 && separator == ' ' ? 1 : 0 ) | ( date & 2 && separator == 'T' ? 2 : 0 ) | ( date & 2 && separator == ' ' ? 4 : 0 );
    }
    default: // text, and types QGIS's CSV reading does not give
      return ~0u;
  }
}

/**
 * A CSV file read by its text (VbasCsvRows): a typed column's (.csvt, or GDAL's type detection) text
 * must be empty (NULL) or a spelling of the value QGIS reads (csvSpellings), one way throughout the column.
 */
class CsvTable : public VbasStoredTable
{
  public:
    CsvTable( const QString &path, const VbasCsvLayout &layout )
      : mPath( path )
      , mLayout( layout )
    {
    }

    void check( const QgsFields &fields, const QgsAttributeList &checked, const QString &rowKind ) const override
    {
      VbasCsvRows rows( mPath, mLayout, vbasStoredColumns( fields, checked, -1 ), fields.count() );
      QVector<unsigned> spellings( checked.size(), ~0u );
      QVector<QString> narrowedBy( checked.size() ); //!< the value that last narrowed each column's spellings
      QgsFeatureId fid = 0;
      QgsAttributes values;
      while ( rows.next( fid, values ) )
        for ( int q = 0; q < checked.size(); ++q )
        {
          const QgsField field = fields.at( checked[q] );
          const QString text = values.at( checked[q] ).toString();
          const unsigned spelled = text.isEmpty() ? ~0u : csvSpellings( field, text );
          const StoredProblem problem = text.startsWith( QChar( 0xFEFF ) ) ? StartsWithBom : spelled == 0 ? WrongType : ( spellings[q] & spelled ) == 0 ? Mixed : Fine;
          if ( problem != Fine )
            throw QgsProcessingException( storedMessage( problem, rowName( rowKind, fid ), field, QObject::tr( "text" ), quotedText( text ), quotedText( narrowedBy[q] ) ) );
          if ( ( spellings[q] & spelled ) != spellings[q] )
            narrowedBy[q] = text;
          spellings[q] &= spelled;
        }
    }

  private:
    QString mPath;
    VbasCsvLayout mLayout;
};

//! The problem of a shapefile's stored text (not NULL) in a .dbf column of type (N, F, D, C) with decimals.
StoredProblem dbfProblem( char type, int decimals, const QByteArray &stored, bool utf8 )
{
  const QString text = QString::fromLatin1( stored );
  bool ok = false;
  switch ( type )
  {
    case 'N':
    case 'F': // a number as a .dbf writes it: right-aligned (shapelib trims it), with exactly its column's decimals
      return ( decimals == 0 ? QString::number( text.toLongLong( &ok ) ) : QString::number( text.toDouble( &ok ), 'f', decimals ) ) == text && ok ? Fine : WrongType;
    case 'D':
      return QDate::fromString( text, QStringLiteral( "yyyyMMdd" ) ).toString( QStringLiteral( "yyyyMMdd" ) ) == text ? Fine : WrongType;
    case 'C':
      return utf8 && stored.startsWith( "\xEF\xBB\xBF" ) ? StartsWithBom : Fine;
    default:
      return Fine;
  }
}

/**
 * A shapefile's .dbf read with shapelib, as stored: a number must be written as the column writes it
 * (no other text, no other decimals, no leading zero), a date as a valid YYYYMMDD; blanks and asterisks
 * are NULL, as QGIS reads them. Feature ids are record numbers from 0, as QGIS's.
 */
class ShapefileTable : public VbasStoredTable
{
  public:
    explicit ShapefileTable( const QString &path )
      : mPath( path )
    {
    }

    void check( const QgsFields &fields, const QgsAttributeList &checked, const QString &rowKind ) const override
    {
      const std::unique_ptr<DBFInfo, decltype( &DBFClose )> dbf( DBFOpen( QFile::encodeName( mPath ).constData(), "rb" ), &DBFClose );
      if ( !dbf )
        throw QgsProcessingException( QObject::tr( "The values of %1 as stored could not be checked: shapelib could not open its .dbf file." ).arg( mPath ) );
      const bool utf8 = QString::fromLatin1( DBFGetCodePage( dbf.get() ) ).contains( QLatin1String( "UTF" ), Qt::CaseInsensitive );
      for ( const int i : checked )
      {
        const int column = DBFGetFieldIndex( dbf.get(), fields.at( i ).name().toUtf8().constData() );
        int decimals = 0;
        if ( column < 0 || DBFGetFieldInfo( dbf.get(), column, nullptr, nullptr, &decimals ) == FTInvalid )
          continue;
        const char type = DBFGetNativeFieldType( dbf.get(), column );
        for ( int record = 0; record < DBFGetRecordCount( dbf.get() ); ++record )
        {
          if ( DBFIsRecordDeleted( dbf.get(), record ) || DBFIsAttributeNULL( dbf.get(), record, column ) )
            continue;
          const QByteArray stored( DBFReadStringAttribute( dbf.get(), record, column ) );
          const StoredProblem problem = dbfProblem( type, decimals, stored, utf8 );
          if ( problem != Fine )
            throw QgsProcessingException( storedMessage( problem, rowName( rowKind, record ), fields.at( i ), QObject::tr( "text" ), quotedText( QString::fromLatin1( stored ) ) ) );
        }
      }
    }

  private:
    QString mPath;
};

//! A PostgreSQL table or query: one query per text column for a value beginning with U+FEFF, rows named by the key.
class PostgresTable : public VbasStoredTable
{
  public:
    //! key: the columns naming a row (QGIS's key), or none for a table QGIS reads by its ctid.
    PostgresTable( const QString &uri, const QString &filter, const QStringList &key )
      : mUri( uri )
      , mFilter( filter )
      , mKey( key )
    {
    }

    void check( const QgsFields &fields, const QgsAttributeList &checked, const QString &rowKind ) const override
    {
      const QgsDataSourceUri uri( mUri );
      // Without a key QGIS names the source's key "tid", a column the table does not have: the rows are named by their ctid.
      QStringList quoted;
      for ( const QString &column : mKey )
        quoted << QgsSqliteUtils::quotedIdentifier( column );
      const QString key = mKey.isEmpty() ? QStringLiteral( "ctid" ) : quoted.join( QLatin1String( ", " ) );
      const QString from = uri.table().startsWith( '(' ) ? uri.table() + QStringLiteral( " AS vbas_query" )
                           : uri.schema().isEmpty()      ? QgsSqliteUtils::quotedIdentifier( uri.table() )
                                                         : QgsSqliteUtils::quotedIdentifier( uri.schema() ) + '.' + QgsSqliteUtils::quotedIdentifier( uri.table() );
      try
      {
        const std::unique_ptr<QgsAbstractDatabaseProviderConnection> db = VbasDatabase::connection( QStringLiteral( "postgres" ), mUri );
        for ( const int i : checked )
        {
          if ( !db || fields.at( i ).type() != vbasqgis::Field::String )
            continue;
          const QString sql = QStringLiteral( "SELECT concat_ws(', ', %1) FROM %2 WHERE %3left(%4::text, 1) = chr(65279) ORDER BY %1 LIMIT 1" )
                                .arg( key, from, mFilter.isEmpty() ? QString() : QStringLiteral( "(%1) AND " ).arg( mFilter ), QgsSqliteUtils::quotedIdentifier( fields.at( i ).name() ) );
          const QList<QVariantList> rows = db->executeSql( sql );
          if ( !rows.isEmpty() && !rows.first().isEmpty() )
            throw QgsProcessingException( storedMessage( StartsWithBom,
                                                         QObject::tr( "%1 with %2 %3" ).arg( rowKind, mKey.isEmpty() ? key : mKey.join( QLatin1String( ", " ) ), rows.first().first().toString() ),
                                                         fields.at( i ), QString(), QString() ) );
        }
      }
      catch ( const QgsProviderConnectionException &e )
      {
        throw QgsProcessingException( QObject::tr( "The values of %1 as stored could not be checked: %2" ).arg( uri.table(), e.what() ) );
      }
    }

  private:
    QString mUri;
    QString mFilter; //!< the layer's subset string
    QStringList mKey;
};

} // namespace

std::unique_ptr<VbasStoredTable> VbasStoredTable::of( const QgsVectorLayer *layer )
{
  if ( const std::optional<VbasSqliteCatalog::Table> table = VbasSqliteCatalog::ogrTable( layer ) )
    return std::make_unique<SqliteTable>( *table, layer->subsetString() );
  if ( !layer || !layer->dataProvider() )
    return nullptr;
  if ( layer->providerType() == QLatin1String( "postgres" ) )
  {
    QStringList key;
    for ( const int i : layer->dataProvider()->pkAttributeIndexes() )
      key << layer->dataProvider()->fields().at( i ).name();
    return std::make_unique<PostgresTable>( layer->source(), layer->subsetString(), key );
  }
  const QVariantMap parts = QgsProviderRegistry::instance()->decodeUri( layer->providerType(), layer->source() );
  const QString path = parts.value( QStringLiteral( "path" ) ).toString();
  const QString storage = layer->providerType() == QLatin1String( "ogr" ) ? layer->dataProvider()->storageType() : QString();
  if ( storage == QLatin1String( "CSV" ) )
    return std::make_unique<CsvTable>( path, VbasCsvLayout() );
  QString unreadable;
  if ( layer->providerType() == QLatin1String( "delimitedtext" ) ) // the types QGIS guessed, as a .csvt's
    if ( const std::optional<VbasCsvLayout> layout = vbasDelimitedTextLayout( parts.value( QStringLiteral( "openOptions" ) ).toStringList(), unreadable ) )
      return std::make_unique<CsvTable>( path, *layout );
  if ( storage == QLatin1String( "ESRI Shapefile" ) && QFileInfo( path ).isFile() ) // not a zipped shapefile, which shapelib cannot open
    return std::make_unique<ShapefileTable>( path );
  return nullptr;
}
