// Anonymity-driven clustering through the Processing algorithms: vbas:anonymize and
// vbas:placesites with METHOD = ADC on the sample layers, each release recounted here (the ECs of
// ANONYMIZED grouped by aggregate and QI values); the same SEED repeats a run; the row order of the
// records does not matter; COMPACTNESS_BUDGET and RECORD_FLOOR hold on the release; MAX_ITERATIONS and
// cancel stop ADC; ADC without QIs is refused.
#include "tests/plugin/qgis_test_util.h"

#include <QTemporaryDir>

#include <map>

using vbastest::Feedback;
using vbastest::layerValue;

class TestAdcAlgorithms : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void bothObjectivesReleaseKAnonymously();
    void placeSitesMatchesThePipeline();
    void sameSeedSameSites();
    void rowOrderDoesNotMatter();
    void adcNeedsQis();
    void budgetAndFloorHold();
    void maxIterationsStops();
    void cancelDuringAdcWritesNothing();

  private:
    QVariantMap parameters( QgsVectorLayer *records, int method, int objective ) const;
    QVariantMap run( const QString &id, const QVariantMap &parameters, bool expectOk = true, Feedback *feedback = nullptr );
    QList<QgsPointXY> sites( const QVariantMap &results );
    //! Records of every (aggregate, QI values) EC of ANONYMIZED, counted here.
    std::map<QString, qlonglong> recountEcs( const QVariantMap &results );

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mRegions;
    std::unique_ptr<QgsVectorLayer> mPatients;
    const QStringList mQis { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
    static constexpr int kK = 5;
};

void TestAdcAlgorithms::initTestCase()
{
  vbastest::initQgisWithProvider();
  mRegions = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg|layername=ny8_tracts" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  mPatients = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg|layername=patients" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QVERIFY( mRegions->isValid() );
  QVERIFY( mPatients->isValid() );
  QCOMPARE( mPatients->featureCount(), 40000LL );
}

void TestAdcAlgorithms::cleanupTestCase()
{
  mRegions.reset();
  mPatients.reset();
  QgsApplication::exitQgis();
}

QVariantMap TestAdcAlgorithms::parameters( QgsVectorLayer *records, int method, int objective ) const
{
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), records );
  p.insert( QStringLiteral( "METHOD" ), method );
  p.insert( QStringLiteral( "OBJECTIVE" ), objective );
  return p;
}

QVariantMap TestAdcAlgorithms::run( const QString &id, const QVariantMap &parameters, bool expectOk, Feedback *feedback )
{
  return vbastest::run( id, parameters, mContext, expectOk, feedback );
}

QList<QgsPointXY> TestAdcAlgorithms::sites( const QVariantMap &results )
{
  QList<QgsPointXY> points;
  QgsVectorLayer *layer = vbastest::output( results, QStringLiteral( "SITE_POINTS" ), mContext );
  if ( !layer )
    return points;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures( QgsFeatureRequest().addOrderBy( QStringLiteral( "site_id" ) ) );
  while ( it.nextFeature( f ) )
    points << f.geometry().asPoint();
  return points;
}

std::map<QString, qlonglong> TestAdcAlgorithms::recountEcs( const QVariantMap &results )
{
  std::map<QString, qlonglong> ecs;
  vbastest::forEachFeature( results, QStringLiteral( "ANONYMIZED" ), mContext, [&]( const QgsFeature &f ) {
    QStringList key { f.attribute( QStringLiteral( "aggregate_id" ) ).toString() };
    for ( const QString &qi : mQis )
      key << f.attribute( qi ).toString();
    ++ecs[key.join( QChar( 0x1f ) )];
  } );
  return ecs;
}

void TestAdcAlgorithms::bothObjectivesReleaseKAnonymously()
{
  // Balanced density, then ADC with each objective, on the same inputs.
  const QVariantMap density = run( QStringLiteral( "vbas:anonymize" ), parameters( mPatients.get(), 0, 0 ) );
  QCOMPARE( density.value( QStringLiteral( "ADC_STOP" ) ).toString(), QStringLiteral( "not run" ) );
  QCOMPARE( density.value( QStringLiteral( "ADC_MOVES_TRIED" ) ).toLongLong(), 0LL );
  const qlonglong densitySuppressed = density.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong();
  for ( const int objective : { 0, 1 } )
  {
    const QVariantMap r = run( QStringLiteral( "vbas:anonymize" ), parameters( mPatients.get(), 1, objective ) );
    QVERIFY( !r.isEmpty() );
    const QString stop = r.value( QStringLiteral( "ADC_STOP" ) ).toString();
    QVERIFY2( stop == QLatin1String( "reached k" ) || stop == QLatin1String( "no improvement" ), qPrintable( stop ) );
    QVERIFY( r.value( QStringLiteral( "ADC_MOVES_TRIED" ) ).toLongLong() >= r.value( QStringLiteral( "ADC_MOVES_COMMITTED" ) ).toLongLong() );
    // What ADC counted for its clusters is what the release of its sites suppresses.
    QCOMPARE( r.value( QStringLiteral( "ADC_SUPPRESSED" ) ).toLongLong(), r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() );
    // The release, recounted: every EC has at least k records, released + suppressed = all.
    const std::map<QString, qlonglong> ecs = recountEcs( r );
    qlonglong released = 0;
    for ( const auto &[key, size] : ecs )
    {
      QVERIFY2( size >= kK, qPrintable( QStringLiteral( "an EC of %1 records" ).arg( size ) ) );
      released += size;
    }
    QCOMPARE( released, r.value( QStringLiteral( "RELEASED" ) ).toLongLong() );
    QCOMPARE( released + r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 40000LL );
    if ( objective == 1 ) // fewest suppressed records: never more than its balanced-density seeding
      QVERIFY2( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() < densitySuppressed,
                qPrintable( QStringLiteral( "%1 vs %2" ).arg( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() ).arg( densitySuppressed ) ) );
  }
}

