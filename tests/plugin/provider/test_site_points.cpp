// The asked size is reported: AGGREGATES of placesites and anonymize, and SITE_POINTS' regions,
// population and used recounted here from a LOOKUP (placesites' sites aggregated by voronoiaggregate;
// anonymize's own, after REFINE_BOUNDARIES moved regions), for both methods, on the sample layers with
// 78 sites, where one balanced-density site has no nearest region: the warning says so.
#include "tests/plugin/qgis_test_util.h"

#include <map>

using vbastest::Feedback;
using vbastest::layerValue;

class TestSitePoints : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void placeSitesBothMethods();
    void anonymizeBothMethods();

  private:
    struct Aggregate
    {
        qlonglong regions = 0;
        double population = 0;
    };
    QVariantMap parameters( int method ) const;
    QVariantMap run( const QString &id, const QVariantMap &parameters, Feedback *feedback );
    //! Regions and population (records) of each site_id's aggregate, counted from LOOKUP.
    std::map<qlonglong, Aggregate> recount( const QVariantMap &lookupResults );
    //! What differs between SITE_POINTS (and AGGREGATES, the warning) and the aggregates of LOOKUP.
    QStringList check( const QVariantMap &results, const QVariantMap &lookupResults, const Feedback &feedback );
    //! What differs between each site of SITE_POINTS and its aggregate; the sites and the unused ones counted.
    QStringList checkSites( const QVariantMap &results, std::map<qlonglong, Aggregate> &aggregates, qlonglong &sites, qlonglong &unused );
    //! The site of every region in LOOKUP.
    std::map<QString, qlonglong> regionSites( const QVariantMap &lookupResults );

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mRegions;
    std::unique_ptr<QgsVectorLayer> mPatients;
    std::map<QString, double> mRecords; //!< per tract
    static constexpr int kSites = 78;   //!< balanced density leaves one of them without a nearest region
};

void TestSitePoints::initTestCase()
{
  vbastest::initQgisWithProvider();
  mRegions = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg|layername=ny8_tracts" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  mPatients = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg|layername=patients" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QVERIFY( mRegions->isValid() );
  QVERIFY( mPatients->isValid() );
  QgsFeature f;
  QgsFeatureIterator it = mPatients->getFeatures();
  while ( it.nextFeature( f ) )
    ++mRecords[f.attribute( QStringLiteral( "tract_id" ) ).toString()];
}

void TestSitePoints::cleanupTestCase()
{
  mRegions.reset();
  mPatients.reset();
  QgsApplication::exitQgis();
}

QVariantMap TestSitePoints::parameters( int method ) const
{
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  p.insert( QStringLiteral( "METHOD" ), method );
  p.insert( QStringLiteral( "OBJECTIVE" ), 1 );
  p.insert( QStringLiteral( "SITES" ), kSites );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), kSites );
  return p;
}

QVariantMap TestSitePoints::run( const QString &id, const QVariantMap &parameters, Feedback *feedback )
{
  return vbastest::run( id, parameters, mContext, true, feedback );
}

std::map<QString, qlonglong> TestSitePoints::regionSites( const QVariantMap &lookupResults )
{
  std::map<QString, qlonglong> sites;
  vbastest::forEachFeature( lookupResults, QStringLiteral( "LOOKUP" ), mContext,
                            [&]( const QgsFeature &f ) { sites[f.attribute( QStringLiteral( "region_id" ) ).toString()] = f.attribute( QStringLiteral( "site_id" ) ).toLongLong(); } );
  return sites;
}

std::map<qlonglong, TestSitePoints::Aggregate> TestSitePoints::recount( const QVariantMap &lookupResults )
{
  std::map<qlonglong, Aggregate> aggregates;
  for ( const auto &[region, site] : regionSites( lookupResults ) )
  {
    ++aggregates[site].regions;
    aggregates[site].population += mRecords[region];
  }
  return aggregates;
}

QStringList TestSitePoints::checkSites( const QVariantMap &results, std::map<qlonglong, Aggregate> &aggregates, qlonglong &sites, qlonglong &unused )
{
  QStringList problems;
  vbastest::forEachFeature( results, QStringLiteral( "SITE_POINTS" ), mContext, [&]( const QgsFeature &f ) {
    ++sites;
    const qlonglong site = f.attribute( QStringLiteral( "site_id" ) ).toLongLong();
    const Aggregate expected = aggregates.count( site ) ? aggregates[site] : Aggregate();
    const qlonglong regions = f.attribute( QStringLiteral( "regions" ) ).toLongLong();
    const double population = f.attribute( QStringLiteral( "population" ) ).toDouble();
    const int used = f.attribute( QStringLiteral( "used" ) ).toInt();
    unused += used == 0;
    if ( regions != expected.regions || used != ( expected.regions > 0 ? 1 : 0 ) || population != expected.population )
      problems << QStringLiteral( "site %1: regions %2, population %3, used %4; LOOKUP: %5 regions, %6 records" )
                    .arg( site )
                    .arg( regions )
                    .arg( population )
                    .arg( used )
                    .arg( expected.regions )
                    .arg( expected.population );
  } );
  return problems;
}

