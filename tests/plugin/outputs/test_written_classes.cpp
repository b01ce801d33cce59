// A release is k-anonymous as written, and its numbers are those of what was written (docs/outputs.md,
// "The release is recounted before it is kept"; docs/generalization.md, "Which row a value matches"):
// stored values that share one text (NULL and the text 'NULL', BLOBs of invalid UTF-8, lists) kept
// apart or refused, a "*" written as NULL counted with the NULLs it joins, and a seeded property test
// that feeds random mixtures of stored values through every release path and recounts each written
// GeoPackage release here with SQLite itself (typeof and quote of every stored value: no QGIS, no
// plugin code). The straight writer (VbasOgrSink) stores, in each format it writes, what QGIS's
// writer stores (docs/outputs.md, "How outputs are written"). No record content is printed.
#include "tests/plugin/qgis_test_util.h"
#include "tests/plugin/random_records.h"
#include "plugin/outputs/vbasgdal.h"
#include "plugin/outputs/vbasogrsink.h"
#include "plugin/support/vbasqgiscompat.h"

#include <QCryptographicHash>
#include <QDataStream>
#include <QRandomGenerator>
#include <QTemporaryDir>

#include <limits>
#include <map>

#include <gdal.h>
#include <ogr_api.h>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{

//! Each row of a GeoPackage (or SQLite) table, in the order of its fid column: the storage class and literal of each of its fields.
QStringList storedRows( const QString &path, const QString &table, const QStringList &fields, const QString &fid = QStringLiteral( "fid" ) )
{
  sqlite3 *db = nullptr;
  QStringList rows;
  if ( sqlite3_open_v2( path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr ) != SQLITE_OK )
    return rows;
  QStringList columns;
  for ( const QString &field : fields )
    columns << QStringLiteral( "typeof(\"%1\") || ':' || quote(\"%1\")" ).arg( field );
  const QString sql = QStringLiteral( "SELECT %1 FROM \"%2\" ORDER BY \"%3\"" ).arg( columns.join( QStringLiteral( " || '|' || " ) ), table, fid );
  sqlite3_stmt *statement = nullptr;
  if ( sqlite3_prepare_v2( db, sql.toUtf8().constData(), -1, &statement, nullptr ) == SQLITE_OK )
    while ( sqlite3_step( statement ) == SQLITE_ROW )
      rows << QString::fromUtf8( reinterpret_cast<const char *>( sqlite3_column_text( statement, 0 ) ) );
  sqlite3_finalize( statement );
  sqlite3_close( db );
  return rows;
}

//! Each row of the only layer of a file as OGR reads it: each field's type and value as text, or NULL.
QStringList readRows( const QString &path )
{
  QStringList rows;
  GDALDatasetH dataset = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  OGRLayerH layer = dataset && GDALDatasetGetLayerCount( dataset ) == 1 ? GDALDatasetGetLayer( dataset, 0 ) : nullptr;
  for ( OGRFeatureH feature = layer ? OGR_L_GetNextFeature( layer ) : nullptr; feature; feature = OGR_L_GetNextFeature( layer ) )
  {
    QStringList values;
    for ( int i = 0; i < OGR_F_GetFieldCount( feature ); ++i )
      values << ( OGR_F_IsFieldNull( feature, i )
                    ? QStringLiteral( "NULL" )
                    : QStringLiteral( "%1:%2" ).arg( OGR_GetFieldTypeName( OGR_Fld_GetType( OGR_F_GetFieldDefnRef( feature, i ) ) ), QString::fromUtf8( OGR_F_GetFieldAsString( feature, i ) ) ) );
    rows << values.join( '|' );
    OGR_F_Destroy( feature );
  }
  if ( dataset )
    GDALClose( dataset );
  return rows;
}

QByteArray readFile( const QString &path )
{
  QFile file( path );
  return file.open( QIODevice::ReadOnly ) ? file.readAll() : QByteArray();
}

