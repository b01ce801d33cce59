// Every VBAS algorithm run through QgsProcessingAlgorithm::run on small hand-drawn layers, with the
// expected values worked out by hand from the paper's equations, and the bad inputs of the issue.
#include "tests/plugin/qgis_test_util.h"
#include "plugin/support/vbasqgiscompat.h"

#include <QTemporaryDir>
#include <cmath>

using vbastest::Feedback;
using vbastest::grid;
using vbastest::layerValue;

namespace
{

struct Row
{
    QVariant region;
    QVariant sex;
    int count = 1;
};

std::unique_ptr<QgsVectorLayer> records( const QList<Row> &rows )
{
  auto layer
    = std::make_unique<QgsVectorLayer>( QStringLiteral( "None?field=patient:integer&field=region:string&field=sex:string&field=n:integer" ), QStringLiteral( "records" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  int patient = 0;
  for ( const Row &row : rows )
  {
    QgsFeature f( layer->fields() );
    f.setAttributes( QgsAttributes() << ++patient << row.region << row.sex << row.count );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! One F in each of the nine regions and one M in r00: with the two sites below, aggregate 1 is
//! columns 0 and 1 (7 records: 6 F, 1 M) and aggregate 2 is column 2 (3 F).
QList<Row> nineAndOne()
{
  QList<Row> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      rows << Row { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), QStringLiteral( "F" ) };
  rows << Row { QStringLiteral( "r00" ), QStringLiteral( "M" ) };
  return rows;
}

} // namespace

class TestAlgorithms : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void providerListsNineAlgorithms();
    void everyOutputStatesItsAudience();
    void estimateSiteCountCustomCoefficients();
    void estimateSiteCountEntropyCentral();
    void placeSitesBalancedDensity();
    void voronoiAggregate();
    void evaluateWorkedExample();
    void anonymizeIsKAnonymous();
    void countField();
    void zeroCountRowIsNoRecord();
    void nullQiIsItsOwnCategory();
    void qiValuesAreToldApartExactly();
    void geographicCrs();
    void invalidPolygonRepaired();

    void missingQiField();
    void duplicateRegionIds();
    void unknownRecordRegions();
    void regionIdFieldMistaken();
    void kBelowTwo();
    void siteCountOutOfRange();
    void emptyLayers();
    void canceled();
    void canceledReleaseIsDeleted();

  private:
    QVariantMap run( const QString &id, const QVariantMap &parameters, bool expectOk, Feedback *feedback = nullptr );
    QVariantMap baseParameters( QgsVectorLayer *regions, QgsVectorLayer *records ) const;
    //! baseParameters with the two sites of twoSites() as SITES.
    QVariantMap aggregationParameters( QgsVectorLayer *regions, QgsVectorLayer *records ) const;
    QgsVectorLayer *output( const QVariantMap &results, const QString &name );

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mTwoSites;
    QTemporaryDir mDir;
};

void TestAlgorithms::initTestCase()
{
  vbastest::initQgisWithProvider();
  QVERIFY( QgsApplication::processingRegistry()->providerById( QStringLiteral( "vbas" ) ) );
  mTwoSites = vbastest::twoSites();
}

void TestAlgorithms::cleanupTestCase()
{
  mTwoSites.reset();
  QgsApplication::exitQgis();
}

QVariantMap TestAlgorithms::run( const QString &id, const QVariantMap &parameters, bool expectOk, Feedback *feedback )
{
  return vbastest::run( id, parameters, mContext, expectOk, feedback );
}

QVariantMap TestAlgorithms::baseParameters( QgsVectorLayer *regions, QgsVectorLayer *records ) const
{
  return vbastest::gridParameters( regions, records );
}

QVariantMap TestAlgorithms::aggregationParameters( QgsVectorLayer *regions, QgsVectorLayer *records ) const
{
  QVariantMap p = baseParameters( regions, records );
  p.insert( QStringLiteral( "SITES" ), layerValue( mTwoSites.get() ) );
  return p;
}

QgsVectorLayer *TestAlgorithms::output( const QVariantMap &results, const QString &name )
{
  return vbastest::output( results, name, mContext );
}

void TestAlgorithms::providerListsNineAlgorithms()
{
  const QgsProcessingProvider *provider = QgsApplication::processingRegistry()->providerById( QStringLiteral( "vbas" ) );
  QVERIFY( provider );
  QStringList ids;
  for ( const QgsProcessingAlgorithm *alg : provider->algorithms() )
  {
    ids << alg->id();
    QVERIFY2( !alg->shortHelpString().isEmpty(), qPrintable( alg->id() ) );
    QVERIFY2( QFile::exists( alg->svgIconPath() ), qPrintable( alg->svgIconPath() ) );
    QCOMPARE( alg->groupId(), alg->id() == QLatin1String( "vbas:lpgeomask" ) ? QStringLiteral( "geomasking" ) : QStringLiteral( "vbas" ) );
  }
  ids.sort();
  QCOMPARE( ids, QStringList( { "vbas:anonymize", "vbas:checkanonymity", "vbas:compare", "vbas:estimatesitecount", "vbas:evaluate", "vbas:generalize", "vbas:lpgeomask", "vbas:placesites",
                                "vbas:voronoiaggregate" } ) );
  QVERIFY( QFile::exists( provider->svgIconPath() ) );
}

void TestAlgorithms::everyOutputStatesItsAudience()
{
  // The help of every output written by a run says whether it is for publication or for the custodian only,
  // in the paragraph that describes it ("<b>its name</b> ... <br>"). lpgeomask's outputs are another engineer's part.
  const QgsProcessingProvider *provider = QgsApplication::processingRegistry()->providerById( QStringLiteral( "vbas" ) );
  for ( const QgsProcessingAlgorithm *alg : provider->algorithms() )
  {
    if ( alg->id() == QLatin1String( "vbas:lpgeomask" ) )
      continue;
    const QString help = alg->shortHelpString();
    for ( const QgsProcessingParameterDefinition *output : alg->destinationParameterDefinitions() )
    {
      bool stated = false;
      const QString name = QStringLiteral( "<b>%1</b>" ).arg( output->description() );
      for ( int at = help.indexOf( name ); at >= 0 && !stated; at = help.indexOf( name, at + 1 ) )
      {
        const QString paragraph = help.mid( at, help.indexOf( QStringLiteral( "<br>" ), at ) - at );
        stated = paragraph.contains( QStringLiteral( "For publication" ) ) || paragraph.contains( QStringLiteral( "For the custodian only, not for publication" ) );
      }
      QVERIFY2( stated, qPrintable( alg->id() + ' ' + output->name() ) );
    }
  }
}

void TestAlgorithms::estimateSiteCountCustomCoefficients()
{
  // 6 F and 2 M records. Max combinations (eq. 4) = 2 (F, M). Custom e^B0 = 1, B1 = 1: cutoff = 2,
  // sites = R(8 / 2) = 4 (eq. 6).
  auto regions = grid();
  QList<Row> rows;
  for ( int i = 0; i < 6; ++i )
    rows << Row { QStringLiteral( "r0%1" ).arg( i % 3 ), QStringLiteral( "F" ) };
  rows << Row { QStringLiteral( "r11" ), QStringLiteral( "M" ) } << Row { QStringLiteral( "r22" ), QStringLiteral( "M" ) };
  auto recs = records( rows );
  QVariantMap p = baseParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "MODEL" ), 1 );
  p.insert( QStringLiteral( "COEFFICIENTS" ), 3 );
  p.insert( QStringLiteral( "EXP_B0" ), 1.0 );
  p.insert( QStringLiteral( "B1" ), 1.0 );
  const QVariantMap r = run( QStringLiteral( "vbas:estimatesitecount" ), p, true );
  QCOMPARE( r.value( QStringLiteral( "MAXCOMBS" ) ).toDouble(), 2.0 );
  QCOMPARE( r.value( QStringLiteral( "CUTOFF" ) ).toDouble(), 2.0 );
  QCOMPARE( r.value( QStringLiteral( "SITES" ) ).toInt(), 4 );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toInt(), 8 );
  // Entropy (eq. 1, natural log): -(6/8 ln 6/8 + 2/8 ln 2/8) = 0.215762 + 0.346574 = 0.562335
  QVERIFY( std::fabs( r.value( QStringLiteral( "ENTROPY" ) ).toDouble() - 0.562335 ) < 1e-6 );

  // The population basis (POP sums to 9) is for balanced density only: the site count still divides
  // the 8 records, R(8 / 2) = 4, not R(9 / 2) = 5.
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) );
  const QVariantMap withPopulation = run( QStringLiteral( "vbas:estimatesitecount" ), p, true );
  QCOMPARE( withPopulation.value( QStringLiteral( "POPULATION" ) ).toDouble(), 9.0 );
  QCOMPARE( withPopulation.value( QStringLiteral( "SITES" ) ).toInt(), 4 );
}

