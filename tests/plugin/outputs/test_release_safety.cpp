// The release is always k-anonymous, complete and safe on disk. One test per way the promise
// broke, each run through QgsProcessingAlgorithm::run: every QI value keyed exactly, a table edited
// between the passes, a failed write, the release's feature ids, outputs over inputs, bad
// counts, K and settings, shapefile names, database tables and the warnings (stale temporaries: test_ownership.cpp).
// Expected counts are worked out by hand next to each test; no record content is ever printed.
#include "tests/plugin/qgis_test_util.h"

#include <qgsabstractdatabaseproviderconnection.h>
#include <qgsprovidermetadata.h>
#include <qgsproviderregistry.h>
#include <qgsvectorfilewriter.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <csignal>
#include <limits>
#include <sys/resource.h>
#include <unistd.h>

using vbastest::entries;
using vbastest::Feedback;
using vbastest::layerValue;
using vbastest::save;

namespace
{

const QStringList kSinks = { "SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI", "EVALUATION" };

QByteArray md5( const QString &path )
{
  QFile file( path );
  if ( !file.open( QIODevice::ReadOnly ) )
    return QByteArray();
  return QCryptographicHash::hash( file.readAll(), QCryptographicHash::Md5 );
}

//! Rows of (region, sex) with a patient id and a count n of 1.
std::unique_ptr<QgsVectorLayer> patients( const QList<QPair<QString, QString>> &rows )
{
  QList<QVariantList> attributes;
  int patient = 0;
  for ( const auto &[region, sex] : rows )
    attributes << QVariantList { ++patient, region, sex, 1 };
  return vbastest::table( QStringLiteral( "field=patient:integer&field=region:string&field=sex:string&field=n:integer" ), attributes );
}

//! n rows in each of the nine regions, sexes alternating F, M.
QList<QPair<QString, QString>> perRegion( int n )
{
  QList<QPair<QString, QString>> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      for ( int i = 0; i < n; ++i )
        rows << qMakePair( QStringLiteral( "r%1%2" ).arg( c ).arg( r ), QString( i % 2 ? "M" : "F" ) );
  return rows;
}

} // namespace

class TestReleaseSafety : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();

    // 1. Every QI value keyed exactly.
    void listQiValuesAreNotMerged();
    void binaryQiValuesAreNotMerged();
    void mapQiValuesAreNotMerged();
    void invalidUtf8IsRefused();
    void regionIdsMustBeTextOrNumbers();
    void releasedValuesAreWrittenExactly();
    // 2. The release is what was counted.
    void tableEditedAfterTheReadIsNotReleased_data();
    void tableEditedAfterTheReadIsNotReleased();
    void releasedValueEditedAfterTheReadIsNotReleased_data();
    void releasedValueEditedAfterTheReadIsNotReleased();
    void fileEditedWhileReadAborts_data();
    void fileEditedWhileReadAborts();
    // 3. Every write checked; 4 and 10: all or nothing.
    void failedWriteLeavesNothing_data();
    void failedWriteLeavesNothing();
    void databaseTableIsStagedAndRenamed();
    // 5. No fid (the order and the released fields: test_release_fields.cpp).
    void releaseHasFreshIdsAndNoInputFid();
    // 6. Outputs never overwrite inputs or each other.
    void outputOverInputIsRefused_data();
    void outputOverInputIsRefused();
    void tableBesideTheInputIsAllowed();
    void releaseIntoTheTemporaryFolder();
    // 7 and 8. Counts, K and settings.
    void badCountsAreRefused_data();
    void badCountsAreRefused();
    void countTotalMustFit();
    void kMustBeAWholeNumber_data();
    void kMustBeAWholeNumber();
    void fieldInTwoRolesIsRefused_data();
    void fieldInTwoRolesIsRefused();
    // 9. Shapefiles.
    void shapefileNamesAreNeverTruncated_data();
    void shapefileNamesAreNeverTruncated();
    void shapefileWithAllItsFiles();
    // 11. Warnings.
    void siteCountCappedIsWarned();
    void emptyOrMostlySuppressedReleaseIsWarned();

  private:
    //! vbas:anonymize on the grid: one aggregate per FIXED_SITES, QI sex, every output a temporary layer.
    QVariantMap parameters( QgsVectorLayer *records, int sites = 1, int k = 2 ) const;
    //! The same with every output written into folder.
    QVariantMap fileParameters( QgsVectorLayer *records, const QString &folder, int sites = 1, int k = 2 ) const;
    //! RELEASED and SUPPRESSED of a successful run of a single QI field qi of records.
    QPair<qlonglong, qlonglong> released( QgsVectorLayer *records, const QString &qi );

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mGrid;
};

void TestReleaseSafety::initTestCase()
{
  vbastest::initQgisWithProvider();
  mGrid = vbastest::grid();
  std::signal( SIGXFSZ, SIG_IGN ); // failedWriteLeavesNothing: a file-size limit fails the write instead of ending the test
}

QVariantMap TestReleaseSafety::parameters( QgsVectorLayer *records, int sites, int k ) const
{
  QVariantMap p = vbastest::gridParameters( mGrid.get(), records );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), sites );
  p.insert( QStringLiteral( "K" ), k );
  return p;
}