//! The classes of a GeoPackage table on fields as SQLite stores them: storage class and literal of each value -> rows.
std::map<QString, qlonglong> storedClasses( const QString &path, const QString &table, const QStringList &fields )
{
  std::map<QString, qlonglong> classes;
  for ( const QString &row : storedRows( path, table, fields ) )
    ++classes[row];
  return classes;
}

//! What a recount finds: records, classes, the smallest class.
struct Counted
{
    qlonglong records = 0;
    qlonglong classes = 0;
    qlonglong smallest = 0;
};

Counted counted( const std::map<QString, qlonglong> &classes )
{
  Counted c;
  for ( const auto &[key, rows] : classes )
  {
    c.records += rows;
    ++c.classes;
    c.smallest = c.classes == 1 ? rows : std::min( c.smallest, rows );
  }
  return c;
}

//! The anonymize parameters of the hand tables: regions of the grid, one site, K = 5, the release into a GeoPackage.
QVariantMap parameters( QgsVectorLayer *regions, QgsVectorLayer *records, const QStringList &qis, const QString &release )
{
  QVariantMap p = vbastest::inputParameters( regions, QStringLiteral( "id" ), records, QStringLiteral( "region" ), qis );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 1 );
  p.insert( QStringLiteral( "K" ), 5 );
  p.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 50 );
  p.insert( QStringLiteral( "ANONYMIZED" ), release );
  return p;
}

QString writeFile( const QString &path, const QByteArray &content )
{
  QFile file( path );
  file.open( QIODevice::WriteOnly );
  file.write( content );
  return path;
}

} // namespace

class TestWrittenClasses : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void nullAndTextNullRefusedByOneRow();
    void nullAndTextNullKeptApart();
    void binaryAndListValues();
    void starWrittenAsNullJoinsNull();
    void destinationJoiningClassesIsRefused();
    void randomStoredValues();
    void straightWriterStoresWhatQgisStores_data();
    void straightWriterStoresWhatQgisStores();

  private:
    //! Checks the release of a successful run against its recount from the GeoPackage at path: every class at least k, and the run's numbers equal the recount's.
    void checkRelease( const QVariantMap &results, const QString &path, const QStringList &qis, qlonglong k, const QString &what );

    QgsProcessingContext mContext;
    std::unique_ptr<QTemporaryDir> mDir;
    std::unique_ptr<QgsVectorLayer> mRegions;
};

void TestWrittenClasses::initTestCase()
{
  vbastest::initQgisWithProvider();
  mDir = std::make_unique<QTemporaryDir>();
  mRegions = vbastest::grid();
}

void TestWrittenClasses::cleanupTestCase()
{
  mDir.reset();
  QgsApplication::exitQgis();
}

void TestWrittenClasses::checkRelease( const QVariantMap &results, const QString &path, const QStringList &qis, qlonglong k, const QString &what )
{
  const Counted c = counted( storedClasses( path, QFileInfo( path ).completeBaseName(), qis + QStringList { QStringLiteral( "aggregate_id" ) } ) );
  QVERIFY2( c.classes == 0 || c.smallest >= k, qPrintable( what + QStringLiteral( ": a class of %1 records as written, below k = %2" ).arg( c.smallest ).arg( k ) ) );
  // The numbers the algorithm gives (vbas:generalize gives RELEASED alone).
  for ( const auto &[output, recounted] : { std::pair<const char *, qlonglong> { "RELEASED", c.records }, { "RELEASED_ECS", c.classes }, { "SMALLEST_EC", c.smallest } } )
    QVERIFY2( !results.contains( output ) || results.value( output ).toLongLong() == recounted,
              qPrintable( what + QStringLiteral( ": %1 %2, recounted %3" ).arg( output ).arg( results.value( output ).toLongLong() ).arg( recounted ) ) );
}