void TestAdcAlgorithms::placeSitesMatchesThePipeline()
{
  // The component chain places the same sites as the pipeline: estimate's SITES into placesites.
  const QVariantMap pipeline = run( QStringLiteral( "vbas:anonymize" ), parameters( mPatients.get(), 1, 1 ) );
  QVariantMap p = parameters( mPatients.get(), 1, 1 );
  p.insert( QStringLiteral( "SITES" ), pipeline.value( QStringLiteral( "SITES" ) ) );
  const QVariantMap placed = run( QStringLiteral( "vbas:placesites" ), p );
  QCOMPARE( placed.value( QStringLiteral( "ADC_MOVES_COMMITTED" ) ), pipeline.value( QStringLiteral( "ADC_MOVES_COMMITTED" ) ) );
  QCOMPARE( placed.value( QStringLiteral( "ADC_SUPPRESSED" ) ), pipeline.value( QStringLiteral( "ADC_SUPPRESSED" ) ) );
  const QList<QgsPointXY> a = sites( placed ), b = sites( pipeline );
  QCOMPARE( a.size(), pipeline.value( QStringLiteral( "SITES" ) ).toInt() );
  QCOMPARE( a, b );
}

void TestAdcAlgorithms::sameSeedSameSites()
{
  QVariantMap p = parameters( mPatients.get(), 1, 1 );
  p.insert( QStringLiteral( "SEEDING" ), 1 );
  p.insert( QStringLiteral( "SITES" ), 15 );
  p.insert( QStringLiteral( "SEED" ), 7 );
  const QList<QgsPointXY> first = sites( run( QStringLiteral( "vbas:placesites" ), p ) );
  const QVariantMap again = run( QStringLiteral( "vbas:placesites" ), p );
  QCOMPARE( again.value( QStringLiteral( "SEED" ) ).toLongLong(), 7LL );
  QCOMPARE( sites( again ), first );
  p.insert( QStringLiteral( "SEED" ), 8 );
  QVERIFY( sites( run( QStringLiteral( "vbas:placesites" ), p ) ) != first );
  // Random seeding has no balanced-density row.
  QgsFeature f;
  vbastest::output( again, QStringLiteral( "SITE_POINTS" ), mContext )->getFeatures().nextFeature( f );
  QVERIFY( f.attribute( QStringLiteral( "row" ) ).isNull() );
}

void TestAdcAlgorithms::rowOrderDoesNotMatter()
{
  // The records in reverse order (their QI classes are then numbered differently): the same sites.
  const QString fields = QStringLiteral( "field=tract_id:string&field=age_group:string&field=sex:string&field=race:string" );
  QList<QgsAttributes> rows;
  QgsFeature f;
  QgsFeatureIterator it = mPatients->getFeatures();
  while ( it.nextFeature( f ) )
    rows << ( QgsAttributes() << f.attribute( QStringLiteral( "tract_id" ) ) << f.attribute( QStringLiteral( "age_group" ) ) << f.attribute( QStringLiteral( "sex" ) )
                              << f.attribute( QStringLiteral( "race" ) ) );
  auto forward = vbastest::table( fields, rows );
  std::reverse( rows.begin(), rows.end() );
  auto backward = vbastest::table( fields, rows );
  for ( const int objective : { 0, 1 } )
  {
    QVariantMap p = parameters( forward.get(), 1, objective );
    p.insert( QStringLiteral( "SITES" ), 15 );
    const QList<QgsPointXY> a = sites( run( QStringLiteral( "vbas:placesites" ), p ) );
    p.insert( QStringLiteral( "RECORDS" ), layerValue( backward.get() ) );
    const QList<QgsPointXY> b = sites( run( QStringLiteral( "vbas:placesites" ), p ) );
    QCOMPARE( a.size(), 15 );
    QCOMPARE( a, b );
  }
}

