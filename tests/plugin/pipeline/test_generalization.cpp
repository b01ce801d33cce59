// Generalization chosen with the geography (docs/generalization.md) through QgsProcessingAlgorithm::run:
// vbas:anonymize with the shipped ARX hierarchy of the sample layers, each release recounted here by
// the test's own code (k on the values as written, "*" a value of its own, every label one the
// hierarchy file has at the chosen level) and passed by vbas:checkanonymity; a hand-worked table for
// local suppression and the field types; every bad hierarchy refused with nothing written. No record
// content is printed.
#include "tests/plugin/qgis_test_util.h"
#include "plugin/support/vbasqgiscompat.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qgsprocessingmodelalgorithm.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{
const QString kHierarchy = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/hierarchies/age_group.csv" );
const QStringList kSampleQis = { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };

//! The labels of the hierarchy file at a level (level 0: the values), read here with a plain split.
std::set<QString> fileLabels( const QString &path, int level )
{
  QFile file( path );
  file.open( QIODevice::ReadOnly );
  std::set<QString> labels;
  for ( const QByteArray &line : file.readAll().split( '\n' ) )
    if ( !line.trimmed().isEmpty() )
      labels.insert( QString::fromUtf8( line ).trimmed().split( ';' ).value( level ) );
  return labels;
}

//! The records of each class of a layer on fields, its values joined as text (NULL as "NULL").
std::map<QString, qlonglong> classes( QgsVectorLayer *layer, const QStringList &fields )
{
  std::map<QString, qlonglong> counts;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
  {
    QStringList key;
    for ( const QString &field : fields )
      key << ( f.attribute( field ).isNull() ? QStringLiteral( "NULL" ) : f.attribute( field ).toString() );
    ++counts[key.join( '|' )];
  }
  return counts;
}
} // namespace

class TestGeneralization : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void sampleWithArxHierarchy();
    void recordSuppressionOnly();
    void localSuppressionKeepsTypes();
    void intervalsReleaseText();
    void oddButValidArxFile();
    void badHierarchiesRefused_data();
    void badHierarchiesRefused();
    void otherStepsRefused();
    void tooManyLocallySuppressedQisRefused();
    void inAModel();
    void evaluateGeneralizedRelease();
    void componentReleasesAsAnonymize();
    void outputOntoAHierarchyFileRefused();
    void specialHierarchyFilesRefused_data();
    void specialHierarchyFilesRefused();
    void qiNamesInAnyLetterCase();
    void evaluateChecksTheHierarchies();

  private:
    //! The hand table: one aggregate (FIXED_SITES = 1) of the grid, F/30 x 20, M/30 x 3, M/40 x 3 in region r00; k = 5, limit 30 %.
    QVariantMap handParameters( QgsVectorLayer *regions, QgsVectorLayer *records ) const;

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mRegions;
    std::unique_ptr<QgsVectorLayer> mPatients;
    QTemporaryDir mDir;
};

void TestGeneralization::initTestCase()
{
  vbastest::initQgisWithProvider();
  mRegions = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg|layername=ny8_tracts" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  mPatients = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg|layername=patients" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QVERIFY( mRegions->isValid() && mPatients->isValid() );
}

void TestGeneralization::cleanupTestCase()
{
  mRegions.reset();
  mPatients.reset();
  mContext.temporaryLayerStore()->removeAllMapLayers();
  QgsApplication::exitQgis();
}

