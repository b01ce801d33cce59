// Outputs as QGIS users expect: every output but an algorithm's main one is optional, skipped in the
// dialog but for the aggregated regions and the report (created there, so that a first Run shows a
// map and a report), and an output not asked for is not written at all, created in the dialog or not:
// no file, no temporary file, no memory layer, no id in the results (checked through
// QgsProcessingAlgorithm::run on the sample layers, and through the shipped models with only their
// mandatory outputs named). The number outputs are still given.
#include "tests/plugin/qgis_test_util.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgsprocessingmodelalgorithm.h>

#include <QDirIterator>
#include <QRegularExpression>
#include <QTemporaryDir>

using vbastest::layerValue;

namespace
{

//! The outputs that stay required: the release, or the result of an algorithm that makes none.
const QSet<QString> kRequired { QStringLiteral( "vbas:anonymize ANONYMIZED" ), QStringLiteral( "vbas:voronoiaggregate ANONYMIZED" ), QStringLiteral( "vbas:generalize ANONYMIZED" ),
                                QStringLiteral( "vbas:lpgeomask RANDOMISED" ), QStringLiteral( "vbas:placesites SITE_POINTS" ),      QStringLiteral( "vbas:compare CANDIDATES" ) };
//! The optional outputs the dialog creates by default (a temporary layer or file).
const QSet<QString> kCreatedInDialog { QStringLiteral( "vbas:anonymize AGGREGATED" ),        QStringLiteral( "vbas:anonymize REPORT" ),      QStringLiteral( "vbas:evaluate REPORT" ),
                                       QStringLiteral( "vbas:voronoiaggregate AGGREGATED" ), QStringLiteral( "vbas:generalize AGGREGATED" ), QStringLiteral( "vbas:compare REPORT" ) };

//! Every file under QGIS Processing's temporary folder, where a temporary output would go.
QStringList temporaries()
{
  QStringList files;
  QDirIterator it( QgsProcessingUtils::tempFolder(), QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories );
  while ( it.hasNext() )
    files << it.next();
  files.sort();
  return files;
}

} // namespace

class TestOptionalOutputs : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();
    void onlyTheMainOutputIsRequired();
    void onlyWhatWasAskedForIsWritten();
    void modelsWriteOnlyTheOutputsGiven();

  private:
    using Runner = std::function<QVariantMap( const QVariantMap &, QgsProcessingContext & )>;
    QVariantMap sampleInputs() const;
    /**
     * Runs run with the outputs asked, each a GeoPackage in a folder of its own, and checks that those and no others were
     * written: no other file in the folder or in Processing's temporary folder, no memory layer, no other result id.
     */
    QVariantMap asking( const QString &what, QVariantMap parameters, const QStringList &asked, const QgsProcessingParameterDefinitions &destinations, const Runner &run );
    //! Runs algorithm id, as asking.
    QVariantMap runAsking( const QString &id, const QVariantMap &parameters, const QStringList &asked );
    //! Runs a model file of the sample layers, as asking.
    QVariantMap runModel( const QString &file, const QVariantMap &parameters, const QStringList &asked );

    std::unique_ptr<QgsVectorLayer> mTracts;
    std::unique_ptr<QgsVectorLayer> mPatients;
    QTemporaryDir mDir;
    int mRuns = 0;
};

void TestOptionalOutputs::initTestCase()
{
  vbastest::initQgisWithProvider();
  mTracts = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  mPatients = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QVERIFY( mTracts->isValid() && mPatients->isValid() );
  QVERIFY( mDir.isValid() );
}

void TestOptionalOutputs::cleanupTestCase()
{
  mTracts.reset();
  mPatients.reset();
  QgsApplication::exitQgis();
}

QVariantMap TestOptionalOutputs::sampleInputs() const
{
  return { { QStringLiteral( "REGIONS" ), layerValue( mTracts.get() ) },
           { QStringLiteral( "REGION_ID" ), QStringLiteral( "AREAKEY" ) },
           { QStringLiteral( "RECORDS" ), layerValue( mPatients.get() ) },
           { QStringLiteral( "RECORD_REGION" ), QStringLiteral( "tract_id" ) },
           { QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) } },
           { QStringLiteral( "K" ), 5 } };
}

void TestOptionalOutputs::onlyTheMainOutputIsRequired()
{
  // In qgis_process, PyQGIS and a model, an optional output is skipped unless given; in the dialog too, but for kCreatedInDialog.
  for ( const QgsProcessingAlgorithm *alg : QgsApplication::processingRegistry()->providerById( QStringLiteral( "vbas" ) )->algorithms() )
  {
    QStringList optional;
    for ( const QgsProcessingParameterDefinition *definition : alg->destinationParameterDefinitions() )
    {
      const QString what = alg->id() + ' ' + definition->name();
      const bool isOptional = definition->flags() & vbasqgis::ParameterOptional;
      QVERIFY2( isOptional != kRequired.contains( what ), qPrintable( what ) );
      if ( isOptional )
      {
        QCOMPARE( static_cast<const QgsProcessingDestinationParameter *>( definition )->createByDefault(), kCreatedInDialog.contains( what ) );
        optional << definition->name();
      }
    }
    // The help names them.
    if ( !optional.isEmpty() )
      QVERIFY2( alg->shortHelpString().contains( QStringLiteral( "<i>Optional outputs</i>: %1 are written only when" ).arg( optional.join( QLatin1String( ", " ) ) ) ), qPrintable( alg->id() ) );
  }
}

