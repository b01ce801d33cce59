// vbas:checkanonymity through QgsProcessingAlgorithm::run. It passes the releases of vbas:anonymize (the
// sample layers; a grid with a count field), each recounted here by the test's own code; it fails
// deliberately broken copies of the sample release with the violating ECs expected by hand; l and t
// are worked out by hand on a small table; bad input is refused before anything is written. No
// record content is printed.
#include "tests/plugin/qgis_test_util.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QUrl>

#include <gdal.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{

const QString kCheck = QStringLiteral( "vbas:checkanonymity" );
const QStringList kSampleQis = { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ), QStringLiteral( "aggregate_id" ) };

//! An EC as the test counts it: its records and the records of each sensitive value.
struct Ec
{
    qlonglong records = 0;
    std::map<QString, qlonglong> values;
};

//! A row's values of qis joined as text.
QString keyOf( const QgsFeature &f, const QStringList &qis )
{
  QStringList key;
  for ( const QString &qi : qis )
    key << f.attribute( qi ).toString();
  return key.join( '|' );
}

//! The ECs of layer on qis (values joined as text), weighted by count when given.
std::map<QString, Ec> recount( QgsVectorLayer *layer, const QStringList &qis, const QString &count = QString(), const QString &sensitive = QString() )
{
  std::map<QString, Ec> ecs;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
  {
    const qlonglong records = count.isEmpty() ? 1 : f.attribute( count ).toLongLong();
    Ec &ec = ecs[keyOf( f, qis )];
    ec.records += records;
    if ( !sensitive.isEmpty() )
      ec.values[f.attribute( sensitive ).toString()] += records;
  }
  return ecs;
}

qlonglong smallest( const std::map<QString, Ec> &ecs )
{
  return std::min_element( ecs.begin(), ecs.end(), []( const auto &a, const auto &b ) { return a.second.records < b.second.records; } )->second.records;
}

//! Half the sum over every value of the table of |share in the EC - share in the table|.
double distance( const Ec &ec, const Ec &table )
{
  double sum = 0;
  for ( const auto &[value, records] : table.values )
  {
    const auto inEc = ec.values.find( value );
    const double p = inEc == ec.values.end() ? 0 : double( inEc->second ) / double( ec.records );
    sum += std::abs( p - double( records ) / double( table.records ) );
  }
  return sum / 2;
}

//! The rows of VIOLATIONS as "value|value|...", sorted; t_closeness with 10 significant digits.
QStringList rows( QgsVectorLayer *layer )
{
  QStringList list;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
  {
    QStringList values;
    for ( int i = 0; i < f.attributeCount(); ++i )
    {
      const QVariant value = f.attribute( i );
      values << ( value.isNull() ? QStringLiteral( "NULL" ) : value.userType() == QMetaType::Double ? QString::number( value.toDouble(), 'g', 10 ) : value.toString() );
    }
    list << values.join( '|' );
  }
  list.sort();
  return list;
}

/**
 * The hand-worked table (sex, agg are the QIs; diag is sensitive; n the count):
 *
 *   F 1 flu 2,  F 1 cold 1,  F 1 flu 1        EC (F, 1):    4 records, flu 3, cold 1   l = 2
 *   M 1 flu 1,  M 1 asthma 0                  EC (M, 1):    1 record,  flu 1           l = 1
 *   NULL 2 cold 2,  NULL 2 asthma 3           EC (NULL, 2): 5 records, cold 2, asthma 3 l = 2
 *
 * Table: 10 records, flu 4, cold 3, asthma 3: shares (0.4, 0.3, 0.3).
 * t(F, 1)    = 0.5 (|0.75 - 0.4| + |0.25 - 0.3| + 0.3) = 0.35
 * t(M, 1)    = 0.5 (|1 - 0.4| + 0.3 + 0.3)             = 0.6
 * t(NULL, 2) = 0.5 (0.4 + |0.4 - 0.3| + |0.6 - 0.3|)   = 0.4
 */
std::unique_ptr<QgsVectorLayer> handTable( const QVariant &thirdCount = 1 )
{
  return vbastest::table( QStringLiteral( "field=sex:string&field=agg:integer&field=diag:string&field=n:double&field=Records:integer" ),
                          QList<QVariantList> { { "F", 1, "flu", 2, 0 },
                                                { "F", 1, "cold", 1, 0 },
                                                { "F", 1, "flu", thirdCount, 0 },
                                                { "M", 1, "flu", 1, 0 },
                                                { "M", 1, "asthma", 0, 0 },
                                                { QVariant( QVariant::String ), 2, "cold", 2, 0 },
                                                { QVariant( QVariant::String ), 2, "asthma", 3, 0 } } );
}

//! A GeoPackage at path with the attribute table t: fid and the columns (name and declared type, collation), and rows of SQL literals.
void makeGeoPackage( const QString &path, const QStringList &columns, const QList<QStringList> &rows )
{
  GDALDatasetH dataset = GDALCreate( GDALGetDriverByName( "GPKG" ), path.toUtf8().constData(), 0, 0, 0, GDT_Unknown, nullptr );
  QVERIFY( dataset );
  GDALClose( dataset );
  sqlite3 *db = nullptr;
  QCOMPARE( sqlite3_open( path.toUtf8().constData(), &db ), SQLITE_OK );
  QStringList sql { QStringLiteral( "CREATE TABLE t (fid INTEGER PRIMARY KEY, %1)" ).arg( columns.join( QLatin1String( ", " ) ) ),
                    QStringLiteral( "INSERT INTO gpkg_contents (table_name, data_type, identifier) VALUES ('t', 'attributes', 't')" ) };
  for ( const QStringList &row : rows )
    sql << QStringLiteral( "INSERT INTO t VALUES (NULL, %1)" ).arg( row.join( QLatin1String( ", " ) ) );
  char *error = nullptr;
  const int result = sqlite3_exec( db, sql.join( ';' ).toUtf8().constData(), nullptr, nullptr, &error );
  const QString message = error ? QString::fromUtf8( error ) : QString();
  sqlite3_free( error );
  sqlite3_close( db );
  QVERIFY2( result == SQLITE_OK, qPrintable( message ) );
}

