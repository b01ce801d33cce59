// Geocoded records (no region id field): records with a point and no region field are located in the
// regions by point in polygon. Hand-placed points on the 3 x 3 grid, inside, on shared edges and
// corners and outside, with the region of each worked out by hand; every release recounted here.
#include "tests/plugin/qgis_test_util.h"
#include "plugin/support/vbasqgiscompat.h"

#include <QTemporaryDir>

#include <gdal.h>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{

struct Placed
{
    double x, y;
    const char *sex;
};

/**
 * The hand-placed records and their regions (region rCR covers [C, C+1] x [R, R+1]):
 *  (0.5, 0.5) F, (0.25, 0.75) M  inside r00
 *  (1.0, 0.5) F                  on the edge r00 | r10: r00, the lower id
 *  (2.0, 0.5) F                  on the edge r10 | r20: r10, the lower id (aggregate 1, not 2)
 *  (2.0, 2.0) M                  on the corner of r11, r12, r21, r22: r11
 *  (2.5, 2.5) F                  inside r22
 *  (2.5, 1.5) F                  inside r21
 *  (3.0, 1.5) F                  on r21's outer edge, which is r21's alone: r21
 *  (2.9, 0.1) F                  inside r20
 *  (1.5, 2.9) M                  inside r12
 * Records per region: r00 3, r10 1, r11 1, r12 1, r20 1, r21 2, r22 1, r01 and r02 none.
 */
const QList<Placed> kPlaced { { 0.5, 0.5, "F" }, { 0.25, 0.75, "M" }, { 1.0, 0.5, "F" }, { 2.0, 0.5, "F" }, { 2.0, 2.0, "M" },
                              { 2.5, 2.5, "F" }, { 2.5, 1.5, "F" },   { 3.0, 1.5, "F" }, { 2.9, 0.1, "F" }, { 1.5, 2.9, "M" } };

const QMap<QString, int> kPerRegion { { "r00", 3 }, { "r10", 1 }, { "r11", 1 }, { "r12", 1 }, { "r20", 1 }, { "r21", 2 }, { "r22", 1 } };

std::unique_ptr<QgsVectorLayer> points( const QList<Placed> &placed, const QString &crs = QStringLiteral( "EPSG:32618" ), const QString &type = QStringLiteral( "Point" ) )
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "%1?crs=%2&field=patient:integer&field=sex:string" ).arg( type, crs ), QStringLiteral( "patients" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  int patient = 0;
  for ( const Placed &p : placed )
  {
    QgsFeature f( layer->fields() );
    f.setAttributes( QgsAttributes() << ++patient << QString::fromLatin1( p.sex ) );
    if ( !std::isnan( p.x ) )
      f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( p.x, p.y ) ) );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! The release recounted: rows per "aggregate_id/sex".
QMap<QString, int> recount( QgsVectorLayer *release )
{
  QMap<QString, int> ecs;
  QgsFeatureIterator it = release->getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
    ++ecs[QStringLiteral( "%1/%2" ).arg( f.attribute( QStringLiteral( "aggregate_id" ) ).toString(), f.attribute( QStringLiteral( "sex" ) ).toString() )];
  return ecs;
}

} // namespace

class TestGeocoded : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void locatesHandPlacedPoints();
    void pointsInAnotherCrs();
    void outsidePointsRefused();
    void outsidePointsDropped();
    void pointMovedAfterTheReadIsNotReleased();
    void badGeocodedInputs();
    void eachFormatLocatedAsQgisReadsIt_data();
    void eachFormatLocatedAsQgisReadsIt();

  private:
    QVariantMap parameters( QgsVectorLayer *records, int k = 3 );
    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mRegions;
    std::unique_ptr<QgsVectorLayer> mSites;
};

void TestGeocoded::initTestCase()
{
  vbastest::initQgisWithProvider();
  mRegions = vbastest::grid();
  mSites = vbastest::twoSites();
}

void TestGeocoded::cleanupTestCase()
{
  QgsApplication::exitQgis();
}

QVariantMap TestGeocoded::parameters( QgsVectorLayer *records, int k )
{
  QVariantMap p = vbastest::inputParameters( mRegions.get(), QStringLiteral( "id" ), records, QString(), { QStringLiteral( "sex" ) } );
  p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
  p.insert( QStringLiteral( "K" ), k );
  p.insert( QStringLiteral( "SEED" ), 7 );
  return p;
}