void TestGeneralization::sampleWithArxHierarchy()
{
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } );
  const QString reportPath = mDir.filePath( QStringLiteral( "report.html" ) );
  p.insert( QStringLiteral( "REPORT" ), reportPath );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true, &feedback );
  QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  QVERIFY( release );
  QVERIFY( feedback.messages.join( '\n' ).contains( QStringLiteral( "Generalization lattice: 16 nodes" ) ) );
  QCOMPARE( r.value( QStringLiteral( "LATTICE_SIZE" ) ).toLongLong(), 16 ); // age_group 4 levels x sex 2 x race 2
  QVERIFY( r.value( QStringLiteral( "NODES_EVALUATED" ) ).toLongLong() >= 1 );
  // Every record released or suppressed; the release recounted: no class below k as written.
  QCOMPARE( release->featureCount() + r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 40000 );
  const std::map<QString, qlonglong> ecs = classes( release, kSampleQis + QStringList { QStringLiteral( "aggregate_id" ) } );
  for ( const auto &[key, records] : ecs )
    QVERIFY2( records >= 5, qPrintable( QStringLiteral( "a released class of %1 records" ).arg( records ) ) );
  // Within the suppression limit: at most 5 % of the records starred or dropped.
  const qlonglong starred = r.value( QStringLiteral( "RECORDS_STARRED" ) ).toLongLong();
  QVERIFY( starred + r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() <= 2000 );
  // The "*" written, counted here: as many as VALUES_STARRED, on as many rows as RECORDS_STARRED; every age label is the file's at the chosen level.
  const int ageLevel = r.value( QStringLiteral( "LEVELS" ) ).toString().section( QStringLiteral( "age_group = " ), 1 ).section( ' ', 0, 0 ).toInt();
  std::set<QString> ageLabels = fileLabels( kHierarchy, ageLevel );
  ageLabels.insert( QStringLiteral( "*" ) );
  qlonglong stars = 0, starredRows = 0;
  QgsFeature f;
  QgsFeatureIterator it = release->getFeatures();
  while ( it.nextFeature( f ) )
  {
    int here = 0;
    for ( const QString &qi : kSampleQis )
      here += f.attribute( qi ).toString() == QLatin1String( "*" ) ? 1 : 0;
    stars += here;
    starredRows += here > 0 ? 1 : 0;
    QVERIFY( ageLabels.count( f.attribute( QStringLiteral( "age_group" ) ).toString() ) );
  }
  QCOMPARE( stars, r.value( QStringLiteral( "VALUES_STARRED" ) ).toLongLong() );
  QCOMPARE( starredRows, starred );
  // The lookup records the levels on every region's row.
  QgsVectorLayer *lookup = vbastest::output( r, QStringLiteral( "LOOKUP" ), mContext );
  QVERIFY( lookup );
  QCOMPARE( lookup->featureCount(), mRegions->featureCount() );
  QCOMPARE( lookup->uniqueValues( lookup->fields().lookupField( QStringLiteral( "qi_levels" ) ) ), QSet<QVariant>( { r.value( QStringLiteral( "LEVELS" ) ) } ) );
  // The independent checker passes it.
  const QVariantMap check = vbastest::run( QStringLiteral( "vbas:checkanonymity" ),
                                           { { QStringLiteral( "INPUT" ), layerValue( release ) },
                                             { QStringLiteral( "QI_FIELDS" ), kSampleQis + QStringList { QStringLiteral( "aggregate_id" ) } },
                                             { QStringLiteral( "K" ), 5 },
                                             { QStringLiteral( "VIOLATIONS" ), QgsProcessing::TEMPORARY_OUTPUT } },
                                           mContext, true );
  QCOMPARE( check.value( QStringLiteral( "PASS" ) ).toBool(), true );
  // The report gives the levels, and its command repeats the run with the hierarchy file.
  QFile report( reportPath );
  QVERIFY( report.open( QIODevice::ReadOnly ) );
  const QString html = QString::fromUtf8( report.readAll() );
  QVERIFY( html.contains( QStringLiteral( "<table id=\"generalization\">" ) ) );
  QVERIFY( html.contains( r.value( QStringLiteral( "LEVELS" ) ).toString().toHtmlEscaped() ) );
  QVERIFY( html.contains( QStringLiteral( "HIERARCHIES=" ) + kHierarchy ) );
  // The loss by every measure, the chosen node's.
  for ( const char *loss : { "LOSS_GENERIC_NUE", "LOSS_GENERIC_NUE_NORM", "LOSS_PREC", "LOSS_LM", "LOSS_DM_STAR", "LOSS_GC", "LOSS_ARE" } )
    QVERIFY2( r.value( loss ).isValid(), loss );
  QVERIFY( r.value( QStringLiteral( "RECORDS_GENERALIZED" ) ).toLongLong() >= starred );
  QVERIFY( r.value( QStringLiteral( "RECORDS_GENERALIZED" ) ).toLongLong() <= release->featureCount() );
  QVERIFY( html.contains( QStringLiteral( "Records generalized" ) ) );
  // Every aggregate without a released record is counted: the aggregates less those the release names.
  const QSet<QVariant> named = release->uniqueValues( release->fields().lookupField( QStringLiteral( "aggregate_id" ) ) );
  QCOMPARE( r.value( QStringLiteral( "UNITS_RELEASING_NOTHING" ) ).toLongLong(), r.value( QStringLiteral( "AGGREGATES" ) ).toLongLong() - named.size() );
  QVERIFY( r.value( QStringLiteral( "UNITS_IN_PIECES" ) ).isValid() );
}

void TestGeneralization::recordSuppressionOnly()
{
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } );
  p.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), false );
  p.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 2 );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  QCOMPARE( r.value( QStringLiteral( "RECORDS_STARRED" ) ).toLongLong(), 0 );
  QVERIFY( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong() <= 800 );
  // The paper's release (no hierarchy) suppresses 1.2 % here: the search keeps every QI at level 0,
  // and the release and its loss are the paper's, measured on the same scale.
  QCOMPARE( r.value( QStringLiteral( "LEVELS" ) ).toString(), QStringLiteral( "age_group = 0 of 3, sex = 0 of 1, race = 0 of 1" ) );
  const QVariantMap paper = vbastest::run( QStringLiteral( "vbas:anonymize" ), vbastest::sampleParameters( mRegions.get(), mPatients.get() ), mContext, true );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ), paper.value( QStringLiteral( "SUPPRESSED" ) ) );
  for ( const char *loss : { "LOSS_GENERIC_NUE", "LOSS_PREC", "LOSS_LM", "LOSS_DM_STAR" } )
    QVERIFY2( std::abs( r.value( loss ).toDouble() - paper.value( loss ).toDouble() ) <= 1e-9 * std::abs( paper.value( loss ).toDouble() ), loss );
  for ( const auto &[key, records] : classes( release, kSampleQis + QStringList { QStringLiteral( "aggregate_id" ) } ) )
  {
    QVERIFY( records >= 5 );
    QVERIFY( !key.split( '|' ).contains( QStringLiteral( "*" ) ) || r.value( QStringLiteral( "LEVELS" ) ).toString().contains( QStringLiteral( "= 1 of 1" ) ) );
  }
}

QVariantMap TestGeneralization::handParameters( QgsVectorLayer *regions, QgsVectorLayer *records ) const
{
  QVariantMap p = vbastest::inputParameters( regions, QStringLiteral( "id" ), records, QStringLiteral( "region" ), { QStringLiteral( "sex" ), QStringLiteral( "age" ) } );
  p.insert( QStringLiteral( "MODEL" ), 3 ); // a fixed number of sites
  p.insert( QStringLiteral( "FIXED_SITES" ), 1 );
  p.insert( QStringLiteral( "K" ), 5 );
  p.insert( QStringLiteral( "GENERALIZE" ), true );
  p.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 30 );
  return p;
}