void TestAlgorithms::estimateSiteCountEntropyCentral()
{
  // Central Canada: cutoff = 1436 * 0.562335^0.43 = 1436 * exp(0.43 * -0.575642) = 1436 * 0.780725 = 1121.12;
  // sites = R(8 / 1121.12) = 0, clamped to 1.
  auto regions = grid();
  QList<Row> rows;
  for ( int i = 0; i < 6; ++i )
    rows << Row { QStringLiteral( "r00" ), QStringLiteral( "F" ) };
  rows << Row { QStringLiteral( "r11" ), QStringLiteral( "M" ) } << Row { QStringLiteral( "r22" ), QStringLiteral( "M" ) };
  auto recs = records( rows );
  const QVariantMap r = run( QStringLiteral( "vbas:estimatesitecount" ), baseParameters( regions.get(), recs.get() ), true );
  QVERIFY( std::fabs( r.value( QStringLiteral( "CUTOFF" ) ).toDouble() - 1121.12 ) < 0.01 );
  QCOMPARE( r.value( QStringLiteral( "SITES" ) ).toInt(), 1 );
}

void TestAlgorithms::placeSitesBalancedDensity()
{
  // Population 1 per region, p = 9, s = 4: rows r = R(sqrt 4) = 2 (eq. 7), p' = R(9 / 2) = 5 (eq. 8).
  // Sorted by (y, x), the walk takes the bottom row (3) and (0.5, 1.5) (4); (1.5, 1.5) reaches 5 with
  // 5 - 5 <= 5 - 4, so it stays (eq. 9). Row 2: (2.5, 1.5) and the top row, population 4.
  // Cells: 4 * 5 / 9 = 2.22 -> 2 and 4 * 4 / 9 = 1.78 -> 2 (eq. 11). Row 1 by (x, y): (0.5,0.5),
  // (0.5,1.5), (1.5,0.5) reach R(5 / 2) = 3; the last cell keeps (1.5,1.5), (2.5,0.5).
  // Row 2 by x: (0.5,2.5), (1.5,2.5) | (2.5,1.5), (2.5,2.5). Sites at the means (eq. 12-13).
  // SITE_POINTS gives each site's Voronoi cluster, not its cell: (1.5, 1.5) is nearer site 2 (0.5 squared
  // against site 1's 0.89) and (2.5, 1.5) nearer site 4 (0.25 against site 2's 0.5): 2, 3, 2, 2 regions.
  auto regions = grid();
  auto recs = records( nineAndOne() );
  QVariantMap p = baseParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) );
  p.insert( QStringLiteral( "SITES" ), 4 );
  const QVariantMap r = run( QStringLiteral( "vbas:placesites" ), p, true );
  QgsVectorLayer *sites = output( r, QStringLiteral( "SITE_POINTS" ) );
  QVERIFY( sites );
  QCOMPARE( sites->featureCount(), 4LL );
  const QList<QList<double>> expected = { { 1, 2.5 / 3, 2.5 / 3, 2, 1 }, { 2, 2.0, 1.0, 3, 1 }, { 3, 1.0, 2.5, 2, 2 }, { 4, 2.5, 2.0, 2, 2 } };
  QgsFeatureIterator it = sites->getFeatures();
  QgsFeature f;
  int i = 0;
  while ( it.nextFeature( f ) )
  {
    const QList<double> &e = expected[i++];
    QCOMPARE( f.attribute( QStringLiteral( "site_id" ) ).toDouble(), e[0] );
    QVERIFY( std::fabs( f.geometry().asPoint().x() - e[1] ) < 1e-9 );
    QVERIFY( std::fabs( f.geometry().asPoint().y() - e[2] ) < 1e-9 );
    QCOMPARE( f.attribute( QStringLiteral( "population" ) ).toDouble(), e[3] ); // one per region
    QCOMPARE( f.attribute( QStringLiteral( "regions" ) ).toDouble(), e[3] );
    QCOMPARE( f.attribute( QStringLiteral( "used" ) ).toInt(), 1 );
    QCOMPARE( f.attribute( QStringLiteral( "row" ) ).toDouble(), e[4] );
  }
  QCOMPARE( r.value( QStringLiteral( "AGGREGATES" ) ).toInt(), 4 );

  // The median option: cell 1 holds x = 0.5, 0.5, 1.5 and y = 0.5, 1.5, 0.5: median (0.5, 0.5).
  p.insert( QStringLiteral( "SITE_POSITION" ), 1 );
  const QVariantMap median = run( QStringLiteral( "vbas:placesites" ), p, true );
  QgsFeature first;
  output( median, QStringLiteral( "SITE_POINTS" ) )->getFeatures().nextFeature( first );
  QCOMPARE( first.geometry().asPoint(), QgsPointXY( 0.5, 0.5 ) );
}