QVariantMap TestReleaseSafety::fileParameters( QgsVectorLayer *records, const QString &folder, int sites, int k ) const
{
  QVariantMap p = parameters( records, sites, k );
  for ( const QString &sink : kSinks )
    p.insert( sink, QStringLiteral( "%1/%2.%3" ).arg( folder, sink.toLower(), sink == QLatin1String( "EVALUATION" ) ? "csv" : "gpkg" ) );
  return p;
}

QPair<qlonglong, qlonglong> TestReleaseSafety::released( QgsVectorLayer *records, const QString &qi )
{
  QVariantMap p = parameters( records );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { qi } );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  return { r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() };
}

// ---------------------------------------------------------------------------------------------
// 1. Every QI value keyed exactly. Before, a list, a map or binary value was reduced to one text
// ("" for every list of two or more items), so distinct values merged into one class.

void TestReleaseSafety::listQiValuesAreNotMerged()
{
  // All in r00, one site, k = 2. tags: [a, b] x3, [a, c] x1, [b] x2: the [a, c] class of 1 is
  // suppressed, 5 released. (Merged as text: "" x4 and "b" x2, nothing suppressed.)
  const QList<QStringList> tags = { { "a", "b" }, { "a", "b" }, { "a", "b" }, { "a", "c" }, { "b" }, { "b" } };
  const QList<QVariantList> numbers = { { 1, 2 }, { 1, 2 }, { 1, 3 }, { 1, 2 }, { 2, 1 }, { 2, 1 } };
  QList<QVariantList> rows;
  for ( int i = 0; i < tags.size(); ++i )
    rows << QVariantList { QStringLiteral( "r00" ), tags[i], numbers[i] };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=tags:stringlist&field=numbers:integerlist" ), rows );
  QCOMPARE( released( records.get(), QStringLiteral( "tags" ) ), qMakePair( 5LL, 1LL ) );
  // numbers: [1, 2] x3, [1, 3] x1, [2, 1] x2: the [1, 3] is alone, 5 released.
  QCOMPARE( released( records.get(), QStringLiteral( "numbers" ) ), qMakePair( 5LL, 1LL ) );
}

void TestReleaseSafety::binaryQiValuesAreNotMerged()
{
  // 00 ff x2, 00 fe x1, ff x2: the 00 fe is alone, 4 released. (As UTF-8 text 00 ff and 00 fe both
  // read "\0\ufffd": one class of 3, nothing suppressed.)
  QList<QVariantList> rows;
  for ( const QByteArray &bytes : { QByteArray( "\x00\xff", 2 ), QByteArray( "\x00\xff", 2 ), QByteArray( "\x00\xfe", 2 ), QByteArray( "\xff", 1 ), QByteArray( "\xff", 1 ) } )
    rows << QVariantList { QStringLiteral( "r00" ), bytes };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=blob:binary" ), rows );
  QCOMPARE( released( records.get(), QStringLiteral( "blob" ) ), qMakePair( 4LL, 1LL ) );
}

void TestReleaseSafety::mapQiValuesAreNotMerged()
{
  // GeoJSON objects are maps: {k: 1} x2, {k: 2} x1: the {k: 2} is alone, 2 released.
  QTemporaryDir dir;
  const QString path = dir.filePath( QStringLiteral( "records.geojson" ) );
  QFile file( path );
  QVERIFY( file.open( QIODevice::WriteOnly ) );
  file.write( R"({"type": "FeatureCollection", "features": [
    {"type": "Feature", "geometry": null, "properties": {"region": "r00", "o": {"k": 1}}},
    {"type": "Feature", "geometry": null, "properties": {"region": "r00", "o": {"k": 2}}},
    {"type": "Feature", "geometry": null, "properties": {"region": "r00", "o": {"k": 1}}}]})" );
  file.close();
  QgsVectorLayer records( path, QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVERIFY( records.isValid() );
  QCOMPARE( released( &records, QStringLiteral( "o" ) ), qMakePair( 2LL, 1LL ) );
}

void TestReleaseSafety::invalidUtf8IsRefused()
{
  // Two different invalid UTF-8 texts (ff 41 and fe 41) both read as "\ufffdA": they cannot be told
  // apart, so the run is refused, naming the field and the row. (Before: one class of 2, released.)
  QTemporaryDir dir;
  const QString path = dir.filePath( QStringLiteral( "records.gpkg" ) );
  auto memory = vbastest::table( QStringLiteral( "field=region:string&field=s:string" ), QList<QVariantList> { { "r00", "x" }, { "r00", "y" }, { "r00", "z" } } );
  save( memory.get(), path, QStringLiteral( "records" ) );
  std::unique_ptr<QgsAbstractDatabaseProviderConnection> db(
    static_cast<QgsAbstractDatabaseProviderConnection *>( QgsProviderRegistry::instance()->providerMetadata( QStringLiteral( "ogr" ) )->createConnection( path, {} ) ) );
  db->executeSql( QStringLiteral( "UPDATE records SET s = CAST(x'ff41' AS TEXT) WHERE fid = 1" ) );
  db->executeSql( QStringLiteral( "UPDATE records SET s = CAST(x'fe41' AS TEXT) WHERE fid = 2" ) );
  QgsVectorLayer records( path + QStringLiteral( "|layername=records" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVariantMap p = parameters( &records );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "s" ) } );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "the QI field 's'" ) ) && feedback.error().contains( QStringLiteral( "U+FFFD" ) )
              && feedback.error().contains( QStringLiteral( "Record row 1" ) ),
            qPrintable( feedback.error() ) );
}

