// The counting pass pushed down to a GeoPackage (GROUP_IN_SOURCE): it must count what the row-by-row
// pass counts (the same records, classes and site count), and every count the source cannot vouch for
// must leave the counting to the row-by-row pass (with its message naming the row). Tables whose columns
// compare loosely (COLLATE NOCASE or RTRIM, BLOB holding 1 and 1.0), and random tables of mixed storage
// (random_records.h), count the same both ways. An algorithm that writes a release counts row by row
// and keeps the rows it read for the release, so an edit made once the table is read reaches no output.
#include "tests/plugin/qgis_test_util.h"
#include "tests/plugin/random_records.h"

#include <QTemporaryDir>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{

const QString kGrouped = QStringLiteral( "The records are counted by their GeoPackage source (GROUP BY region and QIs)." );

//! The counting pass's summary line: "Read n record rows (m records) in r regions, c equivalence classes."
QString readLine( const Feedback &feedback )
{
  for ( const QString &message : feedback.messages )
    if ( message.startsWith( QStringLiteral( "Read " ) ) && message.contains( QStringLiteral( "equivalence classes" ) ) )
      return message;
  return QString();
}

} // namespace

class TestGroupedCount : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void sameCountAsRowByRow();
    void countFieldSummed();
    void typedQisSameAsRowByRow();
    void badCountsCountedRowByRow();
    void unknownRegionNamedAsRowByRow();
    void selectionCountedRowByRow();
    void filteredInputCountedRowByRow();
    void editedAfterTheReadIsNotReleased_data();
    void editedAfterTheReadIsNotReleased();
    void looseColumnsSameAsRowByRow_data();
    void looseColumnsSameAsRowByRow();
    void randomTablesSameAsRowByRow();

  private:
    //! vbas:estimatesitecount on the grid, records from the GeoPackage table.
    QVariantMap gridRun( QgsVectorLayer *records, bool grouped, bool expectOk, Feedback &feedback, const QString &count = QString() );
    /**
     * vbas:estimatesitecount on the grid with table as the records (QIs q1 to q3 of those it has, count n
     * if it has one), counted in the source when grouped: what the run said (the counting line, the
     * numbers) or its error. grouped: whether the source counted.
     */
    QString outcome( const vbastest::RecordsTable &table, bool grouped, bool *countedInSource = nullptr );
    //! A GeoPackage table of the grid's records (region, sex, n) in a fresh file.
    std::unique_ptr<QgsVectorLayer> gridTable( const QList<QVariantList> &rows, const QString &nType = QStringLiteral( "integer" ) );

    QgsProcessingContext mContext;
    QTemporaryDir mDir;
    std::unique_ptr<QgsVectorLayer> mRegions;
    std::unique_ptr<QgsVectorLayer> mSites;
    int mTables = 0;
};

void TestGroupedCount::initTestCase()
{
  vbastest::initQgisWithProvider();
  mRegions = vbastest::grid();
  mSites = vbastest::twoSites();
}

void TestGroupedCount::cleanupTestCase()
{
  QgsApplication::exitQgis();
}

std::unique_ptr<QgsVectorLayer> TestGroupedCount::gridTable( const QList<QVariantList> &rows, const QString &nType )
{
  auto memory = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=n:%1" ).arg( nType ), rows );
  const QString path = mDir.filePath( QStringLiteral( "records%1.gpkg" ).arg( ++mTables ) );
  vbastest::save( memory.get(), path, QStringLiteral( "records" ) );
  return std::make_unique<QgsVectorLayer>( path + QStringLiteral( "|layername=records" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
}

QVariantMap TestGroupedCount::gridRun( QgsVectorLayer *records, bool grouped, bool expectOk, Feedback &feedback, const QString &count )
{
  QVariantMap p = vbastest::gridParameters( mRegions.get(), records );
  p.insert( QStringLiteral( "COUNT_FIELD" ), count );
  p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), grouped );
  return vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), p, mContext, expectOk, &feedback );
}

