// vbas:lpgeomask through QgsProcessingAlgorithm::run: every result is checked
// to be within epsilon by the test's own recount from the TRANSITIONS table it wrote, populations from 1
// to 1e15 included; the randomised table holds no original code and only the fields named; the same seed
// repeats the draws but not the order, and no seed is ever reported; an infeasible epsilon, bad inputs,
// fields that would tell the original code and outputs over inputs are refused with nothing written.
#include "tests/plugin/qgis_test_util.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

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
 * The test's own check of the LP's constraints on the written transitions: every row sums to 1, and for every
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
  [&] { QVERIFY2( largest <= epsilon, qPrintable( QStringLiteral( "re-identification %1 > %2" ).arg( largest, 0, 'g', 17 ).arg( epsilon ) ) ); }();
  return largest;
}

//! The recount equals MAX_REIDENTIFICATION (to the round-off of summing in another order).
void compareBound( double recounted, const QVariantMap &results )
{
  const double reported = results.value( QStringLiteral( "MAX_REIDENTIFICATION" ) ).toDouble();
  QVERIFY2( std::fabs( recounted - reported ) <= 1e-12 * reported, qPrintable( QStringLiteral( "recounted %1, reported %2" ).arg( recounted, 0, 'g', 17 ).arg( reported, 0, 'g', 17 ) ) );
}

//! The rows of a layer as text, each its fields joined.
QStringList rowsOf( QgsVectorLayer *layer )
{
  QStringList rows;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
  {
    QStringList values;
    for ( const QVariant &value : f.attributes() )
      values << value.toString();
    rows << values.join( '|' );
  }
  return rows;
}

//! Whether any message or result holds text.
bool reported( const vbastest::Feedback &feedback, const QVariantMap &results, const QString &text )
{
  QStringList values;
  for ( const QVariant &value : results )
    values << value.toString();
  return feedback.saw( text ) || feedback.errors.join( ' ' ).contains( text ) || values.join( ' ' ).contains( text );
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
    void seedIsNeverReported();
    void releasedFields_data();
    void releasedFields();
    void extremePopulationsRecounted();
    void populationBelowPatients();
    void solversAgreeAtExtremePopulations();
    void smallestEpsilonIsTheTrueOne();
    void advisedEpsilonIsAccepted();

  private:
    QVariantMap parameters( QgsVectorLayer *codesLayer, QgsVectorLayer *patientsLayer ) const;
    QTemporaryDir mDir;
};

QVariantMap TestLpGeomask::parameters( QgsVectorLayer *codesLayer, QgsVectorLayer *patientsLayer ) const
{
  return { { QStringLiteral( "CODES" ), layerValue( codesLayer ) },
           { QStringLiteral( "CODE_FIELD" ), QStringLiteral( "code" ) },
           { QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) },
           { QStringLiteral( "PATIENTS" ), layerValue( patientsLayer ) },
           { QStringLiteral( "PATIENT_CODE_FIELD" ), QStringLiteral( "pcode" ) },
           { QStringLiteral( "EPSILON" ), 0.5 },
           { QStringLiteral( "NEIGHBOURS" ), 3 },
           { QStringLiteral( "SEED" ), 7 },
           { QStringLiteral( "RANDOMISED" ), QgsProcessing::TEMPORARY_OUTPUT },
           { QStringLiteral( "TRANSITIONS" ), QgsProcessing::TEMPORARY_OUTPUT } };
}