void TestReleaseSafety::regionIdsMustBeTextOrNumbers()
{
  auto records = vbastest::table( QStringLiteral( "field=region:stringlist&field=sex:string" ), QList<QVariantList> { { QStringList { "r00" }, "F" } } );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), parameters( records.get() ), mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "region ids must be text or numbers" ) ), qPrintable( feedback.error() ) );
}

void TestReleaseSafety::releasedValuesAreWrittenExactly()
{
  // 0.3 and 0.1 + 0.2 are two classes of two (with x = 1 and 2 in each). QVariant calls them equal, and
  // a feature reused from row to row once kept the previous row's values: a class written with 1 row.
  const double sum = 0.1 + 0.2;
  auto records
    = vbastest::table( QStringLiteral( "field=region:string&field=d:double&field=x:integer" ), QList<QVariantList> { { "r00", 0.3, 1 }, { "r00", 0.3, 2 }, { "r00", sum, 1 }, { "r00", sum, 2 } } );
  for ( int run = 1; run <= 20; ++run ) // each in a fresh order
  {
    QVariantMap p = parameters( records.get() );
    p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "d" ) } );
    p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "x" ) } );
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
    QList<QPair<int, int>> written; // (0: d is exactly 0.3, 1: exactly 0.1 + 0.2; x)
    QgsFeature f;
    QgsFeatureIterator it = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext )->getFeatures();
    while ( it.nextFeature( f ) )
    {
      const double d = f.attribute( QStringLiteral( "d" ) ).toDouble();
      QVERIFY( d == 0.3 || d == sum );
      written << qMakePair( d == 0.3 ? 0 : 1, f.attribute( QStringLiteral( "x" ) ).toInt() );
    }
    std::sort( written.begin(), written.end() );
    QCOMPARE( written, ( QList<QPair<int, int>> { { 0, 1 }, { 0, 2 }, { 1, 1 }, { 1, 2 } } ) );
  }
}

// ---------------------------------------------------------------------------------------------
// 2. The release is what was counted: the records table is read once, so an edit made once it is read
// reaches no output. Before, a second pass read the table again: a row whose QI changed in place was
// written with its new value under its old class (a class of 1 in the release), and later the run
// aborted.

//! The release's rows as "value of field/n", sorted.
static QStringList releasedRows( const QVariantMap &results, const QString &field )
{
  QgsVectorLayer release( results.value( QStringLiteral( "ANONYMIZED" ) ).toString(), QStringLiteral( "release" ), QStringLiteral( "ogr" ) );
  QStringList rows;
  QgsFeatureIterator it = release.getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
    rows << QStringLiteral( "%1/%2" ).arg( f.attribute( field ).toString(), f.attribute( QStringLiteral( "n" ) ).toString() );
  rows.sort();
  return rows;
}

void TestReleaseSafety::tableEditedAfterTheReadIsNotReleased_data()
{
  QTest::addColumn<int>( "edit" );
  QTest::newRow( "QI changed to a value never counted" ) << 0;
  QTest::newRow( "QI changed to another class's value" ) << 1;
  QTest::newRow( "row deleted" ) << 2;
  QTest::newRow( "row added" ) << 3;
  QTest::newRow( "count changed" ) << 4;
  QTest::newRow( "region changed" ) << 5;
}

void TestReleaseSafety::tableEditedAfterTheReadIsNotReleased()
{
  QFETCH( int, edit );
  // Two records per region, F and M: one site, classes F x9 and M x9, all released with k = 2.
  auto records = patients( perRegion( 2 ) );
  QTemporaryDir dir;
  QVariantMap p = fileParameters( records.get(), dir.path() );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  QgsVectorDataProvider *provider = records->dataProvider();
  Feedback feedback;
  feedback.onInfo = [&]( const QString &info ) {
    if ( !info.contains( QStringLiteral( "records released" ) ) ) // logged once the records are read, before the release is written
      return;
    QgsFeature added( records->fields() );
    added.setAttributes( QgsAttributes( QVector<QVariant> { 99, QStringLiteral( "r11" ), QStringLiteral( "F" ), 1 } ) );
    QgsFeatureList additions { added };
    switch ( edit )
    {
      case 0:
        provider->changeAttributeValues( { { 1, { { 2, QStringLiteral( "X" ) } } } } );
        break;
      case 1:
        provider->changeAttributeValues( { { 1, { { 2, QStringLiteral( "M" ) } } } } ); // feature 1 was an F
        break;
      case 2:
        provider->deleteFeatures( { 5 } );
        break;
      case 3:
        provider->addFeatures( additions );
        break;
      case 4:
        provider->changeAttributeValues( { { 3, { { 3, 2 } } } } );
        break;
      default:
        provider->changeAttributeValues( { { 1, { { 1, QStringLiteral( "r22" ) } } } } );
        break;
    }
  };
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
  QStringList expected;
  for ( int i = 0; i < 9; ++i )
    expected << QStringLiteral( "F/1" ) << QStringLiteral( "M/1" );
  expected.sort();
  QCOMPARE( releasedRows( r, QStringLiteral( "sex" ) ), expected );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 18LL );
}

