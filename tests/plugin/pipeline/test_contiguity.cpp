// The steps on the regions' borders through vbas:voronoiaggregate and vbas:anonymize: the parts field
// of AGGREGATED, CONTIGUOUS, REFINE_BOUNDARIES and SEARCH, on a hand-built 3 x 3 layout where a Voronoi
// aggregate falls apart, on points, and on the sample layers, every release recounted from its outputs.
#include "tests/plugin/qgis_test_util.h"

#include <qgscurve.h>
#include <qgspolygon.h>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{

/**
 * Regions r<col><row> in layer order r00, r01, r02, r10, ..., r22 (region indices 0 .. 8): columns
 * x in [0, 1], [1, 2], [2, 3] and rows y in [0, 1], [1, 2], [2, 4] (the top row is 2 high).
 * Centroids: x = 0.5, 1.5, 2.5 and y = 0.5, 1.5, 3.
 */
std::unique_ptr<QgsVectorLayer> layout( bool points = false )
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "%1?crs=EPSG:32618&field=id:string" ).arg( points ? "Point" : "Polygon" ), QStringLiteral( "regions" ), QStringLiteral( "memory" ) );
  const double y[] = { 0, 1, 2, 4 };
  QgsFeatureList features;
  for ( int c = 0; c < 3; ++c )
  {
    for ( int r = 0; r < 3; ++r )
    {
      QgsFeature f( layer->fields() );
      f.setAttributes( QgsAttributes() << QStringLiteral( "r%1%2" ).arg( c ).arg( r ) );
      const QgsRectangle cell( c, y[r], c + 1, y[r + 1] );
      f.setGeometry( points ? QgsGeometry::fromPointXY( cell.center() ) : QgsGeometry::fromRect( cell ) );
      features << f;
    }
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

/**
 * Sites 1 (1, 1), 2 (1.625, 0.375) and 3 (0.375, 1.625). Squared distances from the centroids:
 * r00 (.5, .5): 0.5 to site 1, 1.28125 to sites 2 and 3 -> 1. r11 (1.5, 1.5): the same -> 1.
 * r22 (2.5, 3): 6.25, 7.65625, 6.40625 -> 1. r10 (1.5, .5): 0.03125 to site 2 -> 2; r20 (2.5, .5):
 * 2.5, 0.78125 -> 2; r21 (2.5, 1.5): 2.5, 2.03125, 4.53125 -> 2. r01, r02, r12 go to site 3 the same way
 * (r01: 0.03125; r02 (.5, 3): 4.25, 8.15625, 1.90625; r12 (1.5, 3): 4.25, 6.90625, 3.15625).
 * So site 1 holds the diagonal r00, r11, r22, which touch only at corners: three parts.
 *
 *   r02 3 | r12 3 | r22 1      r22 borders r12 (site 3) over 2 (x = 2, y 2..4) and r21 (site 2) over 1.
 *   r01 3 | r11 1 | r21 2      r00 borders r10 (site 2) and r01 (site 3) over 1 each.
 *   r00 1 | r10 2 | r20 2
 */
std::unique_ptr<QgsVectorLayer> threeSites()
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "Point?crs=EPSG:32618&field=site_id:integer" ), QStringLiteral( "sites" ), QStringLiteral( "memory" ) );
  const QList<QgsPointXY> points { { 1, 1 }, { 1.625, 0.375 }, { 0.375, 1.625 } };
  QgsFeatureList features;
  for ( int s = 0; s < points.size(); ++s )
  {
    QgsFeature f( layer->fields() );
    f.setAttributes( QgsAttributes() << s + 1 );
    f.setGeometry( QgsGeometry::fromPointXY( points[s] ) );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! A records table of (region, sex, how many) rows: one record per row, patients numbered 1, 2, ...
std::unique_ptr<QgsVectorLayer> records( const QList<std::tuple<QString, QString, int>> &rows )
{
  QList<QVariantList> table;
  for ( const auto &[region, sex, n] : rows )
    for ( int i = 0; i < n; ++i )
      table << QVariantList { table.size() + 1, region, sex };
  return vbastest::table( QStringLiteral( "field=patient:integer&field=region:string&field=sex:string" ), table );
}

//! One F in every region and two more in r11: site 1's main part is r11 (3 records).
QList<std::tuple<QString, QString, int>> oneEachThreeInCentre()
{
  QList<std::tuple<QString, QString, int>> rows;
  for ( const char *region : { "r00", "r01", "r02", "r10", "r12", "r20", "r21", "r22" } )
    rows << std::make_tuple( QString( region ), QStringLiteral( "F" ), 1 );
  rows << std::make_tuple( QStringLiteral( "r11" ), QStringLiteral( "F" ), 3 );
  return rows;
}

//! Every feature of a layer as its attribute map.
QList<QVariantMap> features( QgsVectorLayer *layer )
{
  QList<QVariantMap> rows;
  QgsFeatureIterator it = layer->getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    QVariantMap row;
    for ( int i = 0; i < f.fields().count(); ++i )
      row.insert( f.fields().at( i ).name(), f.attribute( i ) );
    rows << row;
  }
  return rows;
}