namespace
{
std::unique_ptr<QgsVectorLayer> handRecords()
{
  QList<QVariantList> rows;
  for ( int i = 0; i < 20; ++i )
    rows << QVariantList { "r00", "F", 30 };
  for ( int i = 0; i < 3; ++i )
    rows << QVariantList { "r00", "M", 30 } << QVariantList { "r00", "M", 40 };
  return vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=age:integer" ), rows );
}
} // namespace

void TestGeneralization::localSuppressionKeepsTypes()
{
  // Node (sex 0, age 0) has (M, 30) 3 and (M, 40) 3 below k = 5. Age carries the least information
  // (30: 23 records, 40: 3), so it is starred first: (M, *) holds 6. Generic NUE: 6 bits for the six
  // starred ages (3 and 3 within them), less than age -> * for all 26 (23 log2(26/23) + 3 log2(26/3),
  // 13.4 bits) or sex -> * for all (20.3 bits); the geography loses nothing (one region holds them all).
  auto regions = vbastest::grid();
  auto records = handRecords();
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), handParameters( regions.get(), records.get() ), mContext, true );
  QCOMPARE( r.value( QStringLiteral( "LEVELS" ) ).toString(), QStringLiteral( "sex = 0 of 1, age = 0 of 1" ) );
  QCOMPARE( r.value( QStringLiteral( "LATTICE_SIZE" ) ).toLongLong(), 4 );
  QCOMPARE( r.value( QStringLiteral( "RECORDS_STARRED" ) ).toLongLong(), 6 );
  QCOMPARE( r.value( QStringLiteral( "VALUES_STARRED" ) ).toLongLong(), 6 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 0 );
  QVERIFY( std::abs( r.value( QStringLiteral( "LOSS_GENERIC_NUE" ) ).toDouble() - 6.0 ) < 1e-9 );
  // Generalized: the six starred records; GC: their six ages of 26 x 2 values.
  QCOMPARE( r.value( QStringLiteral( "RECORDS_GENERALIZED" ) ).toLongLong(), 6 );
  QVERIFY( std::abs( r.value( QStringLiteral( "LOSS_GC" ) ).toDouble() - 6.0 / 52 ) < 1e-12 );
  QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  // age keeps its integer type: its "*" is NULL; sex is text: "*" there would be text.
  QCOMPARE( release->fields().field( QStringLiteral( "age" ) ).type(), vbasqgis::Field::Int );
  const std::map<QString, qlonglong> expected { { QStringLiteral( "F|30|1" ), 20 }, { QStringLiteral( "M|NULL|1" ), 6 } };
  QCOMPARE( classes( release, { QStringLiteral( "sex" ), QStringLiteral( "age" ), QStringLiteral( "aggregate_id" ) } ), expected );
  // The checker counts the starred class as written, a class of its own: it holds 6, below k = 7.
  const QVariantMap check = vbastest::run( QStringLiteral( "vbas:checkanonymity" ),
                                           { { QStringLiteral( "INPUT" ), layerValue( release ) },
                                             { QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ), QStringLiteral( "age" ), QStringLiteral( "aggregate_id" ) } },
                                             { QStringLiteral( "K" ), 7 },
                                             { QStringLiteral( "VIOLATIONS" ), QgsProcessing::TEMPORARY_OUTPUT } },
                                           mContext, true );
  QCOMPARE( check.value( QStringLiteral( "PASS" ) ).toBool(), false );
  QCOMPARE( check.value( QStringLiteral( "VIOLATING_RECORDS" ) ).toLongLong(), 6 );
}

void TestGeneralization::intervalsReleaseText()
{
  // Intervals of width 10 for age: 30 -> [30, 40), 40 -> [40, 50). The field is released as text.
  auto regions = vbastest::grid();
  auto records = handRecords();
  QVariantMap p = handParameters( regions.get(), records.get() );
  p.insert( QStringLiteral( "INTERVALS" ), QStringLiteral( "age=10" ) );
  p.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 0 );
  p.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), false );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  QCOMPARE( release->fields().field( QStringLiteral( "age" ) ).type(), vbasqgis::Field::String );
  // Age's levels: 30, 40; [30, 40), [40, 50); "*" (width 20 would hold both). With no suppression
  // allowed, (M, 30) 3 and (M, 40) 3 must merge, which only age "*" does: (F, *) 20, (M, *) 6; sex "*"
  // leaves (*, 40) 3 at any age level below "*".
  QCOMPARE( r.value( QStringLiteral( "LEVELS" ) ).toString(), QStringLiteral( "sex = 0 of 1, age = 2 of 2" ) );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 0 );
  // Every record's age is "*": all 26 generalized, half their values coarser.
  QCOMPARE( r.value( QStringLiteral( "RECORDS_GENERALIZED" ) ).toLongLong(), 26 );
  QVERIFY( std::abs( r.value( QStringLiteral( "LOSS_GC" ) ).toDouble() - 0.5 ) < 1e-12 );
  const std::map<QString, qlonglong> expected { { QStringLiteral( "F|*|1" ), 20 }, { QStringLiteral( "M|*|1" ), 6 } };
  QCOMPARE( classes( release, { QStringLiteral( "sex" ), QStringLiteral( "age" ), QStringLiteral( "aggregate_id" ) } ), expected );
}