void TestLpGeomask::smallInstanceWithinEpsilon()
{
  // Four codes of 1, 1, 2 and 10 people; three patients from c0, c1 and c2: c_i = min(3, n_i).
  auto c = codes( { 1, 1, 2, 10 } );
  auto p = patients( { QStringLiteral( "c0" ), QStringLiteral( "c1" ), QStringLiteral( "c2" ) } );
  QgsProcessingContext context;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), parameters( c.get(), p.get() ), context, true );
  QCOMPARE( r.value( QStringLiteral( "STATUS" ) ).toString(), QStringLiteral( "optimal" ) );
  QCOMPARE( r.value( QStringLiteral( "PATIENTS" ) ).toInt(), 3 );
  const double largest = recountReidentification( readTransitions( vbastest::output( r, QStringLiteral( "TRANSITIONS" ), context ) ), { { "c0", 1 }, { "c1", 1 }, { "c2", 2 }, { "c3", 10 } }, 3, 0.5 );
  compareBound( largest, r );
  // The randomised table: new_code only by default, no original code, no other field; every new code is a code.
  QgsVectorLayer *randomised = vbastest::output( r, QStringLiteral( "RANDOMISED" ), context );
  QCOMPARE( randomised->fields().names(), QStringList( { "new_code" } ) );
  for ( const QString &code : column( randomised, QStringLiteral( "new_code" ) ) )
    QVERIFY( QStringList( { "c0", "c1", "c2", "c3" } ).contains( code ) );
  QVERIFY( r.value( QStringLiteral( "OBJECTIVE" ) ).toDouble() > 0 ); // a code of 1 person cannot keep its patients
}

void TestLpGeomask::sampleLayersWithinEpsilonAndRepeatable()
{
  auto tracts = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  auto ed = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ed_patients.gpkg" ), QStringLiteral( "ed" ), QStringLiteral( "ogr" ) );
  QVERIFY( tracts->isValid() && ed->isValid() );
  QVariantMap p = parameters( tracts.get(), ed.get() );
  p.insert( QStringLiteral( "CODE_FIELD" ), QStringLiteral( "AREAKEY" ) );
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "POP8" ) );
  p.insert( QStringLiteral( "PATIENT_CODE_FIELD" ), QStringLiteral( "tract_id" ) );
  p.insert( QStringLiteral( "EPSILON" ), 0.2 );
  p.insert( QStringLiteral( "NEIGHBOURS" ), 30 );
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList( { QStringLiteral( "age_group" ) } ) );
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
    compareBound( recountReidentification( readTransitions( vbastest::output( r, QStringLiteral( "TRANSITIONS" ), context ) ), population, 224, 0.2 ), r );
    QgsVectorLayer *randomised = vbastest::output( r, QStringLiteral( "RANDOMISED" ), context );
    QCOMPARE( randomised->featureCount(), 224LL );
    QCOMPARE( randomised->fields().names(), QStringList( { "age_group", "new_code" } ) ); // the field named, released
    const QStringList rows = rowsOf( randomised );
    if ( solver == 1 && !previous.isEmpty() )
    {
      QVERIFY( rows != previous ); // the order is never the seed's: 224 rows in the same order twice by chance is out of reach
      QStringList sorted = rows, sortedPrevious = previous;
      std::sort( sorted.begin(), sorted.end() );
      std::sort( sortedPrevious.begin(), sortedPrevious.end() );
      QCOMPARE( sorted, sortedPrevious ); // the same seed, the same draws
    }
    previous = solver == 1 ? rows : previous;
  }
}

void TestLpGeomask::patientCountField()
{
  // Three patients of c0 (3 people) given as a count on the codes layer: the randomised table has 3 rows of new_code only.
  auto c = codes( { 3, 1, 2, 10 } );
  QVariantMap p = parameters( c.get(), nullptr );
  p.remove( QStringLiteral( "PATIENTS" ) );
  p.remove( QStringLiteral( "PATIENT_CODE_FIELD" ) );
  p.insert( QStringLiteral( "PATIENT_COUNT_FIELD" ), QStringLiteral( "ed" ) );
  QgsProcessingContext context;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, true );
  QgsVectorLayer *randomised = vbastest::output( r, QStringLiteral( "RANDOMISED" ), context );
  QCOMPARE( randomised->fields().names(), QStringList( { "new_code" } ) );
  QCOMPARE( randomised->featureCount(), 3LL );
  recountReidentification( readTransitions( vbastest::output( r, QStringLiteral( "TRANSITIONS" ), context ) ), { { "c0", 3 }, { "c1", 1 }, { "c2", 2 }, { "c3", 10 } }, 3, 0.5 );
}