void TestWrittenClasses::nullAndTextNullRefusedByOneRow()
{
  // The hierarchy row NULL matches both NULL and the text 'NULL': refused, naming both, nothing written.
  QList<QVariantList> rows;
  for ( int i = 0; i < 3; ++i )
    rows << QVariantList { "r00", QVariant() } << QVariantList { "r00", "NULL" };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string" ), rows );
  const QString folder = mDir->filePath( QStringLiteral( "one-row" ) );
  QDir().mkpath( folder );
  QVariantMap p = parameters( mRegions.get(), records.get(), { QStringLiteral( "sex" ) }, folder + QStringLiteral( "/release.gpkg" ) );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { writeFile( mDir->filePath( QStringLiteral( "sex.csv" ) ), "NULL;*\n" ) } );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  const QString errors = feedback.errors.join( ' ' );
  QVERIFY2( errors.contains( QStringLiteral( "NULL (no value)" ) ) && errors.contains( QStringLiteral( "the text 'NULL'" ) ) && errors.contains( QStringLiteral( "row 'NULL'" ) ),
            qPrintable( errors ) );
  QCOMPARE( vbastest::entries( folder ), QStringList() );
}

void TestWrittenClasses::nullAndTextNullKeptApart()
{
  // Without a file, NULL and the text 'NULL' are two values: 3 records each, below k, never one class of 6.
  QList<QVariantList> rows;
  for ( int i = 0; i < 20; ++i )
    rows << QVariantList { "r00", "F" };
  for ( int i = 0; i < 3; ++i )
    rows << QVariantList { "r00", QVariant() } << QVariantList { "r00", "NULL" };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string" ), rows );
  for ( const bool local : { true, false } )
  {
    const QString path = mDir->filePath( QStringLiteral( "apart-%1.gpkg" ).arg( local ) );
    QVariantMap p = parameters( mRegions.get(), records.get(), { QStringLiteral( "sex" ) }, path );
    p.insert( QStringLiteral( "GENERALIZE" ), true );
    p.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), local );
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
    checkRelease( r, path, { QStringLiteral( "sex" ) }, 5, QStringLiteral( "NULL and 'NULL'" ) );
    QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), local ? 6 : 20 ); // local: the six starred ("*" is text here)
  }
}

void TestWrittenClasses::binaryAndListValues()
{
  // Three BLOBs of invalid UTF-8 (each read as U+FFFD) and three lists (each shown as ""), one record each:
  // generalized exactly (value -> *), never one class of 3; a hierarchy file cannot name them.
  for ( const auto &[type, odd] : { std::pair<QString, QVariantList> { QStringLiteral( "binary" ), { QByteArray( "\xff\x01" ), QByteArray( "\xff\x02" ), QByteArray( "\xfe" ) } },
                                    { QStringLiteral( "stringlist" ), { QStringList { "a" }, QStringList { "b" }, QStringList { "a", "b" } } } } )
  {
    QList<QVariantList> rows;
    for ( int i = 0; i < 10; ++i )
      rows << QVariantList { "r00", odd.value( 0 ), 1 };
    for ( const QVariant &value : odd )
      rows << QVariantList { "r00", value, 2 };
    auto records = vbastest::table( QStringLiteral( "field=region:string&field=v:%1&field=age:integer" ).arg( type ), rows );
    QVariantMap p = parameters( mRegions.get(), records.get(), { QStringLiteral( "v" ), QStringLiteral( "age" ) }, QgsProcessing::TEMPORARY_OUTPUT );
    p.insert( QStringLiteral( "GENERALIZE" ), true );
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
    // Recounted here from the layer by QDataStream keys (lists and bytes as they are).
    std::map<QByteArray, qlonglong> classes;
    vbastest::forEachFeature( r, QStringLiteral( "ANONYMIZED" ), mContext, [&classes]( const QgsFeature &f ) {
      QByteArray key;
      QDataStream stream( &key, QIODevice::WriteOnly );
      stream << f.attribute( QStringLiteral( "v" ) ) << f.attribute( QStringLiteral( "age" ) ) << f.attribute( QStringLiteral( "aggregate_id" ) );
      ++classes[key];
    } );
    qlonglong smallest = std::numeric_limits<qlonglong>::max();
    for ( const auto &[key, n] : classes )
      smallest = std::min( smallest, n );
    QVERIFY2( smallest >= 5, qPrintable( type ) );
    QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), smallest );
    QCOMPARE( r.value( QStringLiteral( "RELEASED_ECS" ) ).toLongLong(), static_cast<qlonglong>( classes.size() ) );

    p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { writeFile( mDir->filePath( QStringLiteral( "v.csv" ) ), "a;*\n" ) } );
    Feedback feedback;
    vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
    QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "no hierarchy row can name" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
  }
}

