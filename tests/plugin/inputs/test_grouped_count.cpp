// The counting pass pushed down to a GeoPackage (issue 9 item 2): the release must be the very release
// of the row-by-row count (the same rows), every count the source cannot
// vouch for must leave the counting to the row-by-row pass (with its message naming the row), and a
// table edited between the passes must abort the run. Releases are recounted here.
#include "qgis_test_util.h"

#include <QTemporaryDir>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{

const QString kGrouped = QStringLiteral( "The records are counted by their GeoPackage source (GROUP BY region and QIs)." );

//! Every row of a layer, its attributes joined, sorted: a release's order is fresh at every run (SPEC 6).
QStringList rows( QgsVectorLayer *layer )
{
  QStringList all;
  QgsFeatureIterator it = layer->getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    QStringList values;
    for ( const QVariant &v : f.attributes() )
      values << ( v.isNull() ? QStringLiteral( "NULL" ) : v.toString() );
    all << values.join( '|' );
  }
  all.sort();
  return all;
}

//! The smallest class of a release, weighing rows by their count field (empty: one each): aggregate_id and the QIs.
qint64 smallestClass( QgsVectorLayer *release, const QStringList &qis, const QString &count = QString() )
{
  QMap<QString, qint64> classes;
  QgsFeatureIterator it = release->getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    QStringList key { f.attribute( QStringLiteral( "aggregate_id" ) ).toString() };
    for ( const QString &qi : qis )
      key << f.attribute( qi ).toString();
    classes[key.join( '|' )] += count.isEmpty() ? 1 : f.attribute( count ).toLongLong();
  }
  qint64 smallest = std::numeric_limits<qint64>::max();
  for ( const qint64 n : classes )
    if ( n > 0 )
      smallest = std::min( smallest, n );
  return smallest;
}

} // namespace

class TestGroupedCount : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void sameReleaseAsRowByRow();
    void countFieldSummed();
    void typedQisSameAsRowByRow();
    void badCountsCountedRowByRow();
    void unknownRegionNamedAsRowByRow();
    void selectionCountedRowByRow();
    void editedBetweenPassesAborts();

  private:
    //! vbas:voronoiaggregate on the grid with the two sites, records from the GeoPackage table.
    QVariantMap gridRun( QgsVectorLayer *records, bool grouped, bool expectOk, Feedback &feedback, const QString &count = QString() );
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
  p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
  p.insert( QStringLiteral( "K" ), 2 );
  p.insert( QStringLiteral( "SEED" ), 11 );
  p.insert( QStringLiteral( "COUNT_FIELD" ), count );
  p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), grouped );
  return vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, expectOk, &feedback );
}

void TestGroupedCount::sameReleaseAsRowByRow()
{
  // The sample's 40,000 patients in their GeoPackage, the whole pipeline both ways.
  QgsVectorLayer tracts( QStringLiteral( VBAS_SAMPLE_DIR "/ny8_tracts.gpkg" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  QgsVectorLayer patients( QStringLiteral( VBAS_SAMPLE_DIR "/patients.gpkg" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QMap<bool, QVariantMap> results;
  QMap<bool, QStringList> released;
  for ( const bool grouped : { true, false } )
  {
    QVariantMap p = vbastest::sampleParameters( &tracts, &patients );
    p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diagnosis" ) );
    p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), grouped );
    Feedback feedback;
    results[grouped] = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
    QCOMPARE( feedback.messages.contains( kGrouped ), grouped );
    QgsVectorLayer *release = vbastest::output( results[grouped], QStringLiteral( "ANONYMIZED" ), mContext );
    released[grouped] = rows( release );
    QVERIFY( smallestClass( release, { "age_group", "sex", "race" } ) >= 5 );
  }
  QCOMPARE( released[true].size(), 40000 - results[true].value( QStringLiteral( "SUPPRESSED" ) ).toInt() );
  QCOMPARE( released[true], released[false] );
  for ( const char *number : { "SITES", "AGGREGATES", "RELEASED", "SUPPRESSED", "DISCERNIBILITY", "NUE", "L_DIVERSITY", "T_CLOSENESS" } )
    QCOMPARE( results[true].value( number ), results[false].value( number ) );
}

void TestGroupedCount::countFieldSummed()
{
  // Counts 3 + 4 in r00 F, 2 in r10 F, 5 in r20 F, 1 + 1 in r20 M, 0 in r21 M: aggregate 1 holds 9 F, aggregate 2 holds 5 F and 2 M.
  auto records = gridTable( { { "r00", "F", 3 }, { "r00", "F", 4 }, { "r10", "F", 2 }, { "r20", "F", 5 }, { "r20", "M", 1 }, { "r20", "M", 1 }, { "r21", "M", 0 } } );
  QMap<bool, QStringList> released;
  for ( const bool grouped : { true, false } )
  {
    Feedback feedback;
    const QVariantMap r = gridRun( records.get(), grouped, true, feedback, QStringLiteral( "n" ) );
    QCOMPARE( feedback.messages.contains( kGrouped ), grouped );
    QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 16LL );
    QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 0LL );
    QVERIFY( feedback.saw( QStringLiteral( "Read 7 record rows (16 records)" ) ) );
    QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
    QCOMPARE( smallestClass( release, { "sex" }, QStringLiteral( "n" ) ), 2LL );
    released[grouped] = rows( release );
  }
  QCOMPARE( released[true], released[false] );
}

