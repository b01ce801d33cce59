// A PostgreSQL records table read through one COPY gives what QGIS's postgres provider gives
// (docs/preparing-data.md, "How the records are read"): the same feature ids and, for each read field,
// a value of the same type and bytes, on a server of the test's own (tests/shared/pg_server.h). The
// table holds every type the COPY decodes and odd values: NULLs, text composed and decomposed, empty,
// with tabs, newlines and backslashes, 64-bit extremes, reals one bit apart, negative zero, keys below
// zero. Keys of 16- and 32-bit numbers are read by the COPY; a 64-bit, text or missing key, a subset
// string and a timestamp field are read through QGIS, the log says why; each run counts, or refuses,
// exactly as a run forced through QGIS by a feature limit. The values are made up.
#include "tests/plugin/qgis_test_util.h"
#include "tests/shared/pg_server.h"
#include "plugin/inputs/vbaspgrows.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgsvectordataprovider.h>

#include <cstring>

namespace
{

//! The QIs of the runs: one field of each decoded type.
const QStringList kQis { "name", "note", "pad", "age", "whole", "big", "w", "f4", "num", "day", "flag" };

/**
 * 36 rows over the grid's regions, keyed by fid from -5 (table name's key of type key, or none), the
 * other columns of every decoded type with their odd values; then extra, a statement run on it.
 */
QString makeTable( const QString &name, const QString &key, const QString &extra )
{
  return QStringLiteral( "DROP TABLE IF EXISTS %1; CREATE TABLE %1 AS SELECT (i - 5)::%2 AS fid, 'r' || (i % 3) || ((i / 3) % 3) AS region, "
                         "CASE WHEN i % 4 = 0 THEN NULL WHEN i % 9 = 1 THEN '' WHEN i % 8 < 4 THEN U&'Zo\\00EB' ELSE U&'Zoe\\0308' END AS name, "
                         "(CASE i % 3 WHEN 0 THEN E'a\\tb' WHEN 1 THEN E'a\\nb\\\\' ELSE 'ab' END)::varchar(5) AS note, "
                         "(CASE WHEN i % 2 = 0 THEN 'a' END)::char(3) AS pad, (CASE WHEN i % 5 <> 0 THEN i % 3 END)::int2 AS age, (i % 2 - 2147483648 * (i % 3 / 2))::int4 AS whole, "
                         "(CASE i % 3 WHEN 0 THEN 5000000000 WHEN 1 THEN -9223372036854775808 ELSE 9223372036854775807 END)::int8 AS big, "
                         "CASE WHEN i % 11 = 0 THEN '-0'::float8 WHEN i % 3 = 0 THEN 0.3::float8 ELSE 0.1::float8 + 0.2::float8 END AS w, "
                         "(CASE WHEN i % 2 = 0 THEN '1.1' ELSE '1.1000001' END)::float4 AS f4, (CASE WHEN i % 2 = 0 THEN '1.10' ELSE '1.1' END)::numeric AS num, "
                         "CASE WHEN i % 6 <> 0 THEN '2020-02-29'::date END AS day, CASE i % 3 WHEN 0 THEN true WHEN 1 THEN false END AS flag, "
                         "'2020-02-29 12:00'::timestamp AS at FROM generate_series(0, 35) i; %3" )
    .arg( name, key, extra );
}

} // namespace

class TestPostgresRead : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void rowsAsQgisReadsThem_data();
    void rowsAsQgisReadsThem();
    void readAndCountedAsThroughQgis_data();
    void readAndCountedAsThroughQgis();
    void lostConnectionRefused();
    void destroyedReaderStopsTheCopy();

  private:
    std::unique_ptr<QgsVectorLayer> layer( const QString &table, const QString &options = QString() ) const;
    //! The COPY of table "many" (a million rows), one row read already.
    VbasRows startedCopy();
    //! The server's sessions running a COPY.
    qint64 copies() const { return mServer.number( "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'COPY (SELECT%' AND pid <> pg_backend_pid()" ); }

    PgServer mServer;
};