void TestLpGeomask::infeasibleSaysWhatToTry()
{
  // m = 1: every code keeps its patients; a code of 1 person with a patient is re-identified with
  // probability min(3, 1) * 1 / 1 = 1 > 0.5. The quick proof names c0: a = 0.5 * 1 / min(3, 1) = 0.5, so it
  // needs 1 * (1 - 0.5) / 0.5 = 1 person from other codes at its only destination, itself, which no one else reaches.
  auto c = codes( { 1, 1, 2, 10 } );
  auto pts = patients( { QStringLiteral( "c0" ), QStringLiteral( "c1" ), QStringLiteral( "c2" ) } );
  QVariantMap p = parameters( c.get(), pts.get() );
  p.insert( QStringLiteral( "NEIGHBOURS" ), 1 );
  const QString randomised = mDir.filePath( QStringLiteral( "infeasible.gpkg" ) );
  p.insert( QStringLiteral( "RANDOMISED" ), randomised );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
  const QString message = feedback.errors.join( ' ' );
  QVERIFY2( message.contains( QStringLiteral( "EPSILON" ) ) && message.contains( QStringLiteral( "NEIGHBOURS" ) ), qPrintable( message ) );
  QVERIFY2( message.contains( QStringLiteral( "Code c0 (population 1) cannot be hidden: the other codes that may move to its destinations hold 0 people" ) )
              && message.contains( QStringLiteral( "needs at least 1." ) ),
            qPrintable( message ) );
  QVERIFY( !QFile::exists( randomised ) );
}

void TestLpGeomask::badInputRefused_data()
{
  QTest::addColumn<QString>( "what" );
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "duplicate code" ) << "duplicate"
                                    << "more than once";
  QTest::newRow( "NULL code" ) << "null code"
                               << "not a code";
  QTest::newRow( "zero population" ) << "zero population"
                                     << "above 0";
  QTest::newRow( "unknown patient code" ) << "unknown"
                                          << "not a code of the codes layer";
  QTest::newRow( "epsilon 0" ) << "epsilon 0"
                               << "EPSILON";
  QTest::newRow( "epsilon 1.5" ) << "epsilon 1.5"
                                 << "EPSILON";
  QTest::newRow( "m 0" ) << "m 0"
                         << "NEIGHBOURS";
  QTest::newRow( "patients and counts" ) << "both"
                                         << "not both";
  QTest::newRow( "released fields without patients" ) << "fields without patients"
                                                      << "RELEASE_FIELDS";
  QTest::newRow( "transitions to a shapefile" ) << "shapefile"
                                                << "shapefile";
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
  if ( what == QLatin1String( "both" ) || what == QLatin1String( "fields without patients" ) )
    p.insert( QStringLiteral( "PATIENT_COUNT_FIELD" ), QStringLiteral( "ed" ) );
  if ( what == QLatin1String( "fields without patients" ) )
  {
    p.remove( QStringLiteral( "PATIENTS" ) );
    p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringLiteral( "note" ) );
  }
  if ( what == QLatin1String( "shapefile" ) )
    p.insert( QStringLiteral( "TRANSITIONS" ), mDir.filePath( QStringLiteral( "transitions.shp" ) ) );
  const QString randomised = mDir.filePath( QStringLiteral( "bad.gpkg" ) );
  p.insert( QStringLiteral( "RANDOMISED" ), randomised );
  const QString errors = vbastest::refusal( QStringLiteral( "vbas:lpgeomask" ), p );
  QVERIFY2( errors.contains( message ), qPrintable( errors ) );
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
  const QByteArray before = [&] {
    QFile f( path );
    f.open( QIODevice::ReadOnly );
    return f.readAll();
  }();
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
  QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "overwrite the input" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
  QFile after( path );
  QVERIFY( after.open( QIODevice::ReadOnly ) );
  QCOMPARE( after.readAll(), before );
}