void TestGroupedCount::sameCountAsRowByRow()
{
  // The sample's 40,000 patients in their GeoPackage, counted both ways: the same records, classes and sites.
  QgsVectorLayer tracts( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  QgsVectorLayer patients( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QMap<bool, QVariantMap> results;
  QMap<bool, QString> read;
  for ( const bool grouped : { true, false } )
  {
    QVariantMap p = vbastest::sampleParameters( &tracts, &patients );
    p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), grouped );
    Feedback feedback;
    results[grouped] = vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), p, mContext, true, &feedback );
    QCOMPARE( feedback.messages.contains( kGrouped ), grouped );
    read[grouped] = readLine( feedback );
  }
  QVERIFY2( read[true].contains( QStringLiteral( "(40000 records)" ) ), qPrintable( read[true] ) );
  QCOMPARE( read[true].section( ' ', 4 ), read[false].section( ' ', 4 ) ); // after "Read n record rows": records, regions, classes
  for ( const char *number : { "SITES", "CUTOFF", "ENTROPY", "MAXCOMBS", "RECORDS" } )
    QCOMPARE( results[true].value( number ), results[false].value( number ) );
}

void TestGroupedCount::countFieldSummed()
{
  // Counts 3 + 4 in r00 F, 2 in r10 F, 5 in r20 F, 1 + 1 in r20 M, 0 in r21 M: 16 records in 4 regions, classes F and M.
  auto records = gridTable( { { "r00", "F", 3 }, { "r00", "F", 4 }, { "r10", "F", 2 }, { "r20", "F", 5 }, { "r20", "M", 1 }, { "r20", "M", 1 }, { "r21", "M", 0 } } );
  for ( const bool grouped : { true, false } )
  {
    Feedback feedback;
    const QVariantMap r = gridRun( records.get(), grouped, true, feedback, QStringLiteral( "n" ) );
    QCOMPARE( feedback.messages.contains( kGrouped ), grouped );
    QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 16LL );
    QCOMPARE( readLine( feedback ), QStringLiteral( "Read 7 record rows (16 records) in 9 regions, 2 equivalence classes." ) );
  }
}

void TestGroupedCount::typedQisSameAsRowByRow()
{
  // QIs of every type a GeoPackage stores, read back from the grouped query: the same classes as row by row.
  auto memory = vbastest::table( QStringLiteral( "field=region:string&field=born:date&field=insured:boolean&field=weight:double&field=visits:long&field=name:string" ), QList<QVariantList> {} );
  QgsFeatureList features;
  for ( int i = 0; i < 60; ++i )
  {
    QgsFeature f( memory->fields() );
    f.setAttributes( QgsAttributes() << QStringLiteral( "r%1%2" ).arg( i % 3 ).arg( ( i / 3 ) % 3 ) << QDate( 1950 + i % 2, 1, 1 ) << ( i % 3 == 0 ) << ( i % 2 ? 0.1 + 0.2 : 0.3 )
                                     << ( i % 2 ? 5000000000LL : 7LL ) << ( i % 2 ? QStringLiteral( "Zoë" ) : QStringLiteral( "Zoe\u0308" ) ) );
    features << f;
  }
  memory->dataProvider()->addFeatures( features );
  const QString path = mDir.filePath( QStringLiteral( "typed.gpkg" ) );
  vbastest::save( memory.get(), path, QStringLiteral( "records" ) );
  QgsVectorLayer records( path + QStringLiteral( "|layername=records" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QMap<bool, QString> read;
  for ( const bool grouped : { true, false } )
  {
    QVariantMap p = vbastest::inputParameters( mRegions.get(), QStringLiteral( "id" ), &records, QStringLiteral( "region" ),
                                               { QStringLiteral( "born" ), QStringLiteral( "insured" ), QStringLiteral( "weight" ), QStringLiteral( "visits" ), QStringLiteral( "name" ) } );
    p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), grouped );
    Feedback feedback;
    vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), p, mContext, true, &feedback );
    QCOMPARE( feedback.messages.contains( kGrouped ), grouped );
    read[grouped] = readLine( feedback );
  }
  // Each row's class is one of two (i odd or even) crossed with insured (i % 3 == 0): 4 classes.
  QCOMPARE( read[true].section( ' ', 4 ), QStringLiteral( "(60 records) in 9 regions, 4 equivalence classes." ) );
  QCOMPARE( read[true].section( ' ', 4 ), read[false].section( ' ', 4 ) );
}