// An edit of a released field that is neither a QI nor the count (a chosen field, the sensitive
// field) reaches no output either. Before, the release held the new value while EVALUATION kept the
// first pass's l-diversity, and later the run aborted.

void TestReleaseSafety::releasedValueEditedAfterTheReadIsNotReleased_data()
{
  QTest::addColumn<int>( "field" );
  QTest::newRow( "chosen field (RELEASE_FIELDS)" ) << 2;
  QTest::newRow( "sensitive field" ) << 3;
}

void TestReleaseSafety::releasedValueEditedAfterTheReadIsNotReleased()
{
  QFETCH( int, field );
  QList<QVariantList> rows;
  for ( const auto &[region, sex] : perRegion( 2 ) )
    rows << QVariantList { region, sex, rows.size() % 3 ? "A" : "B", rows.size() % 4 ? "d1" : "d2" };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=ward:string&field=diagnosis:string" ), rows );
  QTemporaryDir dir;
  QVariantMap p = fileParameters( records.get(), dir.path() );
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "ward" ) } );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diagnosis" ) );
  Feedback feedback;
  feedback.onInfo = [&]( const QString &info ) {
    if ( info.contains( QStringLiteral( "records released" ) ) ) // once the records are read
      records->dataProvider()->changeAttributeValues( { { 1, { { field, QStringLiteral( "C" ) } } } } );
  };
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
  const QStringList released = releasedRows( r, records->fields().at( field ).name() );
  QCOMPARE( released.size(), 18 );
  QVERIFY2( !released.join( ' ' ).contains( 'C' ), qPrintable( released.join( ' ' ) ) );
}

// A CSV or a shapefile is read as no snapshot: edited while the records are read, the rows read would
// mix those before and after the edit, so the run stops and nothing is written.

void TestReleaseSafety::fileEditedWhileReadAborts_data()
{
  QTest::addColumn<QString>( "file" );
  QTest::newRow( "CSV, a row appended" ) << QStringLiteral( "records.csv" );
  QTest::newRow( "shapefile table (.dbf) written" ) << QStringLiteral( "records.dbf" );
}

void TestReleaseSafety::fileEditedWhileReadAborts()
{
  QFETCH( QString, file );
  QTemporaryDir dir, out;
  auto memory = patients( perRegion( 500 ) ); // 4,500 rows: the read reports its progress after 4,096 of them
  save( memory.get(), dir.filePath( QString( file ).replace( QLatin1String( ".dbf" ), QLatin1String( ".shp" ) ) ), QStringLiteral( "records" ) ); // a table without geometry is a .dbf alone
  QgsVectorLayer records( dir.filePath( file ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVERIFY( records.isValid() );
  const QVariantMap p = fileParameters( &records, out.path() );
  Feedback feedback;
  bool edited = false;
  QObject::connect( &feedback, &QgsFeedback::progressChanged, [&]( double progress ) {
    if ( edited || progress <= 26 ) // step 1 of 4 (the records) starts at 25 %
      return;
    edited = true;
    QFile edit( dir.filePath( file ) );
    QVERIFY( edit.open( QIODevice::ReadWrite | QIODevice::Append ) );
    if ( file.endsWith( QLatin1String( ".csv" ) ) )
      edit.write( "4501,r00,F,1\n" );
    else
      QVERIFY( edit.setFileTime( QDateTime::currentDateTime().addSecs( 10 ), QFileDevice::FileModificationTime ) );
  } );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY( edited );
  QVERIFY2( feedback.error().contains( QStringLiteral( "changed while it was read" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( entries( out.path() ), QStringList() );
}

// ---------------------------------------------------------------------------------------------
// 3 and 4. A write that fails (here a file-size limit, as a full disk) fails the run and leaves no
// output at all. Before, the other outputs stayed, and a CSV release could be cut short silently.

void TestReleaseSafety::failedWriteLeavesNothing_data()
{
  QTest::addColumn<QString>( "extension" );
  QTest::newRow( "GeoPackage" ) << QStringLiteral( "gpkg" );
  QTest::newRow( "SQLite" ) << QStringLiteral( "sqlite" );
  QTest::newRow( "CSV" ) << QStringLiteral( "csv" );
}

void TestReleaseSafety::failedWriteLeavesNothing()
{
  QFETCH( QString, extension );
  QgsVectorLayer regions( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "regions" ), QStringLiteral( "ogr" ) );
  QgsVectorLayer records( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QTemporaryDir dir;
  QVariantMap p = fileParameters( &records, dir.path(), 15, 5 );
  p.insert( QStringLiteral( "REGIONS" ), layerValue( &regions ) );
  p.insert( QStringLiteral( "REGION_ID" ), QStringLiteral( "AREAKEY" ) );
  p.insert( QStringLiteral( "RECORD_REGION" ), QStringLiteral( "tract_id" ) );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { "age_group", "sex", "race" } );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diagnosis" ) );
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { "insurance" } );
  p.insert( QStringLiteral( "ANONYMIZED" ), dir.filePath( QStringLiteral( "anonymized." ) + extension ) );
  // The release of about 39,500 rows takes well over 1 MB; the other outputs fit.
  rlimit previous {};
  getrlimit( RLIMIT_FSIZE, &previous );
  rlimit limit = previous;
  limit.rlim_cur = 1 << 20;
  QCOMPARE( setrlimit( RLIMIT_FSIZE, &limit ), 0 );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  setrlimit( RLIMIT_FSIZE, &previous );
  QVERIFY2( feedback.error().contains( QStringLiteral( "ANONYMIZED" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( entries( dir.path() ), QStringList() );
}

void TestReleaseSafety::databaseTableIsStagedAndRenamed()
{
  // The release into a table of a GeoPackage (ogr:): written to a staging table, renamed at the end.
  auto records = patients( perRegion( 2 ) );
  QTemporaryDir dir;
  const QString database = dir.filePath( QStringLiteral( "release.gpkg" ) );
  QVariantMap p = parameters( records.get() );
  p.insert( QStringLiteral( "ANONYMIZED" ), QStringLiteral( "ogr:dbname='%1' table=\"anonymized\" (geom)" ).arg( database ) );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( r.value( QStringLiteral( "ANONYMIZED" ) ).toString(), database + QStringLiteral( "|layername=anonymized" ) );
  std::unique_ptr<QgsAbstractDatabaseProviderConnection> db(
    static_cast<QgsAbstractDatabaseProviderConnection *>( QgsProviderRegistry::instance()->providerMetadata( QStringLiteral( "ogr" ) )->createConnection( database, {} ) ) );
  QStringList tables;
  for ( const auto &table : db->tables() )
    tables << table.tableName();
  QCOMPARE( tables, QStringList { QStringLiteral( "anonymized" ) } ); // no staging table left
  QgsVectorLayer release( r.value( QStringLiteral( "ANONYMIZED" ) ).toString(), QStringLiteral( "release" ), QStringLiteral( "ogr" ) );
  QCOMPARE( release.featureCount(), 18LL );

  // A run that fails after the staging table was written leaves the table as it was, and no staging
  // table: a patient id named in RELEASE_FIELDS, refused once the released rows are written.
  auto more = patients( perRegion( 3 ) );
  QVariantMap refused = parameters( more.get() );
  refused.insert( QStringLiteral( "ANONYMIZED" ), p.value( QStringLiteral( "ANONYMIZED" ) ) );
  refused.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "patient" ) } );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), refused, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "is (nearly) unique per record" ) ), qPrintable( feedback.error() ) );
  tables.clear();
  for ( const auto &table : db->tables() )
    tables << table.tableName();
  QCOMPARE( tables, QStringList { QStringLiteral( "anonymized" ) } );
  QCOMPARE( QgsVectorLayer( r.value( QStringLiteral( "ANONYMIZED" ) ).toString(), QStringLiteral( "release" ), QStringLiteral( "ogr" ) ).featureCount(), 18LL );

  // Into a database that did not exist: a failed run removes the file it created.
  const QString fresh = dir.filePath( QStringLiteral( "fresh.gpkg" ) );
  refused.insert( QStringLiteral( "ANONYMIZED" ), QStringLiteral( "ogr:dbname='%1' table=\"anonymized\" (geom)" ).arg( fresh ) );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), refused, mContext, false );
  QVERIFY( !QFile::exists( fresh ) );
}