void TestGeneralization::oddButValidArxFile()
{
  // ARX's odd but valid content: a byte order mark, quoted values and a quoted label holding the
  // separator, UTF-8, empty fields at the end of a row, a blank line. Level 1 puts F and M together.
  QFile file( mDir.filePath( QStringLiteral( "sex.csv" ) ) );
  QVERIFY( file.open( QIODevice::WriteOnly ) );
  file.write( "\xef\xbb\xbf\"F\";\"Frau ; M\xc3\xa4nner\";*;;\n\nM;\"Frau ; M\xc3\xa4nner\";*;\n" );
  file.close();
  // (F, 30) 3, (M, 30) 3, (F, 40) 20; k = 5, no suppression allowed: sex must merge (age "*" leaves
  // (M, *) 3). Level 1 merges as "*" does and comes first among equal losses: its label is written.
  auto regions = vbastest::grid();
  QList<QVariantList> rows;
  for ( int i = 0; i < 3; ++i )
    rows << QVariantList { "r00", "F", 30 } << QVariantList { "r00", "M", 30 };
  for ( int i = 0; i < 20; ++i )
    rows << QVariantList { "r00", "F", 40 };
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=age:integer" ), rows );
  QVariantMap p = handParameters( regions.get(), records.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { file.fileName() } );
  p.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 0 );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( r.value( QStringLiteral( "LATTICE_SIZE" ) ).toLongLong(), 6 ); // sex 3 levels x age 2
  QCOMPARE( r.value( QStringLiteral( "LEVELS" ) ).toString(), QStringLiteral( "sex = 1 of 2, age = 0 of 1" ) );
  QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  const std::map<QString, qlonglong> expected { { QStringLiteral( "Frau ; M\u00e4nner|30|1" ), 6 }, { QStringLiteral( "Frau ; M\u00e4nner|40|1" ), 20 } };
  QCOMPARE( classes( release, { QStringLiteral( "sex" ), QStringLiteral( "age" ), QStringLiteral( "aggregate_id" ) } ), expected );
}

void TestGeneralization::badHierarchiesRefused_data()
{
  QTest::addColumn<QString>( "name" );
  QTest::addColumn<QByteArray>( "content" );
  QTest::addColumn<QString>( "intervals" );
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "named after no QI" ) << "ages.csv" << QByteArray( "30;*\n40;*\n" ) << QString() << "is named after no QI field";
  QTest::newRow( "value missing" ) << "age.csv" << QByteArray( "30;*\n" ) << QString() << "holds the value '40', which its hierarchy file has no row for";
  QTest::newRow( "ragged" ) << "age.csv" << QByteArray( "30;young;*\n40;*\n" ) << QString() << "line 2 has 2 columns, line 1 has 3";
  QTest::newRow( "not coarsening" ) << "age.csv" << QByteArray( "30;x;p;*\n40;x;q;*\n" ) << QString() << "every level must be a coarsening";
  QTest::newRow( "value twice" ) << "age.csv" << QByteArray( "30;*\n40;*\n30;*\n" ) << QString() << "the value '30' is already on line 1";
  QTest::newRow( "not UTF-8" ) << "age.csv" << QByteArray( "30;\xff\xfe;*\n40;a;*\n" ) << QString() << "not UTF-8";
  QTest::newRow( "intervals syntax" ) << QString() << QByteArray() << "age:10"
                                      << "is not field=width";
  QTest::newRow( "intervals no QI" ) << QString() << QByteArray() << "weight=10"
                                     << "is not a QI field";
  QTest::newRow( "intervals of text" ) << QString() << QByteArray() << "sex=10"
                                       << "'F' is not a number";
  QTest::newRow( "intervals too narrow" ) << QString() << QByteArray() << "age=1e-300"
                                          << "the width 1e-300 is too small for values such as '30'";
}

void TestGeneralization::badHierarchiesRefused()
{
  QFETCH( QString, name );
  QFETCH( QByteArray, content );
  QFETCH( QString, intervals );
  QFETCH( QString, message );
  auto regions = vbastest::grid();
  auto records = handRecords();
  QVariantMap p = handParameters( regions.get(), records.get() );
  if ( !name.isEmpty() )
  {
    QFile file( mDir.filePath( name ) );
    QVERIFY( file.open( QIODevice::WriteOnly ) );
    file.write( content );
    file.close();
    p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { file.fileName() } );
  }
  p.insert( QStringLiteral( "INTERVALS" ), intervals );
  const QString destination = mDir.filePath( QStringLiteral( "refused.gpkg" ) );
  p.insert( QStringLiteral( "ANONYMIZED" ), destination );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.errors.join( '\n' ).contains( message ), qPrintable( feedback.errors.join( '\n' ) ) );
  QVERIFY( !QFile::exists( destination ) );
}

void TestGeneralization::otherStepsRefused()
{
  auto regions = vbastest::grid();
  auto records = handRecords();
  for ( const char *step : { "CONTIGUOUS", "REFINE_BOUNDARIES", "SEARCH" } )
  {
    QVariantMap p = handParameters( regions.get(), records.get() );
    p.insert( step, true );
    Feedback feedback;
    vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
    QVERIFY2( feedback.errors.join( '\n' ).contains( QStringLiteral( "does not combine with %1" ).arg( step ) ), qPrintable( feedback.errors.join( '\n' ) ) );
  }
  QVariantMap p = handParameters( regions.get(), records.get() );
  p.insert( QStringLiteral( "METHOD" ), 1 );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY( feedback.errors.join( '\n' ).contains( QStringLiteral( "METHOD = ADC" ) ) );
}