void TestPostgresRead::initTestCase()
{
  vbastest::initQgisWithProvider();
  QVERIFY2( QFileInfo::exists( PgServer::bin() + "/initdb" ), "PostgreSQL's server programs are missing: run .ci/setup" );
  CHECKED( mServer.start() );
  QString out;
  CHECKED( mServer.sql( makeTable( "by_int4", "int4", "ALTER TABLE by_int4 ADD PRIMARY KEY (fid);" ), out ) );
  CHECKED( mServer.sql( makeTable( "by_int2", "int2", "ALTER TABLE by_int2 ADD PRIMARY KEY (fid);" ), out ) );
  CHECKED( mServer.sql( makeTable( "by_int8", "int8", "ALTER TABLE by_int8 ADD PRIMARY KEY (fid);" ), out ) );
  CHECKED( mServer.sql( makeTable( "by_text", "text", "ALTER TABLE by_text ADD PRIMARY KEY (fid);" ), out ) );
  CHECKED( mServer.sql( makeTable( "unkeyed", "int4", QString() ), out ) );
  CHECKED( mServer.sql( "CREATE TABLE many AS SELECT i AS fid, 'r00' AS region, 'x' AS name FROM generate_series(1, 1000000) i; ALTER TABLE many ADD PRIMARY KEY (fid);", out ) );
  CHECKED( mServer.sql( makeTable( "unknown_region", "int4", "ALTER TABLE unknown_region ADD PRIMARY KEY (fid); UPDATE unknown_region SET region = 'zz' WHERE fid = 7;" ), out ) );
}

void TestPostgresRead::cleanupTestCase()
{
  mServer.stop();
  QgsApplication::exitQgis();
}

std::unique_ptr<QgsVectorLayer> TestPostgresRead::layer( const QString &table, const QString &options ) const
{
  return std::make_unique<QgsVectorLayer>( mServer.connection() + QStringLiteral( " table=\"public\".\"%1\" %2" ).arg( table, options ), table, QStringLiteral( "postgres" ) );
}

void TestPostgresRead::rowsAsQgisReadsThem_data()
{
  QTest::addColumn<QString>( "table" );
  QTest::newRow( "int4 key" ) << "by_int4";
  QTest::newRow( "int2 key" ) << "by_int2";
}

void TestPostgresRead::rowsAsQgisReadsThem()
{
  // Every row of the COPY, the key among the read fields, beside QGIS's reading of the same fields.
  QFETCH( QString, table );
  const std::unique_ptr<QgsVectorLayer> records = layer( table );
  QVERIFY( records->isValid() );
  QgsAttributeList read { records->fields().lookupField( QStringLiteral( "fid" ) ) };
  for ( const QString &name : kQis )
    read << records->fields().lookupField( name );
  QString why;
  const std::optional<VbasStreamedRows> plan = VbasPgRows::plan( records.get(), read, why );
  QVERIFY2( plan, qPrintable( why ) );
  const VbasRows rows = plan->open( why );
  QVERIFY2( rows, qPrintable( why ) );
  QgsFeatureIterator qgis = records->getFeatures( QgsFeatureRequest().setFlags( vbasqgis::NoGeometry ).setSubsetOfAttributes( read ) );
  int count = 0;
  for ( QgsFeature copied, expected; qgis.nextFeature( expected ); ++count )
  {
    QVERIFY( rows( copied ) );
    QCOMPARE( copied.id(), expected.id() );
    for ( const int i : read )
    {
      const QString where = QStringLiteral( "row %1, field %2" ).arg( count ).arg( records->fields().at( i ).name() );
      QVERIFY2( copied.attribute( i ).userType() == expected.attribute( i ).userType(), qPrintable( where ) );
      QVERIFY2( copied.attribute( i ).isNull() == expected.attribute( i ).isNull(), qPrintable( where ) );
      // Reals by their bits: 0.3 and 0.1 + 0.2, 0 and -0 are apart.
      if ( expected.attribute( i ).userType() == QMetaType::Double && !expected.attribute( i ).isNull() )
        QVERIFY2( std::memcmp( copied.attribute( i ).constData(), expected.attribute( i ).constData(), sizeof( double ) ) == 0, qPrintable( where ) );
      else
        QVERIFY2( copied.attribute( i ) == expected.attribute( i ), qPrintable( where ) );
    }
  }
  QgsFeature extra;
  QVERIFY( !rows( extra ) );
  QCOMPARE( count, 36 );
}