void TestGeocoded::locatesHandPlacedPoints()
{
  auto records = points( kPlaced );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), parameters( records.get() ), mContext, true, &feedback );
  // Aggregate 1: F from r00 (2) and r10 (1), M from r00, r11 and r12: 3 F and 3 M. Aggregate 2: F from r20, r21 (2), r22: 4 F.
  // Had the edge point (2.0, 0.5) gone to r20, aggregate 1 would hold 2 F (suppressed at k = 3); had the corner point gone to r22, 2 M.
  QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  QVERIFY( release );
  QCOMPARE( recount( release ), ( QMap<QString, int> { { "1/F", 3 }, { "1/M", 3 }, { "2/F", 4 } } ) );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 10LL );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 0LL );
  QCOMPARE( release->wkbType(), vbasqgis::WkbType::NoGeometry );                    // the release never holds the points
  QCOMPARE( release->fields().names(), ( QStringList { "sex", "aggregate_id" } ) ); // the QI only: patient is not named

  // Region by region, through vbas:evaluate's REGION_RISK with the lookup just written.
  QVariantMap e = parameters( records.get() );
  e.insert( QStringLiteral( "LOOKUP" ), r.value( QStringLiteral( "LOOKUP" ) ) );
  e.insert( QStringLiteral( "REGION_RISK" ), QgsProcessing::TEMPORARY_OUTPUT );
  const QVariantMap evaluated = vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, true );
  QgsVectorLayer *risk = vbastest::output( evaluated, QStringLiteral( "REGION_RISK" ), mContext );
  QVERIFY( risk );
  QMap<QString, int> perRegion;
  QgsFeatureIterator it = risk->getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
    if ( f.attribute( QStringLiteral( "records" ) ).toInt() > 0 )
      perRegion.insert( f.attribute( QStringLiteral( "region_id" ) ).toString(), f.attribute( QStringLiteral( "records" ) ).toInt() );
  QCOMPARE( perRegion, kPerRegion );
}

void TestGeocoded::pointsInAnotherCrs()
{
  // The interior points given in WGS 84: each is transformed to the regions' CRS before it is located.
  const QgsCoordinateTransform toWgs84( QgsCoordinateReferenceSystem( QStringLiteral( "EPSG:32618" ) ), QgsCoordinateReferenceSystem( QStringLiteral( "EPSG:4326" ) ), QgsProject::instance() );
  QList<Placed> placed;
  for ( const Placed &p : { Placed { 0.5, 0.5, "F" }, Placed { 0.4, 0.6, "F" }, Placed { 0.6, 0.4, "F" }, Placed { 2.5, 2.5, "F" }, Placed { 2.4, 2.6, "F" }, Placed { 2.6, 2.4, "F" } } )
  {
    const QgsPointXY lonLat = toWgs84.transform( QgsPointXY( p.x, p.y ) );
    placed << Placed { lonLat.x(), lonLat.y(), p.sex };
  }
  auto records = points( placed, QStringLiteral( "EPSG:4326" ) );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), parameters( records.get() ), mContext, true );
  // Three F in r00 (aggregate 1), three in r22 (aggregate 2).
  QCOMPARE( recount( vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext ) ), ( QMap<QString, int> { { "1/F", 3 }, { "2/F", 3 } } ) );
}

void TestGeocoded::outsidePointsRefused()
{
  QList<Placed> placed = kPlaced;
  placed << Placed { 5.0, 5.0, "F" } << Placed { -0.001, 1.5, "M" } << Placed { std::nan( "" ), 0, "F" }; // two outside, one without a point
  auto records = points( placed );
  QTemporaryDir dir;
  QVariantMap p = parameters( records.get() );
  p.insert( QStringLiteral( "ANONYMIZED" ), dir.filePath( QStringLiteral( "release.gpkg" ) ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "3 record row(s) lie outside every region" ) ), qPrintable( feedback.error() ) );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Record row 11 (feature id 11), Record row 12 (feature id 12), Record row 13 (feature id 13)" ) ), qPrintable( feedback.error() ) );
  QVERIFY( feedback.error().contains( QStringLiteral( "OUTSIDE_POINTS" ) ) );
  QVERIFY2( !feedback.error().contains( QStringLiteral( "5" ) + QStringLiteral( ".0" ) ) && !feedback.error().contains( QStringLiteral( "-0.001" ) ), "no coordinates in the message" );
  QCOMPARE( vbastest::entries( dir.path() ), QStringList() ); // nothing written
}

void TestGeocoded::outsidePointsDropped()
{
  QList<Placed> placed = kPlaced;
  placed << Placed { 5.0, 5.0, "F" } << Placed { std::nan( "" ), 0, "M" };
  auto records = points( placed );
  QVariantMap p = parameters( records.get() );
  p.insert( QStringLiteral( "OUTSIDE_POINTS" ), 1 );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, true, &feedback );
  QVERIFY2( feedback.warned( QStringLiteral( "2 record(s) in 2 row(s) lie outside every region or have no point: dropped" ) ), qPrintable( feedback.warnings.join( '\n' ) ) );
  // The same release as without them: the dropped records are neither released nor suppressed.
  QCOMPARE( recount( vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext ) ), ( QMap<QString, int> { { "1/F", 3 }, { "1/M", 3 }, { "2/F", 4 } } ) );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 10LL );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 0LL );
}