//! The class sizes of t on the columns, recounted by SQLite: grouped by each stored value's storage class and bytes (a binary comparison).
QList<qlonglong> sqlRecount( const QString &path, const QStringList &columns )
{
  QStringList by;
  for ( const QString &column : columns )
    by << QStringLiteral( "typeof(%1), %1 COLLATE BINARY" ).arg( column );
  sqlite3 *db = nullptr;
  sqlite3_open_v2( path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr );
  sqlite3_stmt *statement = nullptr;
  sqlite3_prepare_v2( db, QStringLiteral( "SELECT COUNT(*) FROM t GROUP BY %1" ).arg( by.join( QLatin1String( ", " ) ) ).toUtf8().constData(), -1, &statement, nullptr );
  QList<qlonglong> sizes;
  while ( sqlite3_step( statement ) == SQLITE_ROW )
    sizes << sqlite3_column_int64( statement, 0 );
  sqlite3_finalize( statement );
  sqlite3_close( db );
  std::sort( sizes.begin(), sizes.end() );
  return sizes;
}

/**
 * The class sizes of the column sex of a CSV, GeoJSON or GeoJSONSeq file, recounted by Python's csv
 * and json modules: a CSV value by its text; a JSON property by its JSON type and value (numbers as
 * numbers). A CSV's rows are those whose id is at most maxId (a subset).
 */
QList<qlonglong> pythonRecount( const QString &path, int maxId = std::numeric_limits<int>::max() )
{
  const QString script = QStringLiteral( "import collections, csv, json, sys\n"
                                         "p = sys.argv[1]\n"
                                         "if p.endswith('.csv'):\n"
                                         "    keys = [r['sex'] for r in csv.DictReader(open(p, newline='', encoding='utf-8')) if r['id'] and int(r['id']) <= int(sys.argv[2])]\n"
                                         "else:\n"
                                         "    text = open(p, encoding='utf-8').read()\n"
                                         "    if p.endswith('.geojson'):\n"
                                         "        features = json.loads(text)['features']\n"
                                         "    else:\n"
                                         "        features = [json.loads(r) for r in text.replace('\\x1e', '\\n').split('\\n') if r.strip()]\n"
                                         "    kind = lambda v: 'null' if v is None else 'bool' if isinstance(v, bool) else 'number' if isinstance(v, (int, float)) else type(v).__name__\n"
                                         "    keys = [(kind(v), float(v) if kind(v) == 'number' else json.dumps(v)) for v in (f['properties'].get('sex') for f in features)]\n"
                                         "print(' '.join(str(n) for n in sorted(collections.Counter(keys).values())))\n" );
  QProcess python;
  python.start( QStringLiteral( "/usr/bin/python3" ), { QStringLiteral( "-c" ), script, path, QString::number( maxId ) } );
  python.waitForFinished();
  QList<qlonglong> sizes;
  for ( const QString &n : QString::fromUtf8( python.readAllStandardOutput() ).split( ' ', Qt::SkipEmptyParts ) )
    sizes << n.trimmed().toLongLong();
  return sizes;
}

//! ECS, SMALLEST_EC, VIOLATING_ECS and VIOLATING_RECORDS of class sizes (sorted) at k, as the checker's outputs must give them.
QVariantMap expectedOutputs( const QList<qlonglong> &sizes, qlonglong k )
{
  qlonglong violating = 0, records = 0;
  for ( const qlonglong size : sizes )
    if ( size < k )
    {
      ++violating;
      records += size;
    }
  return { { QStringLiteral( "ECS" ), qlonglong( sizes.size() ) },
           { QStringLiteral( "SMALLEST_EC" ), sizes.isEmpty() ? QVariant() : QVariant( sizes.first() ) },
           { QStringLiteral( "VIOLATING_ECS" ), violating },
           { QStringLiteral( "VIOLATING_RECORDS" ), records } };
}

//! The outputs of r that expectedOutputs() gives.
QVariantMap actualOutputs( const QVariantMap &r )
{
  QVariantMap actual;
  for ( const QString &name : { QStringLiteral( "ECS" ), QStringLiteral( "SMALLEST_EC" ), QStringLiteral( "VIOLATING_ECS" ), QStringLiteral( "VIOLATING_RECORDS" ) } )
    actual.insert( name, r.value( name ).isNull() ? QVariant() : QVariant( r.value( name ).toLongLong() ) );
  return actual;
}

} // namespace

class TestCheckAnonymity : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void passesTheSampleRelease();
    void failsABrokenRelease();
    void passesAGridReleaseWithCounts();
    void diversityAndCloseness();
    void withoutSensitiveField();
    void valuesAreComparedExactly();
    void storedValuesOfAGeoPackage_data();
    void storedValuesOfAGeoPackage();
    void textOfACsv();
    void textOfADelimitedTextLayer();
    void jsonTypesOfAGeoJson_data();
    void jsonTypesOfAGeoJson();
    void randomGeoPackagesAgreeWithSqlite();
    void emptyTablePasses();
    void badInputIsRefusedBeforeWriting_data();
    void badInputIsRefusedBeforeWriting();
    void destinationOverInputIsRefused();
    void canceled();

  private:
    QVariantMap run( const QVariantMap &parameters, bool expectOk, Feedback *feedback = nullptr );
    QVariantMap parameters( QgsVectorLayer *layer, const QStringList &qis, int k ) const;
    QVariantMap handParameters( QgsVectorLayer *layer ) const;
    QgsVectorLayer *violations( const QVariantMap &results );

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mRegions;
    std::unique_ptr<QgsVectorLayer> mPatients;
    QgsVectorLayer *mRelease = nullptr; //!< vbas:anonymize's ANONYMIZED on the sample layers, owned by mContext
    qlonglong mReleased = 0;
};