void TestLpGeomask::seedIsNeverReported()
{
  // Without SEED the draws use a seed of the operating system, which no result and no message
  // gives; a SEED given is a secret too, and the log says who can undo the masking with it.
  auto c = codes( { 1, 1, 2, 10 } );
  auto pts = patients( { QStringLiteral( "c0" ), QStringLiteral( "c1" ), QStringLiteral( "c2" ) } );
  QVariantMap p = parameters( c.get(), pts.get() );
  p.remove( QStringLiteral( "SEED" ) );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, true, &feedback );
  QVERIFY( r.value( QStringLiteral( "SEED" ) ).isNull() );
  const QRegularExpression seedAndNumber( QStringLiteral( "seed\\D{0,20}\\d" ), QRegularExpression::CaseInsensitiveOption );
  for ( const QString &message : feedback.messages + feedback.warnings )
    QVERIFY2( !seedAndNumber.match( message ).hasMatch(), qPrintable( message ) );

  p.insert( QStringLiteral( "SEED" ), 987654321 );
  vbastest::Feedback given;
  const QVariantMap withSeed = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, true, &given );
  QVERIFY( !reported( given, withSeed, QStringLiteral( "987654321" ) ) && !reported( given, withSeed, QStringLiteral( "9.87654321" ) ) );
  QVERIFY2( given.warned( QStringLiteral( "can undo" ) ), qPrintable( given.warnings.join( '\n' ) ) );
}

void TestLpGeomask::releasedFields_data()
{
  QTest::addColumn<QStringList>( "named" );
  QTest::addColumn<QStringList>( "released" ); //!< the fields of RANDOMISED, or empty: refused
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "default: the new code only" ) << QStringList() << QStringList( { "new_code" } ) << QString();
  QTest::newRow( "an ordinary field" ) << QStringList( { "age" } ) << QStringList( { "age", "new_code" } ) << QString();
  QTest::newRow( "a copy of the code" ) << QStringList( { "age", "tract" } ) << QStringList() << "'tract' (RELEASE_FIELDS) cannot be released: it carries finer geography";
  QTest::newRow( "finer geography" ) << QStringList( { "street" } ) << QStringList() << "'street' (RELEASE_FIELDS) cannot be released: it carries finer geography";
  QTest::newRow( "coarser geography" ) << QStringList( { "district" } ) << QStringList() << "'district' (RELEASE_FIELDS) cannot be released: it follows the original code";
  QTest::newRow( "nearly unique" ) << QStringList( { "patient" } ) << QStringList() << "'patient' (RELEASE_FIELDS) cannot be released: it is (nearly) unique";
  QTest::newRow( "the code itself" ) << QStringList( { "pcode" } ) << QStringList() << "'pcode' (RELEASE_FIELDS) is the patients' code";
  QTest::newRow( "a missing field" ) << QStringList( { "nosuch" } ) << QStringList() << "no field 'nosuch' (RELEASE_FIELDS)";
}

void TestLpGeomask::releasedFields()
{
  // Only the fields named leave, and none that tells the original code. 24 patients, patient k of
  // code c(k mod 4): tract copies the code, street (k mod 8) lies in one code, district holds c0-c1 and
  // c2-c3, age (k mod 3) mixes with every code, patient is unique.
  QFETCH( QStringList, named );
  QFETCH( QStringList, released );
  QFETCH( QString, message );
  QList<QVariantList> rows;
  for ( int k = 0; k < 24; ++k )
  {
    const QString code = QStringLiteral( "c%1" ).arg( k % 4 );
    rows << QVariantList { k + 1, code, code, QStringLiteral( "s%1" ).arg( k % 8 ), k % 4 < 2 ? QStringLiteral( "d1" ) : QStringLiteral( "d2" ), QStringLiteral( "a%1" ).arg( k % 3 ) };
  }
  auto pts = vbastest::table( QStringLiteral( "field=patient:integer&field=pcode:string&field=tract:string&field=street:string&field=district:string&field=age:string" ), rows );
  auto c = codes( { 100, 100, 100, 100 } );
  QVariantMap p = parameters( c.get(), pts.get() );
  if ( !named.isEmpty() )
    p.insert( QStringLiteral( "RELEASE_FIELDS" ), named );
  const QString randomisedPath
    = mDir.filePath( QString::fromLatin1( QTest::currentDataTag() ).replace( QRegularExpression( QStringLiteral( "\\W" ) ), QStringLiteral( "-" ) ) + QStringLiteral( ".gpkg" ) );
  p.insert( QStringLiteral( "RANDOMISED" ), randomisedPath );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, !released.isEmpty(), &feedback );
  if ( released.isEmpty() )
  {
    QVERIFY2( feedback.error().contains( message ), qPrintable( feedback.error() ) );
    QVERIFY( !QFile::exists( randomisedPath ) );
    return;
  }
  auto randomised = std::make_unique<QgsVectorLayer>( randomisedPath, QStringLiteral( "randomised" ), QStringLiteral( "ogr" ) );
  QStringList names = randomised->fields().names();
  names.removeAll( QStringLiteral( "fid" ) ); // the GeoPackage's own key, fresh
  QCOMPARE( names, released );
  QCOMPARE( randomised->featureCount(), 24LL );
  QVERIFY2( feedback.saw( QStringLiteral( "Released fields: " ) + released.join( QStringLiteral( ", " ) ) + '.' ), qPrintable( feedback.messages.join( '\n' ) ) );
}