void TestPostgresRead::readAndCountedAsThroughQgis_data()
{
  QTest::addColumn<QString>( "table" );
  QTest::addColumn<QString>( "options" ); // of the layer's source
  QTest::addColumn<QStringList>( "qis" );
  QTest::addColumn<QString>( "reader" );  // the log's line that says how the records are read
  QTest::addColumn<QString>( "outcome" ); // the start of the counting pass's line, or of the refusal
  const QString copy = QStringLiteral( "The records are read through PostgreSQL's COPY." );
  const QString all = QStringLiteral( "Read 36 record rows" );
  const QString qgis = QStringLiteral( "The records are read through QGIS: " );
  QTest::newRow( "int4 key" ) << "by_int4"
                              << "key='fid'" << kQis << copy << all;
  QTest::newRow( "int4 primary key" ) << "by_int4"
                                      << "" << kQis << copy << all;
  QTest::newRow( "int2 key" ) << "by_int2"
                              << "key='fid'" << kQis << copy << all;
  QTest::newRow( "unknown region" ) << "unknown_region"
                                    << "key='fid'" << kQis << copy << "1 record(s) have a region id (field 'region') that is not in the regions layer's 'id', for example 'zz'";
  QTest::newRow( "int8 key" ) << "by_int8"
                              << "key='fid'" << kQis << qgis + "its key 'fid' is of type int8, whose rows QGIS numbers through a map of its own." << all;
  QTest::newRow( "text key" ) << "by_text"
                              << "key='fid'" << kQis << qgis + "its key 'fid' is of type text, whose rows QGIS numbers through a map of its own." << all;
  QTest::newRow( "no key" ) << "unkeyed"
                            << "" << kQis << qgis + "it has no key" << all;
  QTest::newRow( "subset" ) << "by_int4"
                            << "key='fid' sql=\"age\" IS NOT NULL" << kQis << qgis + "the layer has a subset string."
                            << "Read 28 record rows";
  QTest::newRow( "timestamp" ) << "by_int4"
                               << "key='fid'" << QStringList { "name", "at" } << qgis + "its field 'at' is of type timestamp, which QGIS reads itself." << all;
}

void TestPostgresRead::readAndCountedAsThroughQgis()
{
  QFETCH( QString, table );
  QFETCH( QString, options );
  QFETCH( QStringList, qis );
  QFETCH( QString, reader );
  QFETCH( QString, outcome );
  auto regions = vbastest::grid();
  const std::unique_ptr<QgsVectorLayer> records = layer( table, options );
  QVERIFY( records->isValid() );
  QStringList outcomes;
  CHECKED( vbastest::readBothWays( regions.get(), records.get(), QStringLiteral( "region" ), qis, reader, outcome.startsWith( QStringLiteral( "Read " ) ), outcomes ) );
  QCOMPARE( outcomes[0], outcomes[1] );
  QVERIFY2( outcomes[0].startsWith( outcome ), qPrintable( outcomes[0] ) );
}

VbasRows TestPostgresRead::startedCopy()
{
  const std::unique_ptr<QgsVectorLayer> records = layer( QStringLiteral( "many" ) );
  QString why;
  const std::optional<VbasStreamedRows> plan = VbasPgRows::plan( records.get(), { 1, 2 }, why );
  VbasRows rows = plan ? plan->open( why ) : VbasRows();
  QgsFeature f;
  if ( !rows || !rows( f ) )
    qWarning() << "the COPY did not start:" << why;
  return rows;
}

void TestPostgresRead::lostConnectionRefused()
{
  // The server ends the session mid-COPY: the rows already sent are read, then the read is refused.
  VbasRows rows = startedCopy();
  QVERIFY( rows );
  QCOMPARE( mServer.number( "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query ILIKE 'COPY (SELECT%' AND pid <> pg_backend_pid()" ), 1LL );
  QString refusal;
  try
  {
    for ( QgsFeature f; rows( f ); )
      ;
  }
  catch ( const QgsProcessingException &e )
  {
    refusal = e.what();
  }
  QVERIFY2( refusal.startsWith( QStringLiteral( "PostgreSQL stopped sending the records of public.many: " ) ), qPrintable( refusal ) );
}

void TestPostgresRead::destroyedReaderStopsTheCopy()
{
  // A reader dropped mid-read (a refusal of a row, a cancel of the run) cancels its COPY at once.
  VbasRows rows = startedCopy();
  QVERIFY( rows );
  QCOMPARE( copies(), 1LL );
  rows = VbasRows();
  QTRY_COMPARE_WITH_TIMEOUT( copies(), 0LL, 10000 );
}

QTEST_MAIN( TestPostgresRead )
#include "test_postgres_read.moc"