void TestCheckAnonymity::initTestCase()
{
  vbastest::initQgisWithProvider();
  mRegions = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg|layername=ny8_tracts" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  mPatients = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg|layername=patients" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QVERIFY( mRegions->isValid() && mPatients->isValid() );
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diagnosis" ) ); // released with the QIs
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  mRelease = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  QVERIFY( mRelease );
  mReleased = r.value( QStringLiteral( "RELEASED" ) ).toLongLong();
  QCOMPARE( mRelease->featureCount(), mReleased );
}

void TestCheckAnonymity::cleanupTestCase()
{
  mRegions.reset();
  mPatients.reset();
  mContext.temporaryLayerStore()->removeAllMapLayers(); // the files the checks loaded, closed while GDAL lives
  QgsApplication::exitQgis();
}

QVariantMap TestCheckAnonymity::run( const QVariantMap &parameters, bool expectOk, Feedback *feedback )
{
  return vbastest::run( kCheck, parameters, mContext, expectOk, feedback );
}

QVariantMap TestCheckAnonymity::parameters( QgsVectorLayer *layer, const QStringList &qis, int k ) const
{
  return {
    { QStringLiteral( "INPUT" ), layerValue( layer ) }, { QStringLiteral( "QI_FIELDS" ), qis }, { QStringLiteral( "K" ), k }, { QStringLiteral( "VIOLATIONS" ), QgsProcessing::TEMPORARY_OUTPUT }
  };
}

//! The hand table's QIs sex and agg, count n, sensitive diag, K = 5, L = 2, T = 0.5.
QVariantMap TestCheckAnonymity::handParameters( QgsVectorLayer *layer ) const
{
  QVariantMap p = parameters( layer, { QStringLiteral( "sex" ), QStringLiteral( "agg" ) }, 5 );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diag" ) );
  p.insert( QStringLiteral( "L" ), 2 );
  p.insert( QStringLiteral( "T" ), 0.5 );
  return p;
}

QgsVectorLayer *TestCheckAnonymity::violations( const QVariantMap &results )
{
  return vbastest::output( results, QStringLiteral( "VIOLATIONS" ), mContext );
}

void TestCheckAnonymity::passesTheSampleRelease()
{
  // The release of the sample layers (QIs age_group, sex, race; K = 5) with aggregate_id: every EC
  // holds 5 or more, as the test's recount says too.
  const std::map<QString, Ec> ecs = recount( mRelease, kSampleQis, QString(), QStringLiteral( "diagnosis" ) );
  QVERIFY( smallest( ecs ) >= 5 );
  QVariantMap p = parameters( mRelease, kSampleQis, 5 );
  Feedback feedback;
  QVariantMap r = run( p, true, &feedback );
  QCOMPARE( r.value( QStringLiteral( "PASS" ) ).toBool(), true );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), mReleased );
  QCOMPARE( r.value( QStringLiteral( "ECS" ) ).toLongLong(), qlonglong( ecs.size() ) );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), smallest( ecs ) );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_ECS" ) ).toLongLong(), 0LL );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_RECORDS" ) ).toLongLong(), 0LL );
  QVERIFY( r.value( QStringLiteral( "SMALLEST_L" ) ).isNull() );
  QVERIFY( r.value( QStringLiteral( "LARGEST_T" ) ).isNull() );
  QCOMPARE( violations( r )->featureCount(), 0LL );
  QCOMPARE( violations( r )->fields().names(), kSampleQis + QStringList( { "records", "l_diversity", "t_closeness", "violates", "residents" } ) );
  QVERIFY2( feedback.saw( QStringLiteral( "PASS" ) ), qPrintable( feedback.messages.join( '\n' ) ) );

  // With diagnosis as the sensitive field, l and t as the test computes them.
  Ec table;
  qlonglong smallestL = std::numeric_limits<qlonglong>::max();
  double largestT = 0;
  for ( const auto &[key, ec] : ecs )
  {
    table.records += ec.records;
    for ( const auto &[value, records] : ec.values )
      table.values[value] += records;
    smallestL = std::min( smallestL, qlonglong( ec.values.size() ) );
  }
  for ( const auto &[key, ec] : ecs )
    largestT = std::max( largestT, distance( ec, table ) );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diagnosis" ) );
  r = run( p, true );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_L" ) ).toLongLong(), smallestL );
  QVERIFY2( std::abs( r.value( QStringLiteral( "LARGEST_T" ) ).toDouble() - largestT ) < 1e-12, qPrintable( QString::number( largestT ) ) );
  // A t threshold just below the largest distance fails exactly the ECs farther than it.
  const double t = largestT - 1e-6;
  const qlonglong farther = std::count_if( ecs.begin(), ecs.end(), [&]( const auto &ec ) { return distance( ec.second, table ) > t; } );
  p.insert( QStringLiteral( "T" ), t );
  r = run( p, true );
  QCOMPARE( r.value( QStringLiteral( "PASS" ) ).toBool(), false );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_ECS" ) ).toLongLong(), farther );
}

