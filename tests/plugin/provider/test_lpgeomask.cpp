// vbas:lpgeomask through QgsProcessingAlgorithm::run (issue 8 item 2): every result is checked to be
// within epsilon by the test's own recount from the TRANSITIONS table it wrote; the randomised table
// holds no original code; the same seed repeats the draws; an infeasible epsilon, bad inputs and
// outputs over inputs are refused with nothing written.
#include "qgis_test_util.h"

#include <QTemporaryDir>
#include <cmath>
#include <map>

using vbastest::layerValue;

namespace
{

//! Codes c0, c1, c2, ... at (i, 0) of a projected CRS with the given populations.
std::unique_ptr<QgsVectorLayer> codes( const QList<double> &population )
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "Point?crs=EPSG:32618&field=code:string&field=pop:double&field=ed:integer" ), QStringLiteral( "codes" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( int i = 0; i < population.size(); ++i )
  {
    QgsFeature f( layer->fields() );
    f.setAttributes( QgsAttributes() << QStringLiteral( "c%1" ).arg( i ) << population[i] << ( i == 0 ? 3 : 0 ) );
    f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( i, 0 ) ) );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! Patients p1.. with the given codes and a private field.
std::unique_ptr<QgsVectorLayer> patients( const QStringList &codes )
{
  QList<QVariantList> rows;
  int id = 0;
  for ( const QString &code : codes )
    rows << QVariantList { ++id, code, QStringLiteral( "x" ) };
  return vbastest::table( QStringLiteral( "field=patient:integer&field=pcode:string&field=note:string" ), rows );
}

struct Transitions
{
    std::map<QString, std::map<QString, double>> p; //!< from -> to -> probability
};

Transitions readTransitions( QgsVectorLayer *layer )
{
  Transitions t;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
    t.p[f.attribute( QStringLiteral( "from_code" ) ).toString()][f.attribute( QStringLiteral( "to_code" ) ).toString()] += f.attribute( QStringLiteral( "probability" ) ).toDouble();
  return t;
}

/**
 * The test's own check of SPEC 4 on the written transitions: every row sums to 1, and for every
 * pair c_i P_ij / sum_k n_k P_kj <= epsilon (c_i = min(s, n_i), Revised-LP). Returns the largest.
 */
double recountReidentification( const Transitions &t, const std::map<QString, double> &population, double s, double epsilon )
{
  std::map<QString, double> inflow; // Q_j
  for ( const auto &[from, row] : t.p )
  {
    double sum = 0;
    for ( const auto &[to, p] : row )
    {
      sum += p;
      inflow[to] += population.at( from ) * p;
    }
    [&] { QVERIFY2( std::fabs( sum - 1 ) < 1e-6, qPrintable( QStringLiteral( "row %1 sums to %2" ).arg( from ).arg( sum ) ) ); }();
  }
  double largest = 0;
  for ( const auto &[from, row] : t.p )
    for ( const auto &[to, p] : row )
      largest = std::max( largest, std::min( s, population.at( from ) ) * p / inflow[to] );
  [&] { QVERIFY2( largest <= epsilon + 1e-9, qPrintable( QStringLiteral( "re-identification %1 > %2" ).arg( largest ).arg( epsilon ) ) ); }();
  return largest;
}

QStringList column( QgsVectorLayer *layer, const QString &name )
{
  QStringList values;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
    values << f.attribute( name ).toString();
  return values;
}

} // namespace

class TestLpGeomask : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
    void cleanupTestCase() { QgsApplication::exitQgis(); }
    void smallInstanceWithinEpsilon();
    void sampleLayersWithinEpsilonAndRepeatable();
    void patientCountField();
    void infeasibleSaysWhatToTry();
    void badInputRefused_data();
    void badInputRefused();
    void outputOverInputRefused();

  private:
    QVariantMap parameters( QgsVectorLayer *codesLayer, QgsVectorLayer *patientsLayer ) const;
    QTemporaryDir mDir;
};

QVariantMap TestLpGeomask::parameters( QgsVectorLayer *codesLayer, QgsVectorLayer *patientsLayer ) const
{
  return { { QStringLiteral( "CODES" ), layerValue( codesLayer ) }, { QStringLiteral( "CODE_FIELD" ), QStringLiteral( "code" ) }, { QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) },
           { QStringLiteral( "PATIENTS" ), layerValue( patientsLayer ) }, { QStringLiteral( "PATIENT_CODE_FIELD" ), QStringLiteral( "pcode" ) }, { QStringLiteral( "EPSILON" ), 0.5 },
           { QStringLiteral( "NEIGHBOURS" ), 3 }, { QStringLiteral( "SEED" ), 7 }, { QStringLiteral( "RANDOMISED" ), QgsProcessing::TEMPORARY_OUTPUT },
           { QStringLiteral( "TRANSITIONS" ), QgsProcessing::TEMPORARY_OUTPUT } };
}

