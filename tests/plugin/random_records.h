// Records tables as users keep them, not as the tests' tidy ones: GeoPackage attribute tables whose
// columns SQLite declares with loose types and collations (NOCASE, RTRIM, BLOB, no type at all), and
// that hold NULLs, values of several storage classes in one column (1, 1.0, '1', X'31') and odd text
// (case and trailing-space variants, combining marks, a NUL inside), or, in two tables of three, only values
// stored as their declaration keeps them. randomRecords() draws one from a
// seed, over the region ids of the grid(); writeRecords() writes any such table.
#pragma once

#include "tests/plugin/qgis_test_util.h"

#include <QRandomGenerator>

#include <sqlite3.h>

namespace vbastest
{

//! A column: its name and its declaration after the name ("TEXT COLLATE NOCASE").
using Column = std::pair<QString, QString>;

//! A records table: its columns (after fid) and rows; a NULL QVariant is NULL, and each value keeps its storage class (qlonglong, double, QString, QByteArray).
struct RecordsTable
{
    QList<Column> columns;
    QList<QVariantList> rows;

    //! "region TEXT COLLATE NOCASE, q1 BLOB, ...": for a failing test's message.
    QString declaration() const
    {
      QStringList parts;
      for ( const Column &column : columns )
        parts << column.first + ' ' + column.second;
      return parts.join( QStringLiteral( ", " ) );
    }
};

inline bool bindValue( sqlite3_stmt *statement, int i, const QVariant &value )
{
  switch ( static_cast<QMetaType::Type>( value.userType() ) )
  {
    case QMetaType::LongLong:
    case QMetaType::Int:
      return sqlite3_bind_int64( statement, i, value.toLongLong() ) == SQLITE_OK;
    case QMetaType::Double:
      return sqlite3_bind_double( statement, i, value.toDouble() ) == SQLITE_OK;
    case QMetaType::QString:
    {
      const QByteArray text = value.toString().toUtf8();
      return sqlite3_bind_text( statement, i, text.constData(), text.size(), SQLITE_TRANSIENT ) == SQLITE_OK;
    }
    case QMetaType::QByteArray:
    {
      const QByteArray bytes = value.toByteArray();
      return sqlite3_bind_blob( statement, i, bytes.constData(), bytes.size(), SQLITE_TRANSIENT ) == SQLITE_OK;
    }
    default:
      return sqlite3_bind_null( statement, i ) == SQLITE_OK;
  }
}

/**
 * Writes table as the attribute table "records" of a new GeoPackage at path: made by QGIS (so that it is
 * a GeoPackage table), then declared again and filled by SQLite, the values stored as given. Returns the
 * layer source for QgsVectorLayer ("path|layername=records").
 */
inline QString writeRecords( const QString &path, const RecordsTable &table )
{
  QStringList memoryFields;
  for ( const Column &column : table.columns )
    memoryFields << QStringLiteral( "field=%1:string" ).arg( column.first );
  auto memory = vbastest::table( memoryFields.join( '&' ), QList<QVariantList> {} );
  vbastest::save( memory.get(), path, QStringLiteral( "records" ) );
  sqlite3 *db = nullptr;
  if ( sqlite3_open( path.toUtf8().constData(), &db ) != SQLITE_OK )
    throw std::runtime_error( "cannot open the GeoPackage" );
  QStringList declared { QStringLiteral( "\"fid\" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL" ) }, marks;
  for ( const Column &column : table.columns )
  {
    declared << QStringLiteral( "\"%1\" %2" ).arg( column.first, column.second );
    marks << QStringLiteral( "?" );
  }
  const QString schema = QStringLiteral( "DROP TABLE records; CREATE TABLE records (%1); DELETE FROM gpkg_ogr_contents WHERE table_name = 'records';" ).arg( declared.join( ", " ) );
  bool ok = sqlite3_exec( db, schema.toUtf8().constData(), nullptr, nullptr, nullptr ) == SQLITE_OK && sqlite3_exec( db, "BEGIN", nullptr, nullptr, nullptr ) == SQLITE_OK;
  sqlite3_stmt *insert = nullptr;
  const QString sql = QStringLiteral( "INSERT INTO records (%1) VALUES (%2)" )
                        .arg(
                          [&] {
                            QStringList names;
                            for ( const Column &column : table.columns )
                              names << '"' + column.first + '"';
                            return names.join( ", " );
                          }(),
                          marks.join( ", " ) );
  ok = ok && sqlite3_prepare_v2( db, sql.toUtf8().constData(), -1, &insert, nullptr ) == SQLITE_OK;
  for ( const QVariantList &row : table.rows )
  {
    for ( int i = 0; ok && i < row.size(); ++i )
      ok = bindValue( insert, i + 1, row[i] );
    ok = ok && sqlite3_step( insert ) == SQLITE_DONE && sqlite3_reset( insert ) == SQLITE_OK;
  }
  sqlite3_finalize( insert );
  ok = ok && sqlite3_exec( db, "COMMIT", nullptr, nullptr, nullptr ) == SQLITE_OK;
  const QString error = QString::fromUtf8( sqlite3_errmsg( db ) );
  sqlite3_close( db );
  if ( !ok )
    throw std::runtime_error( ( QStringLiteral( "cannot write the records table: " ) + error ).toStdString() );
  return path + QStringLiteral( "|layername=records" );
}

/**
 * value stored as its column's declaration keeps it, so that QGIS reads it as stored: a tidy table's
 * value (the run refuses a value stored otherwise, naming its row).
 */
inline QVariant fitted( const QString &declaration, const QVariant &value )
{
  const QString type = declaration.section( ' ', 0, 0 ).toUpper();
  if ( value.isNull() )
    return value;
  if ( type == QLatin1String( "BLOB" ) )
    return value.toString().toUtf8();
  if ( type == QLatin1String( "INTEGER" ) || type == QLatin1String( "MEDIUMINT" ) )
    return static_cast<qlonglong>( value.toDouble() );
  if ( type == QLatin1String( "BOOLEAN" ) )
    return static_cast<qlonglong>( value.toDouble() != 0 );
  if ( type == QLatin1String( "REAL" ) )
    return value.toDouble();
  return value.toString().remove( QChar( 0 ) );
}

/**
 * A random records table of about rows rows over the region ids regionIds: the column region, three QIs
 * q1 to q3 and the count n, each declared with a random SQLite type and collation, holding values of
 * random storage classes from a small pool (so that classes repeat), NULLs and odd text among them.
 */
inline RecordsTable randomRecords( quint32 seed, const QStringList &regionIds, int rows = 40 )
{
  QRandomGenerator random( seed );
  const auto pick = [&random]( const auto &list ) { return list.at( static_cast<int>( random.bounded( static_cast<quint32>( list.size() ) ) ) ); };
  const QStringList regionTypes { QStringLiteral( "TEXT" ), QStringLiteral( "TEXT COLLATE NOCASE" ), QStringLiteral( "TEXT COLLATE RTRIM" ), QStringLiteral( "VARCHAR(8) COLLATE NOCASE" ), QString() };
  // The loose declarations thrice as often as the others.
  const QStringList qiTypes { QStringLiteral( "TEXT" ),
                              QStringLiteral( "TEXT COLLATE NOCASE" ),
                              QStringLiteral( "TEXT COLLATE RTRIM" ),
                              QStringLiteral( "BLOB" ),
                              QStringLiteral( "TEXT COLLATE NOCASE" ),
                              QStringLiteral( "TEXT COLLATE RTRIM" ),
                              QStringLiteral( "BLOB" ),
                              QStringLiteral( "TEXT COLLATE NOCASE" ),
                              QStringLiteral( "TEXT COLLATE RTRIM" ),
                              QStringLiteral( "INTEGER" ),
                              QStringLiteral( "MEDIUMINT" ),
                              QStringLiteral( "REAL" ),
                              QStringLiteral( "BLOB" ),
                              QStringLiteral( "DATE" ),
                              QStringLiteral( "DATETIME" ),
                              QStringLiteral( "BOOLEAN" ),
                              QString() };
  const QStringList countTypes { QStringLiteral( "INTEGER" ), QStringLiteral( "REAL" ), QStringLiteral( "TEXT" ), QString() };
  // Families of values that some comparison joins and another keeps apart; each QI draws from one.
  const QList<QVariantList> families {
    { QStringLiteral( "f" ), QStringLiteral( "F" ), QStringLiteral( "F " ), QByteArray( "F" ) },
    { 1LL, 1.0, QStringLiteral( "1" ), QStringLiteral( "01" ), QStringLiteral( "1.0" ), QByteArray( "1" ), 2LL },
    { 0.1 + 0.2, 0.3, -0.0, 0.0, 0LL, QStringLiteral( "0" ) },
    { QStringLiteral( "2020-01-01" ), QStringLiteral( "2020-01-01T00:00:00Z" ), QStringLiteral( "2020-01-01 00:00:00" ), QStringLiteral( "2020-01-01T00:00:00.000001" ) },
    { QStringLiteral( "Zo\u00eb" ), QStringLiteral( "Zoe\u0308" ), QStringLiteral( "zo\u00eb" ), QString::fromUtf8( "a\0b", 3 ), QString::fromUtf8( "a\0c", 3 ), QByteArray() },
  };
  RecordsTable table;
  table.columns << Column( QStringLiteral( "region" ), pick( regionTypes ) );
  QVariantList values[3];
  for ( int q = 0; q < 3; ++q )
  {
    table.columns << Column( QStringLiteral( "q%1" ).arg( q + 1 ), pick( qiTypes ) );
    const QVariantList family = pick( families ) << QVariant();
    for ( int v = 0; v < 3; ++v ) // few values per QI, so that classes hold several rows
      values[q] << pick( family );
  }
  table.columns << Column( QStringLiteral( "n" ), pick( countTypes ) );
  // One table in four has region ids the regions layer does not hold (case or space variants, binary),
  // one in four a count that is not a whole number: refused alike, whoever counts.
  // Two tables in three are tidy: every value stored as its column's declaration keeps it.
  const bool tidy = random.bounded( 3 ) != 0;
  const bool oddRegions = random.bounded( 4 ) == 0 && !tidy, oddCounts = random.bounded( 4 ) == 0 && !tidy;
  if ( tidy && !table.columns.last().second.endsWith( QLatin1String( "INTEGER" ) ) && table.columns.last().second != QLatin1String( "REAL" ) )
    table.columns.last().second = QStringLiteral( "INTEGER" ); // a text count is counted row by row: a tidy table's is a number

  for ( int r = 0; r < rows; ++r )
  {
    QVariant region = pick( regionIds );
    switch ( oddRegions ? random.bounded( 40 ) : 3 )
    {
      case 0:
        region = region.toString().toUpper();
        break;
      case 1:
        region = region.toString() + ' ';
        break;
      case 2:
        region = region.toString().toUtf8();
        break;
      default:
        break;
    }
    QVariantList row { region };
    for ( int q = 0; q < 3; ++q )
      row << pick( values[q] );
    row << ( oddCounts && random.bounded( 10 ) == 0 ? QVariant( pick( QVariantList { QStringLiteral( "2" ), 2.0, 2.5 } ) ) : QVariant( static_cast<qlonglong>( random.bounded( 4 ) ) ) );
    if ( tidy )
      for ( int c = 0; c < row.size(); ++c )
        row[c] = fitted( table.columns[c].second, row[c] );
    table.rows << row;
  }
  return table;
}

} // namespace vbastest