void TestLpGeomask::extremePopulationsRecounted()
{
  // Populations 10^0 to 10^15 on random codes (the attack: P_ij of 1e-13 from a code of 1e15 people
  // is 100 people in Q_j): every TRANSITIONS written (CSV, 15 digits) recounts within epsilon and to
  // MAX_REIDENTIFICATION, with the automatic solver (the direct LP here) and with column generation.
  for ( quint32 seed = 1; seed <= 6; ++seed )
  {
    QRandomGenerator random( seed );
    auto layer
      = std::make_unique<QgsVectorLayer>( QStringLiteral( "Point?crs=EPSG:32618&field=code:string&field=pop:double&field=ed:integer" ), QStringLiteral( "codes" ), QStringLiteral( "memory" ) );
    std::map<QString, double> population;
    QgsFeatureList features;
    for ( int i = 0; i < 60; ++i )
    {
      QgsFeature f( layer->fields() );
      const QString code = QStringLiteral( "c%1" ).arg( i );
      population[code] = std::pow( 10.0, random.bounded( 16 ) );
      f.setAttributes( QgsAttributes() << code << population[code] << ( i < 30 ? 1 : 0 ) );
      f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( random.bounded( 1000 ), random.bounded( 1000 ) ) ) );
      features << f;
    }
    layer->dataProvider()->addFeatures( features );
    for ( const int solver : { 0, 1 } )
    {
      QVariantMap p = parameters( layer.get(), nullptr );
      p.remove( QStringLiteral( "PATIENTS" ) );
      p.remove( QStringLiteral( "PATIENT_CODE_FIELD" ) );
      p.insert( QStringLiteral( "PATIENT_COUNT_FIELD" ), QStringLiteral( "ed" ) );
      p.insert( QStringLiteral( "EPSILON" ), 0.2 );
      p.insert( QStringLiteral( "NEIGHBOURS" ), 10 );
      p.insert( QStringLiteral( "SOLVER" ), solver );
      const QString transitions = mDir.filePath( QStringLiteral( "extreme-%1-%2.csv" ).arg( seed ).arg( solver ) );
      p.insert( QStringLiteral( "TRANSITIONS" ), transitions );
      QgsProcessingContext context;
      const QVariantMap r = vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, true );
      auto written = std::make_unique<QgsVectorLayer>( transitions, QStringLiteral( "transitions" ), QStringLiteral( "ogr" ) );
      QVERIFY2( written->isValid(), qPrintable( transitions ) );
      compareBound( recountReidentification( readTransitions( written.get() ), population, 30, 0.2 ), r );
    }
  }
}

/**
 * c0 (1 person) holds 2 of the 3 patients. Revised-LP counts at most min(s, n_0) = 1 of them (eq. 8), so its bound
 * would not hold: refused naming the code, nothing written. WCMB-LP counts s = 3 everywhere: a warning naming it.
 */