void TestLpGeomask::smallInstanceWithinEpsilon()
{
  // Four codes of 1, 1, 2 and 10 people; three patients from c0 and c1: c_i = min(3, n_i).
  auto c = codes( { 1, 1, 2, 10 } );
  auto p = patients( { QStringLiteral( "c0" ), QStringLiteral( "c0" ), QStringLiteral( "c1" ) } );
  QgsProcessingContext context;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), parameters( c.get(), p.get() ), context, true );
  QCOMPARE( r.value( QStringLiteral( "STATUS" ) ).toString(), QStringLiteral( "optimal" ) );
  QCOMPARE( r.value( QStringLiteral( "PATIENTS" ) ).toInt(), 3 );
  const double largest = recountReidentification( readTransitions( vbastest::output( r, QStringLiteral( "TRANSITIONS" ), context ) ), { { "c0", 1 }, { "c1", 1 }, { "c2", 2 }, { "c3", 10 } }, 3, 0.5 );
  QVERIFY( std::fabs( largest - r.value( QStringLiteral( "MAX_REIDENTIFICATION" ) ).toDouble() ) < 1e-9 );
  // The randomised table: the patients' other fields, new_code, no original code; every new code is a code.
  QgsVectorLayer *randomised = vbastest::output( r, QStringLiteral( "RANDOMISED" ), context );
  QCOMPARE( randomised->fields().names(), QStringList( { "patient", "note", "new_code" } ) );
  for ( const QString &code : column( randomised, QStringLiteral( "new_code" ) ) )
    QVERIFY( QStringList( { "c0", "c1", "c2", "c3" } ).contains( code ) );
  QVERIFY( r.value( QStringLiteral( "OBJECTIVE" ) ).toDouble() > 0 ); // a code of 1 person cannot keep its patients
}

void TestLpGeomask::sampleLayersWithinEpsilonAndRepeatable()
{
  auto tracts = std::make_unique<QgsVectorLayer>( QStringLiteral( VBAS_SAMPLE_DIR "/ny8_tracts.gpkg" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  auto ed = std::make_unique<QgsVectorLayer>( QStringLiteral( VBAS_SAMPLE_DIR "/ed_patients.gpkg" ), QStringLiteral( "ed" ), QStringLiteral( "ogr" ) );
  QVERIFY( tracts->isValid() && ed->isValid() );
  QVariantMap p = parameters( tracts.get(), ed.get() );
  p.insert( QStringLiteral( "CODE_FIELD" ), QStringLiteral( "AREAKEY" ) );
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "POP8" ) );
  p.insert( QStringLiteral( "PATIENT_CODE_FIELD" ), QStringLiteral( "tract_id" ) );
  p.insert( QStringLiteral( "EPSILON" ), 0.2 );
  p.insert( QStringLiteral( "NEIGHBOURS" ), 30 );
  std::map<QString, double> population;
  QgsFeature f;
  QgsFeatureIterator it = tracts->getFeatures();
  while ( it.nextFeature( f ) )
    population[f.attribute( QStringLiteral( "AREAKEY" ) ).toString()] = f.attribute( QStringLiteral( "POP8" ) ).toDouble();
  QStringList previous;
  for ( const int solver : { 1, 2, 1 } ) // column generation, direct, column generation again
  {
    p.insert( QStringLiteral( "SOLVER" ), solver );
    QgsProcessingContext context;
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, true );
    recountReidentification( readTransitions( vbastest::output( r, QStringLiteral( "TRANSITIONS" ), context ) ), population, 224, 0.2 );
    QgsVectorLayer *randomised = vbastest::output( r, QStringLiteral( "RANDOMISED" ), context );
    QCOMPARE( randomised->featureCount(), 224LL );
    QVERIFY( !randomised->fields().names().contains( QStringLiteral( "tract_id" ) ) && !randomised->fields().names().contains( QStringLiteral( "patient_id" ) ) );
    const QStringList rows = column( randomised, QStringLiteral( "new_code" ) ) + column( randomised, QStringLiteral( "age_group" ) );
    if ( solver == 1 && !previous.isEmpty() )
      QCOMPARE( rows, previous ); // the same seed, the same draws and order
    previous = solver == 1 ? rows : previous;
  }
}

void TestLpGeomask::patientCountField()
{
  // Three patients of c0 given as a count on the codes layer: the randomised table has 3 rows of new_code only.
  auto c = codes( { 1, 1, 2, 10 } );
  QVariantMap p = parameters( c.get(), nullptr );
  p.remove( QStringLiteral( "PATIENTS" ) );
  p.remove( QStringLiteral( "PATIENT_CODE_FIELD" ) );
  p.insert( QStringLiteral( "PATIENT_COUNT_FIELD" ), QStringLiteral( "ed" ) );
  QgsProcessingContext context;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, true );
  QgsVectorLayer *randomised = vbastest::output( r, QStringLiteral( "RANDOMISED" ), context );
  QCOMPARE( randomised->fields().names(), QStringList( { "new_code" } ) );
  QCOMPARE( randomised->featureCount(), 3LL );
  recountReidentification( readTransitions( vbastest::output( r, QStringLiteral( "TRANSITIONS" ), context ) ), { { "c0", 1 }, { "c1", 1 }, { "c2", 2 }, { "c3", 10 } }, 3, 0.5 );
}