void TestAlgorithms::voronoiAggregate()
{
  auto regions = grid();
  auto recs = records( nineAndOne() );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "K" ), 3 );
  p.insert( QStringLiteral( "SEED" ), 5 ); // the search's seed (SEARCH is off here): accepted, reported
  Feedback feedback;
  const QVariantMap r = run( QStringLiteral( "vbas:voronoiaggregate" ), p, true, &feedback );
  QCOMPARE( r.value( QStringLiteral( "SEED" ) ).toLongLong(), 5LL );
  const QgsProcessingAlgorithm *alg = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:voronoiaggregate" ) );
  QVERIFY( alg->parameterDefinition( QStringLiteral( "SEED" ) ) && alg->outputDefinition( QStringLiteral( "SEED" ) ) );
  // Aggregate 1: 6 F (released) + 1 M (suppressed, 1 < 3); aggregate 2: 3 F (= k, released).
  QCOMPARE( r.value( QStringLiteral( "AGGREGATES" ) ).toInt(), 2 );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toInt(), 9 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 1 );

  QgsVectorLayer *lookup = output( r, QStringLiteral( "LOOKUP" ) );
  QgsFeature f;
  QgsFeatureIterator it = lookup->getFeatures();
  int rows = 0;
  while ( it.nextFeature( f ) )
  {
    ++rows;
    const bool column2 = f.attribute( QStringLiteral( "region_id" ) ).toString().startsWith( QLatin1String( "r2" ) );
    QCOMPARE( f.attribute( QStringLiteral( "aggregate_id" ) ).toInt(), column2 ? 2 : 1 );
    QCOMPARE( f.attribute( QStringLiteral( "site_id" ) ).toInt(), column2 ? 2 : 1 );
  }
  QCOMPARE( rows, 9 );

  QgsVectorLayer *aggregated = output( r, QStringLiteral( "AGGREGATED" ) );
  QCOMPARE( aggregated->featureCount(), 2LL );
  it = aggregated->getFeatures();
  while ( it.nextFeature( f ) )
  {
    const bool first = f.attribute( QStringLiteral( "aggregate_id" ) ).toInt() == 1;
    QCOMPARE( f.geometry().area(), first ? 6.0 : 3.0 ); // the dissolved member squares
    QCOMPARE( f.geometry().boundingBox(), first ? QgsRectangle( 0, 0, 2, 3 ) : QgsRectangle( 2, 0, 3, 3 ) );
    QCOMPARE( f.attribute( QStringLiteral( "regions" ) ).toInt(), first ? 6 : 3 );
    QCOMPARE( f.attribute( QStringLiteral( "records" ) ).toInt(), first ? 7 : 3 );
    QCOMPARE( f.attribute( QStringLiteral( "released" ) ).toInt(), first ? 6 : 3 );
    QCOMPARE( f.attribute( QStringLiteral( "suppressed" ) ).toInt(), first ? 1 : 0 );
    QCOMPARE( f.attribute( QStringLiteral( "smallest_ec" ) ).toInt(), first ? 6 : 3 );
  }

  QgsVectorLayer *anonymized = output( r, QStringLiteral( "ANONYMIZED" ) );
  QCOMPARE( anonymized->featureCount(), 9LL );
  QCOMPARE( anonymized->fields().names(), QStringList( { "sex", "aggregate_id" } ) ); // the QI only: no field named in RELEASE_FIELDS
  QCOMPARE( anonymized->wkbType(), vbasqgis::WkbType::NoGeometry );
  QMap<int, int> perAggregate;
  it = anonymized->getFeatures();
  while ( it.nextFeature( f ) )
  {
    QCOMPARE( f.attribute( QStringLiteral( "sex" ) ).toString(), QStringLiteral( "F" ) ); // the M is suppressed
    ++perAggregate[f.attribute( QStringLiteral( "aggregate_id" ) ).toInt()];
  }
  // Patients 1-6 live in columns 0 and 1, 7-9 in column 2 (see nineAndOne).
  QCOMPARE( perAggregate, ( QMap<int, int> { { 1, 6 }, { 2, 3 } } ) );

  // Voronoi cells clipped to the extent (0, 0, 3, 3): the bisector x = 1.5 cuts it.
  QgsVectorLayer *voronoi = output( r, QStringLiteral( "VORONOI" ) );
  QCOMPARE( voronoi->featureCount(), 2LL );
  it = voronoi->getFeatures();
  while ( it.nextFeature( f ) )
    QCOMPARE( f.geometry().area(), 4.5 );
}