QStringList TestSitePoints::check( const QVariantMap &results, const QVariantMap &lookupResults, const Feedback &feedback )
{
  std::map<qlonglong, Aggregate> aggregates = recount( lookupResults );
  qlonglong regions = 0, sites = 0, unused = 0;
  for ( const auto &[site, aggregate] : aggregates )
    regions += aggregate.regions;
  QStringList problems = checkSites( results, aggregates, sites, unused );
  const qlonglong aggregatesOutput = results.value( QStringLiteral( "AGGREGATES" ) ).toLongLong();
  if ( regions != mRegions->featureCount() || sites != kSites )
    problems << QStringLiteral( "LOOKUP holds %1 regions, SITE_POINTS %2 sites" ).arg( regions ).arg( sites );
  if ( aggregatesOutput != static_cast<qlonglong>( aggregates.size() ) || unused != kSites - aggregatesOutput )
    problems << QStringLiteral( "AGGREGATES %1, LOOKUP names %2 sites, %3 unused" ).arg( aggregatesOutput ).arg( aggregates.size() ).arg( unused );
  const QString warning = QStringLiteral( "%1 sites were asked for (281 regions), but only %2 aggregates hold regions" ).arg( kSites ).arg( aggregatesOutput );
  const QString fewer = QStringLiteral( "makes no aggregate: %1 here, so there are fewer aggregates than asked for." ).arg( kSites - aggregatesOutput );
  if ( feedback.warned( warning ) != ( aggregatesOutput < kSites ) || feedback.warned( fewer ) != ( aggregatesOutput < kSites ) )
    problems << QStringLiteral( "warning: %1" ).arg( feedback.warnings.join( QStringLiteral( " | " ) ) );
  return problems;
}

void TestSitePoints::placeSitesBothMethods()
{
  // Placesites' sites as Voronoi aggregation (no border steps) builds its aggregates from them.
  for ( const int method : { 0, 1 } )
  {
    Feedback feedback;
    const QVariantMap placed = run( QStringLiteral( "vbas:placesites" ), parameters( method ), &feedback );
    QVariantMap p = parameters( 0 );
    p.insert( QStringLiteral( "SITES" ), placed.value( QStringLiteral( "SITE_POINTS" ) ) );
    const QVariantMap aggregated = run( QStringLiteral( "vbas:voronoiaggregate" ), p, nullptr );
    const QStringList problems = check( placed, aggregated, feedback );
    QVERIFY2( problems.isEmpty(), qPrintable( QStringLiteral( "METHOD %1: %2" ).arg( method ).arg( problems.join( QStringLiteral( "; " ) ) ) ) );
    QCOMPARE( aggregated.value( QStringLiteral( "AGGREGATES" ) ), placed.value( QStringLiteral( "AGGREGATES" ) ) );
    if ( method == 0 )
      QCOMPARE( placed.value( QStringLiteral( "AGGREGATES" ) ).toInt(), kSites - 1 );
  }
}

void TestSitePoints::anonymizeBothMethods()
{
  // The release's own LOOKUP; with REFINE_BOUNDARIES regions leave their Voronoi clusters, and
  // SITE_POINTS follows them.
  for ( const int method : { 0, 1 } )
  {
    std::map<QString, qlonglong> voronoi;
    for ( const bool refine : { false, true } )
    {
      QVariantMap p = parameters( method );
      p.insert( QStringLiteral( "REFINE_BOUNDARIES" ), refine );
      Feedback feedback;
      const QVariantMap r = run( QStringLiteral( "vbas:anonymize" ), p, &feedback );
      const QStringList problems = check( r, r, feedback );
      QVERIFY2( problems.isEmpty(), qPrintable( QStringLiteral( "METHOD %1, REFINE_BOUNDARIES %2: %3" ).arg( method ).arg( refine ).arg( problems.join( QStringLiteral( "; " ) ) ) ) );
      if ( method == 0 )
        QCOMPARE( r.value( QStringLiteral( "AGGREGATES" ) ).toInt(), kSites - 1 );
      if ( refine )
        QVERIFY( regionSites( r ) != voronoi );
      else
        voronoi = regionSites( r );
    }
  }
}

QTEST_MAIN( TestSitePoints )
#include "test_site_points.moc"