void TestGroupedCount::badCountsCountedRowByRow()
{
  // A count the streaming pass refuses is refused with its row, as if the source had not counted.
  const QList<std::pair<QVariant, QString>> bad {
    { QVariant(), QStringLiteral( "holds NULL" ) }, { -1, QStringLiteral( "holds -1" ) }, { 2.5, QStringLiteral( "holds 2.5" ) }, { 1e17, QStringLiteral( "holds 1e+17" ) }
  };
  for ( const auto &[value, shown] : bad )
  {
    auto records = gridTable( { { "r00", "F", 3 }, { "r10", "F", 2 }, { "r20", "M", value }, { "r21", "M", 2 } }, QStringLiteral( "double" ) );
    Feedback feedback;
    gridRun( records.get(), true, false, feedback, QStringLiteral( "n" ) );
    QVERIFY2( feedback.error().contains( QStringLiteral( "Record row 3 (feature id 3): the count field 'n' %1" ).arg( shown ) ), qPrintable( feedback.error() ) );
    QVERIFY2( feedback.saw( QStringLiteral( "The GeoPackage source did not count the records (a count that is not a whole number" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  }
}

void TestGroupedCount::unknownRegionNamedAsRowByRow()
{
  auto records = gridTable( { { "r00", "F", 1 }, { "r99", "F", 1 }, { "r99", "F", 1 }, { "r10", "F", 1 } } );
  Feedback feedback;
  gridRun( records.get(), true, false, feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "2 record(s) have a region id (field 'region') that is not in the regions layer's 'id', for example 'r99'" ) ), qPrintable( feedback.error() ) );
}

void TestGroupedCount::selectionCountedRowByRow()
{
  // Selected features only: the source cannot count them, the streaming pass does, and only them.
  auto records = gridTable( { { "r00", "F", 1 }, { "r00", "F", 1 }, { "r10", "F", 1 }, { "r20", "M", 1 } } );
  records->selectByIds( { 1, 2, 3 } );
  QVariantMap p = vbastest::gridParameters( mRegions.get(), records.get() );
  p.insert( QStringLiteral( "RECORDS" ), QVariant::fromValue( QgsProcessingFeatureSourceDefinition( records->id(), true ) ) );
  p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), true );
  QgsProject::instance()->addMapLayer( records.get(), false, false );
  QgsProcessingContext context;
  context.setProject( QgsProject::instance() );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), p, context, true, &feedback );
  QgsProject::instance()->takeMapLayer( records.get() );
  QVERIFY( feedback.saw( QStringLiteral( "The records are counted row by row: the input is the layer's selected features." ) ) );
  QVERIFY( feedback.saw( QStringLiteral( "The records are read through QGIS: the input is the layer's selected features." ) ) );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 3LL );
}

void TestGroupedCount::filteredInputCountedRowByRow()
{
  // A filter on the input (QGIS 3.32 and later): neither the source's count nor GDAL's stream reads the
  // whole table; QGIS reads the rows the filter keeps, and only they are counted.
#if _QGIS_VERSION_INT >= 33200
  auto records = gridTable( { { "r00", "F", 1 }, { "r00", "F", 1 }, { "r10", "F", 1 }, { "r20", "M", 1 } } );
  QgsProcessingFeatureSourceDefinition filtered( records->source() );
  filtered.filterExpression = QStringLiteral( "\"sex\" = 'F'" );
  QVariantMap p = vbastest::gridParameters( mRegions.get(), records.get() );
  p.insert( QStringLiteral( "RECORDS" ), QVariant::fromValue( filtered ) );
  p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), true );
  QgsProcessingContext context;
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), p, context, true, &feedback );
  QVERIFY( feedback.saw( QStringLiteral( "The records are counted row by row: the input has a filter." ) ) );
  QVERIFY( feedback.saw( QStringLiteral( "The records are read through QGIS: the input has a filter." ) ) );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 3LL );
#else
  QSKIP( "a filter on a processing input needs QGIS 3.32" );
#endif
}

void TestGroupedCount::editedAfterTheReadIsNotReleased_data()
{
  QTest::addColumn<int>( "edit" );
  QTest::newRow( "QI changed" ) << 0;
  QTest::newRow( "row deleted, its values added back as a new row" ) << 1;
  QTest::newRow( "two rows deleted, two of their class added with the same sum of feature ids" ) << 2;
}