void TestCheckAnonymity::failsABrokenRelease()
{
  // A copy of the release in which the first EC (in the test's key order) keeps only 2 of its rows,
  // and one row of the largest EC (more than 5, so it stays above k) moves to aggregate 999999, which
  // does not exist: two ECs violate k, with 2 + 1 = 3 records.
  std::unique_ptr<QgsVectorLayer> broken( mRelease->materialize( QgsFeatureRequest() ) );
  const std::map<QString, Ec> ecs = recount( broken.get(), kSampleQis );
  const QString shrunk = ecs.begin()->first;
  const qlonglong shrunkSize = ecs.begin()->second.records;
  const auto largest = std::max_element( ecs.begin(), ecs.end(), []( const auto &a, const auto &b ) { return a.second.records < b.second.records; } );
  QVERIFY( largest->second.records > 5 && largest->first != shrunk );
  QgsFeatureIds deleted;
  QgsFeatureId moved = FID_NULL;
  QString movedQis; // age_group|sex|race of the moved row
  QgsFeature f;
  QgsFeatureIterator it = broken->getFeatures();
  while ( it.nextFeature( f ) )
  {
    const QString key = keyOf( f, kSampleQis );
    if ( key == shrunk && deleted.size() < shrunkSize - 2 )
      deleted << f.id();
    if ( key == largest->first && moved == FID_NULL )
    {
      moved = f.id();
      movedQis = keyOf( f, kSampleQis.mid( 0, 3 ) );
    }
  }
  QVERIFY( broken->dataProvider()->deleteFeatures( deleted ) );
  const int aggregate = broken->fields().lookupField( QStringLiteral( "aggregate_id" ) );
  QVERIFY( broken->dataProvider()->changeAttributeValues( { { moved, { { aggregate, 999999 } } } } ) );

  Feedback feedback;
  const QVariantMap r = run( parameters( broken.get(), kSampleQis, 5 ), true, &feedback );
  QCOMPARE( r.value( QStringLiteral( "PASS" ) ).toBool(), false );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), mReleased - ( shrunkSize - 2 ) );
  QCOMPARE( r.value( QStringLiteral( "ECS" ) ).toLongLong(), qlonglong( ecs.size() ) + 1 );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), 1LL );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_ECS" ) ).toLongLong(), 2LL );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_RECORDS" ) ).toLongLong(), 3LL );
  QStringList expected = { shrunk + QStringLiteral( "|2|NULL|NULL|k|NULL" ), movedQis + QStringLiteral( "|999999|1|NULL|NULL|k|NULL" ) };
  expected.sort();
  QCOMPARE( rows( violations( r ) ), expected );
  QVERIFY2( feedback.warned( QStringLiteral( "FAIL: 2 equivalence class(es) holding 3 record(s)" ) ), qPrintable( feedback.warnings.join( '\n' ) ) );
}

void TestCheckAnonymity::passesAGridReleaseWithCounts()
{
  // vbas:anonymize on the 3 x 3 grid, two sites, K = 5, rows standing for n records: r<c><r> holds
  // F x (1 + c) and M x 2 in one row each. The release passes with COUNT_FIELD, its records as the
  // test sums them; counted as one record per row it fails wherever an EC has fewer than 5 rows.
  auto regions = vbastest::grid();
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      rows << QVariantList { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), "F", 1 + c } << QVariantList { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), "M", 2 };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=n:integer" ), rows );
  QVariantMap a = vbastest::gridParameters( regions.get(), records.get() );
  a.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  a.insert( QStringLiteral( "MODEL" ), 3 );
  a.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  a.insert( QStringLiteral( "K" ), 5 );
  const QVariantMap anonymized = vbastest::run( QStringLiteral( "vbas:anonymize" ), a, mContext, true );
  QgsVectorLayer *release = vbastest::output( anonymized, QStringLiteral( "ANONYMIZED" ), mContext );
  const QStringList qis = { QStringLiteral( "sex" ), QStringLiteral( "aggregate_id" ) };
  const std::map<QString, Ec> weighted = recount( release, qis, QStringLiteral( "n" ) );
  const std::map<QString, Ec> unweighted = recount( release, qis );
  qlonglong total = 0, rowsBelowK = 0, ecsBelowK = 0;
  for ( const auto &[key, ec] : weighted )
    total += ec.records;
  for ( const auto &[key, ec] : unweighted )
    if ( ec.records < 5 )
    {
      ++ecsBelowK;
      rowsBelowK += ec.records;
    }
  QCOMPARE( total, anonymized.value( QStringLiteral( "RELEASED" ) ).toLongLong() );
  QVERIFY( ecsBelowK > 0 ); // else the second run would prove nothing

  QVariantMap p = parameters( release, qis, 5 );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  QVariantMap r = run( p, true );
  QCOMPARE( r.value( QStringLiteral( "PASS" ) ).toBool(), true );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), total );
  QCOMPARE( r.value( QStringLiteral( "ECS" ) ).toLongLong(), qlonglong( weighted.size() ) );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), smallest( weighted ) );
  p.remove( QStringLiteral( "COUNT_FIELD" ) );
  r = run( p, true );
  QCOMPARE( r.value( QStringLiteral( "PASS" ) ).toBool(), false );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), release->featureCount() );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_ECS" ) ).toLongLong(), ecsBelowK );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_RECORDS" ) ).toLongLong(), rowsBelowK );
}

void TestCheckAnonymity::diversityAndCloseness()
{
  // The hand table with K = 5, L = 2, T = 0.5: (F, 1) has 4 records (k); (M, 1) has 1 record, 1 value
  // and t 0.6 (k, l, t); (NULL, 2) passes (5 records, l 2, t 0.4).
  auto table = handTable();
  const QVariantMap r = run( handParameters( table.get() ), true );
  QCOMPARE( r.value( QStringLiteral( "PASS" ) ).toBool(), false );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 10LL );
  QCOMPARE( r.value( QStringLiteral( "ECS" ) ).toLongLong(), 3LL );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), 1LL );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_ECS" ) ).toLongLong(), 2LL );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_RECORDS" ) ).toLongLong(), 5LL );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_L" ) ).toLongLong(), 1LL );
  QVERIFY( std::abs( r.value( QStringLiteral( "LARGEST_T" ) ).toDouble() - 0.6 ) < 1e-12 );
  QgsVectorLayer *v = violations( r );
  QCOMPARE( v->fields().names(), QStringList( { "sex", "agg", "records", "l_diversity", "t_closeness", "violates", "residents" } ) );
  QCOMPARE( v->fields().at( 0 ).type(), table->fields().at( 0 ).type() );
  QCOMPARE( v->fields().at( 1 ).type(), table->fields().at( 1 ).type() );
  // Counts only: no diagnosis anywhere.
  QCOMPARE( rows( v ), QStringList( { "F|1|4|2|0.35|k|NULL", "M|1|1|1|0.6|k,l,t|NULL" } ) );
}

