// The algorithms' dialogs as an analyst reads them (docs/quickstart.md, the desktop): the inputs and
// their fields, the QIs, k, the release's and risk's fields first, then the method's choices, every
// tuning parameter under Advanced Parameters, and a one-line tooltip in plain words on every parameter.
// The ids and defaults that scripts and models use are those of the released versions (parameters.txt).
#include "tests/plugin/qgis_test_util.h"
#include "plugin/support/vbasqgiscompat.h"

#include <QFile>
#include <QTextStream>

namespace
{
//! Each algorithm's parameters of the main list (not advanced, not an output), in the dialog's order.
const QMap<QString, QStringList> kMainParameters {
  { QStringLiteral( "vbas:anonymize" ), { "REGIONS", "REGION_ID",  "POPULATION_FIELD",  "RECORDS",         "RECORD_REGION",  "COUNT_FIELD", "QI_FIELDS",
                                          "K",       "RISK_MODEL", "RELEASE_FIELDS",    "SENSITIVE_FIELD", "RISK_THRESHOLD", "METHOD",      "MODEL",
                                          "SEARCH",  "CONTIGUOUS", "REFINE_BOUNDARIES", "HIERARCHIES",     "INTERVALS",      "GENERALIZE",  "LOCAL_SUPPRESSION" } },
  { QStringLiteral( "vbas:estimatesitecount" ), { "REGIONS", "REGION_ID", "POPULATION_FIELD", "RECORDS", "RECORD_REGION", "COUNT_FIELD", "QI_FIELDS", "MODEL" } },
  { QStringLiteral( "vbas:placesites" ), { "REGIONS", "REGION_ID", "POPULATION_FIELD", "RECORDS", "RECORD_REGION", "COUNT_FIELD", "QI_FIELDS", "K", "SITES", "METHOD" } },
  { QStringLiteral( "vbas:voronoiaggregate" ),
    { "REGIONS", "REGION_ID", "RECORDS", "RECORD_REGION", "COUNT_FIELD", "QI_FIELDS", "K", "RISK_MODEL", "RISK_THRESHOLD", "RELEASE_FIELDS", "SITES", "SEARCH", "CONTIGUOUS", "REFINE_BOUNDARIES" } },
  { QStringLiteral( "vbas:evaluate" ),
    { "REGIONS", "REGION_ID", "POPULATION_FIELD", "RECORDS", "RECORD_REGION", "COUNT_FIELD", "QI_FIELDS", "K", "RISK_MODEL", "SENSITIVE_FIELD", "RISK_THRESHOLD", "POPULATION_TABLE",
      "POPULATION_REGION", "POPULATION_COUNT", "SITES", "LOOKUP", "HIERARCHIES", "INTERVALS", "LOCAL_SUPPRESSION" } },
  { QStringLiteral( "vbas:checkanonymity" ),
    { "INPUT", "COUNT_FIELD", "QI_FIELDS", "K", "RISK_MODEL", "RISK_THRESHOLD", "LOOKUP", "POPULATION_TABLE", "POPULATION_REGION", "POPULATION_COUNT", "SENSITIVE_FIELD", "L", "T" } },
  { QStringLiteral( "vbas:generalize" ),
    { "REGIONS", "REGION_ID", "POPULATION_FIELD", "RECORDS", "RECORD_REGION", "COUNT_FIELD", "QI_FIELDS", "K", "RELEASE_FIELDS", "MODEL", "HIERARCHIES", "INTERVALS", "LOCAL_SUPPRESSION" } },
  { QStringLiteral( "vbas:compare" ),
    { "REGIONS", "REGION_ID", "POPULATION_FIELD", "RECORDS",     "RECORD_REGION", "COUNT_FIELD",     "QI_FIELDS",      "K",     "RISK_MODEL",  "K_VALUES", "RISK_VALUES",
      "METHODS", "BASELINES", "PARENT_FIELD",     "CROP_LENGTH", "LOSS",          "SENSITIVE_FIELD", "RISK_THRESHOLD", "MODEL", "HIERARCHIES", "INTERVALS" } },
  { QStringLiteral( "vbas:lpgeomask" ),
    { "CODES", "CODE_FIELD", "POPULATION_FIELD", "PATIENT_COUNT_FIELD", "PATIENTS", "PATIENT_CODE_FIELD", "EPSILON", "RELEASE_FIELDS", "NEIGHBOURS", "RADIUS", "MODEL", "FIND_MIN_EPSILON" } },
};

//! "algorithm id=default" for every parameter, the lines sorted: what scripts and models rely on.
QStringList idsAndDefaults( const QList<const QgsProcessingAlgorithm *> &algorithms )
{
  QStringList lines;
  for ( const QgsProcessingAlgorithm *alg : algorithms )
    for ( const QgsProcessingParameterDefinition *definition : alg->parameterDefinitions() )
      lines << QStringLiteral( "%1 %2=%3" ).arg( alg->id(), definition->name(), definition->defaultValue().toString() );
  lines.sort();
  return lines;
}
} // namespace