void TestWrittenClasses::starWrittenAsNullJoinsNull()
{
  // An integer sex code: 20 x 1, 5 x NULL, 3 x 2 and 3 x 3 (age 30 each). The six of codes 2 and 3 are
  // below k = 5 and get sex starred, written as NULL in an integer field: with the five NULLs they are
  // one class of 11 as written. The run must say 2 classes, the smallest of 11 (not 3 and 5).
  QList<QVariantList> rows;
  for ( int i = 0; i < 20; ++i )
    rows << QVariantList { "r00", 1, 30 };
  for ( int i = 0; i < 5; ++i )
    rows << QVariantList { "r00", QVariant(), 30 };
  for ( int i = 0; i < 3; ++i )
    rows << QVariantList { "r00", 2, 30 } << QVariantList { "r00", 3, 30 };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:integer&field=age:integer" ), rows );
  const QString path = mDir->filePath( QStringLiteral( "star-null.gpkg" ) );
  QVariantMap p = parameters( mRegions.get(), records.get(), { QStringLiteral( "sex" ), QStringLiteral( "age" ) }, path );
  p.insert( QStringLiteral( "GENERALIZE" ), true );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( r.value( QStringLiteral( "RECORDS_STARRED" ) ).toLongLong(), 6 );
  checkRelease( r, path, { QStringLiteral( "sex" ), QStringLiteral( "age" ) }, 5, QStringLiteral( "star as NULL" ) );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), 11 );
  QCOMPARE( r.value( QStringLiteral( "RELEASED_ECS" ) ).toLongLong(), 2 );
}

void TestWrittenClasses::destinationJoiningClassesIsRefused()
{
  // A real QI d with 5 records of -0.0 and 5 of 0.0 (age 30 each): two classes of 5 for the run, which
  // keeps values apart by what they store. A GeoPackage stores -0.0 as 0, one class of 10: the release
  // would be k-anonymous, but RELEASED_ECS 2 and SMALLEST_EC 5 would count classes never written, so
  // the run is refused, naming d, and writes nothing. Into memory, where they stay apart, it runs.
  QList<QVariantList> rows;
  for ( int i = 0; i < 5; ++i )
    rows << QVariantList { "r00", -0.0, 30 } << QVariantList { "r00", 0.0, 30 };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=d:double&field=age:integer" ), rows );
  const QString path = mDir->filePath( QStringLiteral( "joined.gpkg" ) );
  QVariantMap p = parameters( mRegions.get(), records.get(), { QStringLiteral( "d" ), QStringLiteral( "age" ) }, path );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  const QString error = feedback.errors.join( ' ' );
  QVERIFY2( error.contains( QStringLiteral( "stores some different QI values alike, so the release as written would hold 1 classes, the smallest of 10, where the run counted 2, the smallest of 5" ) ),
            qPrintable( error ) );
  QVERIFY2( error.contains( QStringLiteral( "a list as its text): d. " ) ), qPrintable( error ) );
  QVERIFY( !QFile::exists( path ) );

  p.insert( QStringLiteral( "ANONYMIZED" ), QgsProcessing::TEMPORARY_OUTPUT );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( r.value( QStringLiteral( "RELEASED_ECS" ) ).toLongLong(), 2 );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), 5 );
}