// ---------------------------------------------------------------------------------------------
// 5. The release carries no input fid.

void TestReleaseSafety::releaseHasFreshIdsAndNoInputFid()
{
  // Records from a GeoPackage have a "fid" field, the table's feature ids in input order. Before, it
  // was copied into the release, whose GeoPackage took it as its own feature ids.
  auto memory = patients( perRegion( 4 ) << qMakePair( QStringLiteral( "r00" ), QStringLiteral( "X" ) ) ); // the X is alone: suppressed
  QTemporaryDir dir;
  save( memory.get(), dir.filePath( QStringLiteral( "records.gpkg" ) ), QStringLiteral( "records" ) );
  QgsVectorLayer records( dir.filePath( QStringLiteral( "records.gpkg" ) ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVERIFY( records.fields().lookupField( QStringLiteral( "fid" ) ) >= 0 );
  const QString out = dir.filePath( QStringLiteral( "out" ) );
  QDir().mkpath( out );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), fileParameters( &records, out ), mContext, true );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 1LL );
  QgsVectorLayer release( r.value( QStringLiteral( "ANONYMIZED" ) ).toString(), QStringLiteral( "release" ), QStringLiteral( "ogr" ) );
  QCOMPARE( release.fields().names(), QStringList( { "fid", "sex", "aggregate_id" } ) ); // its own fid column only
  QgsFeature f;
  QgsFeatureIterator it = release.getFeatures();
  QgsFeatureId expected = 0;
  while ( it.nextFeature( f ) )
    QCOMPARE( f.id(), ++expected ); // fresh ids in output order, not the input's shuffled
  QCOMPARE( expected, 36LL );

  // The fid cannot be chosen for release either.
  QVariantMap p = fileParameters( &records, out );
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "fid" ) } );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "feature id" ) ), qPrintable( feedback.error() ) );
}

// ---------------------------------------------------------------------------------------------
// 6. An output never overwrites an input or another output. Before, ANONYMIZED set to the records'
// GeoPackage or CSV deleted the input, and ANONYMIZED = AGGREGATED lost AGGREGATED.