class TestDialog : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();
    void mainParametersInTheAnalystsOrder();
    void everyParameterHasAOneLineTooltip();
    void idsAndDefaultsNeverChange();
    void userGuideTablesMatchTheDialog();
    void numberOutputsExplainedInOnePlace();

  private:
    QList<const QgsProcessingAlgorithm *> mAlgorithms;
};

void TestDialog::initTestCase()
{
  vbastest::initQgisWithProvider();
  mAlgorithms = QgsApplication::processingRegistry()->providerById( QStringLiteral( "vbas" ) )->algorithms();
  QCOMPARE( mAlgorithms.size(), kMainParameters.size() );
}

void TestDialog::cleanupTestCase()
{
  QgsApplication::exitQgis();
}

void TestDialog::mainParametersInTheAnalystsOrder()
{
  for ( const QgsProcessingAlgorithm *alg : mAlgorithms )
  {
    QStringList main;
    for ( const QgsProcessingParameterDefinition *definition : alg->parameterDefinitions() )
      if ( !definition->isDestination() && !( definition->flags() & vbasqgis::ParameterAdvanced ) )
        main << definition->name();
    QCOMPARE( main.join( ' ' ), kMainParameters.value( alg->id() ).join( ' ' ) );
  }
}

void TestDialog::everyParameterHasAOneLineTooltip()
{
  for ( const QgsProcessingAlgorithm *alg : mAlgorithms )
    for ( const QgsProcessingParameterDefinition *definition : alg->parameterDefinitions() )
    {
      const QString what = alg->id() + ' ' + definition->name() + ": " + definition->help();
      QVERIFY2( !definition->help().isEmpty(), qPrintable( what ) );
      QVERIFY2( definition->help().size() <= 150 && !definition->help().contains( '\n' ) && !definition->help().contains( '<' ), qPrintable( what ) );
      QVERIFY2( definition->help() != definition->description(), qPrintable( what ) );
      // QGIS shows it when the pointer rests on the parameter's label (QgsProcessingParameterDefinition::toolTip).
      QVERIFY2( definition->toolTip().contains( definition->help() ), qPrintable( what ) );
    }
}

void TestDialog::idsAndDefaultsNeverChange()
{
  QFile file( ctestPath( "VBAS_SOURCE_DIR" ) + QStringLiteral( "/tests/plugin/provider/parameters.txt" ) );
  QVERIFY( file.open( QIODevice::ReadOnly | QIODevice::Text ) );
  const QStringList expected = QString::fromUtf8( file.readAll() ).split( '\n', Qt::SkipEmptyParts );
  const QStringList actual = idsAndDefaults( mAlgorithms );
  if ( actual != expected )
  {
    QFile written( QDir::temp().filePath( QStringLiteral( "parameters.txt" ) ) );
    QVERIFY( written.open( QIODevice::WriteOnly | QIODevice::Text ) );
    written.write( actual.join( '\n' ).toUtf8() + '\n' );
    QFAIL( qPrintable( QStringLiteral( "the parameters' ids or defaults changed (written to %1)" ).arg( written.fileName() ) ) );
  }
}

