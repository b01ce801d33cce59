// Passwords never leave in what the plugin writes (docs/outputs.md, "Passwords"): VbasSecrets on
// hand-written connections of every form QGIS, GDAL and libpq take (an authcfg= stays), the run's
// parameters and the "Repeat this run" command of the report, and the message of a layer that does
// not load. The end-to-end check of every output of a run is e2e_postgis's passwordsNeverWritten.
#include "tests/plugin/qgis_test_util.h"

#include "plugin/outputs/vbasreport.h"
#include "plugin/support/vbassecrets.h"

namespace
{

//! The password of every case: no output may hold any part of it.
const QString kPassword = QStringLiteral( "Hush7Kx9" );
//! A server no connection reaches: the layer does not load, quickly.
const QString kNowhere = QStringLiteral( "dbname='vbas' host=/nonexistent/vbas-socket-folder user='analyst'" );

} // namespace

class TestSecrets : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
    void cleanupTestCase() { QgsApplication::exitQgis(); }

    void withoutPasswords_data();
    void withoutPasswords();
    void runParametersLeaveThePasswordOut();
    void commandKeepsAuthcfg();
    void unloadableLayerNamedWithoutPassword();
};

void TestSecrets::withoutPasswords_data()
{
  QTest::addColumn<QString>( "text" );
  QTest::addColumn<QString>( "expected" );
  const QString table = QStringLiteral( " key='fid' table=\"public\".\"patients\"" );
  const QString db = QStringLiteral( "dbname='vbas' host=db.example.org port=5432 user='analyst'" );
  // QGIS's PostgreSQL sources (qgis_process inputs) and destinations: QgsDataSourceUri decides.
  QTest::newRow( "postgres://, quoted" ) << "postgres://" + db + " password='Hush7Kx9'" + table << "postgres://" + db + table;
  QTest::newRow( "postgres://, quoted with a space and a quote" ) << "postgres://" + db + " password='Hush7Kx9 it\\'s'" + table << "postgres://" + db + table;
  QTest::newRow( "postgres://, unquoted, last" ) << "postgres://dbname=vbas user=analyst password=Hush7Kx9"
                                                 << "postgres://dbname='vbas' user='analyst'";
  QTest::newRow( "postgis: destination with geometry" ) << "postgis:" + db + " password='Hush7Kx9' table=\"public\".\"aggregated\" (geom)"
                                                        << "postgis:" + db + " table=\"public\".\"aggregated\" (geom)";
  QTest::newRow( "sslpassword" ) << "postgres://" + db + " sslmode=verify-full sslpassword='Hush7Kx9'" + table << "postgres://" + db + " sslmode=verify-full" + table;
  QTest::newRow( "authcfg kept" ) << "postgres://" + db + " authcfg=ab12cd3" + table << "postgres://" + db + " authcfg=ab12cd3" + table;
  // GDAL's PG: connection strings (an OGR layer's source), as libpq reads them.
  QTest::newRow( "PG:, unquoted, before the layer" ) << "PG:dbname=vbas host=/tmp user=postgres password=Hush7Kx9|layername=patients"
                                                     << "PG:dbname=vbas host=/tmp user=postgres |layername=patients";
  QTest::newRow( "PG:, quoted with spaces, first" ) << "PG:password = 'Hush7Kx9 two words' dbname=vbas tables=patients"
                                                    << "PG:dbname=vbas tables=patients";
  QTest::newRow( "PG:, unterminated quote" ) << "PG:dbname=vbas password='Hush7Kx9 rest"
                                             << "PG:dbname=vbas ";
  QTest::newRow( "PG:, upper case key" ) << "PG:dbname=vbas PASSWORD=Hush7Kx9 user=postgres"
                                         << "PG:dbname=vbas user=postgres";
  // libpq's URLs and other URLs.
  QTest::newRow( "libpq URL" ) << "postgresql://analyst:Hush7Kx9@db.example.org:5432/vbas"
                               << "postgresql://analyst@db.example.org:5432/vbas";
  QTest::newRow( "libpq URL, query" ) << "postgresql://db.example.org/vbas?user=analyst&password=Hush7Kx9"
                                      << "postgresql://db.example.org/vbas?user=analyst&";
  QTest::newRow( "GDAL /vsicurl/" ) << "/vsicurl/https://analyst:Hush7Kx9@files.example.org/regions.gpkg"
                                    << "/vsicurl/https://analyst@files.example.org/regions.gpkg";
  QTest::newRow( "ODBC pwd" ) << "MSSQL:server=db;uid=analyst;pwd=Hush7Kx9"
                              << "MSSQL:server=db;uid=analyst;";
  // No password: unchanged.
  QTest::newRow( "a file" ) << "/data/password_list.gpkg|layername=patients"
                            << "/data/password_list.gpkg|layername=patients";
  QTest::newRow( "a URL without a password" ) << "https://analyst@files.example.org/a:b.gpkg"
                                              << "https://analyst@files.example.org/a:b.gpkg";
  QTest::newRow( "a number" ) << "0.2"
                              << "0.2";
}