void TestGeneralization::tooManyLocallySuppressedQisRefused()
{
  // Nine QIs with LOCAL_SUPPRESSION: refused at once, naming both parameters and the limit (the search
  // at 16 QIs once ran for minutes on 3,000 records); without local suppression the nine are searched.
  QStringList qis;
  QString fields = QStringLiteral( "field=region:string" );
  for ( int q = 1; q <= 9; ++q )
  {
    qis << QStringLiteral( "q%1" ).arg( q );
    fields += QStringLiteral( "&field=q%1:string" ).arg( q );
  }
  QList<QVariantList> rows;
  for ( int i = 0; i < 40; ++i )
  {
    QVariantList row { "r00" };
    for ( int q = 0; q < 9; ++q )
      row << QString( QChar( 'a' + ( i >> q ) % 2 ) );
    rows << row;
  }
  auto regions = vbastest::grid();
  auto records = vbastest::table( fields, rows );
  QVariantMap p = handParameters( regions.get(), records.get() );
  p.insert( QStringLiteral( "QI_FIELDS" ), qis );
  QElapsedTimer timer;
  timer.start();
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.errors.join( '\n' ).contains( QStringLiteral( "LOCAL_SUPPRESSION takes at most 8 QIs; QI_FIELDS names 9: turn it off or name fewer QIs" ) ),
            qPrintable( feedback.errors.join( '\n' ) ) );
  QVERIFY2( timer.elapsed() < 10000, qPrintable( QString::number( timer.elapsed() ) ) );
  p.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), false );
  p.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 100 );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
}

void TestGeneralization::inAModel()
{
  // vbas:anonymize with the hierarchy file, as a child of a model (as the model builder saves it):
  // the sample with k = 25 releases race as "*" for every record (docs/generalization.md).
  QgsProcessingModelAlgorithm model( QStringLiteral( "generalize" ), QStringLiteral( "vbas" ) );
  QgsProcessingModelChildAlgorithm child( QStringLiteral( "vbas:anonymize" ) );
  child.setChildId( QStringLiteral( "anonymize" ) );
  const QVariantMap statics { { QStringLiteral( "REGIONS" ), ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ) },
                              { QStringLiteral( "REGION_ID" ), QStringLiteral( "AREAKEY" ) },
                              { QStringLiteral( "RECORDS" ), ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ) },
                              { QStringLiteral( "RECORD_REGION" ), QStringLiteral( "tract_id" ) },
                              { QStringLiteral( "QI_FIELDS" ), kSampleQis },
                              { QStringLiteral( "K" ), 25 },
                              { QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } } };
  for ( auto it = statics.constBegin(); it != statics.constEnd(); ++it )
    child.addParameterSources( it.key(), { QgsProcessingModelChildParameterSource::fromStaticValue( it.value() ) } );
  QgsProcessingModelOutput output( QStringLiteral( "release" ), QStringLiteral( "Release" ) );
  output.setChildId( QStringLiteral( "anonymize" ) );
  output.setChildOutputName( QStringLiteral( "ANONYMIZED" ) );
  child.setModelOutputs( { { QStringLiteral( "release" ), output } } );
  model.addChildAlgorithm( child );
  model.updateDestinationParameters();
  // The model's destination parameter (and result) for the output: named "anonymize:release" up to some QGIS release, "release" since.
  QCOMPARE( model.destinationParameterDefinitions().size(), 1 );
  const QString destination = model.destinationParameterDefinitions().at( 0 )->name();
  Feedback feedback;
  bool ok = false;
  const QVariantMap results = model.run( { { destination, QgsProcessing::TEMPORARY_OUTPUT } }, mContext, &feedback, &ok );
  QVERIFY2( ok, qPrintable( feedback.errors.join( '\n' ) ) );
  QgsVectorLayer *release = vbastest::output( results, destination, mContext );
  QVERIFY( release );
  const std::map<QString, qlonglong> ecs = classes( release, kSampleQis + QStringList { QStringLiteral( "aggregate_id" ) } );
  for ( const auto &[key, records] : ecs )
  {
    QVERIFY( records >= 25 );
    QCOMPARE( key.split( '|' ).value( 2 ), QStringLiteral( "*" ) );
  }
}