void TestGroupedCount::editedAfterTheReadIsNotReleased()
{
  // A release with GROUP_IN_SOURCE on: counted row by row, the rows kept for the release, so an edit
  // made by another connection once the table is read reaches no output.
  QFETCH( int, edit );
  // Feature ids 1 to 6, then 2 and 3 deleted: r00 F as 1 and 4, r10 F as 5, r20 M as 6.
  auto records = gridTable( { { "r00", "F", 1 }, { "r00", "F", 1 }, { "r00", "F", 1 }, { "r00", "F", 1 }, { "r10", "F", 1 }, { "r20", "M", 1 } } );
  QgsVectorLayer editor( records->source(), QStringLiteral( "editor" ), QStringLiteral( "ogr" ) );
  QVERIFY( editor.dataProvider()->deleteFeatures( { 2, 3 } ) );
  records->reload();
  const auto add = [&]( const QList<QgsFeatureId> &ids ) {
    QgsFeatureList added;
    for ( const QgsFeatureId id : ids )
    {
      added << QgsFeature( editor.fields() );
      added.back().setAttributes( QgsAttributes() << ( id < 0 ? QVariant() : QVariant( id ) ) << QStringLiteral( "r00" ) << QStringLiteral( "F" ) << 1 );
    }
    QVERIFY( editor.dataProvider()->addFeatures( added ) );
  };
  const auto released = [this, &records]( const QString &name, Feedback *feedback ) {
    QVariantMap p = vbastest::gridParameters( mRegions.get(), records.get() );
    p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
    p.insert( QStringLiteral( "K" ), 2 );
    p.insert( QStringLiteral( "ANONYMIZED" ), mDir.filePath( name ) );
    p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), true );
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, true, feedback );
    QgsVectorLayer release( r.value( QStringLiteral( "ANONYMIZED" ) ).toString(), QStringLiteral( "release" ), QStringLiteral( "ogr" ) );
    QStringList rows;
    QgsFeatureIterator it = release.getFeatures();
    QgsFeature f;
    while ( it.nextFeature( f ) )
      rows << QStringLiteral( "%1/%2" ).arg( f.attribute( QStringLiteral( "aggregate_id" ) ).toString(), f.attribute( QStringLiteral( "sex" ) ).toString() );
    rows.sort();
    return rows;
  };
  Feedback unedited;
  const QStringList expected = released( QStringLiteral( "unedited%1.gpkg" ).arg( edit ), &unedited );
  QVERIFY( !expected.isEmpty() );
  Feedback feedback;
  feedback.onInfo = [&]( const QString &info ) {
    if ( !info.contains( QStringLiteral( "records released" ) ) ) // once the records are read
      return;
    if ( edit == 0 )
      editor.dataProvider()->changeAttributeValues( { { 4, { { editor.fields().lookupField( QStringLiteral( "sex" ) ), QStringLiteral( "M" ) } } } } );
    else if ( edit == 1 )
    {
      editor.dataProvider()->deleteFeatures( { 4 } );
      add( { -1 } );
    }
    else
    {
      editor.dataProvider()->deleteFeatures( { 1, 4 } ); // 1 + 4 = 2 + 3
      add( { 2, 3 } );
    }
  };
  QCOMPARE( released( QStringLiteral( "edited%1.gpkg" ).arg( edit ), &feedback ), expected );
  QVERIFY2( feedback.saw( QStringLiteral( "The records are counted row by row: the release is written from the rows read" ) ), qPrintable( feedback.error() ) );
}

QString TestGroupedCount::outcome( const vbastest::RecordsTable &table, bool grouped, bool *countedInSource )
{
  QgsVectorLayer records( vbastest::writeRecords( mDir.filePath( QStringLiteral( "loose%1.gpkg" ).arg( ++mTables ) ), table ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QStringList qis;
  for ( const vbastest::Column &column : table.columns )
    if ( column.first.startsWith( 'q' ) )
      qis << column.first;
  QVariantMap p = vbastest::inputParameters( mRegions.get(), QStringLiteral( "id" ), &records, QStringLiteral( "region" ), qis );
  p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), grouped );
  if ( records.fields().lookupField( QStringLiteral( "n" ) ) >= 0 )
    p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  Feedback feedback;
  const std::unique_ptr<QgsProcessingAlgorithm> algorithm( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "vbas:estimatesitecount" ) ) );
  bool ok = false;
  const QVariantMap r = algorithm->run( p, mContext, &feedback, &ok );
  if ( countedInSource )
    *countedInSource = feedback.messages.contains( kGrouped );
  if ( !ok )
    return QStringLiteral( "error: " ) + feedback.error();
  QStringList numbers { readLine( feedback ) };
  for ( const char *number : { "SITES", "CUTOFF", "ENTROPY", "MAXCOMBS", "RECORDS" } )
    numbers << QStringLiteral( "%1 %2" ).arg( number ).arg( r.value( number ).toDouble(), 0, 'g', 12 );
  return numbers.join( QStringLiteral( "; " ) );
}