void TestCheckAnonymity::withoutSensitiveField()
{
  // K = 5 alone: the same two ECs fall short of k; l and t are NULL.
  auto table = handTable();
  QVariantMap p = parameters( table.get(), { QStringLiteral( "sex" ), QStringLiteral( "agg" ) }, 5 );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  const QVariantMap r = run( p, true );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_ECS" ) ).toLongLong(), 2LL );
  QVERIFY( r.value( QStringLiteral( "SMALLEST_L" ) ).isNull() );
  QVERIFY( r.value( QStringLiteral( "LARGEST_T" ) ).isNull() );
  QCOMPARE( rows( violations( r ) ), QStringList( { "F|1|4|NULL|NULL|k|NULL", "M|1|1|NULL|NULL|k|NULL" } ) );
}

void TestCheckAnonymity::valuesAreComparedExactly()
{
  // Times 1 ms apart and NULL against empty text are different values: (t, NULL) 2, (t, "") 1,
  // (t + 1 ms, NULL) 2; with K = 2 only (t, "") fails, and it comes back with its exact values.
  const QDateTime t( QDate( 2020, 1, 1 ), QTime( 10, 0, 0, 0 ) );
  const QDateTime later = t.addMSecs( 1 );
  const QVariant null( QVariant::String );
  auto table = vbastest::table( QStringLiteral( "field=seen:datetime&field=name:string" ), QList<QVariantList> { { t, null }, { t, null }, { t, "" }, { later, null }, { later, null } } );
  const QVariantMap r = run( parameters( table.get(), { QStringLiteral( "seen" ), QStringLiteral( "name" ) }, 2 ), true );
  QCOMPARE( r.value( QStringLiteral( "ECS" ) ).toLongLong(), 3LL );
  QCOMPARE( r.value( QStringLiteral( "VIOLATING_ECS" ) ).toLongLong(), 1LL );
  QgsVectorLayer *v = violations( r );
  QCOMPARE( v->featureCount(), 1LL );
  QgsFeature f;
  QVERIFY( v->getFeatures().nextFeature( f ) );
  QCOMPARE( f.attribute( QStringLiteral( "seen" ) ).toDateTime(), t );
  QVERIFY( !f.attribute( QStringLiteral( "name" ) ).isNull() );
  QCOMPARE( f.attribute( QStringLiteral( "name" ) ).toString(), QString() );
}

void TestCheckAnonymity::storedValuesOfAGeoPackage_data()
{
  QTest::addColumn<QString>( "column" ); // the declared type of sex
  QTest::addColumn<QString>( "first" );  // 3 rows hold this SQL literal
  QTest::addColumn<QString>( "second" ); // and 3 this one
  QTest::newRow( "text in an INTEGER column" ) << "INTEGER"
                                               << "'x'"
                                               << "'y'";
  QTest::newRow( "7 and '7abc'" ) << "INTEGER"
                                  << "7"
                                  << "'7abc'";
  QTest::newRow( "a BLOB beside the same text" ) << "TEXT"
                                                 << "X'46'"
                                                 << "'F'";
  QTest::newRow( "two spellings of a DATE" ) << "DATE"
                                             << "'2020-01-01'"
                                             << "'2020-1-1'";
  QTest::newRow( "two spellings of a DATETIME" ) << "DATETIME"
                                                 << "'2020-01-01T10:00:00Z'"
                                                 << "'2020-01-01T10:00:00.000Z'";
  QTest::newRow( "BOOLEAN 1 and 2" ) << "BOOLEAN"
                                     << "1"
                                     << "2";
  QTest::newRow( "1 and '1' without a type" ) << ""
                                              << "1"
                                              << "'1'";
  QTest::newRow( "a REAL and an INTEGER of the same 8 bytes" ) << ""
                                                               << "1.0"
                                                               << "4607182418800017408";
  QTest::newRow( "NOCASE text" ) << "TEXT COLLATE NOCASE"
                                 << "'F'"
                                 << "'f'";
  QTest::newRow( "text after a NUL" ) << "TEXT"
                                      << "'a' || char(0) || 'b'"
                                      << "'a' || char(0) || 'c'";
  QTest::newRow( "a leading U+FEFF" ) << "TEXT"
                                      << "char(65279) || 'F'"
                                      << "'F'";
}

void TestCheckAnonymity::storedValuesOfAGeoPackage()
{
  // A class of 6 as QGIS decodes it, stored as two values of 3 each: SQLite's own recount gives two
  // classes, and so must the check (K = 6 fails both); VIOLATIONS names each value as stored. (The
  // NOCASE, NUL and U+FEFF rows guard against a reader that compares as SQLite's collation or QGIS's text does.)
  QFETCH( QString, column );
  QFETCH( QString, first );
  QFETCH( QString, second );
  QTemporaryDir dir;
  const QString path = dir.filePath( QStringLiteral( "release.gpkg" ) );
  makeGeoPackage( path, { QStringLiteral( "sex %1" ).arg( column ) }, { { first }, { first }, { first }, { second }, { second }, { second } } );
  QCOMPARE( sqlRecount( path, { QStringLiteral( "sex" ) } ), QList<qlonglong>( { 3, 3 } ) );
  QVariantMap p { { QStringLiteral( "INPUT" ), path + QStringLiteral( "|layername=t" ) },
                  { QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ) } },
                  { QStringLiteral( "K" ), 6 },
                  { QStringLiteral( "VIOLATIONS" ), QgsProcessing::TEMPORARY_OUTPUT } };
  Feedback feedback;
  const QVariantMap r = run( p, true, &feedback );
  QCOMPARE( actualOutputs( r ), expectedOutputs( { 3, 3 }, 6 ) );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "sqlite" ) );
  QVERIFY2( feedback.saw( QStringLiteral( "SQLite storage class and bytes" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  QgsVectorLayer *v = violations( r );
  QCOMPARE( v->fields().at( 0 ).type(), QVariant::String );
  QCOMPARE( rows( v ).size(), 2 );
  QVERIFY( rows( v ).at( 0 ) != rows( v ).at( 1 ) );
  // A subset of the layer: only the rows QGIS reads (fid 1 to 4) are checked, with their stored values.
  p.insert( QStringLiteral( "INPUT" ), path + QStringLiteral( "|layername=t|subset=fid <= 4" ) );
  QCOMPARE( actualOutputs( run( p, true ) ), expectedOutputs( { 1, 3 }, 6 ) );
}

void TestCheckAnonymity::textOfACsv()
{
  // A .csvt types sex Integer, so QGIS reads 1 and 01 as 1; the file's text, as Python's csv module
  // reads it, holds two classes of 3. TYPED_CSV compares the typed values: one class of 6.
  QTemporaryDir dir;
  const QString path = dir.filePath( QStringLiteral( "release.csv" ) );
  QFile csv( path ), csvt( dir.filePath( QStringLiteral( "release.csvt" ) ) );
  QVERIFY( csv.open( QIODevice::WriteOnly ) && csvt.open( QIODevice::WriteOnly ) );
  csv.write( "id,sex\n1,1\n2,\"1\"\n3,1\n4,01\n5,01\n6,01\n" );
  csvt.write( "Integer,Integer\n" );
  csv.close();
  csvt.close();
  QCOMPARE( pythonRecount( path ), QList<qlonglong>( { 3, 3 } ) );
  QVariantMap p { { QStringLiteral( "INPUT" ), path }, { QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ) } }, { QStringLiteral( "K" ), 6 } };
  Feedback feedback;
  QVariantMap r = run( p, true, &feedback );
  QCOMPARE( actualOutputs( r ), expectedOutputs( { 3, 3 }, 6 ) );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "csv-text" ) );
  QVERIFY( feedback.saw( QStringLiteral( "the text of the CSV file" ) ) );
  p.insert( QStringLiteral( "TYPED_CSV" ), true );
  r = run( p, true );
  QCOMPARE( actualOutputs( r ), expectedOutputs( { 6 }, 6 ) );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "csv-typed" ) );
}