void TestReleaseSafety::outputOverInputIsRefused_data()
{
  QTest::addColumn<QString>( "sink" );
  QTest::addColumn<QString>( "destination" ); // %1: the folder of the inputs
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "release over the records' GeoPackage" ) << "ANONYMIZED"
                                                          << "%1/records.gpkg"
                                                          << "would overwrite the input RECORDS";
  QTest::newRow( "lookup over the records, spelled otherwise" ) << "LOOKUP"
                                                                << "%1/./sub/../records.gpkg"
                                                                << "would overwrite the input RECORDS";
  QTest::newRow( "release over the records through a link" ) << "ANONYMIZED"
                                                             << "%1/link.gpkg"
                                                             << "is a symbolic link, and an output replaces only regular files";
  QTest::newRow( "release into the records' own table" ) << "ANONYMIZED"
                                                         << "ogr:dbname='%1/records.gpkg' table=\"records\""
                                                         << "would overwrite the input RECORDS";
  QTest::newRow( "aggregated over the regions" ) << "AGGREGATED"
                                                 << "%1/regions.gpkg"
                                                 << "would overwrite the input REGIONS";
  QTest::newRow( "release over aggregated" ) << "ANONYMIZED"
                                             << "%1/out/aggregated.gpkg"
                                             << "have the same destination";
  QTest::newRow( "release over the records' CSV" ) << "ANONYMIZED"
                                                   << "%1/records.csv"
                                                   << "would overwrite the input RECORDS";
}