void TestAlgorithms::evaluateWorkedExample()
{
  auto regions = grid();
  auto recs = records( nineAndOne() );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "K" ), 3 );
  const QVariantMap aggregated = run( QStringLiteral( "vbas:voronoiaggregate" ), p, true );
  p.insert( QStringLiteral( "LOOKUP" ), aggregated.value( QStringLiteral( "LOOKUP" ) ) );
  p.insert( QStringLiteral( "RUN_SECONDS" ), 1.5 );
  const QVariantMap r = run( QStringLiteral( "vbas:evaluate" ), p, true );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toInt(), 10 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 1 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED_PERCENT" ) ).toDouble(), 10.0 );
  // Eq. 20: column 0 to site (0.5, 1.5): 1 + 0 + 1; column 1: sqrt 2 + 1 + sqrt 2; column 2 to (2.5, 1.5): 1 + 0 + 1.
  QVERIFY( std::fabs( r.value( QStringLiteral( "COMPACTNESS" ) ).toDouble() - ( 5 + 2 * std::sqrt( 2.0 ) ) ) < 1e-9 );
  // Eq. 21: released ECs of 6 and 3: 36 + 9.
  QCOMPARE( r.value( QStringLiteral( "DISCERNIBILITY" ) ).toDouble(), 45.0 );
  // Eq. 22-23 over the released records: each of the 6 F of aggregate 1 is alone in its region
  // (Pr = 1/6), each of the 3 of aggregate 2 too (Pr = 1/3): 6 log2 6 + 3 log2 3 = 20.264663.
  QVERIFY( std::fabs( r.value( QStringLiteral( "NUE" ) ).toDouble() - 20.264663 ) < 1e-6 );
  // Over all records: r00 holds 2 of aggregate 1's 7: 2 log2(7/2) + 5 log2 7 + 3 log2 3
  // = 3.614710 + 14.036775 + 4.754888 = 22.406373.
  QVERIFY( std::fabs( r.value( QStringLiteral( "NUE_ALL" ) ).toDouble() - 22.406373 ) < 1e-5 );
  QCOMPARE( r.value( QStringLiteral( "RUNTIME" ) ).toDouble(), 1.5 );

  QgsVectorLayer *table = output( r, QStringLiteral( "EVALUATION" ) );
  QCOMPARE( table->featureCount(), 1LL );
  QgsFeature row;
  table->getFeatures().nextFeature( row );
  QCOMPARE( row.attribute( QStringLiteral( "discernibility" ) ).toDouble(), 45.0 );
  QCOMPARE( row.attribute( QStringLiteral( "smallest_ec" ) ).toInt(), 3 );
  QCOMPARE( row.attribute( QStringLiteral( "released_ecs" ) ).toInt(), 2 );
}