QVariantMap TestOptionalOutputs::asking( const QString &what, QVariantMap parameters, const QStringList &asked, const QgsProcessingParameterDefinitions &destinations, const Runner &run )
{
  const QString folder = mDir.filePath( QStringLiteral( "run%1" ).arg( ++mRuns ) );
  QDir().mkpath( folder );
  QStringList files;
  for ( const QString &name : asked )
  {
    files << QString( name ).replace( QRegularExpression( QStringLiteral( "\\W" ) ), QStringLiteral( "_" ) ).toLower() + QStringLiteral( ".gpkg" );
    parameters.insert( name, folder + '/' + files.last() );
  }
  const QStringList before = temporaries();
  QgsProcessingContext context;
  const QVariantMap results = run( parameters, context );
  if ( QTest::currentTestFailed() )
    return results;
  for ( const QgsProcessingParameterDefinition *definition : destinations )
  {
    const bool given = !results.value( definition->name() ).toString().isEmpty();
    [&] { QVERIFY2( given == asked.contains( definition->name() ), qPrintable( what + ' ' + definition->name() ) ); }();
  }
  files.sort();
  [&] {
    QCOMPARE( vbastest::entries( folder ), files );
    QCOMPARE( temporaries(), before );
    for ( const QgsMapLayer *layer : context.temporaryLayerStore()->mapLayers() ) // the inputs read from a path, or a memory layer written
      QVERIFY2( layer->providerType() != QLatin1String( "memory" ), qPrintable( layer->name() ) );
  }();
  return results;
}

QVariantMap TestOptionalOutputs::runAsking( const QString &id, const QVariantMap &parameters, const QStringList &asked )
{
  return asking( id, parameters, asked, QgsApplication::processingRegistry()->algorithmById( id )->destinationParameterDefinitions(),
                 [&id]( const QVariantMap &p, QgsProcessingContext &context ) { return vbastest::run( id, p, context, true ); } );
}