void TestGeneralization::evaluateGeneralizedRelease()
{
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } );
  const QVariantMap made = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QgsVectorLayer *sites = vbastest::output( made, QStringLiteral( "SITE_POINTS" ), mContext );
  QgsVectorLayer *lookup = vbastest::output( made, QStringLiteral( "LOOKUP" ), mContext );
  QVERIFY( sites && lookup );
  QVariantMap e = vbastest::inputParameters( mRegions.get(), QStringLiteral( "AREAKEY" ), mPatients.get(), QStringLiteral( "tract_id" ), kSampleQis );
  for ( const char *sink : { "SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI" } )
    e.remove( sink );
  e.insert( QStringLiteral( "SITES" ), layerValue( sites ) );
  e.insert( QStringLiteral( "LOOKUP" ), layerValue( lookup ) );
  e.insert( QStringLiteral( "K" ), 5 );
  e.insert( QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } );
  const QString reportPath = mDir.filePath( QStringLiteral( "evaluation.html" ) );
  e.insert( QStringLiteral( "REPORT" ), reportPath );
  // At the lookup's levels, from the records: the same release, measured the same.
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, true );
  for ( const char *same : { "LEVELS", "RELEASED", "SUPPRESSED", "RECORDS_STARRED", "VALUES_STARRED", "RECORDS_GENERALIZED", "AGGREGATES", "DM", "LOSS_GENERIC_NUE", "LOSS_PREC", "LOSS_LM",
                             "LOSS_DM_STAR", "LOSS_GC", "LOSS_ARE", "MAX_RISK" } )
    QVERIFY2( r.value( same ).isValid() && r.value( same ) == made.value( same ),
              qPrintable( QStringLiteral( "%1: %2 evaluated, %3 made" ).arg( same, r.value( same ).toString(), made.value( same ).toString() ) ) );
  QCOMPARE( r.value( QStringLiteral( "NODES_EVALUATED" ) ).toLongLong(), 1 );
  QFile report( reportPath );
  QVERIFY( report.open( QIODevice::ReadOnly ) );
  QVERIFY( QString::fromUtf8( report.readAll() ).contains( QStringLiteral( "<table id=\"generalization\">" ) ) );
  // Without the hierarchy file, age_group's levels are not those of the lookup: refused, naming it.
  Feedback feedback;
  e.remove( QStringLiteral( "HIERARCHIES" ) );
  vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, false, &feedback );
  QVERIFY2( feedback.errors.join( '\n' ).contains( QStringLiteral( "give the hierarchy files and intervals of the release" ) ), qPrintable( feedback.errors.join( '\n' ) ) );
  // Hierarchies with the lookup of a release that is not generalized: refused.
  const QVariantMap paper = vbastest::run( QStringLiteral( "vbas:anonymize" ), vbastest::sampleParameters( mRegions.get(), mPatients.get() ), mContext, true );
  e.insert( QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } );
  e.insert( QStringLiteral( "SITES" ), layerValue( vbastest::output( paper, QStringLiteral( "SITE_POINTS" ), mContext ) ) );
  e.insert( QStringLiteral( "LOOKUP" ), layerValue( vbastest::output( paper, QStringLiteral( "LOOKUP" ), mContext ) ) );
  Feedback refused;
  vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, false, &refused );
  QVERIFY2( refused.errors.join( '\n' ).contains( QStringLiteral( "has no qi_levels" ) ), qPrintable( refused.errors.join( '\n' ) ) );
  // Without them, the paper's release measured as anonymize measured it.
  e.remove( QStringLiteral( "HIERARCHIES" ) );
  const QVariantMap measured = vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, true );
  for ( const char *same : { "SUPPRESSED", "LOSS_GENERIC_NUE", "LOSS_GC", "LOSS_ARE", "RECORDS_GENERALIZED" } )
    QVERIFY2( measured.value( same ).isValid() && measured.value( same ) == paper.value( same ), same );
  QVERIFY( !measured.contains( QStringLiteral( "LEVELS" ) ) || measured.value( QStringLiteral( "LEVELS" ) ).isNull() );
}

void TestGeneralization::componentReleasesAsAnonymize()
{
  // vbas:generalize, the model's component, makes the release vbas:anonymize makes with the same hierarchies.
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } );
  const QVariantMap whole = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  for ( const char *other : { "VORONOI", "EVALUATION", "SEED" } )
    p.remove( other );
  const QVariantMap component = vbastest::run( QStringLiteral( "vbas:generalize" ), p, mContext, true );
  for ( const char *same : { "LEVELS", "LATTICE_SIZE", "SITES", "AGGREGATES", "RELEASED", "SUPPRESSED", "RECORDS_STARRED", "VALUES_STARRED", "RECORDS_GENERALIZED", "LOSS_GENERIC_NUE", "LOSS_ARE",
                             "UNITS_IN_PIECES", "UNITS_RELEASING_NOTHING" } )
    QVERIFY2( component.value( same ).isValid() && component.value( same ) == whole.value( same ), same );
  const QStringList released = kSampleQis + QStringList { QStringLiteral( "aggregate_id" ) };
  QCOMPARE( classes( vbastest::output( component, QStringLiteral( "ANONYMIZED" ), mContext ), released ), classes( vbastest::output( whole, QStringLiteral( "ANONYMIZED" ), mContext ), released ) );
  // It always generalizes: without a hierarchy, every QI is value -> *.
  QVariantMap bare = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  bare.remove( QStringLiteral( "EVALUATION" ) );
  const QVariantMap starred = vbastest::run( QStringLiteral( "vbas:generalize" ), bare, mContext, true );
  QCOMPARE( starred.value( QStringLiteral( "LATTICE_SIZE" ) ).toLongLong(), 8 );
}