void TestCheckAnonymity::textOfADelimitedTextLayer()
{
  // A delimited text layer guesses sex to be whole numbers, so QGIS reads 1 and 01 as 1; the file's
  // text, as Python's csv module reads it, holds two classes of 3. A blank line and a field across two
  // lines come first: the layer numbers its rows by the line they start on.
  QTemporaryDir dir;
  const QString path = dir.filePath( QStringLiteral( "release.csv" ) );
  QFile csv( path );
  QVERIFY( csv.open( QIODevice::WriteOnly ) );
  csv.write( "id,sex,note\n\n1,1,\"two\nlines\"\n2,\"1\",\n3,1,\n4,01,\n5,01,\n6,01,\n" );
  csv.close();
  QCOMPARE( pythonRecount( path ), QList<qlonglong>( { 3, 3 } ) );
  const QString uri = QUrl::fromLocalFile( path ).toString() + QStringLiteral( "?type=csv&delimiter=,&detectTypes=yes&geomType=none" );
  QgsVectorLayer layer( uri, QStringLiteral( "release" ), QStringLiteral( "delimitedtext" ) );
  QVERIFY( layer.isValid() );
  QCOMPARE( layer.fields().field( QStringLiteral( "sex" ) ).type(), QVariant::Int );
  Feedback feedback;
  QVariantMap r = run( parameters( &layer, { QStringLiteral( "sex" ) }, 6 ), true, &feedback );
  QCOMPARE( actualOutputs( r ), expectedOutputs( { 3, 3 }, 6 ) );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "csv-text" ) );
  QVERIFY( feedback.saw( QStringLiteral( "the text of the CSV file" ) ) );
  // A subset of the layer: only the rows QGIS reads (id 1 to 5) are checked, with their text.
  QgsVectorLayer subset( uri + QStringLiteral( "&subset=%22id%22%20%3C%3D%205" ), QStringLiteral( "release" ), QStringLiteral( "delimitedtext" ) );
  QCOMPARE( subset.featureCount(), 5LL );
  QCOMPARE( pythonRecount( path, 5 ), QList<qlonglong>( { 2, 3 } ) );
  QCOMPARE( actualOutputs( run( parameters( &subset, { QStringLiteral( "sex" ) }, 6 ), true ) ), expectedOutputs( { 2, 3 }, 6 ) );
  // Without a header line (the header and the blank line skipped): the columns are field_1, field_2, ...
  QgsVectorLayer unnamed( uri + QStringLiteral( "&useHeader=no&skipLines=2" ), QStringLiteral( "release" ), QStringLiteral( "delimitedtext" ) );
  QCOMPARE( unnamed.featureCount(), 6LL );
  r = run( parameters( &unnamed, { QStringLiteral( "field_2" ) }, 6 ), true );
  QCOMPARE( actualOutputs( r ), expectedOutputs( { 3, 3 }, 6 ) );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "csv-text" ) );
  // TYPED_CSV compares the values as QGIS reads them: one class of 6.
  QVariantMap p = parameters( &layer, { QStringLiteral( "sex" ) }, 6 );
  p.insert( QStringLiteral( "TYPED_CSV" ), true );
  r = run( p, true );
  QCOMPARE( actualOutputs( r ), expectedOutputs( { 6 }, 6 ) );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "csv-typed" ) );
  // A layer of two delimiter characters is not read as CSV text: as QGIS reads it, and the log says why.
  QgsVectorLayer two( QUrl::fromLocalFile( path ).toString() + QStringLiteral( "?type=csv&delimiter=,;&geomType=none" ), QStringLiteral( "release" ), QStringLiteral( "delimitedtext" ) );
  Feedback warned;
  r = run( parameters( &two, { QStringLiteral( "sex" ) }, 6 ), true, &warned );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "qgis" ) );
  QVERIFY2( warned.warned( QStringLiteral( "are compared as QGIS reads them, not as stored: only a delimited text file of one delimiter character" ) ), qPrintable( warned.warnings.join( '\n' ) ) );
}

void TestCheckAnonymity::jsonTypesOfAGeoJson_data()
{
  QTest::addColumn<QString>( "file" );
  QTest::newRow( "GeoJSON" ) << "release.geojson";
  QTest::newRow( "GeoJSONSeq, a feature a line" ) << "release.geojsonl";
  QTest::newRow( "GeoJSONSeq, RS-separated" ) << "release.geojsons";
}