void TestGroupedCount::typedQisSameAsRowByRow()
{
  // QIs of every type a GeoPackage stores, read back from the grouped query: the same classes, so the same release.
  auto memory = vbastest::table( QStringLiteral( "field=region:string&field=born:date&field=insured:boolean&field=weight:double&field=visits:long&field=name:string" ),
                                 QList<QVariantList> {} );
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
  QMap<bool, QStringList> released;
  for ( const bool grouped : { true, false } )
  {
    QVariantMap p = vbastest::inputParameters( mRegions.get(), QStringLiteral( "id" ), &records, QStringLiteral( "region" ),
                                               { QStringLiteral( "born" ), QStringLiteral( "insured" ), QStringLiteral( "weight" ), QStringLiteral( "visits" ), QStringLiteral( "name" ) } );
    p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
    p.insert( QStringLiteral( "K" ), 2 );
    p.insert( QStringLiteral( "SEED" ), 5 );
    p.insert( QStringLiteral( "GROUP_IN_SOURCE" ), grouped );
    Feedback feedback;
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, true, &feedback );
    QCOMPARE( feedback.messages.contains( kGrouped ), grouped );
    QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
    released[grouped] = rows( release );
    QVERIFY( smallestClass( release, { "born", "insured", "weight", "visits", "name" } ) >= 2 );
  }
  QVERIFY( !released[true].isEmpty() );
  QCOMPARE( released[true], released[false] );
}

void TestGroupedCount::badCountsCountedRowByRow()
{
  // A count the streaming pass refuses is refused with its row, as if the source had not counted.
  const QList<std::pair<QVariant, QString>> bad { { QVariant(), QStringLiteral( "holds NULL" ) }, { -1, QStringLiteral( "holds -1" ) }, { 2.5, QStringLiteral( "holds 2.5" ) },
                                                  { 1e17, QStringLiteral( "holds 1e+17" ) } };
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
  p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
  p.insert( QStringLiteral( "K" ), 2 );
  QgsProject::instance()->addMapLayer( records.get(), false, false );
  QgsProcessingContext context;
  context.setProject( QgsProject::instance() );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, context, true, &feedback );
  QgsProject::instance()->takeMapLayer( records.get() );
  QVERIFY( feedback.saw( QStringLiteral( "The records are counted row by row: only selected features or a limited number are read." ) ) );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 3LL ); // the three F of aggregate 1
}

void TestGroupedCount::editedBetweenPassesAborts()
{
  // 0: a QI changed; 1: a row deleted and the same values added back as a new row (same counts, other feature ids).
  for ( const int edit : { 0, 1 } )
  {
    auto records = gridTable( { { "r00", "F", 1 }, { "r00", "F", 1 }, { "r10", "F", 1 }, { "r20", "M", 1 }, { "r21", "M", 1 } } );
    QgsVectorLayer editor( records->source(), QStringLiteral( "editor" ), QStringLiteral( "ogr" ) );
    const QString release = mDir.filePath( QStringLiteral( "edited%1.gpkg" ).arg( edit ) );
    Feedback feedback;
    feedback.onInfo = [&]( const QString &info ) {
      if ( !info.contains( QStringLiteral( "records released" ) ) ) // between the passes
        return;
      if ( edit == 0 )
        editor.dataProvider()->changeAttributeValues( { { 2, { { editor.fields().lookupField( QStringLiteral( "sex" ) ), QStringLiteral( "M" ) } } } } );
      else
      {
        editor.dataProvider()->deleteFeatures( { 2 } );
        QgsFeature again( editor.fields() );
        again.setAttributes( QgsAttributes() << QVariant() << QStringLiteral( "r00" ) << QStringLiteral( "F" ) << 1 );
        QgsFeatureList added { again };
        editor.dataProvider()->addFeatures( added );
      }
    };
    QVariantMap p = vbastest::gridParameters( mRegions.get(), records.get() );
    p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
    p.insert( QStringLiteral( "K" ), 2 );
    p.insert( QStringLiteral( "ANONYMIZED" ), release );
    vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, false, &feedback );
    QVERIFY( feedback.messages.contains( kGrouped ) );
    QVERIFY2( feedback.error().contains( QStringLiteral( "The records table changed while the release was being written" ) ), qPrintable( feedback.error() ) );
    QVERIFY( !QFileInfo::exists( release ) );
  }
}

QTEST_MAIN( TestGroupedCount )
#include "test_grouped_count.moc"