void TestReleaseSafety::outputOverInputIsRefused()
{
  QFETCH( QString, sink );
  QFETCH( QString, destination );
  QFETCH( QString, message );
  QTemporaryDir dir;
  QDir().mkpath( dir.filePath( QStringLiteral( "sub" ) ) );
  QDir().mkpath( dir.filePath( QStringLiteral( "out" ) ) );
  auto memory = patients( perRegion( 2 ) );
  const bool csv = destination.endsWith( QLatin1String( ".csv" ) );
  const QString recordsPath = dir.filePath( csv ? QStringLiteral( "records.csv" ) : QStringLiteral( "records.gpkg" ) );
  save( memory.get(), recordsPath, QStringLiteral( "records" ) );
  save( mGrid.get(), dir.filePath( QStringLiteral( "regions.gpkg" ) ), QStringLiteral( "regions" ) );
  QVERIFY( QFile::link( recordsPath, dir.filePath( QStringLiteral( "link.gpkg" ) ) ) );
  QgsVectorLayer records( csv ? QStringLiteral( "file://%1?type=csv&detectTypes=yes" ).arg( recordsPath ) : recordsPath, QStringLiteral( "records" ),
                          csv ? QStringLiteral( "delimitedtext" ) : QStringLiteral( "ogr" ) );
  QgsVectorLayer regions( dir.filePath( QStringLiteral( "regions.gpkg" ) ), QStringLiteral( "regions" ), QStringLiteral( "ogr" ) );
  QVERIFY( records.isValid() && regions.isValid() );
  const QStringList before = entries( dir.path() );
  const QByteArray recordsHash = md5( recordsPath ), regionsHash = md5( dir.filePath( QStringLiteral( "regions.gpkg" ) ) );

  QVariantMap p = fileParameters( &records, dir.filePath( QStringLiteral( "out" ) ) );
  p.insert( QStringLiteral( "REGIONS" ), layerValue( &regions ) );
  p.insert( sink, destination.arg( dir.path() ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( message ), qPrintable( feedback.error() ) );
  QCOMPARE( md5( recordsPath ), recordsHash );
  QCOMPARE( md5( dir.filePath( QStringLiteral( "regions.gpkg" ) ) ), regionsHash );
  QCOMPARE( entries( dir.path() ), before );
  QCOMPARE( entries( dir.filePath( QStringLiteral( "out" ) ) ), QStringList() );
}

void TestReleaseSafety::tableBesideTheInputIsAllowed()
{
  // A new table in the records' own GeoPackage is not the records: it is written, and they are intact.
  QTemporaryDir dir;
  auto memory = patients( perRegion( 2 ) );
  const QString path = dir.filePath( QStringLiteral( "records.gpkg" ) );
  save( memory.get(), path, QStringLiteral( "records" ) );
  QgsVectorLayer records( path + QStringLiteral( "|layername=records" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVariantMap p = parameters( &records );
  p.insert( QStringLiteral( "ANONYMIZED" ), QStringLiteral( "ogr:dbname='%1' table=\"release\"" ).arg( path ) );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( QgsVectorLayer( path + QStringLiteral( "|layername=records" ), QStringLiteral( "r" ), QStringLiteral( "ogr" ) ).featureCount(), 18LL );
  QCOMPARE( QgsVectorLayer( path + QStringLiteral( "|layername=release" ), QStringLiteral( "r" ), QStringLiteral( "ogr" ) ).featureCount(), 18LL );
}

void TestReleaseSafety::releaseIntoTheTemporaryFolder()
{
  // The temporary folder itself (/tmp, say) as the destination's folder: locked once, written.
  auto memory = patients( perRegion( 2 ) );
  QVariantMap p = parameters( memory.get() );
  const QString path = QDir( QDir::tempPath() ).filePath( QStringLiteral( "vbas-release-in-tmp.gpkg" ) );
  p.insert( QStringLiteral( "ANONYMIZED" ), path );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( QgsVectorLayer( path, QStringLiteral( "r" ), QStringLiteral( "ogr" ) ).featureCount(), 18LL );
  QVERIFY( QFile::remove( path ) );
}

// ---------------------------------------------------------------------------------------------
// 7. Counts: refused with the row and the value as it is. Before, NULL showed as '0', 1e19 and inf
// were "the records table changed", 2^62 was accepted and overflowed the totals.

void TestReleaseSafety::badCountsAreRefused_data()
{
  QTest::addColumn<QString>( "type" );
  QTest::addColumn<QVariant>( "count" );
  QTest::addColumn<QString>( "shown" );
  QTest::newRow( "NULL" ) << "double" << QVariant( QVariant::Double ) << "holds NULL,";
  QTest::newRow( "negative" ) << "double" << QVariant( -2.0 ) << "holds -2,";
  QTest::newRow( "fractional" ) << "double" << QVariant( 2.5 ) << "holds 2.5,";
  QTest::newRow( "infinite" ) << "double" << QVariant( std::numeric_limits<double>::infinity() ) << "holds inf,";
  QTest::newRow( "not a number" ) << "double" << QVariant( std::numeric_limits<double>::quiet_NaN() ) << "holds nan,";
  QTest::newRow( "1e19" ) << "double" << QVariant( 1e19 ) << "holds 1e+19,";
  QTest::newRow( "2^62" ) << "int8" << QVariant( qlonglong( 1 ) << 62 ) << "holds 4611686018427387904,";
  QTest::newRow( "text" ) << "string" << QVariant( QStringLiteral( "abc" ) ) << "holds 'abc',";
}

void TestReleaseSafety::badCountsAreRefused()
{
  QFETCH( QString, type );
  QFETCH( QVariant, count );
  QFETCH( QString, shown );
  QList<QVariantList> rows;
  for ( int i = 0; i < 4; ++i )
    rows << QVariantList { QStringLiteral( "r00" ), QStringLiteral( "F" ), i == 2 ? count : QVariant( 1 ) };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=n:%1" ).arg( type ), rows );
  QVariantMap p = parameters( records.get() );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Record row 3 (feature id 3): the count field 'n' " ) + shown + QStringLiteral( " not a whole number from 0 to 9007199254740992" ) ),
            qPrintable( feedback.error() ) );
}

void TestReleaseSafety::countTotalMustFit()
{
  // Rows of 2^53 each: 1,024 of them add up to 2^63, one more than a 64-bit count holds: refused at row 1,024.
  QList<QVariantList> rows;
  for ( int i = 0; i < 1030; ++i )
    rows << QVariantList { QStringLiteral( "r00" ), QStringLiteral( "F" ), qlonglong( 1 ) << 53 };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=n:int8" ), rows );
  QVariantMap p = parameters( records.get() );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Record row 1024 " ) ) && feedback.error().contains( QStringLiteral( "add up to more than 9223372036854775807" ) ),
            qPrintable( feedback.error() ) );
}

void TestReleaseSafety::kMustBeAWholeNumber_data()
{
  QTest::addColumn<QVariant>( "k" );
  QTest::addColumn<QString>( "shown" );
  QTest::newRow( "fraction" ) << QVariant( 2.5 ) << "K = 2.5";
  QTest::newRow( "beyond an int" ) << QVariant( QStringLiteral( "2147483648" ) ) << "K = 2147483648";
  QTest::newRow( "below 2" ) << QVariant( 1 ) << "K = 1";
  QTest::newRow( "not a number" ) << QVariant( QStringLiteral( "five" ) ) << "K = five";
}

void TestReleaseSafety::kMustBeAWholeNumber()
{
  QFETCH( QVariant, k );
  QFETCH( QString, shown );
  auto records = patients( perRegion( 2 ) );
  QVariantMap p = parameters( records.get() );
  p.insert( QStringLiteral( "K" ), k );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "K must be a whole number from 2 to 2147483647 (" ) + shown + ')' ), qPrintable( feedback.error() ) );
  QString message;
  QVERIFY( !QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:anonymize" ) )->checkParameterValues( p, mContext, &message ) );
  QVERIFY2( message.contains( shown ), qPrintable( message ) );
}

// 8. One field in two roles, or a QI listed twice.

void TestReleaseSafety::fieldInTwoRolesIsRefused_data()
{
  QTest::addColumn<QString>( "parameter" );
  QTest::addColumn<QVariant>( "value" );
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "count = region" ) << "COUNT_FIELD" << QVariant( "region" ) << "The count field 'region' is also the record region field";
  QTest::newRow( "count = QI" ) << "COUNT_FIELD" << QVariant( "sex" ) << "The count field 'sex' is also a QI field";
  QTest::newRow( "QI twice" ) << "QI_FIELDS" << QVariant( QStringList { "sex", "sex" } ) << "listed twice";
  QTest::newRow( "QI twice, other case" ) << "QI_FIELDS" << QVariant( QStringList { "sex", "SEX" } ) << "listed twice";
  QTest::newRow( "QI = region" ) << "QI_FIELDS" << QVariant( QStringList { "region" } ) << "is the record region field";
  QTest::newRow( "population = region id" ) << "POPULATION_FIELD" << QVariant( "id" ) << "is also the region id field";
}