void TestLpGeomask::infeasibleSaysWhatToTry()
{
  // m = 1: every code keeps its patients; a code of 1 person with 3 patients is re-identified with
  // probability min(3, 1) * 1 / 1 = 1 > 0.5. The quick proof names c0: a = 0.5 * 1 / min(3, 1) = 0.5, so it
  // needs 1 * (1 - 0.5) / 0.5 = 1 person from other codes at its only destination, itself, which no one else reaches.
  auto c = codes( { 1, 1, 2, 10 } );
  auto pts = patients( { QStringLiteral( "c0" ), QStringLiteral( "c0" ), QStringLiteral( "c1" ) } );
  QVariantMap p = parameters( c.get(), pts.get() );
  p.insert( QStringLiteral( "NEIGHBOURS" ), 1 );
  const QString randomised = mDir.filePath( QStringLiteral( "infeasible.gpkg" ) );
  p.insert( QStringLiteral( "RANDOMISED" ), randomised );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
  const QString message = feedback.errors.join( ' ' );
  QVERIFY2( message.contains( QStringLiteral( "EPSILON" ) ) && message.contains( QStringLiteral( "NEIGHBOURS" ) ), qPrintable( message ) );
  QVERIFY2( message.contains( QStringLiteral( "Code c0 (population 1) cannot be hidden: the other codes that may move to its destinations hold 0 people" ) ) && message.contains( QStringLiteral( "needs at least 1." ) ), qPrintable( message ) );
  QVERIFY( !QFile::exists( randomised ) );
}

void TestLpGeomask::badInputRefused_data()
{
  QTest::addColumn<QString>( "what" );
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "duplicate code" ) << "duplicate" << "more than once";
  QTest::newRow( "NULL code" ) << "null code" << "not a code";
  QTest::newRow( "zero population" ) << "zero population" << "above 0";
  QTest::newRow( "unknown patient code" ) << "unknown" << "not a code of the codes layer";
  QTest::newRow( "epsilon 0" ) << "epsilon 0" << "EPSILON";
  QTest::newRow( "epsilon 1.5" ) << "epsilon 1.5" << "EPSILON";
  QTest::newRow( "m 0" ) << "m 0" << "NEIGHBOURS";
  QTest::newRow( "patients and counts" ) << "both" << "not both";
}

void TestLpGeomask::badInputRefused()
{
  QFETCH( QString, what );
  QFETCH( QString, message );
  auto c = codes( { 1, 1, 2, 10 } );
  auto pts = patients( { QStringLiteral( "c0" ), what == QLatin1String( "unknown" ) ? QStringLiteral( "c9" ) : QStringLiteral( "c1" ) } );
  c->startEditing();
  if ( what == QLatin1String( "duplicate" ) || what == QLatin1String( "null code" ) )
    c->changeAttributeValue( 2, 0, what == QLatin1String( "duplicate" ) ? QVariant( QStringLiteral( "c0" ) ) : QVariant() );
  if ( what == QLatin1String( "zero population" ) )
    c->changeAttributeValue( 3, 1, 0.0 );
  c->commitChanges();
  QVariantMap p = parameters( c.get(), pts.get() );
  if ( what.startsWith( QLatin1String( "epsilon" ) ) )
    p.insert( QStringLiteral( "EPSILON" ), what.mid( 8 ).toDouble() );
  if ( what == QLatin1String( "m 0" ) )
    p.insert( QStringLiteral( "NEIGHBOURS" ), 0 );
  if ( what == QLatin1String( "both" ) )
    p.insert( QStringLiteral( "PATIENT_COUNT_FIELD" ), QStringLiteral( "ed" ) );
  const QString randomised = mDir.filePath( QStringLiteral( "bad.gpkg" ) );
  p.insert( QStringLiteral( "RANDOMISED" ), randomised );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( message ), qPrintable( feedback.errors.join( ' ' ) ) );
  QVERIFY( !QFile::exists( randomised ) );
}

void TestLpGeomask::outputOverInputRefused()
{
  // The patients in a GeoPackage; RANDOMISED pointed at it is refused and the file is untouched.
  auto pts = patients( { QStringLiteral( "c0" ), QStringLiteral( "c1" ) } );
  const QString path = mDir.filePath( QStringLiteral( "patients.gpkg" ) );
  vbastest::save( pts.get(), path, QStringLiteral( "patients" ) );
  auto saved = std::make_unique<QgsVectorLayer>( path + QStringLiteral( "|layername=patients" ), QStringLiteral( "saved" ), QStringLiteral( "ogr" ) );
  auto c = codes( { 1, 1, 2, 10 } );
  QVariantMap p = parameters( c.get(), saved.get() );
  p.insert( QStringLiteral( "RANDOMISED" ), path );
  const QByteArray before = [&] { QFile f( path ); f.open( QIODevice::ReadOnly ); return f.readAll(); }();
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "overwrite the input" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
  QFile after( path );
  QVERIFY( after.open( QIODevice::ReadOnly ) );
  QCOMPARE( after.readAll(), before );
}

QTEST_MAIN( TestLpGeomask )
#include "test_lpgeomask.moc"