void TestAlgorithms::anonymizeIsKAnonymous()
{
  // Two sites for the nine unit regions; then recount the ECs of the release independently.
  auto regions = grid();
  QList<Row> rows;
  const QStringList sexes = { "F", "M", "X" };
  for ( int i = 0; i < 60; ++i )
    rows << Row { QStringLiteral( "r%1%2" ).arg( i % 3 ).arg( ( i / 3 ) % 3 ), sexes[( i * 7 ) % 3 == 0 && i % 5 == 0 ? 2 : i % 2] };
  auto recs = records( rows );
  QVariantMap p = baseParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 5 );
  const QVariantMap r = run( QStringLiteral( "vbas:anonymize" ), p, true );
  QCOMPARE( r.value( QStringLiteral( "SITES" ) ).toInt(), 2 );
  QgsVectorLayer *anonymized = output( r, QStringLiteral( "ANONYMIZED" ) );
  QHash<QString, int> ecs;
  QgsFeature f;
  QgsFeatureIterator it = anonymized->getFeatures();
  while ( it.nextFeature( f ) )
    ++ecs[f.attribute( QStringLiteral( "aggregate_id" ) ).toString() + '|' + f.attribute( QStringLiteral( "sex" ) ).toString()];
  for ( auto ec = ecs.constBegin(); ec != ecs.constEnd(); ++ec )
    QVERIFY2( ec.value() >= 5, qPrintable( ec.key() ) );
  QCOMPARE( anonymized->featureCount() + r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 60LL );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), anonymized->featureCount() );
  // The four X records (i = 0, 15, 30, 45, all in column 0) are fewer than k wherever they land.
  QVERIFY( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() >= 4 );
  QVERIFY( output( r, QStringLiteral( "SITE_POINTS" ) ) );
  QCOMPARE( output( r, QStringLiteral( "EVALUATION" ) )->featureCount(), 1LL );
}