void TestGeocoded::pointMovedAfterTheReadIsNotReleased()
{
  // A point moved by another editor once the records are read (and before, the release pass located it
  // again and aborted): the release is of the points as read, each located once.
  for ( const bool outside : { false, true } )
  {
    auto records = points( kPlaced );
    QTemporaryDir dir;
    QVariantMap p = parameters( records.get() );
    p.insert( QStringLiteral( "OUTSIDE_POINTS" ), 1 );
    p.insert( QStringLiteral( "ANONYMIZED" ), dir.filePath( QStringLiteral( "release.gpkg" ) ) );
    Feedback feedback;
    feedback.onInfo = [&]( const QString &info ) {
      if ( info.contains( QStringLiteral( "records released" ) ) ) // after the read: feature 4, an F on r10's edge, moves into r20 or outside
        records->dataProvider()->changeGeometryValues( { { 4, QgsGeometry::fromPointXY( outside ? QgsPointXY( 9, 9 ) : QgsPointXY( 2.5, 0.5 ) ) } } );
    };
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, true, &feedback );
    QgsVectorLayer release( r.value( QStringLiteral( "ANONYMIZED" ) ).toString(), QStringLiteral( "release" ), QStringLiteral( "ogr" ) );
    QCOMPARE( recount( &release ), ( QMap<QString, int> { { "1/F", 3 }, { "1/M", 3 }, { "2/F", 4 } } ) );
    QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 10LL );
  }
}

void TestGeocoded::badGeocodedInputs()
{
  const auto refused = [this]( QgsVectorLayer *records, const QString &message, QgsVectorLayer *regions = nullptr ) {
    QVariantMap p = parameters( records );
    if ( regions )
      p.insert( QStringLiteral( "REGIONS" ), layerValue( regions ) );
    Feedback feedback;
    vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, false, &feedback );
    QVERIFY2( feedback.error().contains( message ), qPrintable( feedback.error() ) );
  };
  // No region field and no points.
  auto table = vbastest::table( QStringLiteral( "field=patient:integer&field=sex:string" ), QList<QVariantList> { { 1, "F" } } );
  refused( table.get(), QStringLiteral( "RECORD_REGION is empty, so the records are located by their points, but the records table has NoGeometry geometry" ) );
  // Polygons are no points.
  auto polygons = std::make_unique<QgsVectorLayer>( QStringLiteral( "Polygon?crs=EPSG:32618&field=patient:integer&field=sex:string" ), QStringLiteral( "p" ), QStringLiteral( "memory" ) );
  refused( polygons.get(), QStringLiteral( "but the records table has Polygon geometry" ) );
  // Point regions: nothing to locate the points in.
  auto pointRegions = std::make_unique<QgsVectorLayer>( QStringLiteral( "Point?crs=EPSG:32618&field=id:string" ), QStringLiteral( "pr" ), QStringLiteral( "memory" ) );
  QgsFeature region( pointRegions->fields() );
  region.setAttributes( QgsAttributes() << QStringLiteral( "a" ) );
  region.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( 0.5, 0.5 ) ) );
  pointRegions->dataProvider()->addFeatures( QgsFeatureList() << region );
  auto records = points( kPlaced );
  refused( records.get(), QStringLiteral( "the regions layer must have polygons to locate them in" ), pointRegions.get() );
  // A multipoint of two points is no single place.
  auto multi = points( kPlaced, QStringLiteral( "EPSG:32618" ), QStringLiteral( "MultiPoint" ) );
  multi->dataProvider()->changeGeometryValues( { { 3, QgsGeometry::fromWkt( QStringLiteral( "MultiPoint((0.5 0.5),(2.5 2.5))" ) ) } } );
  refused( multi.get(), QStringLiteral( "Record row 3 (feature id 3): its geometry is not a single point" ) );
}

void TestGeocoded::eachFormatLocatedAsQgisReadsIt_data()
{
  QTest::addColumn<QString>( "file" );
  QTest::addColumn<QString>( "type" );
  QTest::addColumn<QString>( "crs" );
  QTest::addColumn<int>( "dropped" ); // rows dropped: outside, without a point, an empty point (-1: not checked)
  QTest::newRow( "GeoPackage" ) << "a.gpkg"
                                << "Point"
                                << "EPSG:32618" << 3;
  QTest::newRow( "GeoPackage, multipoints" ) << "b.gpkg"
                                             << "MultiPoint"
                                             << "EPSG:32618" << 3;
  QTest::newRow( "GeoPackage, another CRS" ) << "c.gpkg"
                                             << "Point"
                                             << "EPSG:3857" << 3;
  // Written without a spatial index, which cannot hold a feature without a point (QGIS 3.22's writer
  // leaves them out, 3.40's refuses them); how many are dropped then depends on GDAL's version. Read
  // through QGIS: GDAL 3.10's stream garbles the feature without a point.
  QTest::newRow( "FlatGeobuf" ) << "a.fgb"
                                << "Point"
                                << "EPSG:32618" << -1;
  QTest::newRow( "GeoJSON" ) << "a.geojson"
                             << "Point"
                             << "EPSG:4326" << 3;
}