void TestAdcAlgorithms::adcNeedsQis()
{
  QVariantMap p = parameters( mPatients.get(), 1, 0 );
  p.remove( QStringLiteral( "QI_FIELDS" ) );
  p.insert( QStringLiteral( "SITES" ), 15 );
  Feedback feedback;
  QVERIFY( run( QStringLiteral( "vbas:placesites" ), p, false, &feedback ).isEmpty() );
  QVERIFY2( feedback.error().contains( QStringLiteral( "QI_FIELDS" ) ), qPrintable( feedback.error() ) );
  // Balanced density needs none.
  p.insert( QStringLiteral( "METHOD" ), 0 );
  QCOMPARE( sites( run( QStringLiteral( "vbas:placesites" ), p ) ).size(), 15 );
}

void TestAdcAlgorithms::budgetAndFloorHold()
{
  // 50 sites, where ADC's fewest-suppressed moves left alone make the aggregates less compact than
  // balanced density's and leave one with 38 records. The cap is COMPACTNESS_BUDGET times balanced
  // density's MEAN_POINT_COMPACTNESS (the same rule whatever the sites: ADC holding eq. 20 to its own
  // sites instead ended at 1.0x of it with budget 1); the floor
  // ceil(RECORD_FLOOR * 40000 / 50) = 200, which balanced density's smallest aggregate (160 records)
  // already breaks: no aggregate may then end below the smaller of the two.
  const auto smallest = [&]( const QVariantMap &results ) {
    qlonglong records = std::numeric_limits<qlonglong>::max();
    vbastest::forEachFeature( results, QStringLiteral( "AGGREGATED" ), mContext,
                              [&]( const QgsFeature &f ) { records = std::min( records, f.attribute( QStringLiteral( "records" ) ).toLongLong() ); } );
    return records;
  };
  QVariantMap p = parameters( mPatients.get(), 0, 1 );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 50 );
  const QVariantMap density = run( QStringLiteral( "vbas:anonymize" ), p );
  const double reference = density.value( QStringLiteral( "MEAN_POINT_COMPACTNESS" ) ).toDouble();
  QVERIFY( reference > 0 );
  p.insert( QStringLiteral( "METHOD" ), 1 );
  for ( const double budget : { 1.0, 1.05 } )
  {
    p.insert( QStringLiteral( "COMPACTNESS_BUDGET" ), budget );
    const QVariantMap adc = run( QStringLiteral( "vbas:anonymize" ), p );
    const double used = adc.value( QStringLiteral( "MEAN_POINT_COMPACTNESS" ) ).toDouble();
    QVERIFY2( used <= budget * reference * ( 1 + 1e-9 ), qPrintable( QStringLiteral( "budget %1: %2 against %3" ).arg( budget ).arg( used ).arg( reference ) ) );
    QVERIFY( std::fabs( adc.value( QStringLiteral( "MEAN_POINT_COMPACTNESS_USED" ) ).toDouble() - used / reference ) < 1e-9 );
    QVERIFY( adc.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() < density.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() );
    QVERIFY2( smallest( adc ) >= std::min( smallest( density ), 200LL ), qPrintable( QString::number( smallest( adc ) ) ) );
    QCOMPARE( adc.value( QStringLiteral( "AGGREGATES" ) ).toInt(), 50 );
  }
}

void TestAdcAlgorithms::maxIterationsStops()
{
  QVariantMap p = parameters( mPatients.get(), 1, 1 );
  p.insert( QStringLiteral( "MAX_ITERATIONS" ), 1 );
  Feedback feedback;
  const QVariantMap r = run( QStringLiteral( "vbas:anonymize" ), p, true, &feedback );
  QCOMPARE( r.value( QStringLiteral( "ADC_STOP" ) ).toString(), QStringLiteral( "max iterations" ) );
  QCOMPARE( r.value( QStringLiteral( "ADC_MOVES_TRIED" ) ).toLongLong(), 1LL );
  QVERIFY2( feedback.warnings.join( ' ' ).contains( QStringLiteral( "MAX_ITERATIONS = 1" ) ), qPrintable( feedback.warnings.join( ' ' ) ) );
  QCOMPARE( r.value( QStringLiteral( "ADC_SUPPRESSED" ) ).toLongLong(), r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() );
}

void TestAdcAlgorithms::cancelDuringAdcWritesNothing()
{
  // A cancel while ADC runs stops it at a valid state; the run then ends as a canceled run: no output.
  QTemporaryDir dir;
  QVariantMap p = parameters( mPatients.get(), 1, 1 );
  const QString release = dir.filePath( QStringLiteral( "release.gpkg" ) );
  p.insert( QStringLiteral( "ANONYMIZED" ), release );
  //! Cancels at ADC's first progress report.
  class CancelInAdc : public Feedback
  {
    public:
      void setProgressText( const QString &text ) override
      {
        if ( text.startsWith( QLatin1String( "ADC" ) ) )
        {
          sawAdc = true;
          cancel();
        }
      }
      bool sawAdc = false;
  } feedback;
  QVERIFY( run( QStringLiteral( "vbas:anonymize" ), p, false, &feedback ).isEmpty() );
  QVERIFY( feedback.sawAdc );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Canceled" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( QDir( dir.path() ).entryList( QDir::Files | QDir::Hidden ), QStringList() );
}

QTEST_MAIN( TestAdcAlgorithms )
#include "test_adc.moc"