QVariantMap TestOptionalOutputs::runModel( const QString &file, const QVariantMap &parameters, const QStringList &asked )
{
  QgsProcessingModelAlgorithm model;
  if ( !model.fromFile( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/" ) + file ) )
  {
    [&] { QFAIL( qPrintable( file ) ); }();
    return {};
  }
  return asking( file, parameters, asked, model.destinationParameterDefinitions(), [&model]( const QVariantMap &p, QgsProcessingContext &context ) {
    vbastest::Feedback feedback;
    bool ok = false;
    const QVariantMap results = model.run( p, context, &feedback, &ok );
    [&] { QVERIFY2( ok, qPrintable( feedback.error() ) ); }();
    return results;
  } );
}

void TestOptionalOutputs::onlyWhatWasAskedForIsWritten()
{
  QVariantMap sites = sampleInputs();
  sites.insert( QStringLiteral( "SITES" ), 20 );
  const QVariantMap placed = runAsking( QStringLiteral( "vbas:placesites" ), sites, { QStringLiteral( "SITE_POINTS" ) } );
  if ( QTest::currentTestFailed() )
    return;
  auto sitesLayer = std::make_unique<QgsVectorLayer>( placed.value( QStringLiteral( "SITE_POINTS" ) ).toString(), QStringLiteral( "sites" ), QStringLiteral( "ogr" ) );
  QVERIFY( sitesLayer->isValid() );

  // The release alone; the number outputs (the evaluation's metrics among them) are all still given.
  const QVariantMap anonymized = runAsking( QStringLiteral( "vbas:anonymize" ), sampleInputs(), { QStringLiteral( "ANONYMIZED" ) } );
  if ( QTest::currentTestFailed() )
    return;
  for ( const char *number : { "SITES", "AGGREGATES", "RELEASED", "SUPPRESSED", "DM", "MAX_RISK", "RUNTIME" } )
    QVERIFY2( anonymized.value( number ).isValid() && !anonymized.value( number ).isNull(), number );
  QCOMPARE( anonymized.value( QStringLiteral( "RELEASED" ) ).toLongLong() + anonymized.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), mPatients->featureCount() );
  auto release = std::make_unique<QgsVectorLayer>( anonymized.value( QStringLiteral( "ANONYMIZED" ) ).toString(), QStringLiteral( "release" ), QStringLiteral( "ogr" ) );
  QCOMPARE( release->featureCount(), anonymized.value( QStringLiteral( "RELEASED" ) ).toLongLong() );

  // One optional output asked for besides the release: it alone is written.
  QVariantMap aggregation = sampleInputs();
  aggregation.insert( QStringLiteral( "SITES" ), layerValue( sitesLayer.get() ) );
  const QVariantMap aggregated = runAsking( QStringLiteral( "vbas:voronoiaggregate" ), aggregation, { QStringLiteral( "ANONYMIZED" ), QStringLiteral( "LOOKUP" ) } );
  if ( QTest::currentTestFailed() )
    return;
  auto lookup = std::make_unique<QgsVectorLayer>( aggregated.value( QStringLiteral( "LOOKUP" ) ).toString(), QStringLiteral( "lookup" ), QStringLiteral( "ogr" ) );
  QCOMPARE( lookup->featureCount(), mTracts->featureCount() );

  // Nothing asked for: the numbers only.
  QVariantMap evaluation = sampleInputs();
  evaluation.insert( QStringLiteral( "SITES" ), layerValue( sitesLayer.get() ) );
  evaluation.insert( QStringLiteral( "LOOKUP" ), layerValue( lookup.get() ) );
  const QVariantMap evaluated = runAsking( QStringLiteral( "vbas:evaluate" ), evaluation, {} );
  if ( QTest::currentTestFailed() )
    return;
  QCOMPARE( evaluated.value( QStringLiteral( "RELEASED" ) ).toLongLong(), aggregated.value( QStringLiteral( "RELEASED" ) ).toLongLong() );
  QVERIFY( evaluated.value( QStringLiteral( "DM" ) ).toDouble() > 0 );

  const QVariantMap checked
    = runAsking( QStringLiteral( "vbas:checkanonymity" ),
                 { { QStringLiteral( "INPUT" ), layerValue( release.get() ) },
                   { QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ), QStringLiteral( "aggregate_id" ) } },
                   { QStringLiteral( "K" ), 5 } },
                 {} );
  if ( QTest::currentTestFailed() )
    return;
  QCOMPARE( checked.value( QStringLiteral( "PASS" ) ).toBool(), true );
  QCOMPARE( checked.value( QStringLiteral( "RECORDS" ) ).toLongLong(), release->featureCount() );

  const QVariantMap masked = runAsking( QStringLiteral( "vbas:lpgeomask" ),
                                        { { QStringLiteral( "CODES" ), layerValue( mTracts.get() ) },
                                          { QStringLiteral( "CODE_FIELD" ), QStringLiteral( "AREAKEY" ) },
                                          { QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "POP8" ) },
                                          { QStringLiteral( "PATIENTS" ), ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ed_patients.gpkg" ) },
                                          { QStringLiteral( "PATIENT_CODE_FIELD" ), QStringLiteral( "tract_id" ) },
                                          { QStringLiteral( "EPSILON" ), 0.05 } },
                                        { QStringLiteral( "RANDOMISED" ) } );
  if ( QTest::currentTestFailed() )
    return;
  QVERIFY( masked.value( QStringLiteral( "MAX_REIDENTIFICATION" ) ).toDouble() <= 0.05 );
}

void TestOptionalOutputs::modelsWriteOnlyTheOutputsGiven()
{
  // The pipeline model: the sites and the lookup feed later steps, so they are mandatory; its other outputs are skipped.
  runModel( QStringLiteral( "vbas_pipeline.model3" ),
            { { QStringLiteral( "regions" ), layerValue( mTracts.get() ) },
              { QStringLiteral( "region_id" ), QStringLiteral( "AREAKEY" ) },
              { QStringLiteral( "records" ), layerValue( mPatients.get() ) },
              { QStringLiteral( "record_region" ), QStringLiteral( "tract_id" ) },
              { QStringLiteral( "qi_fields" ), QStringList { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) } },
              { QStringLiteral( "k" ), 5 },
              { QStringLiteral( "method" ), 0 },
              { QStringLiteral( "objective" ), 0 },
              { QStringLiteral( "sensitive_field" ), QStringLiteral( "diagnosis" ) } },
            { QStringLiteral( "placesites:Sites" ), QStringLiteral( "voronoiaggregate:Lookup" ), QStringLiteral( "voronoiaggregate:Anonymized" ) } );
  if ( QTest::currentTestFailed() )
    return;
  runModel( QStringLiteral( "lp_geomask.model3" ),
            { { QStringLiteral( "codes" ), layerValue( mTracts.get() ) },
              { QStringLiteral( "code_field" ), QStringLiteral( "AREAKEY" ) },
              { QStringLiteral( "population_field" ), QStringLiteral( "POP8" ) },
              { QStringLiteral( "patients" ), ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ed_patients.gpkg" ) },
              { QStringLiteral( "patient_code_field" ), QStringLiteral( "tract_id" ) },
              { QStringLiteral( "epsilon" ), 0.05 },
              { QStringLiteral( "neighbours" ), 30 } },
            { QStringLiteral( "lpgeomask:Randomised patients" ) } );
}

QTEST_MAIN( TestOptionalOutputs )
#include "test_optional_outputs.moc"