void TestReleaseSafety::fieldInTwoRolesIsRefused()
{
  QFETCH( QString, parameter );
  QFETCH( QVariant, value );
  QFETCH( QString, message );
  auto records = patients( perRegion( 2 ) );
  QVariantMap p = parameters( records.get() );
  p.insert( parameter, value );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( message ), qPrintable( feedback.error() ) );
}

// ---------------------------------------------------------------------------------------------
// 9. A format that would rename or truncate a field is refused up front. Before, a shapefile
// release named a .shp that was never written, .dbf became .dbf.dbf and aggregate_id aggregate_.

void TestReleaseSafety::shapefileNamesAreNeverTruncated_data()
{
  QTest::addColumn<QString>( "sink" );
  QTest::addColumn<QString>( "file" );
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "release as .shp" ) << "ANONYMIZED"
                                     << "anonymized.shp"
                                     << "a shapefile without geometry is its .dbf file alone";
  QTest::newRow( "release as .dbf" ) << "ANONYMIZED"
                                     << "anonymized.dbf"
                                     << "would rename or drop the field(s) aggregate_id";
  QTest::newRow( "aggregated as .shp" ) << "AGGREGATED"
                                        << "aggregated.shp"
                                        << "would rename or drop the field(s) aggregate_id, smallest_ec";
  QTest::newRow( "evaluation as .dbf" ) << "EVALUATION"
                                        << "evaluation.dbf"
                                        << "would rename or drop the field(s) suppressed_pct";
}

void TestReleaseSafety::shapefileNamesAreNeverTruncated()
{
  QFETCH( QString, sink );
  QFETCH( QString, file );
  QFETCH( QString, message );
  auto records = patients( perRegion( 2 ) );
  QTemporaryDir dir;
  QVariantMap p = fileParameters( records.get(), dir.path() );
  p.insert( sink, dir.filePath( file ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( message ), qPrintable( feedback.error() ) );
  QCOMPARE( entries( dir.path() ), QStringList() );
}

void TestReleaseSafety::shapefileWithAllItsFiles()
{
  // The sites' names fit in 10 characters: a shapefile is fine, written whole under its final name.
  auto records = patients( perRegion( 2 ) );
  QTemporaryDir dir;
  QVariantMap p = fileParameters( records.get(), dir.path() );
  p.insert( QStringLiteral( "SITE_POINTS" ), dir.filePath( QStringLiteral( "sites.shp" ) ) );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( r.value( QStringLiteral( "SITE_POINTS" ) ).toString(), dir.filePath( QStringLiteral( "sites.shp" ) ) );
  const QStringList files = entries( dir.path() );
  for ( const char *part : { "sites.shp", "sites.shx", "sites.dbf", "sites.prj" } )
    QVERIFY2( files.contains( part ), qPrintable( files.join( ' ' ) ) );
  QVERIFY2( files.filter( QStringLiteral( ".vbas-partial" ) ).isEmpty(), qPrintable( files.join( ' ' ) ) );
  QCOMPARE( QgsVectorLayer( dir.filePath( QStringLiteral( "sites.shp" ) ), QStringLiteral( "s" ), QStringLiteral( "ogr" ) ).featureCount(), 1LL );
}

// ---------------------------------------------------------------------------------------------
// 11. The site count divides the records, whatever the population basis, and the log warns when the regions cap
// it, and when a release is empty or suppresses more than half the records.

void TestReleaseSafety::siteCountCappedIsWarned()
{
  // 18 records, a fixed cutoff of 0.5 records per site: R(18 / 0.5) = 36 sites, capped at the 9 regions.
  auto records = patients( perRegion( 2 ) );
  QVariantMap p = parameters( records.get() );
  p.insert( QStringLiteral( "MODEL" ), 2 );
  p.insert( QStringLiteral( "FIXED_CUTOFF" ), 0.5 );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
  QCOMPARE( r.value( QStringLiteral( "SITES" ) ).toInt(), 9 );
  QVERIFY2( feedback.warned( QStringLiteral( "= 36 is more than the 9 regions: it is capped at 9" ) ), qPrintable( feedback.warnings.join( '\n' ) ) );
}

void TestReleaseSafety::emptyOrMostlySuppressedReleaseIsWarned()
{
  // k = 100 > 18 records: nothing released.
  auto records = patients( perRegion( 2 ) );
  Feedback empty;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), parameters( records.get(), 1, 100 ), mContext, true, &empty );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toInt(), 0 );
  QCOMPARE( vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext )->featureCount(), 0LL );
  QVERIFY2( empty.warned( QStringLiteral( "The release is empty" ) ), qPrintable( empty.warnings.join( '\n' ) ) );
  // Nine sites, one region each: 2 F in r00 are released, the one F of each other region is not (8 of 10).
  QList<QPair<QString, QString>> rows = { { "r00", "F" } };
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      rows << qMakePair( QStringLiteral( "r%1%2" ).arg( c ).arg( r ), QStringLiteral( "F" ) );
  auto sparse = patients( rows );
  Feedback most;
  const QVariantMap s = vbastest::run( QStringLiteral( "vbas:anonymize" ), parameters( sparse.get(), 9, 2 ), mContext, true, &most );
  QCOMPARE( s.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 8 );
  QVERIFY2( most.warned( QStringLiteral( "suppresses more than half of the records (8 of 10)" ) ), qPrintable( most.warnings.join( '\n' ) ) );
}

QTEST_MAIN( TestReleaseSafety )
#include "test_release_safety.moc"