void TestCheckAnonymity::jsonTypesOfAGeoJson()
{
  // sex holds 1 in 3 features and "1" in 3 (and 2.0 and 2 in 2 more, one JSON number): Python's
  // json module sees 3 + 3 + 2; QGIS reads the mixed property as one JSON field. The same features
  // as a GeoJSON text sequence, a blank record among them.
  QFETCH( QString, file );
  QTemporaryDir dir;
  const QString path = dir.filePath( file );
  QStringList features;
  for ( const char *value : { "1", "1", "1", "\"1\"", "\"1\"", "\"1\"", "2.0", "2" } )
    features << QStringLiteral( "{\"type\": \"Feature\", \"geometry\": null, \"properties\": {\"sex\": %1}}" ).arg( value );
  features.insert( 4, QString() );
  QFile out( path );
  QVERIFY( out.open( QIODevice::WriteOnly ) );
  if ( file.endsWith( QLatin1String( ".geojson" ) ) )
    out.write( QStringLiteral( "{\"type\": \"FeatureCollection\", \"features\": [%1]}" ).arg( features.filter( QStringLiteral( "Feature" ) ).join( ", " ) ).toUtf8() );
  else
    for ( const QString &feature : features )
      out.write( ( file.endsWith( 's' ) ? "\x1e" : "" ) + feature.toUtf8() + '\n' );
  out.close();
  QCOMPARE( pythonRecount( path ), QList<qlonglong>( { 2, 3, 3 } ) );
  QTemporaryDir outputs;
  QVariantMap p { { QStringLiteral( "INPUT" ), path },
                  { QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ) } },
                  { QStringLiteral( "K" ), 6 },
                  { QStringLiteral( "VIOLATIONS" ), outputs.filePath( QStringLiteral( "violations.gpkg" ) ) } };
  const QVariantMap r = run( p, true );
  QCOMPARE( actualOutputs( r ), expectedOutputs( { 2, 3, 3 }, 6 ) );
  QCOMPARE( r.value( QStringLiteral( "VALUES_READ" ) ).toString(), QStringLiteral( "json" ) );
  QgsVectorLayer v( outputs.filePath( QStringLiteral( "violations.gpkg" ) ), QStringLiteral( "v" ), QStringLiteral( "ogr" ) );
  // fid, then the values as JSON text, in the order of their first feature
  QCOMPARE( rows( &v ), QStringList( { "1|1|3|NULL|NULL|k|NULL", "2|\"1\"|3|NULL|NULL|k|NULL", "3|2|2|NULL|NULL|k|NULL" } ) );
}

void TestCheckAnonymity::randomGeoPackagesAgreeWithSqlite()
{
  // Random GeoPackage tables: declared types and collations, NULLs, mixed storage and odd text, put
  // in by SQL. On every one the check must find the classes SQLite's own recount finds (grouped by
  // typeof() and a binary comparison of each QI).
  const QStringList types = { "INTEGER", "TEXT", "TEXT COLLATE NOCASE", "TEXT COLLATE RTRIM", "REAL", "BLOB", "NUMERIC", "DATE", "DATETIME", "BOOLEAN", "" };
  const QStringList values = { "NULL",
                               "1",
                               "1.0",
                               "'1'",
                               "X'31'",
                               "'01'",
                               "2",
                               "-0.0",
                               "0",
                               "1e300",
                               "'F'",
                               "'f'",
                               "'F '",
                               "X'46'",
                               "'7abc'",
                               "7",
                               "'2020-01-01'",
                               "'2020-1-1'",
                               "'a' || char(0) || 'b'",
                               "'a' || char(0) || 'c'",
                               "char(65279) || 'x'",
                               "'x'",
                               "'é'",
                               "'e'",
                               "X''",
                               "''" };
  const quint32 seed = QRandomGenerator::global()->generate();
  QRandomGenerator random( seed );
  QTemporaryDir dir;
  for ( int table = 0; table < 40; ++table )
  {
    const int qis = 1 + random.bounded( 2 );
    QStringList columns, names;
    QList<QStringList> pools;
    for ( int c = 0; c < qis; ++c )
    {
      names << QStringLiteral( "q%1" ).arg( c );
      columns << QStringLiteral( "q%1 %2" ).arg( c ).arg( types[random.bounded( types.size() )] );
      QStringList pool;
      for ( int i = 1 + random.bounded( 5 ); i > 0; --i )
        pool << values[random.bounded( values.size() )];
      pools << pool;
    }
    QList<QStringList> rows;
    for ( int r = random.bounded( 40 ); r > 0; --r )
    {
      QStringList row;
      for ( const QStringList &pool : pools )
        row << pool[random.bounded( pool.size() )];
      rows << row;
    }
    const QString path = dir.filePath( QStringLiteral( "t%1.gpkg" ).arg( table ) );
    makeGeoPackage( path, columns, rows );
    const qlonglong k = 2 + random.bounded( 4 );
    const QString what = QStringLiteral( "seed %1, table %2: %3" ).arg( seed ).arg( table ).arg( columns.join( ", " ) );
    QVariantMap p { { QStringLiteral( "INPUT" ), path + QStringLiteral( "|layername=t" ) }, { QStringLiteral( "QI_FIELDS" ), names }, { QStringLiteral( "K" ), k } };
    Feedback feedback;
    const QVariantMap r = vbastest::run( kCheck, p, mContext, true, &feedback );
    QVERIFY2( actualOutputs( r ) == expectedOutputs( sqlRecount( path, names ), k ), qPrintable( what ) );
    QVERIFY2( r.value( QStringLiteral( "RECORDS" ) ).toLongLong() == rows.size(), qPrintable( what ) );
  }
}

