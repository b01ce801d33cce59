// What leaves with the release (docs/outputs.md), each run through
// QgsProcessingAlgorithm::run on a table sorted by region, as an outside attack used them:
// - the order: SEED printed in the report once gave the release's order, and a table sorted by region
//   then located its rows. The order is now fresh at every run, whatever the seed;
// - the fields: every column but the QIs once went out by default, a second location column (a copy of
//   the region id) included. Now only the QIs, the sensitive and the count field go out unless named,
//   and a named field that follows the regions or is (nearly) unique is refused unless it is a QI.
#include "tests/plugin/qgis_test_util.h"

#include "algorithms/base/random.h"

#include <QTemporaryDir>

#include <cmath>
#include <numeric>

using vbastest::entries;
using vbastest::Feedback;

namespace
{

constexpr int kPerRegion = 20;

/**
 * kPerRegion rows in each of the grid's nine regions, in region order: patient (1, 2, ... unique),
 * region, area (a copy of region), county (the grid column of the region), sex, n (1), diagnosis and
 * ward (three values in every region).
 */
std::unique_ptr<QgsVectorLayer> sortedByRegion()
{
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      for ( int i = 0; i < kPerRegion; ++i )
      {
        const QString region = QStringLiteral( "r%1%2" ).arg( c ).arg( r );
        rows << QVariantList { rows.size() + 1, region, region, QStringLiteral( "c%1" ).arg( c ), i % 2 ? "M" : "F", 1, i % 4 ? "flu" : "cold", QStringLiteral( "w%1" ).arg( i % 3 ) };
      }
  return vbastest::table( QStringLiteral( "field=patient:integer&field=region:string&field=area:string&field=county:string&field=sex:string&field=n:integer"
                                          "&field=diagnosis:string&field=ward:string" ),
                          rows );
}

QStringList fieldNames( const QVariantMap &results, QgsProcessingContext &context )
{
  return vbastest::output( results, QStringLiteral( "ANONYMIZED" ), context )->fields().names();
}

//! The released rows' values of fields, in output order.
QStringList releasedRows( const QVariantMap &results, const QStringList &fields, QgsProcessingContext &context )
{
  QStringList rows;
  QgsFeature f;
  QgsFeatureIterator it = vbastest::output( results, QStringLiteral( "ANONYMIZED" ), context )->getFeatures();
  while ( it.nextFeature( f ) )
  {
    QStringList values;
    for ( const QString &field : fields )
      values << f.attribute( field ).toString();
    rows << values.join( QLatin1Char( '|' ) );
  }
  return rows;
}

double pearson( const std::vector<double> &a, const std::vector<double> &b )
{
  const double n = static_cast<double>( a.size() );
  const double ma = std::accumulate( a.begin(), a.end(), 0.0 ) / n, mb = std::accumulate( b.begin(), b.end(), 0.0 ) / n;
  double sab = 0, saa = 0, sbb = 0;
  for ( std::size_t i = 0; i < a.size(); ++i )
  {
    sab += ( a[i] - ma ) * ( b[i] - mb );
    saa += ( a[i] - ma ) * ( a[i] - ma );
    sbb += ( b[i] - mb ) * ( b[i] - mb );
  }
  return sab / std::sqrt( saa * sbb );
}

} // namespace

class TestReleaseFields : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();

    // The order.
    void orderIsFreshWhateverTheSeed();
    void orderDoesNotFollowTheInput();
    // The fields.
    void defaultReleasesOnlyTheRoles();
    void revealingNamedFieldIsRefused_data();
    void revealingNamedFieldIsRefused();
    void revealingFieldDeclaredQiIsAccepted();
    void ordinaryNamedFieldIsReleased();

  private:
    //! vbas:anonymize on the grid with one aggregate: QIs qis, the sensitive field diagnosis, the count field n, k = 2.
    QVariantMap parameters( const QStringList &qis = { QStringLiteral( "sex" ) } ) const;

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mGrid;
    std::unique_ptr<QgsVectorLayer> mRecords;
};

void TestReleaseFields::initTestCase()
{
  vbastest::initQgisWithProvider();
  mGrid = vbastest::grid();
  mRecords = sortedByRegion();
}

QVariantMap TestReleaseFields::parameters( const QStringList &qis ) const
{
  QVariantMap p = vbastest::gridParameters( mGrid.get(), mRecords.get() );
  p.insert( QStringLiteral( "QI_FIELDS" ), qis );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diagnosis" ) );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 1 );
  p.insert( QStringLiteral( "K" ), 2 );
  return p;
}

// ---------------------------------------------------------------------------------------------
// The order. Before, the order was the seeded shuffle of the rows as read: with SEED (printed in the
// report) and the table sorted by region, each released row's region was known.