void TestAlgorithms::countField()
{
  // r00 holds one row standing for 3 F: with k = 3 the aggregate of columns 0-1 releases 3 + 5 F.
  auto regions = grid();
  QList<Row> rows = nineAndOne();
  rows[0].count = 3;
  auto recs = records( rows );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "K" ), 3 );
  const QVariantMap r = run( QStringLiteral( "vbas:voronoiaggregate" ), p, true );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toInt(), 11 ); // 8 F + 3 F
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 1 );
  QCOMPARE( output( r, QStringLiteral( "ANONYMIZED" ) )->featureCount(), 9LL ); // rows, not records

  // A negative or fractional count is refused, naming the field.
  rows[1].count = -2;
  auto bad = records( rows );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( bad.get() ) );
  Feedback feedback;
  run( QStringLiteral( "vbas:voronoiaggregate" ), p, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "count field 'n'" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
}

void TestAlgorithms::zeroCountRowIsNoRecord()
{
  // The M row of r00 stands for 0 records: no EC, nothing suppressed, and not in the release.
  auto regions = grid();
  QList<Row> rows = nineAndOne();
  rows.last().count = 0;
  auto recs = records( rows );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "K" ), 3 );
  const QVariantMap r = run( QStringLiteral( "vbas:voronoiaggregate" ), p, true );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toInt(), 9 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 0 );
  QCOMPARE( output( r, QStringLiteral( "ANONYMIZED" ) )->featureCount(), 9LL );
}

void TestAlgorithms::nullQiIsItsOwnCategory()
{
  // Three NULL sex values in column 2 form their own EC of 3: released with k = 3, and logged.
  auto regions = grid();
  QList<Row> rows = nineAndOne();
  for ( int r = 0; r < 3; ++r )
    rows << Row { QStringLiteral( "r2%1" ).arg( r ), QVariant() };
  auto recs = records( rows );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "K" ), 3 );
  Feedback feedback;
  const QVariantMap r = run( QStringLiteral( "vbas:voronoiaggregate" ), p, true, &feedback );
  QVERIFY( feedback.saw( QStringLiteral( "QI field 'sex' is NULL in 3 record(s)" ) ) );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toInt(), 12 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 1 );
}

void TestAlgorithms::qiValuesAreToldApartExactly()
{
  // Times 1 ms apart are different QI values: the ECs are {t} and {t + 1 ms, t + 1 ms}, so with
  // k = 2 one record is suppressed. (QVariant::toString() drops milliseconds and would merge them into
  // one EC of 3 whose released rows show two different values.)
  auto regions = grid();
  QgsVectorLayer recs( QStringLiteral( "None?field=region:string&field=seen:datetime" ), QStringLiteral( "records" ), QStringLiteral( "memory" ) );
  const QDateTime t( QDate( 2020, 1, 1 ), QTime( 10, 0, 0, 0 ) );
  QgsFeatureList features;
  for ( const QDateTime &when : { t, t.addMSecs( 1 ), t.addMSecs( 1 ) } )
  {
    QgsFeature f( recs.fields() );
    f.setAttributes( QgsAttributes() << QStringLiteral( "r00" ) << when );
    features << f;
  }
  recs.dataProvider()->addFeatures( features );
  QVariantMap p = aggregationParameters( regions.get(), &recs );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "seen" ) } );
  p.insert( QStringLiteral( "K" ), 2 );
  const QVariantMap r = run( QStringLiteral( "vbas:voronoiaggregate" ), p, true );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toInt(), 2 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toInt(), 1 );
}