void TestSecrets::withoutPasswords()
{
  QFETCH( QString, text );
  QFETCH( QString, expected );
  bool removed = false;
  const QString result = VbasSecrets::withoutPasswords( text, &removed );
  QCOMPARE( result, expected );
  QCOMPARE( removed, text.contains( kPassword ) );
  QVERIFY( !result.contains( kPassword ) );
}

void TestSecrets::runParametersLeaveThePasswordOut()
{
  // vbas:evaluate's sources and destinations with the password in the connection, as qgis_process
  // gives them: the report's parameters and command hold none, and the command says it was left out.
  const QgsProcessingAlgorithm *evaluate = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:evaluate" ) );
  QVERIFY( evaluate );
  const QString withPassword = kNowhere + QStringLiteral( " password='Hush7Kx9'" );
  const QVariantMap parameters { { "RECORDS", "postgres://" + withPassword + " key='fid' table=\"public\".\"patients\"" },
                                 { "REGIONS", "PG:dbname=vbas password=Hush7Kx9|layername=tracts" },
                                 { "EVALUATION", QVariant::fromValue( QgsProcessingOutputLayerDefinition( "postgis:" + withPassword + " table=\"public\".\"evaluation\"" ) ) },
                                 { "REPORT", "/tmp/report.html" } };
  QgsProcessingContext context;
  const VbasRunParameters run = vbasRunParameters( *evaluate, parameters, context, {} );
  QVERIFY( run.passwordsLeftOut );
  QStringList names;
  for ( const auto &[name, value] : run.values )
  {
    QVERIFY2( !value.contains( kPassword ), qPrintable( name ) );
    names << name;
  }
  QVERIFY( names.contains( "RECORDS" ) && names.contains( "REGIONS" ) && names.contains( "EVALUATION" ) );
  const QString command = vbasProcessCommand( *evaluate, run );
  QVERIFY( !command.contains( kPassword ) );
  QVERIFY2( command.contains( QStringLiteral( "# The password of a connection was left out" ) ), qPrintable( command ) );
  QVERIFY( command.contains( QStringLiteral( "'RECORDS=postgres://%1 key='\\''fid'\\'' table=" ).arg( QString( kNowhere ).replace( '\'', QStringLiteral( "'\\''" ) ) ) ) );
}

void TestSecrets::commandKeepsAuthcfg()
{
  // A connection through the QGIS authentication database holds no secret: written as given, with no note.
  const QgsProcessingAlgorithm *evaluate = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:evaluate" ) );
  const QString records = "postgres://" + kNowhere + QStringLiteral( " authcfg=ab12cd3 key='fid' table=\"public\".\"patients\"" );
  QgsProcessingContext context;
  const VbasRunParameters run = vbasRunParameters( *evaluate, { { "RECORDS", records } }, context, {} );
  QVERIFY( !run.passwordsLeftOut );
  QVERIFY( run.values.contains( { QStringLiteral( "RECORDS" ), records } ) );
  QVERIFY( !vbasProcessCommand( *evaluate, run ).contains( QStringLiteral( "left out" ) ) );
}

void TestSecrets::unloadableLayerNamedWithoutPassword()
{
  // A source that does not load is named in the error, without its password.
  vbastest::Feedback feedback;
  QgsProcessingContext context;
  const QString records = "postgres://" + kNowhere + QStringLiteral( " password='Hush7Kx9' key='fid' table=\"public\".\"patients\"" );
  std::unique_ptr<QgsVectorLayer> regions = vbastest::grid();
  vbastest::run( QStringLiteral( "vbas:estimatesitecount" ),
                 { { "REGIONS", vbastest::layerValue( regions.get() ) }, { "REGION_ID", "id" }, { "RECORDS", records }, { "RECORD_REGION", "region" }, { "QI_FIELDS", "sex" } }, context, false,
                 &feedback );
  const QString log = ( feedback.messages + feedback.warnings + feedback.errors ).join( '\n' );
  QVERIFY2( log.contains( QStringLiteral( "Could not load the layer of RECORDS (postgres://%1 key='fid'" ).arg( kNowhere ) ), qPrintable( log ) );
  QVERIFY( !log.contains( kPassword ) );
}

QTEST_MAIN( TestSecrets )
#include "test_secrets.moc"