void TestWrittenClasses::randomStoredValues()
{
  // Random GeoPackage tables: a region, two QIs whose values mix NULL, the text 'NULL', text, BLOBs
  // (valid and invalid UTF-8), integers and integers stored as text, each run through the paper's
  // method, generalization with and without local suppression, a hierarchy file with a row for every
  // text (and NULL), intervals, and vbas:generalize. A run either refuses with a message and writes
  // nothing, or writes a release whose every class holds k records as SQLite stores it, with the
  // run's numbers equal to that recount.
  // Values by declaration (as a tidy table stores them, colliding texts among them), and all of them
  // mixed in one case of five (stored as no declaration keeps them: refused, naming the row).
  const QMap<QString, QVariantList> pools {
    { QStringLiteral( "TEXT" ), { QVariant(), QStringLiteral( "NULL" ), QStringLiteral( "F" ), QStringLiteral( "M" ), QStringLiteral( "30" ) } },
    { QStringLiteral( "BLOB" ), { QVariant(), QByteArray( "\xff" ), QByteArray( "\xfe\xff" ), QByteArray( "F" ), QByteArray( "\x01" ) } },
    { QStringLiteral( "INTEGER" ), { QVariant(), 1LL, 2LL, 30LL, 40LL } },
  };
  QVariantList mixed;
  for ( const QVariantList &pool : pools )
    mixed << pool;
  const int cases = qEnvironmentVariableIntValue( "VBAS_WRITTEN_CASES" ) > 0 ? qEnvironmentVariableIntValue( "VBAS_WRITTEN_CASES" ) : 12;
  int released = 0, refused = 0;
  for ( int n = 0; n < cases; ++n )
  {
    QRandomGenerator random( 0x5eed0030u + static_cast<quint32>( n ) );
    const bool untidy = random.bounded( 5 ) == 0;
    vbastest::RecordsTable table;
    table.columns << vbastest::Column( QStringLiteral( "region" ), QStringLiteral( "TEXT" ) );
    QVariantList values[2];
    for ( int q = 0; q < 2; ++q )
    {
      const QString declaration = pools.keys().at( static_cast<int>( random.bounded( static_cast<quint32>( pools.size() ) ) ) );
      table.columns << vbastest::Column( QStringLiteral( "q%1" ).arg( q + 1 ), declaration );
      const QVariantList &pool = untidy ? mixed : pools[declaration];
      for ( int v = 0; v < 4; ++v )
        values[q] << pool.at( static_cast<int>( random.bounded( static_cast<quint32>( pool.size() ) ) ) );
    }
    for ( int r = 0; r < 60; ++r )
      table.rows << QVariantList { QStringLiteral( "r%1%2" ).arg( random.bounded( 2 ) ).arg( random.bounded( 2 ) ), values[0].at( static_cast<int>( random.bounded( 4u ) ) ),
                                   values[1].at( static_cast<int>( random.bounded( 4u ) ) ) };
    const QString folder = mDir->filePath( QStringLiteral( "case-%1" ).arg( n ) );
    QDir().mkpath( folder );
    QgsVectorLayer records( vbastest::writeRecords( folder + QStringLiteral( "/records.gpkg" ), table ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
    QSet<QByteArray> rowsOfFile;
    for ( const QVariant &value : values[0] )
      rowsOfFile.insert( value.isNull() ? QByteArray( "NULL" ) : value.toString().toUtf8() );
    QByteArray hierarchy;
    for ( const QByteArray &row : rowsOfFile )
      hierarchy += row + ";*\n";
    const QString file = writeFile( folder + QStringLiteral( "/q1.csv" ), hierarchy );
    const QList<std::pair<QString, QVariantMap>> paths {
      { QStringLiteral( "vbas:anonymize" ), {} },
      { QStringLiteral( "vbas:anonymize" ), { { QStringLiteral( "GENERALIZE" ), true } } },
      { QStringLiteral( "vbas:anonymize" ), { { QStringLiteral( "GENERALIZE" ), true }, { QStringLiteral( "LOCAL_SUPPRESSION" ), false } } },
      { QStringLiteral( "vbas:anonymize" ), { { QStringLiteral( "HIERARCHIES" ), QStringList { file } } } },
      { QStringLiteral( "vbas:anonymize" ), { { QStringLiteral( "INTERVALS" ), QStringLiteral( "q2=10" ) } } },
      { QStringLiteral( "vbas:generalize" ), {} },
    };
    for ( int i = 0; i < paths.size(); ++i )
    {
      const QString path = folder + QStringLiteral( "/release-%1.gpkg" ).arg( i );
      QVariantMap p = parameters( mRegions.get(), &records, { QStringLiteral( "q1" ), QStringLiteral( "q2" ) }, path );
      p.insert( paths[i].second );
      Feedback feedback;
      bool ok = false;
      const QVariantMap r = QgsApplication::processingRegistry()->algorithmById( paths[i].first )->run( p, mContext, &feedback, &ok );
      const QString what = QStringLiteral( "case %1, path %2 (%3, %4)" ).arg( n ).arg( i ).arg( table.columns[1].second, table.columns[2].second );
      if ( !ok )
      {
        ++refused;
        if ( qEnvironmentVariableIsSet( "VBAS_WRITTEN_VERBOSE" ) )
          qInfo( "%s: %s", qPrintable( what ), qPrintable( feedback.errors.join( ' ' ).left( 300 ) ) );
        QVERIFY2( !feedback.errors.isEmpty(), qPrintable( what + QStringLiteral( ": failed without a message" ) ) );
        QVERIFY2( !feedback.errors.join( ' ' ).contains( QStringLiteral( "fault of VBAS" ) ), qPrintable( what + QStringLiteral( ": the run's recount disagreed" ) ) );
        QVERIFY2( !QFileInfo::exists( path ), qPrintable( what + QStringLiteral( ": a refused run left its release" ) ) );
        continue;
      }
      ++released;
      checkRelease( r, path, { QStringLiteral( "q1" ), QStringLiteral( "q2" ) }, 5, what );
    }
  }
  qInfo( "%d releases recounted, %d runs refused with a message", released, refused );
  QVERIFY( released > cases ); // the cases are not all refused
}

void TestWrittenClasses::straightWriterStoresWhatQgisStores_data()
{
  QTest::addColumn<QString>( "driver" );
  QTest::addColumn<QString>( "file" );   // the file asked of QGIS's writer
  QTest::addColumn<QString>( "stored" ); // the file it stores the rows in
  QTest::addColumn<QString>( "fid" );    // the fid column of a SQLite table, empty for a file compared byte for byte
  QTest::addColumn<QString>( "encoding" );
  // A GeoPackage or SQLite file is UTF-8 whatever the encoding asked for: QGIS's writer forces it.
  QTest::newRow( "GPKG" ) << "GPKG"
                          << "out.gpkg"
                          << "out.gpkg"
                          << "fid"
                          << "ISO-8859-1";
  QTest::newRow( "SQLite" ) << "SQLite"
                            << "out.sqlite"
                            << "out.sqlite"
                            << "ogc_fid"
                            << "ISO-8859-1";
  QTest::newRow( "CSV" ) << "CSV"
                         << "out.csv"
                         << "out.csv" << QString() << "UTF-8";
  // A shapefile without geometry is its .dbf alone.
  QTest::newRow( "dBASE" ) << "ESRI Shapefile"
                           << "out.shp"
                           << "out.dbf" << QString() << "UTF-8";
}

void TestWrittenClasses::straightWriterStoresWhatQgisStores()
{
  // The same rows written by QGIS's file writer and by VbasOgrSink into a file made by QGIS's writer
  // with the plugin's options: every stored value must be the same (SQLite's storage class and literal
  // in a GeoPackage or SQLite table; every byte of every file of a CSV or dBASE file, read back through
  // OGR too), for values of each field's own type and of the other types a field may be handed, and a
  // value QGIS's writer refuses is refused for the same reason.
  QFETCH( QString, driver );
  QFETCH( QString, file );
  QFETCH( QString, stored );
  QFETCH( QString, fid );
  QFETCH( QString, encoding );
  QgsFields fields;
  fields.append( QgsField( QStringLiteral( "text" ), vbasqgis::Field::String ) );
  fields.append( QgsField( QStringLiteral( "whole" ), vbasqgis::Field::Int ) );
  fields.append( QgsField( QStringLiteral( "big" ), vbasqgis::Field::LongLong ) );
  fields.append( QgsField( QStringLiteral( "real" ), vbasqgis::Field::Double ) );
  if ( driver == QLatin1String( "ESRI Shapefile" ) ) // a dBASE file reads a 64-bit field back as reals: QGIS's writer keeps it
  {
    QVERIFY( !VbasOgrSink::writes( driver, fields, vbasqgis::WkbType::NoGeometry, QStringLiteral( "UTF-8" ) ) );
    fields.remove( fields.indexFromName( QStringLiteral( "big" ) ) );
  }
  QVERIFY( VbasOgrSink::writes( driver, fields, vbasqgis::WkbType::NoGeometry, encoding ) );
  QVERIFY( !VbasOgrSink::writes( driver, fields, vbasqgis::WkbType::Point, encoding ) );
  for ( const char *other : { "ISO-8859-1", "System" } )
    QCOMPARE( VbasOgrSink::writes( driver, fields, vbasqgis::WkbType::NoGeometry, QString( other ) ), driver == QLatin1String( "GPKG" ) || driver == QLatin1String( "SQLite" ) );
  const QStringList names = fields.names();
  const QList<QVariant> values = vbastest::writerValues();
  QTemporaryDir dir;
  QStringList kept;
  for ( const bool straight : { false, true } )
  {
    // Each value alone in each field, one row each: a value QGIS refuses is refused alike.
    const QString folder = dir.filePath( straight ? QStringLiteral( "straight" ) : QStringLiteral( "qgis" ) );
    QDir().mkpath( folder );
    std::unique_ptr<QgsVectorFileWriter> writer( QgsVectorFileWriter::create( folder + '/' + file, fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem(), mContext.transformContext(),
                                                                              VbasGdal::saveOptions( driver, QStringLiteral( "t" ), { { QStringLiteral( "fileEncoding" ), encoding } } ) ) );
    QVERIFY( !writer->hasError() );
    std::unique_ptr<QgsFeatureSink> sink = std::move( writer );
    if ( straight )
    {
      sink.reset();
      sink = std::make_unique<VbasOgrSink>( driver, folder + '/' + stored, QStringLiteral( "t" ), fields );
    }
    QStringList written;
    for ( const QVariant &value : values )
      for ( int field = 0; field < fields.count(); ++field )
      {
        QgsFeature row( fields );
        QgsAttributes attributes( fields.count() );
        attributes[field] = value;
        row.setAttributes( attributes );
        const bool added = sink->addFeature( row );
        // QGIS's writer names the value in its reason; the sink never does (no record value in a message).
        const QString reason = added ? QString() : sink->lastError().mid( sink->lastError().indexOf( QLatin1String( "for attribute field" ) ) );
        written << QStringLiteral( "%1 %2 in %3: %4 %5" ).arg( written.size() ).arg( value.typeName(), names[field] ).arg( added ).arg( reason );
      }
    QVERIFY( sink->flushBuffer() );
    sink.reset();
    written << ( fid.isEmpty() ? readRows( folder + '/' + stored ) : storedRows( folder + '/' + stored, QStringLiteral( "t" ), names, fid ) );
    for ( const QString &entry : vbastest::entries( folder ) )
      written << entry + ": " + ( fid.isEmpty() ? QString::fromLatin1( QCryptographicHash::hash( readFile( folder + '/' + entry ), QCryptographicHash::Sha256 ).toHex() ) : QString() );
    if ( straight )
      for ( int i = 0; i < written.size(); ++i )
        QVERIFY2( i < kept.size() && written[i] == kept[i], qPrintable( QStringLiteral( "line %1: QGIS's writer gave %2, the straight writer %3" ).arg( i ).arg( kept.value( i ), written[i] ) ) );
    QCOMPARE( written.size(), kept.isEmpty() ? written.size() : kept.size() );
    QVERIFY2( written.size() > values.size() * fields.count() * 3 / 2, "too few rows were stored to compare" );
    kept = written;
  }
}

QTEST_MAIN( TestWrittenClasses )
#include "test_written_classes.moc"