void TestGeneralization::outputOntoAHierarchyFileRefused()
{
  // A hierarchy file is an input: no output may replace it, however its path is spelled.
  QTemporaryDir dir;
  QVERIFY( dir.isValid() );
  const QString hierarchy = dir.filePath( QStringLiteral( "age_group.csv" ) );
  QVERIFY( QFile::copy( kHierarchy, hierarchy ) );
  QVERIFY( QDir().mkpath( dir.filePath( QStringLiteral( "sub" ) ) ) );
  QCOMPARE( ::link( QFile::encodeName( hierarchy ).constData(), QFile::encodeName( dir.filePath( QStringLiteral( "link.html" ) ) ).constData() ), 0 ); // a hard link: the same file
  QFile original( hierarchy );
  QVERIFY( original.open( QIODevice::ReadOnly ) );
  const QByteArray before = original.readAll();
  original.close();
  const QList<QPair<QString, QString>> destinations { { QStringLiteral( "EVALUATION" ), dir.filePath( QStringLiteral( "sub/../age_group.csv" ) ) },
                                                      { QStringLiteral( "REPORT" ), dir.filePath( QStringLiteral( "link.html" ) ) } };
  for ( const QString &algorithm : { QStringLiteral( "vbas:anonymize" ), QStringLiteral( "vbas:evaluate" ) } )
    for ( const auto &[output, path] : destinations )
    {
      QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
      p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { hierarchy } );
      if ( algorithm == QLatin1String( "vbas:evaluate" ) )
      {
        for ( const char *sink : { "SITE_POINTS", "AGGREGATED", "ANONYMIZED", "VORONOI" } )
          p.remove( sink );
        p.insert( QStringLiteral( "SITES" ), layerValue( mRegions.get() ) ); // refused before any input is read
        p.insert( QStringLiteral( "LOOKUP" ), layerValue( mRegions.get() ) );
      }
      p.insert( output, path );
      Feedback feedback;
      vbastest::run( algorithm, p, mContext, false, &feedback );
      QVERIFY2( feedback.errors.join( '\n' ).contains( QStringLiteral( "would overwrite the input HIERARCHIES" ) ), qPrintable( algorithm + ' ' + output + ": " + feedback.errors.join( '\n' ) ) );
      QVERIFY( original.open( QIODevice::ReadOnly ) );
      QCOMPARE( original.readAll(), before );
      original.close();
    }
}

namespace
{
//! From 5 s on, opens and closes a FIFO for writing until destroyed: a run blocked opening it to read then reads an empty file, and a test fails instead of hanging.
class FifoUnblocker
{
  public:
    explicit FifoUnblocker( const QByteArray &path )
      : mThread( [this, path] {
        for ( int waited = 0; !mDone; waited += 50 )
        {
          std::this_thread::sleep_for( std::chrono::milliseconds( 50 ) );
          const int fd = waited >= 5000 ? ::open( path.constData(), O_WRONLY | O_NONBLOCK ) : -1;
          if ( fd >= 0 )
            ::close( fd );
        }
      } )
    {
    }
    ~FifoUnblocker()
    {
      mDone = true;
      mThread.join();
    }

  private:
    std::atomic<bool> mDone { false };
    std::thread mThread;
};
} // namespace

void TestGeneralization::specialHierarchyFilesRefused_data()
{
  QTest::addColumn<QString>( "kind" );
  QTest::newRow( "folder" ) << "a folder";
  QTest::newRow( "FIFO" ) << "a FIFO";
}

void TestGeneralization::specialHierarchyFilesRefused()
{
  // A folder or a FIFO given as a hierarchy file is refused as what it is, at once: before its name is
  // matched to a QI (the folder), before it is opened (a FIFO would block the run until a writer came).
  QFETCH( QString, kind );
  QTemporaryDir dir;
  QVERIFY( dir.isValid() );
  const QString path = dir.filePath( kind == QLatin1String( "a folder" ) ? QStringLiteral( "hierarchies" ) : QStringLiteral( "sex.csv" ) );
  if ( kind == QLatin1String( "a folder" ) )
    QVERIFY( QDir().mkpath( path ) );
  else
    QCOMPARE( ::mkfifo( QFile::encodeName( path ).constData(), 0600 ), 0 );
  const FifoUnblocker unblocker( QFile::encodeName( path ) );
  auto regions = vbastest::grid();
  auto records = handRecords();
  QVariantMap p = handParameters( regions.get(), records.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { path } );
  QElapsedTimer timer;
  timer.start();
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "HIERARCHIES: %1 is %2, not a hierarchy file" ).arg( path, kind ) ), qPrintable( feedback.error() ) );
  QVERIFY( timer.elapsed() < 5000 );
}

void TestGeneralization::qiNamesInAnyLetterCase()
{
  // Hierarchy files and INTERVALS name QIs as QI_FIELDS names fields: in any letter case; the field's own name is used from then on.
  QTemporaryDir dir;
  QVERIFY( dir.isValid() );
  const QString upper = dir.filePath( QStringLiteral( "AGE_GROUP.csv" ) );
  QVERIFY( QFile::copy( kHierarchy, upper ) );
  QVariantMap p = vbastest::sampleParameters( mRegions.get(), mPatients.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { upper } );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( r.value( QStringLiteral( "LATTICE_SIZE" ) ).toLongLong(), 16 );
  QgsVectorLayer *release = vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext );
  QVERIFY( release );
  QCOMPARE( release->fields().field( QStringLiteral( "age_group" ) ).type(), vbasqgis::Field::String );
  // QI_FIELDS in capitals, the file as the field is spelled: the levels and the lookup name the field.
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "AGE_GROUP" ), QStringLiteral( "Sex" ), QStringLiteral( "race" ) } );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { kHierarchy } );
  const QVariantMap capitals = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QCOMPARE( capitals.value( QStringLiteral( "LEVELS" ) ), r.value( QStringLiteral( "LEVELS" ) ) );
  QVERIFY( capitals.value( QStringLiteral( "LEVELS" ) ).toString().startsWith( QStringLiteral( "age_group = " ) ) );
  // INTERVALS=AGE=10 for the field age: as age=10 (intervalsReleaseText).
  auto regions = vbastest::grid();
  auto records = handRecords();
  QVariantMap hand = handParameters( regions.get(), records.get() );
  hand.insert( QStringLiteral( "INTERVALS" ), QStringLiteral( "AGE=10" ) );
  hand.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 0 );
  hand.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), false );
  const QVariantMap intervals = vbastest::run( QStringLiteral( "vbas:anonymize" ), hand, mContext, true );
  QCOMPARE( intervals.value( QStringLiteral( "LEVELS" ) ).toString(), QStringLiteral( "sex = 0 of 1, age = 2 of 2" ) );
  QCOMPARE( vbastest::output( intervals, QStringLiteral( "ANONYMIZED" ), mContext )->fields().field( QStringLiteral( "age" ) ).type(), vbasqgis::Field::String );
}