void TestLpGeomask::populationBelowPatients()
{
  auto c = codes( { 1, 1, 2, 10 } );
  auto pts = patients( { QStringLiteral( "c0" ), QStringLiteral( "c0" ), QStringLiteral( "c1" ) } );
  QVariantMap p = parameters( c.get(), pts.get() );
  p.insert( QStringLiteral( "NEIGHBOURS" ), 4 );
  const QString randomised = mDir.filePath( QStringLiteral( "overfull.gpkg" ) );
  p.insert( QStringLiteral( "RANDOMISED" ), randomised );
  const QString expected = QStringLiteral( "Code c0 holds 2 patients but a population (POPULATION_FIELD) of 1" );
  {
    QgsProcessingContext context;
    vbastest::Feedback feedback;
    vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
    QVERIFY2( feedback.errors.join( ' ' ).contains( expected ) && feedback.errors.join( ' ' ).contains( QStringLiteral( "MODEL = WCMB-LP" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
    QVERIFY( !QFile::exists( randomised ) );
  }
  p.insert( QStringLiteral( "MODEL" ), 1 );
  p.insert( QStringLiteral( "EPSILON" ), 1 );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, true, &feedback );
  QVERIFY2( feedback.saw( expected ), qPrintable( feedback.messages.join( '\n' ) ) );
}

namespace
{

//! Ten codes 1 apart with populations 1e-6, 1e-4, ..., 1e12; 20 patients, four in each of c5 to c9.
std::pair<std::unique_ptr<QgsVectorLayer>, std::unique_ptr<QgsVectorLayer>> extremeLayers()
{
  QList<double> population;
  QStringList codesOfPatients;
  for ( int i = 0; i < 10; ++i )
    population << std::pow( 10.0, -6 + 2 * i );
  for ( int k = 0; k < 20; ++k )
    codesOfPatients << QStringLiteral( "c%1" ).arg( 5 + k % 5 );
  return { codes( population ), patients( codesOfPatients ) };
}

} // namespace

/**
 * The ten codes of extremeLayers, every pair a candidate. At EPSILON = 0.2 only c0 to c3 (n < 100 = s / epsilon) must
 * share their destinations, and c3 (1 person, a = 0.2) alone costs at least 1 person-unit over N ~ 1.0101e12 (it
 * moves, or others bring 4 times its stayers); c0 to c3 moving to c4 cost 1.0203. Both solvers (the direct LP's
 * answer failing its recount, column generation's) give the same optimum in [1, 1.1] / N; the direct LP once said
 * "optimal" at 9e12 times it. At 1e-10, where column generation once ran for hours, each run ends within seconds,
 * with transitions within epsilon or the message that no solver's answer can be trusted.
 */
void TestLpGeomask::solversAgreeAtExtremePopulations()
{
  auto [c, pts] = extremeLayers();
  const double total = 1.0101010101010101e12;
  for ( const double epsilon : { 0.2, 1e-10 } )
  {
    std::map<int, double> objective;
    for ( const int solver : { 1, 2 } )
    {
      QVariantMap p = parameters( c.get(), pts.get() );
      p.insert( QStringLiteral( "NEIGHBOURS" ), 10 );
      p.insert( QStringLiteral( "EPSILON" ), epsilon );
      p.insert( QStringLiteral( "SOLVER" ), solver );
      QgsProcessingContext context;
      vbastest::Feedback feedback;
      QElapsedTimer timer;
      timer.start();
      bool ok = false;
      const QVariantMap r = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:lpgeomask" ) )->run( p, context, &feedback, &ok );
      QVERIFY2( ok || epsilon != 0.2, qPrintable( feedback.errors.join( ' ' ) ) );
      QVERIFY2( timer.elapsed() < 30000, qPrintable( QStringLiteral( "solver %1 at %2: %3 ms" ).arg( solver ).arg( epsilon ).arg( timer.elapsed() ) ) );
      if ( !ok )
      {
        QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "No transition probabilities that can be trusted at EPSILON = 1e-10" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
        continue;
      }
      QVERIFY( r.value( QStringLiteral( "MAX_REIDENTIFICATION" ) ).toDouble() <= epsilon );
      QCOMPARE( r.value( QStringLiteral( "STATUS" ) ).toString(), QStringLiteral( "optimal" ) );
      objective[solver] = r.value( QStringLiteral( "OBJECTIVE" ) ).toDouble();
    }
    if ( objective.size() == 2 )
      QVERIFY2( std::fabs( objective[1] - objective[2] ) <= 1e-6 * objective[2], qPrintable( QStringLiteral( "%1 and %2 at %3" ).arg( objective[1] ).arg( objective[2] ).arg( epsilon ) ) );
    if ( epsilon == 0.2 )
      QVERIFY2( objective[2] >= ( 1 - 1e-6 ) / total && objective[2] <= 1.1 / total, qPrintable( QString::number( objective[2] * total ) ) );
  }
}

/**
 * The three codes of the core's hand-solved instance (x = 0, 2, 10; 1, 1 and 8 people; 4 patients, all in the code of 8):
 * c_i = (1, 1, 4), and every epsilon below 0.4 is infeasible. At EPSILON = 0.3 the run is refused with the smallest
 * feasible epsilon, which the message says is within 0.1% of the true one: a run there succeeds and one 0.1% below is
 * infeasible (once the bisection's absolute step was given).
 */
void TestLpGeomask::smallestEpsilonIsTheTrueOne()
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "Point?crs=EPSG:32618&field=code:string&field=pop:double" ), QStringLiteral( "codes" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( const auto &[code, x, people] : { std::tuple<const char *, double, double> { "a", 0, 1 }, { "b", 2, 1 }, { "c", 10, 8 } } )
  {
    QgsFeature f( layer->fields() );
    f.setAttributes( QgsAttributes() << QString::fromLatin1( code ) << people );
    f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( x, 0 ) ) );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  auto pts = patients( { QStringLiteral( "c" ), QStringLiteral( "c" ), QStringLiteral( "c" ), QStringLiteral( "c" ) } );
  QVariantMap p = parameters( layer.get(), pts.get() );
  p.insert( QStringLiteral( "EPSILON" ), 0.3 );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
  const QString message = feedback.errors.join( ' ' );
  const QRegularExpressionMatch match = QRegularExpression( QStringLiteral( "The smallest feasible epsilon is ([0-9.e+-]+) \\(the true one lies within 0.1% below it\\)" ) ).match( message );
  QVERIFY2( match.hasMatch(), qPrintable( message ) );
  const double smallest = match.captured( 1 ).toDouble();
  QVERIFY2( smallest >= 0.4 && smallest <= 0.5, qPrintable( message ) );
  p.insert( QStringLiteral( "EPSILON" ), smallest );
  QgsProcessingContext at;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, at, true );
  p.insert( QStringLiteral( "EPSILON" ), smallest * ( 1 - 1e-3 ) );
  QgsProcessingContext below;
  vbastest::Feedback refused;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, below, false, &refused );
  QVERIFY2( refused.errors.join( ' ' ).contains( QStringLiteral( "No transition probabilities keep every re-identification probability" ) ), qPrintable( refused.errors.join( ' ' ) ) );
}