void TestReleaseFields::orderIsFreshWhateverTheSeed()
{
  // area is declared a QI so that each released row shows its region: every (area, sex) class holds 10.
  QVariantMap p = parameters( { QStringLiteral( "area" ), QStringLiteral( "sex" ) } );
  p.insert( QStringLiteral( "SEED" ), 12345 );
  const QVariantMap first = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  const QVariantMap second = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( first.value( QStringLiteral( "SEED" ) ).toDouble(), 12345.0 ); // the output stays: the seed of ADC's choices
  const QStringList fields = { QStringLiteral( "area" ), QStringLiteral( "sex" ), QStringLiteral( "diagnosis" ), QStringLiteral( "aggregate_id" ) };
  const QStringList a = releasedRows( first, fields, mContext ), b = releasedRows( second, fields, mContext );
  QCOMPARE( a.size(), 9 * kPerRegion );
  // The same content, in another order.
  QStringList sortedA = a, sortedB = b;
  sortedA.sort();
  sortedB.sort();
  QCOMPARE( sortedA, sortedB );
  QVERIFY2( a != b, "the same SEED gave the same order twice" );
  // Neither run is the seeded shuffle of old: Fisher-Yates of the rows as read, drawn from SEED.
  std::vector<int> order( static_cast<std::size_t>( a.size() ) );
  std::iota( order.begin(), order.end(), 0 );
  vbas::Random( 12345 ).shuffle( order.begin(), order.end() );
  QStringList seeded;
  for ( const int row : order )
    seeded << QStringLiteral( "r%1%2" ).arg( row / kPerRegion / 3 ).arg( row / kPerRegion % 3 );
  QStringList areasA, areasB;
  for ( int i = 0; i < a.size(); ++i )
  {
    areasA << a[i].section( QLatin1Char( '|' ), 0, 0 );
    areasB << b[i].section( QLatin1Char( '|' ), 0, 0 );
  }
  QVERIFY2( areasA != seeded && areasB != seeded, "the release is in the order SEED draws" );
}

void TestReleaseFields::orderDoesNotFollowTheInput()
{
  // Once the release kept the input order: rank correlation 1 with the region.
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), parameters( { QStringLiteral( "area" ), QStringLiteral( "sex" ) } ), mContext, true );
  std::vector<double> position, region;
  QgsFeature f;
  QgsFeatureIterator it = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext )->getFeatures();
  while ( it.nextFeature( f ) )
  {
    QCOMPARE( f.id(), static_cast<QgsFeatureId>( position.size() + 1 ) ); // fresh ids, in output order
    position.push_back( static_cast<double>( position.size() ) );
    region.push_back( f.attribute( QStringLiteral( "area" ) ).toString().mid( 1 ).toInt() ); // r00 .. r22 in input order
  }
  QCOMPARE( position.size(), std::size_t( 9 * kPerRegion ) );
  const double rho = pearson( position, region );
  QVERIFY2( std::fabs( rho ) < 0.3, qPrintable( QStringLiteral( "correlation of output position and region: %1" ).arg( rho ) ) );
}

// ---------------------------------------------------------------------------------------------
// The fields. Before, the default released every column but the region id: the copy of the region
// (area), its county and the patient id went out, with a warning for the patient id only.

void TestReleaseFields::defaultReleasesOnlyTheRoles()
{
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), parameters(), mContext, true, &feedback );
  const QStringList expected = { "sex", "n", "diagnosis", "aggregate_id" };
  QCOMPARE( fieldNames( r, mContext ), expected );
  QVERIFY2( feedback.saw( QStringLiteral( "The release holds the fields sex, n, diagnosis, aggregate_id" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  QVERIFY2( !feedback.saw( QStringLiteral( "random order drawn from seed" ) ), qPrintable( feedback.messages.join( '\n' ) ) );

  // The same in Voronoi aggregation, which has no sensitive field.
  QVariantMap p = vbastest::gridParameters( mGrid.get(), mRecords.get() );
  auto sites = vbastest::twoSites();
  p.insert( QStringLiteral( "SITES" ), vbastest::layerValue( sites.get() ) );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "K" ), 2 );
  const QVariantMap v = vbastest::run( QStringLiteral( "vbas:voronoiaggregate" ), p, mContext, true );
  QCOMPARE( fieldNames( v, mContext ), QStringList( { "sex", "n", "aggregate_id" } ) );
}

void TestReleaseFields::revealingNamedFieldIsRefused_data()
{
  QTest::addColumn<QString>( "field" );
  QTest::addColumn<QString>( "reason" );
  QTest::newRow( "copy of the region id" ) << "area"
                                           << "'area' carries finer geography than the release";
  QTest::newRow( "county, two in the aggregate" ) << "county"
                                                  << "'county' carries finer geography than the release";
  QTest::newRow( "patient id" ) << "patient"
                                << "'patient' is (nearly) unique per record";
}

void TestReleaseFields::revealingNamedFieldIsRefused()
{
  QFETCH( QString, field );
  QFETCH( QString, reason );
  QTemporaryDir dir;
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "ward" ), field } );
  for ( const char *sink : { "SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI" } )
    p.insert( sink, dir.filePath( QStringLiteral( "%1.gpkg" ).arg( QString( sink ).toLower() ) ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( reason ) && feedback.error().contains( QStringLiteral( "QI_FIELDS" ) ), qPrintable( feedback.error() ) );
  QVERIFY2( !feedback.error().contains( QStringLiteral( "'ward'" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( entries( dir.path() ), QStringList() ); // nothing written
}

void TestReleaseFields::revealingFieldDeclaredQiIsAccepted()
{
  // A QI: every (aggregate, area, sex) class of k or more goes out, covered by k-anonymity.
  QVariantMap p = parameters( { QStringLiteral( "area" ), QStringLiteral( "sex" ) } );
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "area" ) } );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( fieldNames( r, mContext ), QStringList( { "area", "sex", "n", "diagnosis", "aggregate_id" } ) );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 9LL * kPerRegion );
}

void TestReleaseFields::ordinaryNamedFieldIsReleased()
{
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "ward" ) } );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
  QCOMPARE( fieldNames( r, mContext ), QStringList( { "sex", "n", "diagnosis", "ward", "aggregate_id" } ) );
  QVERIFY2( feedback.saw( QStringLiteral( "The release holds the fields sex, n, diagnosis, ward, aggregate_id" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  QVERIFY( feedback.warnings.isEmpty() );
}

QTEST_MAIN( TestReleaseFields )
#include "test_release_fields.moc"