void TestGeneralization::evaluateChecksTheHierarchies()
{
  // The lookup records each QI's hierarchy; vbas:evaluate refuses others (a file edited since, another
  // width) before writing anything, and evaluates a lookup written before the record with a warning.
  QTemporaryDir dir;
  QVERIFY( dir.isValid() );
  const QString sexFile = dir.filePath( QStringLiteral( "sex.csv" ) );
  const auto writeSex = [&sexFile]( const QByteArray &content ) {
    QFile file( sexFile );
    QVERIFY( file.open( QIODevice::WriteOnly | QIODevice::Truncate ) );
    file.write( content );
  };
  writeSex( "F;*\nM;*\n" );
  auto regions = vbastest::grid();
  auto records = handRecords();
  QVariantMap p = handParameters( regions.get(), records.get() );
  p.insert( QStringLiteral( "HIERARCHIES" ), QStringList { sexFile } );
  p.insert( QStringLiteral( "INTERVALS" ), QStringLiteral( "age=10" ) );
  p.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 0 );
  p.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), false );
  const QVariantMap made = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QgsVectorLayer *lookup = vbastest::output( made, QStringLiteral( "LOOKUP" ), mContext );
  QgsVectorLayer *sites = vbastest::output( made, QStringLiteral( "SITE_POINTS" ), mContext );
  QVERIFY( lookup && sites );
  const QString digest = QString::fromLatin1( QCryptographicHash::hash( QByteArray( "F;*\nM;*\n" ), QCryptographicHash::Sha256 ).toHex() );
  QCOMPARE( lookup->uniqueValues( lookup->fields().lookupField( QStringLiteral( "hierarchies" ) ) ), QSet<QVariant>( { QStringLiteral( "sex=sex.csv sha256:%1; age=10" ).arg( digest ) } ) );

  QVariantMap e = vbastest::inputParameters( regions.get(), QStringLiteral( "id" ), records.get(), QStringLiteral( "region" ), { QStringLiteral( "sex" ), QStringLiteral( "age" ) } );
  for ( const char *sink : { "SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI" } )
    e.remove( sink );
  const QString evaluation = dir.filePath( QStringLiteral( "evaluation.csv" ) );
  e.insert( QStringLiteral( "EVALUATION" ), evaluation );
  e.insert( QStringLiteral( "SITES" ), layerValue( sites ) );
  e.insert( QStringLiteral( "LOOKUP" ), layerValue( lookup ) );
  e.insert( QStringLiteral( "K" ), 5 );
  e.insert( QStringLiteral( "HIERARCHIES" ), QStringList { sexFile } );
  e.insert( QStringLiteral( "INTERVALS" ), QStringLiteral( "age=10" ) );
  e.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), false );
  Feedback same;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, true, &same );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ), made.value( QStringLiteral( "RELEASED" ) ) );
  QVERIFY( !same.warned( QStringLiteral( "could not be checked" ) ) );
  QVERIFY( QFile::remove( evaluation ) );

  // sex.csv edited after the run, as many levels as before: refused, naming the file and the QI.
  writeSex( "F;X\nM;X\n" );
  Feedback edited;
  vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, false, &edited );
  QVERIFY2( edited.error().contains( QStringLiteral( "HIERARCHIES: the QI field sex has the hierarchy file %1 (sha256 " ).arg( sexFile ) ), qPrintable( edited.error() ) );
  QVERIFY2( edited.error().contains( QStringLiteral( "the release used the hierarchy file sex.csv (sha256 %1...)" ).arg( digest.left( 12 ) ) ), qPrintable( edited.error() ) );
  QVERIFY( !QFile::exists( evaluation ) );
  writeSex( "F;*\nM;*\n" );

  // Another width, as many levels (20: [20, 40), [40, 60)): refused, naming the QI and both widths.
  e.insert( QStringLiteral( "INTERVALS" ), QStringLiteral( "age=20" ) );
  Feedback wider;
  vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, false, &wider );
  QVERIFY2( wider.error().contains( QStringLiteral( "INTERVALS: the QI field age has intervals of width 20 here, but the region lookup records that the release used intervals of width 10" ) ),
            qPrintable( wider.error() ) );
  QVERIFY( !QFile::exists( evaluation ) );
  e.insert( QStringLiteral( "INTERVALS" ), QStringLiteral( "age=10" ) );

  // A lookup written before the hierarchies were recorded: evaluated, with a warning.
  QVERIFY( lookup->dataProvider()->deleteAttributes( { lookup->fields().lookupField( QStringLiteral( "hierarchies" ) ) } ) );
  lookup->updateFields();
  Feedback old;
  const QVariantMap oldResult = vbastest::run( QStringLiteral( "vbas:evaluate" ), e, mContext, true, &old );
  QCOMPARE( oldResult.value( QStringLiteral( "RELEASED" ) ), made.value( QStringLiteral( "RELEASED" ) ) );
  QVERIFY2( old.warned( QStringLiteral( "the hierarchy files and intervals given could not be checked" ) ), qPrintable( old.warnings.join( '\n' ) ) );
}

QTEST_MAIN( TestGeneralization )
#include "test_generalization.moc"