//! The polygons of a geometry.
QVector<QgsGeometry> polygonParts( const QgsGeometry &geometry )
{
  QVector<QgsGeometry> parts;
  for ( auto it = geometry.const_parts_begin(); it != geometry.const_parts_end(); ++it )
    parts << QgsGeometry( ( *it )->clone() );
  return parts;
}

//! The aggregate and site of every region in LOOKUP.
QMap<QString, QPair<int, int>> lookup( QgsVectorLayer *layer )
{
  QMap<QString, QPair<int, int>> result;
  for ( const QVariantMap &row : features( layer ) )
    result.insert( row.value( QStringLiteral( "region_id" ) ).toString(), qMakePair( row.value( QStringLiteral( "aggregate_id" ) ).toInt(), row.value( QStringLiteral( "site_id" ) ).toInt() ) );
  return result;
}

/**
 * Aggregates whose polygon has more than one part, and enclaves: regions (by their point on surface)
 * inside a hole of another aggregate's polygon. A small island of a multi-part region lying in a hole
 * of another aggregate adds a part, but no enclave: the region's point is in its main part.
 */
struct Shape
{
    int detached = 0;
    int enclaves = 0;
};

Shape shape( QgsVectorLayer *aggregated, QgsVectorLayer *regions, const QString &idField, const QMap<QString, QPair<int, int>> &regionAggregate )
{
  Shape result;
  QList<QPair<int, QgsGeometry>> holes;
  QgsFeatureIterator it = aggregated->getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    const QVector<QgsGeometry> polygons = polygonParts( f.geometry() );
    [&] { QCOMPARE( f.attribute( QStringLiteral( "parts" ) ).toInt(), polygons.size() ); }();
    if ( polygons.size() > 1 )
      ++result.detached;
    for ( const QgsGeometry &polygon : polygons )
    {
      const auto *p = qgsgeometry_cast<const QgsPolygon *>( polygon.constGet() );
      for ( int i = 0; i < p->numInteriorRings(); ++i )
      {
        auto hole = std::make_unique<QgsPolygon>();
        hole->setExteriorRing( p->interiorRing( i )->clone() );
        holes << qMakePair( f.attribute( QStringLiteral( "aggregate_id" ) ).toInt(), QgsGeometry( hole.release() ) );
      }
    }
  }
  it = regions->getFeatures();
  while ( it.nextFeature( f ) )
  {
    const QgsGeometry inside = f.geometry().pointOnSurface();
    const int aggregate = regionAggregate.value( f.attribute( idField ).toString() ).first;
    for ( const auto &[holeAggregate, hole] : qAsConst( holes ) )
    {
      if ( holeAggregate != aggregate && hole.contains( inside ) )
      {
        ++result.enclaves;
        break;
      }
    }
  }
  return result;
}

/**
 * The released ECs counted again from ANONYMIZED: rows per (aggregate_id, QI values). Fails unless
 * each holds at least k; returns the rows.
 */
qlonglong recountKAnonymous( QgsVectorLayer *anonymized, const QStringList &qis, int k )
{
  QMap<QString, qlonglong> ecs;
  qlonglong rows = 0;
  for ( const QVariantMap &row : features( anonymized ) )
  {
    QStringList key { row.value( QStringLiteral( "aggregate_id" ) ).toString() };
    for ( const QString &qi : qis )
      key << row.value( qi ).toString();
    ++ecs[key.join( QChar( 0x1f ) )];
    ++rows;
  }
  for ( auto it = ecs.constBegin(); it != ecs.constEnd(); ++it )
    [&] { QVERIFY2( it.value() >= k, qPrintable( QStringLiteral( "EC %1 holds %2 < k = %3" ).arg( it.key() ).arg( it.value() ).arg( k ) ) ); }();
  return rows;
}

/**
 * The records of each aggregate, counted from the records table (by region) and LOOKUP (region to
 * aggregate), and whether each aggregate's regions are connected through borders of positive length
 * (GEOS, pairs within the aggregate): both from the inputs and outputs alone.
 */
struct AggregateRecount
{
    QMap<int, qlonglong> records;
    QSet<int> inPieces;
};

