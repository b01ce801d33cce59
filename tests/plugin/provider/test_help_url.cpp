// The Help button of every algorithm's dialog: helpUrl() is the file URL of the algorithm's page of the
// user guide installed in the plugin folder, help/algorithms/<name>.html; without that page it is empty
// (QGIS then shows no Help button rather than one that opens a missing file).
#include "tests/plugin/qgis_test_util.h"
#include "plugin/provider/vbasalgorithm.h"

#include <QTemporaryDir>

class TestHelpUrl : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
    void cleanupTestCase() { QgsApplication::exitQgis(); }
    void everyAlgorithmOpensItsPage();
    void noPageNoUrl();

  private:
    static QList<const QgsProcessingAlgorithm *> algorithms();
};

QList<const QgsProcessingAlgorithm *> TestHelpUrl::algorithms()
{
  const QgsProcessingProvider *provider = QgsApplication::processingRegistry()->providerById( QStringLiteral( "vbas" ) );
  return provider ? provider->algorithms() : QList<const QgsProcessingAlgorithm *>();
}

void TestHelpUrl::everyAlgorithmOpensItsPage()
{
  QVERIFY( !algorithms().isEmpty() );
  for ( const QgsProcessingAlgorithm *alg : algorithms() )
  {
    const QString page = ctestPath( "VBAS_PLUGIN_DIR" ) + QStringLiteral( "/help/algorithms/%1.html" ).arg( alg->name() );
    QVERIFY2( QFileInfo( page ).isFile(), qPrintable( page + QStringLiteral( " is missing: build the target vbas_help" ) ) );
    QCOMPARE( alg->helpUrl(), QUrl::fromLocalFile( page ).toString() );
  }
}

void TestHelpUrl::noPageNoUrl()
{
  QTemporaryDir pluginDirectory; // a plugin folder without help/
  QVERIFY( pluginDirectory.isValid() );
  VbasAlgorithm::setPluginDirectory( pluginDirectory.path() );
  for ( const QgsProcessingAlgorithm *alg : algorithms() )
    QVERIFY2( alg->helpUrl().isEmpty(), qPrintable( alg->id() ) );
  VbasAlgorithm::setPluginDirectory( ctestPath( "VBAS_PLUGIN_DIR" ) );
}

QTEST_MAIN( TestHelpUrl )
#include "test_help_url.moc"