void TestGeocoded::eachFormatLocatedAsQgisReadsIt()
{
  // The points in each format GDAL reads for QGIS, with a point outside, a record without a point and
  // an empty point (all three dropped): read through GDAL's column stream, and located and released as
  // when QGIS reads them (the run through QGIS forced by a feature limit), as the same points in memory are.
  QFETCH( QString, file );
  QFETCH( QString, type );
  QFETCH( QString, crs );
  QFETCH( int, dropped );
  const QgsCoordinateTransform transform( QgsCoordinateReferenceSystem( QStringLiteral( "EPSG:32618" ) ), QgsCoordinateReferenceSystem( crs ), QgsProject::instance() );
  QList<Placed> placed;
  for ( const Placed &p : kPlaced + QList<Placed> { { 5.0, 5.0, "F" }, { std::nan( "" ), 0, "M" }, { 1.5, 1.5, "M" } } )
  {
    const QgsPointXY xy = std::isnan( p.x ) ? QgsPointXY( p.x, p.y ) : transform.transform( QgsPointXY( p.x, p.y ) );
    placed << Placed { xy.x(), xy.y(), p.sex };
  }
  auto memory = points( placed, crs, type );
  memory->dataProvider()->changeGeometryValues( { { placed.size(), QgsGeometry( std::make_unique<QgsPoint>() ) } } ); // the last: an empty point
  QTemporaryDir dir;
  vbastest::save( memory.get(), dir.filePath( file ), QStringLiteral( "records" ), file.endsWith( QLatin1String( ".fgb" ) ) ? QStringList { QStringLiteral( "SPATIAL_INDEX=NO" ) } : QStringList() );
  if ( file == QLatin1String( "a.gpkg" ) ) // QGIS's writer stores a point-less feature as an empty point: one stored NULL too
  {
    GDALDatasetH gpkg = GDALOpenEx( dir.filePath( file ).toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_UPDATE, nullptr, nullptr, nullptr );
    QVERIFY( gpkg );
    GDALDatasetExecuteSQL( gpkg, "UPDATE records SET geom = NULL WHERE fid = 12", nullptr, nullptr );
    GDALClose( gpkg );
  }
  QgsVectorLayer records( dir.filePath( file ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVERIFY( records.isValid() );
  QList<QPair<QStringList, QMap<QString, int>>> outcomes; // the warnings and the release
  for ( const bool limited : { false, true } )
  {
    QVariantMap p = parameters( &records );
    p.insert( QStringLiteral( "OUTSIDE_POINTS" ), 1 );
    if ( limited )
      p.insert( QStringLiteral( "RECORDS" ), QVariant::fromValue( QgsProcessingFeatureSourceDefinition( records.source(), false, 1000 ) ) );
    Feedback feedback;
    QgsProcessingContext context;
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, context, true, &feedback );
    const QString reader = limited                                    ? QStringLiteral( "The records are read through QGIS: the input has a feature limit." )
                           : file.endsWith( QLatin1String( ".fgb" ) ) ? QStringLiteral( "The records are read through QGIS: GDAL's stream of points is used for GeoPackage" )
                                                                      : QStringLiteral( "The records are read through GDAL's column stream." );
    QVERIFY2( feedback.saw( reader ), qPrintable( feedback.messages.join( '\n' ) ) );
    outcomes << qMakePair( feedback.warnings, recount( vbastest::output( r, QStringLiteral( "ANONYMIZED" ), context ) ) );
  }
  QCOMPARE( outcomes[0], outcomes[1] );
  if ( crs != QLatin1String( "EPSG:32618" ) ) // transformed there and back, the points on the grid's edges may lie outside
    return;
  QVERIFY2( dropped < 0 || outcomes[0].first.join( '\n' ).contains( QStringLiteral( "%1 record(s) in %1 row(s) lie outside every region or have no point: dropped" ).arg( dropped ) ),
            qPrintable( outcomes[0].first.join( '\n' ) ) );
  QCOMPARE( outcomes[0].second, ( QMap<QString, int> { { "1/F", 3 }, { "1/M", 3 }, { "2/F", 4 } } ) );
}

QTEST_MAIN( TestGeocoded )
#include "test_geocoded.moc"