AggregateRecount recountAggregates( QgsVectorLayer *regions, const QString &regionId, QgsVectorLayer *records, const QString &recordRegion, const QMap<QString, QPair<int, int>> &lookedUp )
{
  AggregateRecount recount;
  for ( const QVariantMap &row : features( records ) )
    ++recount.records[lookedUp.value( row.value( recordRegion ).toString() ).first];
  QMap<int, QVector<QgsGeometry>> members;
  QgsFeature f;
  for ( QgsFeatureIterator it = regions->getFeatures(); it.nextFeature( f ); )
    members[lookedUp.value( f.attribute( regionId ).toString() ).first] << f.geometry();
  for ( auto it = members.constBegin(); it != members.constEnd(); ++it )
  {
    const QVector<QgsGeometry> &g = it.value();
    QVector<int> reached { 0 };
    QVector<bool> seen( g.size(), false );
    seen[0] = true;
    for ( int i = 0; i < reached.size(); ++i )
      for ( int j = 0; j < g.size(); ++j )
        if ( !seen[j] && g[reached[i]].intersects( g[j] ) && QgsGeometry( g[reached[i]].constGet()->boundary() ).intersection( QgsGeometry( g[j].constGet()->boundary() ) ).length() > 0 )
        {
          seen[j] = true;
          reached << j;
        }
    if ( reached.size() < g.size() )
      recount.inPieces << it.key();
  }
  return recount;
}

} // namespace

class TestContiguity : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void partsOfDetachedAggregate();
    void contiguousReassignsFragments();
    void contiguousMadeAtACost();
    void pointLayerHasNoBorders();
    void canceledDuringContiguity();
    void sampleLayers_data();
    void sampleLayers();
    void refinementMovesBoundaryRegion();
    void refinementOnSampleLayers();
    void searchOnSampleLayers();
    void searchKeepsItsBounds();
    void canceledDuringSearch();

  private:
    QVariantMap parameters( QgsVectorLayer *regions, QgsVectorLayer *records, int k, bool contiguous ) const;
    QVariantMap run( const QVariantMap &parameters, Feedback *feedback = nullptr );
    QgsVectorLayer *output( const QVariantMap &results, const QString &name );
    //! The parts of each site's aggregate in AGGREGATED.
    QMap<int, int> partsBySite( const QVariantMap &results );

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mSites;
    std::unique_ptr<QgsVectorLayer> mTracts; //!< the sample layers
    std::unique_ptr<QgsVectorLayer> mPatients;
};

void TestContiguity::initTestCase()
{
  vbastest::initQgisWithProvider();
  mSites = threeSites();
  mTracts = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "regions" ), QStringLiteral( "ogr" ) );
  mPatients = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
}

void TestContiguity::cleanupTestCase()
{
  mSites.reset();
  mTracts.reset();
  mPatients.reset();
  QgsApplication::exitQgis();
}

QVariantMap TestContiguity::parameters( QgsVectorLayer *regions, QgsVectorLayer *records, int k, bool contiguous ) const
{
  QVariantMap p = vbastest::gridParameters( regions, records );
  p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
  p.insert( QStringLiteral( "K" ), k );
  p.insert( QStringLiteral( "CONTIGUOUS" ), contiguous );
  return p;
}

QVariantMap TestContiguity::run( const QVariantMap &parameters, Feedback *feedback )
{
  return vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), parameters, mContext, true, feedback );
}

QgsVectorLayer *TestContiguity::output( const QVariantMap &results, const QString &name )
{
  return vbastest::output( results, name, mContext );
}

QMap<int, int> TestContiguity::partsBySite( const QVariantMap &results )
{
  QMap<int, int> parts;
  for ( const QVariantMap &row : features( output( results, QStringLiteral( "AGGREGATED" ) ) ) )
    parts.insert( row.value( QStringLiteral( "site_id" ) ).toInt(), row.value( QStringLiteral( "parts" ) ).toInt() );
  return parts;
}

void TestContiguity::partsOfDetachedAggregate()
{
  // Without CONTIGUOUS, site 1's aggregate is the three diagonal squares, each its own polygon
  // (corners do not join them): 3 parts. Sites 2 and 3 hold connected L shapes: 1 part each.
  auto regions = layout();
  auto recs = records( oneEachThreeInCentre() );
  const QVariantMap r = run( parameters( regions.get(), recs.get(), 2, false ) );
  QgsVectorLayer *aggregated = output( r, QStringLiteral( "AGGREGATED" ) );
  QCOMPARE( aggregated->fields().names(), QStringList( { "aggregate_id", "site_id", "regions", "members", "records", "released", "suppressed", "smallest_ec", "parts" } ) ); // parts comes last
  QCOMPARE( partsBySite( r ), ( QMap<int, int> { { 1, 3 }, { 2, 1 }, { 3, 1 } } ) );
  for ( const QVariantMap &row : features( aggregated ) )
    if ( row.value( QStringLiteral( "site_id" ) ).toInt() == 1 )
      QCOMPARE( row.value( QStringLiteral( "members" ) ).toString(), QStringLiteral( "r00,r11,r22" ) );
}