void TestAlgorithms::geographicCrs()
{
  // The grid in degrees near (0.5, 0.5): the UTM zone of the centre (lon 1.5) is 31N, EPSG:32631.
  auto regions = grid( QStringLiteral( "EPSG:4326" ) );
  auto recs = records( nineAndOne() );
  QVariantMap p = baseParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 3 );
  p.insert( QStringLiteral( "K" ), 2 );
  Feedback feedback;
  const QVariantMap r = run( QStringLiteral( "vbas:anonymize" ), p, true, &feedback );
  QVERIFY2( feedback.saw( QStringLiteral( "distances are computed in EPSG:32631" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  // Sites and aggregates come back in the layer's CRS, inside the layer's extent.
  QgsVectorLayer *sites = output( r, QStringLiteral( "SITE_POINTS" ) );
  QCOMPARE( sites->crs().authid(), QStringLiteral( "EPSG:4326" ) );
  QVERIFY( QgsRectangle( 0, 0, 3, 3 ).contains( sites->extent() ) );
  // Compactness is in metres: the nine regions lie about 1 degree (~111 km) or less from their sites.
  QVERIFY( r.value( QStringLiteral( "COMPACTNESS" ) ).toDouble() > 100000 );
}

void TestAlgorithms::invalidPolygonRepaired()
{
  auto regions = grid();
  // A bow-tie (self-intersecting) polygon for r00.
  QgsFeature f;
  regions->getFeatures().nextFeature( f );
  regions->dataProvider()->changeGeometryValues( { { f.id(), QgsGeometry::fromWkt( QStringLiteral( "POLYGON((0 0, 1 1, 1 0, 0 1, 0 0))" ) ) } } );
  auto recs = records( nineAndOne() );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "K" ), 3 );
  Feedback feedback;
  run( QStringLiteral( "vbas:voronoiaggregate" ), p, true, &feedback );
  QVERIFY2( feedback.saw( QStringLiteral( "1 invalid region polygon(s) repaired" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
}

void TestAlgorithms::missingQiField()
{
  auto regions = grid();
  auto recs = records( nineAndOne() );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ), QStringLiteral( "nosuchfield" ) } );
  Feedback feedback;
  run( QStringLiteral( "vbas:voronoiaggregate" ), p, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "nosuchfield" ) ), qPrintable( feedback.errors.join( ' ' ) ) );

  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ) } );
  p.insert( QStringLiteral( "RECORD_REGION" ), QStringLiteral( "nosuchregion" ) );
  Feedback regionFeedback;
  run( QStringLiteral( "vbas:voronoiaggregate" ), p, false, &regionFeedback );
  QVERIFY( regionFeedback.errors.join( ' ' ).contains( QStringLiteral( "nosuchregion" ) ) );
}

void TestAlgorithms::duplicateRegionIds()
{
  auto regions = grid();
  QgsFeature f;
  QgsFeatureIterator it = regions->getFeatures();
  it.nextFeature( f );
  it.nextFeature( f ); // r01 becomes a second r00
  regions->dataProvider()->changeAttributeValues( { { f.id(), { { 0, QStringLiteral( "r00" ) } } } } );
  auto recs = records( nineAndOne() );
  Feedback feedback;
  run( QStringLiteral( "vbas:estimatesitecount" ), baseParameters( regions.get(), recs.get() ), false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "'r00' appears more than once" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
}

void TestAlgorithms::unknownRecordRegions()
{
  auto regions = grid();
  QList<Row> rows = nineAndOne();
  rows << Row { QStringLiteral( "nowhere" ), QStringLiteral( "F" ) } << Row { QStringLiteral( "nowhere" ), QStringLiteral( "M" ) } << Row { QVariant(), QStringLiteral( "F" ) };
  auto recs = records( rows );
  Feedback feedback;
  run( QStringLiteral( "vbas:estimatesitecount" ), baseParameters( regions.get(), recs.get() ), false, &feedback );
  const QString error = feedback.errors.join( ' ' );
  QVERIFY2( error.contains( QStringLiteral( "3 record(s)" ) ) && error.contains( QStringLiteral( "'nowhere'" ) ) && error.contains( QStringLiteral( "NULL" ) ), qPrintable( error ) );
  QVERIFY2( !error.contains( QStringLiteral( "holds these ids" ) ), qPrintable( error ) ); // no field of the regions does
}

void TestAlgorithms::regionIdFieldMistaken()
{
  // REGION_ID naming a field that is not the one the records refer to (the dialog's first field, such
  // as a GeoPackage's fid): refused, naming the field that holds the records' region ids.
  auto regions = grid();
  QVERIFY( regions->dataProvider()->addAttributes( { QgsField( QStringLiteral( "fid" ), QVariant::Int ) } ) );
  regions->updateFields();
  QgsChangedAttributesMap numbers;
  for ( const QgsFeatureId id : regions->allFeatureIds() )
    numbers[id].insert( 2, static_cast<int>( id ) );
  QVERIFY( regions->dataProvider()->changeAttributeValues( numbers ) );
  auto recs = records( nineAndOne() );
  QVariantMap parameters = baseParameters( regions.get(), recs.get() );
  parameters.insert( QStringLiteral( "REGION_ID" ), QStringLiteral( "fid" ) );
  Feedback feedback;
  run( QStringLiteral( "vbas:estimatesitecount" ), parameters, false, &feedback );
  const QString error = feedback.errors.join( ' ' );
  QVERIFY2( error.contains( QStringLiteral( "not in the regions layer's 'fid'" ) )
              && error.contains( QStringLiteral( "The regions' field 'id' holds these ids: choose it as the region id field (REGION_ID)." ) ),
            qPrintable( error ) );
}

void TestAlgorithms::kBelowTwo()
{
  auto regions = grid();
  auto recs = records( nineAndOne() );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "K" ), 1 );
  QString message;
  const QgsProcessingAlgorithm *alg = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:voronoiaggregate" ) );
  QVERIFY( !alg->checkParameterValues( p, mContext, &message ) );
  QVERIFY2( message.contains( QStringLiteral( "K" ) ), qPrintable( message ) );
}