void TestDialog::userGuideTablesMatchTheDialog()
{
  // docs/algorithms/<name>.md: a row | `ID` | label | kind[, advanced] | ... for every parameter, or
  // a row | `ID`, `ID`, ... | ... that sends the reader to another page's rows (checked there).
  for ( const QgsProcessingAlgorithm *alg : mAlgorithms )
  {
    QSet<QString> elsewhere;
    QFile page( ctestPath( "VBAS_SOURCE_DIR" ) + QStringLiteral( "/docs/algorithms/%1.md" ).arg( alg->name() ) );
    QVERIFY2( page.open( QIODevice::ReadOnly | QIODevice::Text ), qPrintable( page.fileName() ) );
    QMap<QString, QStringList> rows;
    for ( const QString &line : QString::fromUtf8( page.readAll() ).split( '\n' ) )
      if ( line.startsWith( QLatin1String( "| `" ) ) )
      {
        const QStringList cells = line.split( QStringLiteral( " | " ) );
        if ( cells.at( 0 ).contains( QLatin1String( "`, `" ) ) )
          for ( const QString &id : cells.at( 0 ).mid( 2 ).split( QStringLiteral( ", " ) ) )
            elsewhere.insert( id.mid( 1 ).chopped( 1 ) );
        else if ( cells.size() > 3 && !rows.contains( cells.at( 0 ).mid( 3 ).chopped( 1 ) ) ) // the parameters' table comes before the outputs'
          rows.insert( cells.at( 0 ).mid( 3 ).chopped( 1 ), cells );
      }
    for ( const QgsProcessingParameterDefinition *definition : alg->parameterDefinitions() )
    {
      const QString what = page.fileName() + ' ' + definition->name();
      if ( elsewhere.contains( definition->name() ) )
        continue;
      QVERIFY2( rows.contains( definition->name() ), qPrintable( what + ": no row" ) );
      const QStringList row = rows.value( definition->name() );
      QVERIFY2( row.at( 1 ) == definition->description(), qPrintable( what + ": the label is " + definition->description() ) );
      const bool advanced = definition->flags() & vbasqgis::ParameterAdvanced;
      QVERIFY2( row.at( 2 ).contains( QLatin1String( "advanced" ) ) == advanced, qPrintable( what + ( advanced ? ": advanced" : ": not advanced" ) ) );
    }
  }
}

void TestDialog::numberOutputsExplainedInOnePlace()
{
  // docs/outputs.md, Number outputs: a row names every output that is not a layer or a file, of every algorithm.
  QFile page( ctestPath( "VBAS_SOURCE_DIR" ) + QStringLiteral( "/docs/outputs.md" ) );
  QVERIFY( page.open( QIODevice::ReadOnly | QIODevice::Text ) );
  const QString text = QString::fromUtf8( page.readAll() );
  const int start = text.indexOf( QLatin1String( "\n## Number outputs\n" ) );
  QVERIFY( start >= 0 );
  const QString section = text.mid( start, text.indexOf( QLatin1String( "\n## " ), start + 1 ) - start );
  QSet<QString> named;
  for ( const QString &line : section.split( '\n' ) )
    if ( line.startsWith( QLatin1String( "| `" ) ) )
      for ( const QString &id : line.section( QStringLiteral( " | " ), 0, 0 ).mid( 2 ).split( QStringLiteral( ", " ) ) )
        named.insert( id.mid( 1 ).chopped( 1 ) );
  for ( const QgsProcessingAlgorithm *alg : mAlgorithms )
    for ( const QgsProcessingOutputDefinition *output : alg->outputDefinitions() )
      if ( !alg->parameterDefinition( output->name() ) ) // not a destination's output
        QVERIFY2( named.contains( output->name() ), qPrintable( alg->id() + ' ' + output->name() ) );
}

QTEST_MAIN( TestDialog )
#include "test_dialog.moc"