void TestCheckAnonymity::emptyTablePasses()
{
  // No rows, or rows of 0 records: nothing to check; it passes with a warning, and the counts are 0 or NULL.
  for ( const QList<QVariantList> &rows : { QList<QVariantList>(), QList<QVariantList> { { "F", 0 }, { "M", 0 } } } )
  {
    auto table = vbastest::table( QStringLiteral( "field=sex:string&field=n:integer" ), rows );
    QVariantMap p = parameters( table.get(), { QStringLiteral( "sex" ) }, 5 );
    p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
    Feedback feedback;
    const QVariantMap r = run( p, true, &feedback );
    QCOMPARE( r.value( QStringLiteral( "PASS" ) ).toBool(), true );
    QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 0LL );
    QCOMPARE( r.value( QStringLiteral( "ECS" ) ).toLongLong(), 0LL );
    QVERIFY( r.value( QStringLiteral( "SMALLEST_EC" ) ).isNull() );
    QCOMPARE( violations( r )->featureCount(), 0LL );
    QVERIFY( feedback.warned( QStringLiteral( "no records" ) ) );
  }
}

void TestCheckAnonymity::badInputIsRefusedBeforeWriting_data()
{
  QTest::addColumn<QVariantMap>( "changes" ); // to handParameters()
  QTest::addColumn<QVariant>( "thirdCount" ); // n of the hand table's third row
  QTest::addColumn<QString>( "message" );
  const QVariant one( 1 );
  QTest::newRow( "L without a sensitive field" ) << QVariantMap { { "SENSITIVE_FIELD", QString() }, { "T", 1 } } << one << "L = 2 needs a sensitive field (SENSITIVE_FIELD)";
  QTest::newRow( "T without a sensitive field" ) << QVariantMap { { "SENSITIVE_FIELD", QString() }, { "L", 1 } } << one << "T = 0.5 needs a sensitive field (SENSITIVE_FIELD)";
  QTest::newRow( "T = 0" ) << QVariantMap { { "T", 0 } } << one << "T must be above 0";
  QTest::newRow( "K = 1" ) << QVariantMap { { "K", 1 } } << one << "K must be a whole number from 2";
  QTest::newRow( "L = 1.5" ) << QVariantMap { { "L", 1.5 } } << one << "L = 1.5";
  QTest::newRow( "missing QI field" ) << QVariantMap { { "QI_FIELDS", QStringList { "sex", "nosuch" } } } << one << "no field 'nosuch' (QI field, QI_FIELDS)";
  QTest::newRow( "missing count field" ) << QVariantMap { { "COUNT_FIELD", "nosuch" } } << one << "no field 'nosuch' (COUNT_FIELD)";
  QTest::newRow( "QI listed twice" ) << QVariantMap { { "QI_FIELDS", QStringList { "sex", "SEX" } } } << one << "'sex' is listed twice";
  QTest::newRow( "sensitive field a QI" ) << QVariantMap { { "SENSITIVE_FIELD", "agg" } } << one << "'agg' is also a QI field";
  QTest::newRow( "count field a QI" ) << QVariantMap { { "COUNT_FIELD", "agg" } } << one << "'agg' is also a QI or the sensitive field";
  QTest::newRow( "QI named like a measure" ) << QVariantMap { { "QI_FIELDS", QStringList { "sex", "Records" } } } << one << "'Records' has the name of a field that VIOLATIONS adds";
  QTest::newRow( "NULL count" ) << QVariantMap() << QVariant( QVariant::Double ) << "Record row 3 (feature id 3): the count field 'n' holds NULL";
  QTest::newRow( "negative count" ) << QVariantMap() << QVariant( -1 ) << "Record row 3 (feature id 3): the count field 'n' holds -1";
  QTest::newRow( "fractional count" ) << QVariantMap() << QVariant( 2.5 ) << "Record row 3 (feature id 3): the count field 'n' holds 2.5";
}

void TestCheckAnonymity::badInputIsRefusedBeforeWriting()
{
  QFETCH( QVariantMap, changes );
  QFETCH( QVariant, thirdCount );
  QFETCH( QString, message );
  QTemporaryDir dir;
  auto table = handTable( thirdCount );
  QVariantMap p = handParameters( table.get() );
  for ( auto it = changes.constBegin(); it != changes.constEnd(); ++it )
    p.insert( it.key(), it.value() );
  p.insert( QStringLiteral( "VIOLATIONS" ), dir.filePath( QStringLiteral( "violations.gpkg" ) ) );
  Feedback feedback;
  const QVariantMap r = run( p, false, &feedback );
  QVERIFY( r.isEmpty() );
  QVERIFY2( feedback.error().contains( message ), qPrintable( feedback.error() ) );
  QCOMPARE( vbastest::entries( dir.path() ), QStringList() ); // no output, no temporary
}

void TestCheckAnonymity::destinationOverInputIsRefused()
{
  // VIOLATIONS over the checked table's own GeoPackage, or into its table: refused, the file intact.
  QTemporaryDir dir;
  const QString path = dir.filePath( QStringLiteral( "release.gpkg" ) );
  auto memory = handTable();
  vbastest::save( memory.get(), path, QStringLiteral( "release" ) );
  QgsVectorLayer release( path, QStringLiteral( "release" ), QStringLiteral( "ogr" ) );
  QVERIFY( release.isValid() );
  const QStringList before = vbastest::entries( dir.path() );
  for ( const QString &destination : { path, QStringLiteral( "ogr:dbname='%1' table=\"release\"" ).arg( path ) } )
  {
    QVariantMap p = handParameters( &release );
    p.insert( QStringLiteral( "VIOLATIONS" ), destination );
    Feedback feedback;
    run( p, false, &feedback );
    QVERIFY2( feedback.error().contains( QStringLiteral( "would overwrite the input INPUT" ) ), qPrintable( feedback.error() ) );
    QCOMPARE( release.featureCount(), 7LL );
    QCOMPARE( vbastest::entries( dir.path() ), before );
  }
}

void TestCheckAnonymity::canceled()
{
  QTemporaryDir dir;
  QVariantMap p = parameters( mRelease, kSampleQis, 5 );
  p.insert( QStringLiteral( "VIOLATIONS" ), dir.filePath( QStringLiteral( "violations.gpkg" ) ) );
  Feedback feedback;
  feedback.cancel();
  run( p, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Canceled" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( vbastest::entries( dir.path() ), QStringList() );
}

QTEST_MAIN( TestCheckAnonymity )
#include "test_checkanonymity.moc"