void TestGroupedCount::looseColumnsSameAsRowByRow_data()
{
  QTest::addColumn<QString>( "regionType" );
  QTest::addColumn<QString>( "qiType" );
  QTest::addColumn<QVariantList>( "regions" );
  QTest::addColumn<QVariantList>( "values" );
  QTest::addColumn<QString>( "rowByRow" ); // what the row-by-row pass says
  const QVariantList r00 { "r00", "r00", "r00", "r00", "r10" };
  QTest::newRow( "sex TEXT COLLATE NOCASE, f among F" ) << "TEXT"
                                                        << "TEXT COLLATE NOCASE" << r00 << QVariantList { "F", "F", "f", "f", "F" } << "2 equivalence classes";
  QTest::newRow( "QI TEXT COLLATE RTRIM" ) << "TEXT"
                                           << "TEXT COLLATE RTRIM" << r00 << QVariantList { "F", "F ", "F", "F  ", "F" } << "3 equivalence classes";
  QTest::newRow( "region TEXT COLLATE NOCASE" ) << "TEXT COLLATE NOCASE"
                                                << "TEXT" << QVariantList { "r00", "R00", "r00", "r00", "r10" } << QVariantList { "F", "F", "F", "F", "F" }
                                                << "1 record(s) have a region id (field 'region') that is not in the regions layer's 'id', for example 'R00'";
  QTest::newRow( "region TEXT COLLATE RTRIM" ) << "TEXT COLLATE RTRIM"
                                               << "TEXT" << QVariantList { "r00", "r00 ", "r00", "r00", "r10" } << QVariantList { "F", "F", "F", "F", "F" }
                                               << "1 record(s) have a region id (field 'region') that is not in the regions layer's 'id', for example 'r00 '";
  QTest::newRow( "QI BLOB holding 1, 1.0 and '1'" ) << "TEXT"
                                                    << "BLOB" << r00 << QVariantList { 1LL, 1.0, QStringLiteral( "1" ), 1LL, 1.0 }
                                                    << "the field 'q1' is of type QByteArray but stores the integer value 1";
}

void TestGroupedCount::looseColumnsSameAsRowByRow()
{
  // Columns whose SQLite comparison joins values the provider reads apart: counted in the source, the
  // same classes (or the same refusal) as row by row, never a class that joins them.
  QFETCH( QString, regionType );
  QFETCH( QString, qiType );
  QFETCH( QVariantList, regions );
  QFETCH( QVariantList, values );
  QFETCH( QString, rowByRow );
  vbastest::RecordsTable table;
  table.columns = { { QStringLiteral( "region" ), regionType }, { QStringLiteral( "q1" ), qiType } };
  for ( int i = 0; i < regions.size(); ++i )
    table.rows << QVariantList { regions[i], values[i] };
  const QString expected = outcome( table, false );
  QVERIFY2( expected.contains( rowByRow ), qPrintable( expected ) );
  bool counted = false;
  QCOMPARE( outcome( table, true, &counted ), expected );
  QVERIFY( counted || expected.startsWith( QLatin1String( "error: " ) ) ); // by the source, not left to the row-by-row pass, unless refused
}

void TestGroupedCount::randomTablesSameAsRowByRow()
{
  // Random tables of loose declarations, mixed storage, NULLs and odd text (random_records.h): counted
  // in the source and row by row, the same outcome every time.
  QStringList ids;
  QgsFeatureIterator it = mRegions->getFeatures();
  for ( QgsFeature region; it.nextFeature( region ); )
    ids << region.attribute( QStringLiteral( "id" ) ).toString();
  int counted = 0;
  for ( quint32 seed = 1; seed <= 60; ++seed )
  {
    const vbastest::RecordsTable table = vbastest::randomRecords( seed, ids );
    bool inSource = false;
    const QString grouped = outcome( table, true, &inSource );
    const QString rowByRow = outcome( table, false );
    QVERIFY2( grouped == rowByRow, qPrintable( QStringLiteral( "seed %1 (%2):\n  in the source: %3\n  row by row:    %4" ).arg( seed ).arg( table.declaration(), grouped, rowByRow ) ) );
    counted += inSource;
  }
  QVERIFY2( counted >= 20, qPrintable( QStringLiteral( "only %1 of 60 tables counted by the source" ).arg( counted ) ) );
}

QTEST_MAIN( TestGroupedCount )
#include "test_grouped_count.moc"