/**
 * The ten codes of extremeLayers at EPSILON = 1e-12, below the smallest feasible epsilon: the run is refused with
 * the smallest one it advises, and a run at that epsilon, with either solver, is accepted (the advice was once an
 * epsilon whose transition probabilities the run's own recount then refused: 1.19e-11 advised, 1e-10 refused).
 */
void TestLpGeomask::advisedEpsilonIsAccepted()
{
  auto [c, pts] = extremeLayers();
  QVariantMap p = parameters( c.get(), pts.get() );
  p.insert( QStringLiteral( "NEIGHBOURS" ), 10 );
  p.insert( QStringLiteral( "EPSILON" ), 1e-12 );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:lpgeomask" ), p, context, false, &feedback );
  const QString message = feedback.errors.join( ' ' );
  const QRegularExpressionMatch match = QRegularExpression( QStringLiteral( "The smallest feasible epsilon is ([0-9.e+-]+) " ) ).match( message );
  QVERIFY2( match.hasMatch(), qPrintable( message ) );
  p.insert( QStringLiteral( "EPSILON" ), match.captured( 1 ).toDouble() );
  for ( const int solver : { 0, 1, 2 } )
  {
    p.insert( QStringLiteral( "SOLVER" ), solver );
    QgsProcessingContext at;
    vbastest::Feedback accepted;
    bool ok = false;
    const QVariantMap r = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:lpgeomask" ) )->run( p, at, &accepted, &ok );
    QVERIFY2( ok, qPrintable( QStringLiteral( "SOLVER %1 at the advised EPSILON = %2: %3" ).arg( solver ).arg( match.captured( 1 ), accepted.errors.join( ' ' ) ) ) );
    QVERIFY( r.value( QStringLiteral( "MAX_REIDENTIFICATION" ) ).toDouble() <= p.value( QStringLiteral( "EPSILON" ) ).toDouble() );
  }
}

QTEST_MAIN( TestLpGeomask )
#include "test_lpgeomask.moc"