void TestContiguity::contiguousReassignsFragments()
{
  // k = 2, all F. Site 1's parts {r00} (1 record), {r11} (3), {r22} (1): r11 is the main part.
  // r00 (region 0) first: it borders sites 2 and 3 over 1 each, a tie the lower site, 2, wins; site 1
  // keeps 4 F, site 2 gets 4: nothing suppressed, moved. r22 (region 8) borders site 3 over 2 and site 2
  // over 1: it joins site 3 (5 F). Parts: 5 -> 3, every aggregate in one piece.
  auto regions = layout();
  auto recs = records( oneEachThreeInCentre() );
  Feedback feedback;
  const QVariantMap r = run( parameters( regions.get(), recs.get(), 2, true ), &feedback );
  QVERIFY2( feedback.saw( QStringLiteral( "Contiguity: 3 aggregates in 5 connected parts; 2 detached part(s) joined" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  QVERIFY( feedback.saw( QStringLiteral( "3 parts remain. Suppressed records: 0 before, 0 after (what contiguity cost)." ) ) );

  const QMap<QString, QPair<int, int>> expected { { "r00", { 2, 2 } }, { "r01", { 3, 3 } }, { "r02", { 3, 3 } }, { "r10", { 2, 2 } }, { "r11", { 1, 1 } },
                                                  { "r12", { 3, 3 } }, { "r20", { 2, 2 } }, { "r21", { 2, 2 } }, { "r22", { 3, 3 } } };
  QCOMPARE( lookup( output( r, QStringLiteral( "LOOKUP" ) ) ), expected );
  QCOMPARE( partsBySite( r ), ( QMap<int, int> { { 1, 1 }, { 2, 1 }, { 3, 1 } } ) );
  QCOMPARE( shape( output( r, QStringLiteral( "AGGREGATED" ) ), regions.get(), QStringLiteral( "id" ), lookup( output( r, QStringLiteral( "LOOKUP" ) ) ) ).detached, 0 );

  // The release, counted again: aggregates 1, 2, 3 hold 3, 4 and 4 F, all of the 11 records.
  QgsVectorLayer *anonymized = output( r, QStringLiteral( "ANONYMIZED" ) );
  QCOMPARE( recountKAnonymous( anonymized, { QStringLiteral( "sex" ) }, 2 ), 11LL );
  QMap<int, int> perAggregate;
  for ( const QVariantMap &row : features( anonymized ) )
    ++perAggregate[row.value( QStringLiteral( "aggregate_id" ) ).toInt()];
  QCOMPARE( perAggregate, ( QMap<int, int> { { 1, 3 }, { 2, 4 }, { 3, 4 } } ) );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 0 );
}

void TestContiguity::contiguousMadeAtACost()
{
  // k = 3. r11 holds 3 F and 1 M, r00 2 M, every other region 1 F. Site 1: F 3 + 1 (r22) = 4, M 1 + 2 = 3,
  // all released; sites 2 and 3: 3 F each. r00 borders sites 2 and 3 over 1 each and joins site 2 (the
  // lower): it leaves 1 M in site 1 and makes an EC of 2 M in site 2, 3 records suppressed, and it is
  // made anyway: contiguity is not traded for suppression. r22 joins site 3 (4 F). Every site one piece.
  auto regions = layout();
  auto recs = records(
    { { "r11", "F", 3 }, { "r11", "M", 1 }, { "r00", "M", 2 }, { "r01", "F", 1 }, { "r02", "F", 1 }, { "r10", "F", 1 }, { "r12", "F", 1 }, { "r20", "F", 1 }, { "r21", "F", 1 }, { "r22", "F", 1 } } );
  Feedback feedback;
  const QVariantMap r = run( parameters( regions.get(), recs.get(), 3, true ), &feedback );
  QVERIFY2( feedback.saw( QStringLiteral( "2 detached part(s) joined" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  QVERIFY( feedback.saw( QStringLiteral( "Suppressed records: 0 before, 3 after (what contiguity cost)." ) ) );
  const QMap<QString, QPair<int, int>> lookedUp = lookup( output( r, QStringLiteral( "LOOKUP" ) ) );
  QCOMPARE( lookedUp.value( "r00" ), qMakePair( 2, 2 ) );
  QCOMPARE( lookedUp.value( "r11" ), qMakePair( 1, 1 ) );
  QCOMPARE( lookedUp.value( "r22" ), qMakePair( 3, 3 ) );
  QCOMPARE( partsBySite( r ), ( QMap<int, int> { { 1, 1 }, { 2, 1 }, { 3, 1 } } ) );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 3 );
  QCOMPARE( recountKAnonymous( output( r, QStringLiteral( "ANONYMIZED" ) ), { QStringLiteral( "sex" ) }, 3 ), 10LL );
}

void TestContiguity::pointLayerHasNoBorders()
{
  // The centroids of the layout as a point layer: the same Voronoi groups, no borders. CONTIGUOUS and
  // REFINE_BOUNDARIES log that they have no effect and change nothing; parts counts the distinct points of each aggregate.
  auto regions = layout( true );
  auto recs = records( oneEachThreeInCentre() );
  const QVariantMap plain = run( parameters( regions.get(), recs.get(), 2, false ) );
  Feedback feedback;
  QVariantMap p = parameters( regions.get(), recs.get(), 2, true );
  p.insert( QStringLiteral( "REFINE_BOUNDARIES" ), true );
  const QVariantMap r = run( p, &feedback );
  QVERIFY( feedback.saw( QStringLiteral( "CONTIGUOUS has no effect: the regions are points" ) ) );
  QVERIFY( feedback.saw( QStringLiteral( "REFINE_BOUNDARIES has no effect: the regions are points" ) ) );
  QCOMPARE( lookup( output( r, QStringLiteral( "LOOKUP" ) ) ), lookup( output( plain, QStringLiteral( "LOOKUP" ) ) ) );
  QCOMPARE( lookup( output( r, QStringLiteral( "LOOKUP" ) ) ).value( "r22" ), qMakePair( 1, 1 ) );
  QCOMPARE( partsBySite( r ), ( QMap<int, int> { { 1, 3 }, { 2, 3 }, { 3, 3 } } ) );
}

void TestContiguity::canceledDuringContiguity()
{
  // Canceled once the records are read: the borders' computation stops the run before any contiguity
  // is logged, and nothing is written.
  auto regions = layout();
  auto recs = records( oneEachThreeInCentre() );
  Feedback feedback;
  feedback.onInfo = [&]( const QString &info ) {
    if ( info.startsWith( QLatin1String( "Read " ) ) )
      feedback.cancel();
  };
  QVariantMap p = parameters( regions.get(), recs.get(), 2, true );
  QTemporaryDir dir;
  p.insert( QStringLiteral( "LOOKUP" ), dir.filePath( QStringLiteral( "lookup.gpkg" ) ) );
  vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Canceled" ) ), qPrintable( feedback.error() ) );
  QVERIFY( !feedback.saw( QStringLiteral( "Contiguity:" ) ) );
  QCOMPARE( QDir( dir.path() ).entryList( QDir::NoDotAndDotDot | QDir::AllEntries ), QStringList() );
}

void TestContiguity::sampleLayers_data()
{
  // sites: 0 for the site count of sample_layers/run_sample.sh (the entropy model: 15 sites), or a fixed
  // number of sites. fewer: whether CONTIGUOUS must lower both the aggregates in parts and the enclaves.
  // With 15 sites the one detached tract (aggregate 12's, enclosed by aggregate 15) would raise the
  // suppressed records of the two aggregates from 29 to 31, so it stays (counted by hand from
  // patients.gpkg); with 45 sites an enclosed tract moves.
  QTest::addColumn<int>( "sites" );
  QTest::addColumn<bool>( "fewer" );
  QTest::newRow( "run_sample.sh" ) << 0 << false;
  QTest::newRow( "45 sites" ) << 45 << true;
}

void TestContiguity::sampleLayers()
{
  QFETCH( int, sites );
  QFETCH( bool, fewer );
  // The sample layers with the parameters of sample_layers/run_sample.sh: vbas:anonymize places the
  // sites, then Voronoi aggregation on them without and with CONTIGUOUS.
  QgsVectorLayer regions( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "regions" ), QStringLiteral( "ogr" ) );
  QgsVectorLayer patients( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  const QStringList qis { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
  QVariantMap p = vbastest::sampleParameters( &regions, &patients );
  if ( sites > 0 )
  {
    p.insert( QStringLiteral( "MODEL" ), 3 );
    p.insert( QStringLiteral( "FIXED_SITES" ), sites );
  }
  const QVariantMap anonymized = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  p.insert( QStringLiteral( "SITES" ), anonymized.value( QStringLiteral( "SITE_POINTS" ) ) );

  const QVariantMap before = run( p );
  QCOMPARE( before.value( QStringLiteral( "SUPPRESSED" ) ), anonymized.value( QStringLiteral( "SUPPRESSED" ) ) );
  p.insert( QStringLiteral( "CONTIGUOUS" ), true );
  Feedback feedback;
  const QVariantMap after = run( p, &feedback );

  const Shape b = shape( output( before, QStringLiteral( "AGGREGATED" ) ), &regions, QStringLiteral( "AREAKEY" ), lookup( output( before, QStringLiteral( "LOOKUP" ) ) ) );
  const Shape a = shape( output( after, QStringLiteral( "AGGREGATED" ) ), &regions, QStringLiteral( "AREAKEY" ), lookup( output( after, QStringLiteral( "LOOKUP" ) ) ) );
  const qlonglong suppressedBefore = before.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong();
  const qlonglong suppressedAfter = after.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong();
  qInfo().noquote() << QStringLiteral( "Sample layers: aggregates with parts > 1: %1 -> %2; enclaves: %3 -> %4; suppressed: %5 -> %6" )
                         .arg( b.detached )
                         .arg( a.detached )
                         .arg( b.enclaves )
                         .arg( a.enclaves )
                         .arg( suppressedBefore )
                         .arg( suppressedAfter );
  for ( const QString &message : qAsConst( feedback.messages ) )
    if ( message.startsWith( QLatin1String( "Contiguity:" ) ) )
      qInfo().noquote() << message;
  QVERIFY( b.detached > 0 );
  QVERIFY( b.enclaves > 0 );
  QVERIFY( fewer ? a.detached < b.detached : a.detached <= b.detached );
  QVERIFY( fewer ? a.enclaves < b.enclaves : a.enclaves <= b.enclaves );
  // Every aggregate one piece under the borders (islands bridged); a tract of several polygons, or a bridged island, still draws as several parts.
  const int aggregates = after.value( QStringLiteral( "AGGREGATES" ) ).toInt();
  QVERIFY( feedback.saw( QStringLiteral( "%1 parts remain." ).arg( aggregates ) ) );
  QCOMPARE( after.value( QStringLiteral( "AGGREGATES" ) ), before.value( QStringLiteral( "AGGREGATES" ) ) ); // a main part never moves
  QCOMPARE( recountKAnonymous( output( after, QStringLiteral( "ANONYMIZED" ) ), qis, 5 ) + suppressedAfter, 40000LL );
}

void TestContiguity::refinementMovesBoundaryRegion()
{
  // k = 2. Every region holds 2 F; r10 and r11 hold 1 M as well. Site 1 = {r00, r11, r22}: 6 F, 1 M
  // (suppressed); site 2 = {r10, r20, r21}: 6 F, 1 M (suppressed); site 3: 6 F. Pass 1 in layer order:
  // r00, r01, r02 hold F only, which no move changes. r10 borders r00 and r11 (site 1): there site 2's
  // M goes (-1) and site 1's becomes 2 (-1), and site 2 keeps {r20, r21}, connected: moved. r11 back
  // to site 2 or to site 3 would leave its M alone in site 1; the others hold F only. Pass 2 moves
  // nothing. Site 1 is {r00, r10, r11} and r22: 3 -> 2 parts; all 20 records released. The move
  // loosens the aggregates (their mean-point compactness rises), so the budget is 2, not the default 1.
  auto regions = layout();
  QList<std::tuple<QString, QString, int>> rows;
  for ( const char *region : { "r00", "r01", "r02", "r10", "r11", "r12", "r20", "r21", "r22" } )
    rows << std::make_tuple( QString( region ), QStringLiteral( "F" ), 2 );
  rows << std::make_tuple( QStringLiteral( "r10" ), QStringLiteral( "M" ), 1 ) << std::make_tuple( QStringLiteral( "r11" ), QStringLiteral( "M" ), 1 );
  auto recs = records( rows );
  QVariantMap p = parameters( regions.get(), recs.get(), 2, false );
  p.insert( QStringLiteral( "REFINE_BOUNDARIES" ), true );
  p.insert( QStringLiteral( "COMPACTNESS_BUDGET" ), 2 );
  Feedback feedback;
  const QVariantMap r = run( p, &feedback );
  QVERIFY2( feedback.saw( QStringLiteral( "Boundary refinement: 1 boundary region(s) moved to a neighbouring aggregate in 2 pass(es). Suppressed records: 2 before, 0 after." ) ),
            qPrintable( feedback.messages.join( '\n' ) ) );
  QVERIFY( !feedback.saw( QStringLiteral( "Contiguity:" ) ) );
  const QMap<QString, QPair<int, int>> lookedUp = lookup( output( r, QStringLiteral( "LOOKUP" ) ) );
  QCOMPARE( lookedUp.value( "r10" ), qMakePair( 1, 1 ) );
  QCOMPARE( lookedUp.value( "r20" ), qMakePair( 2, 2 ) );
  QCOMPARE( partsBySite( r ), ( QMap<int, int> { { 1, 2 }, { 2, 1 }, { 3, 1 } } ) );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 0 );
  QCOMPARE( recountKAnonymous( output( r, QStringLiteral( "ANONYMIZED" ) ), { QStringLiteral( "sex" ) }, 2 ), 20LL );
}

void TestContiguity::refinementOnSampleLayers()
{
  // The sample layers with the parameters of sample_layers/run_sample.sh (balanced density): Voronoi
  // aggregation on vbas:anonymize's sites without and with REFINE_BOUNDARIES. Refinement suppresses
  // fewer records, the release stays k-anonymous and whole, no aggregate gains parts, and
  // vbas:anonymize with REFINE_BOUNDARIES releases the same.
  QgsVectorLayer regions( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "regions" ), QStringLiteral( "ogr" ) );
  QgsVectorLayer patients( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  const QStringList qis { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
  QVariantMap p = vbastest::sampleParameters( &regions, &patients );
  const QVariantMap anonymized = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QVariantMap refinedParameters = p;
  refinedParameters.insert( QStringLiteral( "REFINE_BOUNDARIES" ), true );
  const QVariantMap anonymizedRefined = vbastest::run( QStringLiteral( "vbas:anonymize" ), refinedParameters, mContext, true );
  p.insert( QStringLiteral( "SITES" ), anonymized.value( QStringLiteral( "SITE_POINTS" ) ) );

  const QVariantMap before = run( p );
  p.insert( QStringLiteral( "REFINE_BOUNDARIES" ), true );
  Feedback feedback;
  const QVariantMap after = run( p, &feedback );
  for ( const QString &message : qAsConst( feedback.messages ) )
    if ( message.startsWith( QLatin1String( "Boundary refinement:" ) ) )
      qInfo().noquote() << message;

  const qlonglong suppressedBefore = before.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong();
  const qlonglong suppressedAfter = after.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong();
  QCOMPARE( suppressedBefore, anonymized.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() );
  QVERIFY2( suppressedAfter < suppressedBefore, qPrintable( QStringLiteral( "%1 -> %2" ).arg( suppressedBefore ).arg( suppressedAfter ) ) );
  QCOMPARE( anonymizedRefined.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), suppressedAfter );
  QCOMPARE( recountKAnonymous( output( after, QStringLiteral( "ANONYMIZED" ) ), qis, 5 ) + suppressedAfter, 40000LL );
  QCOMPARE( after.value( QStringLiteral( "AGGREGATES" ) ), before.value( QStringLiteral( "AGGREGATES" ) ) ); // every aggregate keeps a region
  const QMap<int, int> partsBefore = partsBySite( before ), partsAfter = partsBySite( after );
  QCOMPARE( partsAfter.keys(), partsBefore.keys() );
  for ( auto it = partsAfter.constBegin(); it != partsAfter.constEnd(); ++it )
    QVERIFY2( it.value() <= partsBefore.value( it.key() ), qPrintable( QStringLiteral( "site %1: %2 -> %3 parts" ).arg( it.key() ).arg( partsBefore.value( it.key() ) ).arg( it.value() ) ) );
}

QTEST_MAIN( TestContiguity )
#include "test_contiguity.moc"

void TestContiguity::searchOnSampleLayers()
{
  // vbas:anonymize on the sample layers, plain and with SEARCH for 20,000 trial moves (seed 7), twice:
  // the same partition both times; the asked number of aggregates, each in one piece, each holding at
  // least the record floor (a quarter of the mean aggregate's records) and releasing records; fewer
  // records suppressed; compactness within the budget; the release k-anonymous, recounted.
  QgsVectorLayer &regions = *mTracts;
  QgsVectorLayer &patients = *mPatients;
  const QStringList qis { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
  QVariantMap p = vbastest::sampleParameters( &regions, &patients );
  const QVariantMap plain = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  p.insert( QStringLiteral( "SEARCH" ), true );
  p.insert( QStringLiteral( "SEARCH_MOVES" ), 20000 );
  p.insert( QStringLiteral( "TIME_LIMIT" ), 600 );
  p.insert( QStringLiteral( "SEED" ), 7 );
  Feedback feedback;
  const QVariantMap searched = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
  const QVariantMap again = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  for ( const QString &message : qAsConst( feedback.messages ) )
    if ( message.startsWith( QLatin1String( "Suppression search:" ) ) )
      qInfo().noquote() << message;

  const QMap<QString, QPair<int, int>> lookedUp = lookup( output( searched, QStringLiteral( "LOOKUP" ) ) );
  QCOMPARE( lookup( output( again, QStringLiteral( "LOOKUP" ) ) ), lookedUp );
  QCOMPARE( searched.value( QStringLiteral( "SEARCH_MOVES_MADE" ) ).toLongLong(), 20000LL );
  QCOMPARE( searched.value( QStringLiteral( "AGGREGATES" ) ), plain.value( QStringLiteral( "AGGREGATES" ) ) );
  const qlonglong suppressed = searched.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong();
  QVERIFY2( suppressed < plain.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), qPrintable( QStringLiteral( "%1 suppressed" ).arg( suppressed ) ) );
  QVERIFY( searched.value( QStringLiteral( "MEAN_POINT_COMPACTNESS_USED" ) ).toDouble() <= 1.0 );
  QCOMPARE( searched.value( QStringLiteral( "UNITS_IN_PIECES" ) ).toInt(), 0 );
  QCOMPARE( searched.value( QStringLiteral( "UNITS_RELEASING_NOTHING" ) ).toInt(), 0 );

  QgsVectorLayer *anonymized = output( searched, QStringLiteral( "ANONYMIZED" ) );
  QCOMPARE( recountKAnonymous( anonymized, qis, 5 ) + suppressed, 40000LL );
  QSet<int> releasing;
  for ( const QVariantMap &row : features( anonymized ) )
    releasing << row.value( QStringLiteral( "aggregate_id" ) ).toInt();
  const AggregateRecount recount = recountAggregates( &regions, QStringLiteral( "AREAKEY" ), &patients, QStringLiteral( "tract_id" ), lookedUp );
  QCOMPARE( recount.records.size(), plain.value( QStringLiteral( "AGGREGATES" ) ).toInt() );
  QCOMPARE( releasing.size(), recount.records.size() );
  QCOMPARE( recount.inPieces, QSet<int>() );
  const qlonglong floor = static_cast<qlonglong>( std::ceil( 0.25 * 40000 / recount.records.size() ) );
  for ( auto it = recount.records.constBegin(); it != recount.records.constEnd(); ++it )
    QVERIFY2( it.value() >= floor, qPrintable( QStringLiteral( "aggregate %1 holds %2 records, below the floor %3" ).arg( it.key() ).arg( it.value() ).arg( floor ) ) );
}

void TestContiguity::searchKeepsItsBounds()
{
  // SEARCH for a single trial move starts from the aggregates made contiguous, which suppress more and
  // break the budget: what is released keeps the budget (on the mean-point compactness) and suppresses
  // no more than the run without the search. A budget below the start's is refused before anything is
  // written, naming COMPACTNESS_BUDGET and the smallest that can be met.
  QVariantMap p = vbastest::sampleParameters( mTracts.get(), mPatients.get() );
  const QVariantMap plain = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( plain.value( QStringLiteral( "MEAN_POINT_COMPACTNESS_USED" ) ).toDouble(), 1.0 );
  p.insert( QStringLiteral( "SEARCH" ), true );
  p.insert( QStringLiteral( "SEARCH_MOVES" ), 1 );
  p.insert( QStringLiteral( "SEED" ), 7 );
  const QVariantMap searched = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QVERIFY2( searched.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() <= plain.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(),
            qPrintable( QStringLiteral( "%1 suppressed, %2 without the search" )
                          .arg( searched.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() )
                          .arg( plain.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() ) ) );
  const double used = searched.value( QStringLiteral( "MEAN_POINT_COMPACTNESS_USED" ) ).toDouble();
  QVERIFY2( used <= 1.0, qPrintable( QString::number( used, 'g', 17 ) ) );

  p.insert( QStringLiteral( "COMPACTNESS_BUDGET" ), 1e-300 );
  QTemporaryDir dir;
  p.insert( QStringLiteral( "ANONYMIZED" ), dir.filePath( QStringLiteral( "anonymized.gpkg" ) ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QLatin1String( "COMPACTNESS_BUDGET = 1e-300 cannot be met" ) ) && feedback.errors.join( ' ' ).contains( QLatin1String( "can be met is 1.0000" ) ),
            qPrintable( feedback.errors.join( ' ' ) ) );
  QCOMPARE( vbastest::entries( dir.path() ), QStringList() );
}

void TestContiguity::canceledDuringSearch()
{
  // Canceled as the search starts (right after the contiguity step): the run stops and writes nothing.
  QVariantMap p = vbastest::sampleParameters( mTracts.get(), mPatients.get() );
  p.insert( QStringLiteral( "SEARCH" ), true );
  QTemporaryDir dir;
  p.insert( QStringLiteral( "ANONYMIZED" ), dir.filePath( QStringLiteral( "anonymized.gpkg" ) ) );
  p.insert( QStringLiteral( "LOOKUP" ), dir.filePath( QStringLiteral( "lookup.gpkg" ) ) );
  Feedback feedback;
  feedback.onInfo = [&]( const QString &info ) {
    if ( info.startsWith( QLatin1String( "Contiguity:" ) ) )
      feedback.cancel();
  };
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Canceled" ) ), qPrintable( feedback.error() ) );
  QVERIFY( !feedback.saw( QStringLiteral( "Suppression search:" ) ) );
  QCOMPARE( QDir( dir.path() ).entryList( QDir::NoDotAndDotDot | QDir::AllEntries ), QStringList() );
}