void TestAlgorithms::siteCountOutOfRange()
{
  auto regions = grid();
  auto recs = records( nineAndOne() );
  QVariantMap p = baseParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "SITES" ), 10 );
  Feedback feedback;
  run( QStringLiteral( "vbas:placesites" ), p, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "must be between 1 and the number of regions, 9" ) ), qPrintable( feedback.errors.join( ' ' ) ) );

  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 12 );
  Feedback fixed;
  run( QStringLiteral( "vbas:anonymize" ), p, false, &fixed );
  QVERIFY2( fixed.errors.join( ' ' ).contains( QStringLiteral( "FIXED_SITES = 12" ) ), qPrintable( fixed.errors.join( ' ' ) ) );
}

void TestAlgorithms::emptyLayers()
{
  auto regions = grid();
  auto noRecords = records( {} );
  Feedback feedback;
  run( QStringLiteral( "vbas:estimatesitecount" ), baseParameters( regions.get(), noRecords.get() ), false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "records table is empty" ) ), qPrintable( feedback.errors.join( ' ' ) ) );

  QgsVectorLayer noRegions( QStringLiteral( "Polygon?crs=EPSG:32618&field=id:string" ), QStringLiteral( "empty" ), QStringLiteral( "memory" ) );
  auto recs = records( nineAndOne() );
  Feedback regionFeedback;
  run( QStringLiteral( "vbas:estimatesitecount" ), baseParameters( &noRegions, recs.get() ), false, &regionFeedback );
  QVERIFY2( regionFeedback.errors.join( ' ' ).contains( QStringLiteral( "regions layer is empty" ) ), qPrintable( regionFeedback.errors.join( ' ' ) ) );
}

void TestAlgorithms::canceled()
{
  auto regions = grid();
  auto recs = records( nineAndOne() );
  QVariantMap p = baseParameters( regions.get(), recs.get() );
  Feedback feedback;
  feedback.cancel();
  const QVariantMap r = run( QStringLiteral( "vbas:anonymize" ), p, false, &feedback );
  QVERIFY( r.isEmpty() );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "Canceled" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
}

void TestAlgorithms::canceledReleaseIsDeleted()
{
  // Cancel once the run is past 80 %: inside the pass that writes the anonymized records (the
  // first cancel check after row 4096 of 10000). The partial file could hold ECs below k: it must go.
  auto regions = grid();
  QList<Row> rows;
  for ( int i = 0; i < 10000; ++i )
    rows << Row { QStringLiteral( "r%1%2" ).arg( i % 3 ).arg( ( i / 3 ) % 3 ), i % 2 ? QStringLiteral( "F" ) : QStringLiteral( "M" ) };
  auto recs = records( rows );
  QVariantMap p = aggregationParameters( regions.get(), recs.get() );
  const QString path = mDir.filePath( QStringLiteral( "partial.gpkg" ) );
  p.insert( QStringLiteral( "ANONYMIZED" ), path );
  Feedback feedback;
  QObject::connect( &feedback, &QgsFeedback::progressChanged, &feedback, [&feedback]( double progress ) {
    if ( progress > 80 )
      feedback.cancel();
  } );
  run( QStringLiteral( "vbas:voronoiaggregate" ), p, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "Canceled" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
  QVERIFY( !QFile::exists( path ) );
  QCOMPARE( QDir( mDir.path() ).entryList( QDir::Files | QDir::Hidden ), QStringList() ); // no temporary either

  // Without a cancel the same run writes the whole release there.
  Feedback complete;
  run( QStringLiteral( "vbas:voronoiaggregate" ), p, true, &complete );
  QVERIFY( QFile::exists( path ) );
}

QTEST_MAIN( TestAlgorithms )
#include "test_algorithms.moc"
