// PostGIS in and out, end to end through qgis_process against a real PostgreSQL + PostGIS server
// that this test starts itself (tests/shared/pg_server.h: its own folder and socket, no TCP port).
//
// The sample layers are loaded into PostGIS with ogr2ogr; vbas:anonymize reads the regions and the
// records from PostGIS tables and writes every output back to PostGIS tables. The release is then
// recounted by SQL on the database (every EC at least k, released + suppressed = the records, every
// row's aggregate the one its patient's tract has in the lookup), and by vbas:checkanonymity.
// Then the faults: a table replace whose rename fails keeps the previous release (the drop and the
// rename are one transaction), rows the server refuses during COPY leave no staging table, and a
// records table edited by a second connection during the run aborts it with no table left behind.
// The role custodian may connect only with its password (scram-sha-256), and no output of its runs
// holds the password.
//
// Privacy: only counts are printed, never a record.

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/random_pg_records.h"
#include "tests/shared/pg_server.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QThread>

namespace
{

using e2e::tail;

const QString kPgBin = PgServer::bin();
const QStringList kQis { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
const int kK = 5;
const qint64 kSampleRecords = 40000;
//! The columns of a release of anonymize(): the QIs and the sensitive field, in the aggregates.
const QString kReleased = QStringLiteral( "aggregate_id, %1, diagnosis" ).arg( kQis.join( ',' ) );
//! The password of the role custodian, as SQL writes it: a space and a quote, so that half a password removed shows.
const QString kPasswordSql = QStringLiteral( "Hush7Kx9 Qz''4Wv" );
//! Pieces of it, each found in no output unless the password is.
const QStringList kPasswordPieces { QStringLiteral( "Hush7Kx9" ), QStringLiteral( "4Wv" ) };

//! SQL counting the rows of query a that query b lacks and those of b that a lacks (multisets of kReleased).
QString multisetDifference( const QString &a, const QString &b )
{
  return QStringLiteral( "SELECT count(*) FROM ((%1 EXCEPT ALL %2) UNION ALL (%2 EXCEPT ALL %1)) d" ).arg( a, b );
}

} // namespace

class TestPostgis : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void roundTrip();
    void groupedCountMatchesRowByRow();
    void recordsWithoutPrimaryKey();
    void looseTypesCountedAlike_data();
    void looseTypesCountedAlike();
    void randomTablesCountedAlike();
    void replaceIsOneTransaction();
    void refusedCopyLeavesNothing();
    void destinationIsComparedByIdentity_data();
    void destinationIsComparedByIdentity();
    void staleStagingTablesNeedTheirLockFree();
    void editedByAnotherConnectionIsNotReleased();
    void destinationRightsAreCheckedFirst_data();
    void destinationRightsAreCheckedFirst();
    void destinationWithRightsIsWritten();
    void textBeginningWithBomRefused();
    void checkerReadsStoredValues_data();
    void checkerReadsStoredValues();
    void checkerWithoutWholeNumberKey_data();
    void checkerWithoutWholeNumberKey();
    void passwordsNeverWritten();

  private:
    //! A table of the test database, as qgis_process takes it for an input (postgres://) or a destination (postgis:).
    QString input( const QString &table, bool geometry = false ) const;
    QString destination( const QString &table, bool geometry = false ) const;
    //! vbas:anonymize's parameters: the regions and records tables, every output into a table named prefix + output.
    QStringList anonymize( const QString &records, const QString &prefix ) const;
    void loadSample( const QString &file, const QString &table );
    //! anonymize() with the release into destination, as the role clerk (roleRights), and no other output.
    QStringList releaseAsClerk( const QString &destination ) const;
    //! The role clerk: no CREATE in public, CREATE in the schema clerk_out, which holds a table and a view of postgres's.
    void roleRights();
    /**
     * vbas:estimatesitecount on the records table with the QIs qis, counted in the source or row by row:
     * its counting line and numbers. countedInSource: whether the source counted.
     */
    QString siteCount( const QString &table, const QStringList &qis, bool grouped, bool &countedInSource );
    //! The tables of the public schema whose name starts with prefix.
    QStringList tables( const QString &prefix ) const;
    //! The rows a release of the table records should hold (kReleased): those of the classes of k or more, each in the aggregate that the table lookup gives its tract.
    static QString releasedFrom( const QString &records, const QString &lookup );
    /**
     * vbas:checkanonymity on the column sex of the layer source at K = 6: its results, and its log
     * (JSON and stderr) in log.
     */
    QJsonObject checkSex( const QString &source, QString &log );
    //! The class sizes of table's column sex (rows where is true), recounted by the server on sex::text, and as checkSex() must report them at K = 6.
    QJsonObject recountSex( const QString &table, const QString &where = QStringLiteral( "true" ) ) const;
    /**
     * A run as the role custodian, the connections of params (postgres' own) given with its password:
     * records a failure unless it succeeds and leaves no piece of the password in its log or its
     * results other than the destinations (QGIS opens the output layers through them).
     */
    void runAsCustodian( const QString &algorithm, const QStringList &params, const QStringList &layerOutputs );
    //! Records a failure naming what if text holds any piece of the password.
    static void noPassword( const QString &what, const QByteArray &text );

    PgServer mServer;
    e2e::QgisProcess mQgis;
    QTemporaryDir mDir;
};

void TestPostgis::initTestCase()
{
  QVERIFY2( QFileInfo::exists( kPgBin + "/initdb" ), "PostgreSQL's server programs are missing: run .ci/setup" );
  CHECKED( mServer.start() );
  CHECKED( loadSample( QStringLiteral( "ny8_tracts.gpkg" ), QStringLiteral( "tracts" ) ) );
  CHECKED( loadSample( QStringLiteral( "patients.gpkg" ), QStringLiteral( "patients" ) ) );
  QCOMPARE( mServer.number( QStringLiteral( "SELECT count(*) FROM patients" ) ), kSampleRecords );
  CHECKED( mQgis.setUp( { QStringLiteral( "vbas:anonymize" ), QStringLiteral( "vbas:checkanonymity" ) } ) );
}

void TestPostgis::cleanupTestCase()
{
  mServer.stop();
}

void TestPostgis::loadSample( const QString &file, const QString &table )
{
  QProcess p;
  p.start( QStringLiteral( "ogr2ogr" ), { "-f", "PostgreSQL", mServer.gdal(), ctestPath( "VBAS_SAMPLE_DIR" ) + '/' + file, "-nln", table, "-lco", "GEOMETRY_NAME=geom", "-lco", "FID=fid" } );
  QVERIFY2( p.waitForFinished( 120000 ) && p.exitCode() == 0, qPrintable( "ogr2ogr failed: " + tail( p.readAllStandardError() ) ) );
}

QString TestPostgis::input( const QString &table, bool geometry ) const
{
  return QStringLiteral( "postgres://%1 key='fid' table=\"public\".\"%2\"%3" ).arg( mServer.connection(), table, geometry ? QStringLiteral( " (geom)" ) : QString() );
}

QString TestPostgis::destination( const QString &table, bool geometry ) const
{
  return QStringLiteral( "postgis:%1 table=\"public\".\"%2\"%3" ).arg( mServer.connection(), table, geometry ? QStringLiteral( " (geom)" ) : QString() );
}

QStringList TestPostgis::anonymize( const QString &records, const QString &prefix ) const
{
  return { "REGIONS=" + input( QStringLiteral( "tracts" ), true ),
           "REGION_ID=areakey",
           "RECORDS=" + input( records ),
           "RECORD_REGION=tract_id",
           "QI_FIELDS=" + kQis.join( ';' ),
           QStringLiteral( "K=%1" ).arg( kK ),
           "SENSITIVE_FIELD=diagnosis",
           "SEED=1",
           "SITE_POINTS=" + destination( prefix + "sites", true ),
           "AGGREGATED=" + destination( prefix + "aggregated", true ),
           "LOOKUP=" + destination( prefix + "lookup" ),
           "ANONYMIZED=" + destination( prefix + "release" ),
           "VORONOI=" + destination( prefix + "voronoi", true ),
           "EVALUATION=" + destination( prefix + "evaluation" ),
           "REPORT=" + mDir.filePath( prefix + "report.html" ) };
}

QString TestPostgis::releasedFrom( const QString &records, const QString &lookup )
{
  return QStringLiteral( "SELECT %1 FROM (SELECT l.aggregate_id, p.*, count(*) OVER (PARTITION BY l.aggregate_id, %2) AS n FROM %3 p JOIN %4 l ON l.region_id = p.tract_id) e WHERE n >= %5" )
    .arg( kReleased, kQis.join( ',' ), records, lookup )
    .arg( kK );
}

QStringList TestPostgis::tables( const QString &prefix ) const
{
  QString out;
  mServer.sql( QStringLiteral( "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE '%1%'" ).arg( prefix ), out );
  return out.isEmpty() ? QStringList() : out.split( ',' );
}

void TestPostgis::roundTrip()
{
  QJsonObject document;
  e2e::ProcessResult run;
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:anonymize" ), anonymize( QStringLiteral( "patients" ), QString() ) + QStringList { "GROUP_IN_SOURCE=true" }, mDir.path(), document, run ) );
  const QJsonObject results = document.value( "results" ).toObject();
  const qint64 released = results.value( "RELEASED" ).toVariant().toLongLong();
  const qint64 suppressed = results.value( "SUPPRESSED" ).toVariant().toLongLong();
  QVERIFY( results.value( "ANONYMIZED" ).toString().startsWith( QStringLiteral( "postgres://" ) ) );
  const QJsonArray info = document.value( "log" ).toObject().value( "info" ).toArray();
  // A release is counted row by row, GROUP_IN_SOURCE or not.
  QVERIFY2( info.contains( QStringLiteral( "The records are counted row by row: the release is written from the rows read, which a count by the source does not give." ) ),
            "the release was not counted row by row" );

  // Every output is a table of the database, and no staging table is left.
  QCOMPARE( tables( QString() ), ( QStringList { "aggregated", "evaluation", "lookup", "patients", "release", "sites", "spatial_ref_sys", "tracts", "voronoi" } ) );
  QCOMPARE( tables( QStringLiteral( "vbas_partial" ) ), QStringList() );

  // The release recounted by the database itself.
  QCOMPARE( mServer.number( "SELECT count(*) FROM release" ), released );
  QCOMPARE( released + suppressed, kSampleRecords );
  QVERIFY( suppressed < kSampleRecords / 2 );
  const QString ecs = QStringLiteral( "SELECT aggregate_id, %1, count(*) AS n FROM release GROUP BY aggregate_id, %1" ).arg( kQis.join( ',' ) );
  QCOMPARE( mServer.number( QStringLiteral( "SELECT count(*) FROM (%1) e WHERE n < %2" ).arg( ecs ).arg( kK ) ), 0LL );
  const qint64 classes = mServer.number( QStringLiteral( "SELECT count(*) FROM (%1) e" ).arg( ecs ) );
  const qint64 smallest = mServer.number( QStringLiteral( "SELECT min(n) FROM (%1) e" ).arg( ecs ) );
  QVERIFY( classes > 0 && smallest >= kK );
  // The released rows are, as a multiset over the released fields, the records of the classes of k or
  // more, each in the aggregate that the lookup gives its tract; no patient id, tract or geometry column.
  QCOMPARE( mServer.number( multisetDifference( "SELECT " + kReleased + " FROM release", releasedFrom( QStringLiteral( "patients" ), QStringLiteral( "lookup" ) ) ) ), 0LL );
  QCOMPARE( mServer.number( "SELECT count(*) FROM information_schema.columns WHERE table_name = 'release' AND column_name IN ('patient_id', 'tract_id', 'fid', 'geom')" ), 0LL );
  QCOMPARE( mServer.number( "SELECT count(*) FROM lookup" ), mServer.number( "SELECT count(*) FROM tracts" ) );
  QCOMPARE( mServer.number( "SELECT count(*) FROM aggregated" ), results.value( "AGGREGATES" ).toVariant().toLongLong() );
  QCOMPARE( mServer.number( "SELECT count(*) FROM evaluation" ), 1LL );
  QVERIFY( QFileInfo::exists( mDir.filePath( QStringLiteral( "report.html" ) ) ) );

  // vbas:checkanonymity on the database table agrees with the recount.
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:checkanonymity" ),
                          { "INPUT=" + input( QStringLiteral( "release" ) ).replace( QStringLiteral( "key='fid'" ), QStringLiteral( "key='id'" ) ),
                            "QI_FIELDS=" + ( kQis + QStringList { "aggregate_id" } ).join( ';' ), QStringLiteral( "K=%1" ).arg( kK ), "VIOLATIONS=TEMPORARY_OUTPUT" },
                          mDir.path(), document, run ) );
  const QJsonObject check = document.value( "results" ).toObject();
  QCOMPARE( check.value( "PASS" ).toBool(), true );
  QCOMPARE( check.value( "RECORDS" ).toVariant().toLongLong(), released );
  QCOMPARE( check.value( "ECS" ).toVariant().toLongLong(), classes );
  QCOMPARE( check.value( "SMALLEST_EC" ).toVariant().toLongLong(), smallest );
}

void TestPostgis::groupedCountMatchesRowByRow()
{
  // The same run counted row by row (GROUP_IN_SOURCE=false) writes the same release: the same rows, in another (fresh) order.
  QJsonObject document;
  e2e::ProcessResult run;
  CHECKED(
    mQgis.runJson( QStringLiteral( "vbas:anonymize" ), anonymize( QStringLiteral( "patients" ), QStringLiteral( "rows_" ) ) + QStringList { "GROUP_IN_SOURCE=false" }, mDir.path(), document, run ) );
  // Nothing is said of GROUP_IN_SOURCE, which the user left off.
  QVERIFY( !QJsonDocument( document.value( "log" ).toObject() ).toJson().contains( "GROUP_IN_SOURCE" ) );
  QCOMPARE( mServer.number( "SELECT count(*) FROM rows_release" ), mServer.number( "SELECT count(*) FROM release" ) );
  QCOMPARE( mServer.number( multisetDifference( "SELECT " + kReleased + " FROM rows_release", "SELECT " + kReleased + " FROM release" ) ), 0LL );
  QCOMPARE( mServer.number( "SELECT count(*) FROM rows_lookup a JOIN lookup b USING (region_id) WHERE a.aggregate_id <> b.aggregate_id" ), 0LL );
}

void TestPostgis::recordsWithoutPrimaryKey()
{
  // The records in a table without a primary key, loaded as QGIS loads it (no key in the source, QGIS
  // naming the rows by ctid): anonymized as the keyed table is (the same release, recounted), and the
  // release, copied to a table without a key, checked alike.
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE TABLE nokey_patients AS SELECT * FROM patients" ), out ) );
  const QString unkeyed = QStringLiteral( "postgres://%1 table=\"public\".\"%2\"" ).arg( mServer.connection() );
  QStringList parameters = anonymize( QStringLiteral( "patients" ), QStringLiteral( "nokey_" ) ) + QStringList { "GROUP_IN_SOURCE=true" };
  parameters.replaceInStrings( QRegularExpression( QStringLiteral( "^RECORDS=.*" ) ), QStringLiteral( "RECORDS=" ) + unkeyed.arg( QStringLiteral( "nokey_patients" ) ) );
  QJsonObject document;
  e2e::ProcessResult run;
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:anonymize" ), parameters, mDir.path(), document, run ) );
  const qint64 released = document.value( "results" ).toObject().value( "RELEASED" ).toVariant().toLongLong();
  QCOMPARE( mServer.number( "SELECT count(*) FROM nokey_release" ), released );
  QCOMPARE( mServer.number( multisetDifference( "SELECT " + kReleased + " FROM nokey_release", "SELECT " + kReleased + " FROM release" ) ), 0LL );

  CHECKED( mServer.sql( QStringLiteral( "CREATE TABLE nokey_copy AS SELECT * FROM nokey_release" ), out ) );
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:checkanonymity" ),
                          { "INPUT=" + unkeyed.arg( QStringLiteral( "nokey_copy" ) ), "QI_FIELDS=" + ( kQis + QStringList { "aggregate_id" } ).join( ';' ), QStringLiteral( "K=%1" ).arg( kK ) },
                          mDir.path(), document, run ) );
  const QJsonObject check = document.value( "results" ).toObject();
  QCOMPARE( check.value( "PASS" ).toBool(), true );
  QCOMPARE( check.value( "RECORDS" ).toVariant().toLongLong(), released );
}

QString TestPostgis::siteCount( const QString &table, const QStringList &qis, bool grouped, bool &countedInSource )
{
  QJsonObject document;
  e2e::ProcessResult run;
  mQgis.runJson( QStringLiteral( "vbas:estimatesitecount" ),
                 { "REGIONS=" + input( QStringLiteral( "tracts" ), true ), "REGION_ID=areakey", "RECORDS=" + input( table ), "RECORD_REGION=tract_id", "QI_FIELDS=" + qis.join( ';' ),
                   QStringLiteral( "GROUP_IN_SOURCE=%1" ).arg( grouped ? "true" : "false" ) },
                 mDir.path(), document, run );
  QStringList said;
  countedInSource = false;
  for ( const QJsonValue &info : document.value( "log" ).toObject().value( "info" ).toArray() )
  {
    countedInSource |= info.toString() == QStringLiteral( "The records are counted by their PostgreSQL source (GROUP BY region and QIs)." );
    if ( info.toString().startsWith( QStringLiteral( "Read " ) ) )
      said << info.toString();
  }
  const QJsonObject results = document.value( "results" ).toObject();
  for ( const char *number : { "SITES", "CUTOFF", "ENTROPY", "MAXCOMBS", "RECORDS" } )
    said << QStringLiteral( "%1 %2" ).arg( number ).arg( results.value( number ).toDouble(), 0, 'g', 12 );
  return said.join( QStringLiteral( "; " ) );
}

void TestPostgis::looseTypesCountedAlike_data()
{
  QTest::addColumn<QStringList>( "qis" );
  QTest::newRow( "citext, f among F" ) << QStringList { "age_group", "sex_ci" };
  QTest::newRow( "timestamptz in whole seconds" ) << QStringList { "age_group", "seen_tz" };
  QTest::newRow( "timestamps 0.7 ms apart" ) << QStringList { "age_group", "seen_us" };
  QTest::newRow( "all three" ) << QStringList { "sex_ci", "seen_tz", "seen_us" };
}

void TestPostgis::looseTypesCountedAlike()
{
  // Columns whose PostgreSQL equality joins values QGIS reads apart, or that GDAL and QGIS read
  // differently: citext holding f among F, timestamptz (whole seconds) and timestamps 0.7 ms apart
  // (QGIS keeps milliseconds). Counted in the source, the same classes and numbers as row by row.
  QFETCH( QStringList, qis );
  QString out;
  if ( tables( QStringLiteral( "loose" ) ).isEmpty() )
    CHECKED( mServer.sql( QStringLiteral( "CREATE EXTENSION IF NOT EXISTS citext; "
                                          "CREATE TABLE loose AS SELECT fid, tract_id, age_group, (CASE WHEN fid % 7 = 0 THEN lower(sex) ELSE sex END)::citext AS sex_ci, "
                                          "timestamptz '2020-01-01 00:00:00+00' + (fid % 3) * interval '1 hour' AS seen_tz, "
                                          "timestamp '2020-01-01 10:00:00' + (fid % 3) * interval '700 microseconds' AS seen_us FROM patients; "
                                          "ALTER TABLE loose ADD PRIMARY KEY (fid);" ),
                          out ) );
  bool inSource = false, rowByRow = true;
  const QString grouped = siteCount( QStringLiteral( "loose" ), qis, true, inSource );
  QCOMPARE( grouped, siteCount( QStringLiteral( "loose" ), qis, false, rowByRow ) );
  QVERIFY( inSource && !rowByRow );
  QVERIFY2( grouped.startsWith( QStringLiteral( "Read 40000 record rows" ) ), qPrintable( grouped ) );
}

void TestPostgis::randomTablesCountedAlike()
{
  // Four tables, two qgis_process runs each (CI's time): qgis_grouped_count counts 60 random GeoPackage
  // tables both ways in-process; these check the server's own comparisons of the same kinds of values.
  constexpr quint32 kRandomTables = 4;
  // Random tables of loose types, NULLs and values that one comparison joins and another keeps apart
  // (random_pg_records.h): counted by the server and row by row, the same outcome every time.
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE EXTENSION IF NOT EXISTS citext" ), out ) );
  int counted = 0;
  for ( quint32 seed = 1; seed <= kRandomTables; ++seed )
  {
    const QString table = QStringLiteral( "random%1" ).arg( seed );
    QStringList declared;
    CHECKED( mServer.sql( e2e::randomPgRecords( seed, table, QStringLiteral( "patients" ), &declared ), out ) );
    bool inSource = false, rowByRow = true;
    const QStringList qis { "q1", "q2", "q3" };
    const QString grouped = siteCount( table, qis, true, inSource );
    const QString expected = siteCount( table, qis, false, rowByRow );
    QVERIFY2( grouped == expected, qPrintable( QStringLiteral( "seed %1 (%2):\n  by the server: %3\n  row by row:    %4" ).arg( seed ).arg( declared.join( ", " ), grouped, expected ) ) );
    QVERIFY2( grouped.startsWith( QStringLiteral( "Read 40000 record rows" ) ), qPrintable( grouped ) );
    counted += inSource;
  }
  QCOMPARE( counted, int( kRandomTables ) );
}

void TestPostgis::replaceIsOneTransaction()
{
  // A run into the tables of roundTrip whose last step, renaming the staging table over the release,
  // fails (an event trigger refuses it): the previous release must stay whole under its name, and the
  // outputs committed before it are put back, table by table, with the report file byte for byte.
  const qint64 before = mServer.number( "SELECT count(*) FROM release" );
  QVERIFY( before > 0 );
  const qint64 checksum = mServer.number( "SELECT sum(hashtext(r::text)::bigint) FROM release r" );
  const QStringList earlier = { "sites", "aggregated", "lookup", "voronoi", "evaluation" };
  QMap<QString, qint64> sums;
  for ( const QString &table : earlier )
    sums[table] = mServer.number( QStringLiteral( "SELECT count(*) * 1000003 + coalesce(sum(hashtext(t::text)::bigint), 0) FROM %1 t" ).arg( table ) );
  QFile reportFile( mDir.filePath( QStringLiteral( "report.html" ) ) );
  QVERIFY( reportFile.open( QIODevice::ReadOnly ) );
  const QByteArray report = reportFile.readAll();
  reportFile.close();
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE FUNCTION refuse_rename() RETURNS event_trigger LANGUAGE plpgsql AS $$ "
                                        "BEGIN IF current_query() ILIKE '%RENAME TO \"release\"%' THEN RAISE EXCEPTION 'renames refused by the test'; END IF; END $$; "
                                        "CREATE EVENT TRIGGER refuse_rename ON ddl_command_start WHEN TAG IN ('ALTER TABLE') EXECUTE FUNCTION refuse_rename();" ),
                        out ) );
  e2e::ProcessResult run;
  CHECKED( mQgis.run( QStringList { "run", "vbas:anonymize", "--" } + anonymize( QStringLiteral( "patients" ), QString() ), mDir.path(), run ) );
  CHECKED( mServer.sql( QStringLiteral( "DROP EVENT TRIGGER refuse_rename; DROP FUNCTION refuse_rename();" ), out ) );
  QVERIFY2( run.exitCode != 0, "the run whose rename failed succeeded" );
  QVERIFY2( QString::fromUtf8( run.err ).contains( QStringLiteral( "could not move the staging table into place" ) ), qPrintable( tail( run.err ) ) );
  QCOMPARE( mServer.number( "SELECT count(*) FROM release" ), before );
  QCOMPARE( mServer.number( "SELECT sum(hashtext(r::text)::bigint) FROM release r" ), checksum );
  QCOMPARE( tables( QStringLiteral( "vbas_partial" ) ), QStringList() );
  QCOMPARE( tables( QStringLiteral( "vbas_previous" ) ), QStringList() );
  for ( const QString &table : earlier )
    QCOMPARE( mServer.number( QStringLiteral( "SELECT count(*) * 1000003 + coalesce(sum(hashtext(t::text)::bigint), 0) FROM %1 t" ).arg( table ) ), sums[table] );
  QVERIFY( reportFile.open( QIODevice::ReadOnly ) );
  QVERIFY2( reportFile.readAll() == report, "the previous report.html was not put back" );
}

void TestPostgis::refusedCopyLeavesNothing()
{
  // A run into the tables of roundTrip whose rows the server refuses while COPY sends them (a trigger
  // that an event trigger puts on every staging table): the run fails with the server's reason, the
  // previous release stays whole and no staging table is left.
  const qint64 before = mServer.number( "SELECT count(*) FROM release" );
  const qint64 checksum = mServer.number( "SELECT sum(hashtext(r::text)::bigint) FROM release r" );
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE FUNCTION refuse_copy() RETURNS trigger LANGUAGE plpgsql AS $$ "
                                        "BEGIN IF current_query() ILIKE 'COPY%' THEN RAISE EXCEPTION 'rows refused by the test'; END IF; RETURN NEW; END $$; "
                                        "CREATE FUNCTION arm_refuse_copy() RETURNS event_trigger LANGUAGE plpgsql AS $$ DECLARE c record; BEGIN "
                                        "FOR c IN SELECT object_identity FROM pg_event_trigger_ddl_commands() WHERE object_type = 'table' AND object_identity LIKE '%vbas\\_partial%' LOOP "
                                        "EXECUTE format('CREATE TRIGGER refuse_copy BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION refuse_copy()', c.object_identity); "
                                        "END LOOP; END $$; "
                                        "CREATE EVENT TRIGGER arm_refuse_copy ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION arm_refuse_copy();" ),
                        out ) );
  e2e::ProcessResult run;
  CHECKED( mQgis.run( QStringList { "run", "vbas:anonymize", "--" } + anonymize( QStringLiteral( "patients" ), QString() ), mDir.path(), run ) );
  CHECKED( mServer.sql( QStringLiteral( "DROP EVENT TRIGGER arm_refuse_copy; DROP FUNCTION arm_refuse_copy();" ), out ) );
  QVERIFY2( run.exitCode != 0, "the run whose rows were refused succeeded" );
  QVERIFY2( QString::fromUtf8( run.err ).contains( QStringLiteral( "rows refused by the test" ) ), qPrintable( tail( run.err ) ) );
  QCOMPARE( mServer.number( "SELECT count(*) FROM release" ), before );
  QCOMPARE( mServer.number( "SELECT sum(hashtext(r::text)::bigint) FROM release r" ), checksum );
  QCOMPARE( tables( QStringLiteral( "vbas_partial" ) ), QStringList() );
  CHECKED( mServer.sql( QStringLiteral( "DROP FUNCTION refuse_copy();" ), out ) ); // no staging table holds its trigger
}

void TestPostgis::destinationIsComparedByIdentity_data()
{
  QTest::addColumn<QString>( "setup" ); // SQL run first
  QTest::addColumn<QString>( "records" );
  QTest::addColumn<QString>( "output" );
  QTest::addColumn<QString>( "destination" );
  QTest::addColumn<QString>( "message" );
  const QString dbname = QStringLiteral( "dbname='vbas' host=%1 user='postgres'" ).arg( mServer.socketFolder() );
  QTest::newRow( "no schema" ) << ""
                               << "patients"
                               << "ANONYMIZED"
                               << "postgis:" + dbname + " table=\"patients\""
                               << "would overwrite the input RECORDS";
  QTest::newRow( "port given" ) << ""
                                << "patients"
                                << "ANONYMIZED"
                                << "postgis:" + dbname + " port=5432 table=\"public\".\"patients\""
                                << "would overwrite the input RECORDS";
  QTest::newRow( "options given" ) << ""
                                   << "patients"
                                   << "ANONYMIZED"
                                   << "postgis:" + dbname + " sslmode=disable connect_timeout=10 table=\"public\".\"patients\""
                                   << "would overwrite the input RECORDS";
  QTest::newRow( "host spelled otherwise" ) << ""
                                            << "patients"
                                            << "ANONYMIZED" << QStringLiteral( "postgis:dbname='vbas' host=%1/./ user='postgres' table=\"public\".\"patients\"" ).arg( mServer.socketFolder() )
                                            << "would overwrite the input RECORDS";
  QTest::newRow( "regions through LOOKUP" ) << ""
                                            << "patients"
                                            << "LOOKUP"
                                            << "postgis:" + dbname + " table=\"tracts\""
                                            << "would overwrite the input REGIONS";
  QTest::newRow( "the table under a view input" ) << "CREATE OR REPLACE VIEW v_patients AS SELECT * FROM patients"
                                                  << "v_patients"
                                                  << "ANONYMIZED"
                                                  << "postgis:" + dbname + " table=\"public\".\"patients\""
                                                  << "would overwrite the input RECORDS";
  QTest::newRow( "a dashboard view over the old release" ) << "CREATE TABLE IF NOT EXISTS old_release (a int); CREATE OR REPLACE VIEW dashboard AS SELECT count(*) FROM old_release"
                                                           << "patients"
                                                           << "ANONYMIZED"
                                                           << "postgis:" + dbname + " table=\"public\".\"old_release\""
                                                           << "the view dashboard";
}

void TestPostgis::destinationIsComparedByIdentity()
{
  QFETCH( QString, setup );
  QFETCH( QString, records );
  QFETCH( QString, output );
  QFETCH( QString, destination );
  QFETCH( QString, message );
  QString out;
  if ( !setup.isEmpty() )
    CHECKED( mServer.sql( setup, out ) );
  const QString columns = QStringLiteral( "SELECT string_agg(table_name || '.' || column_name, ',' ORDER BY table_name, column_name) FROM information_schema.columns WHERE table_schema = 'public'" );
  QString before, after;
  CHECKED( mServer.sql( columns, before ) );
  const qint64 sum = mServer.number( "SELECT sum(hashtext(p::text)::bigint) FROM patients p" );
  QStringList params = anonymize( records, QStringLiteral( "identity_" ) );
  params.replaceInStrings( QRegularExpression( QStringLiteral( "^%1=.*" ).arg( output ) ), output + '=' + destination );
  e2e::ProcessResult run;
  CHECKED( mQgis.run( QStringList { "run", "vbas:anonymize", "--" } + params, mDir.path(), run ) );
  QVERIFY2( run.exitCode != 0, "a destination that is an input was written" );
  QVERIFY2( QString::fromUtf8( run.err ).contains( message ), qPrintable( tail( run.err ) ) );
  CHECKED( mServer.sql( columns, after ) );
  QCOMPARE( after, before );
  QCOMPARE( mServer.number( "SELECT sum(hashtext(p::text)::bigint) FROM patients p" ), sum );
  QCOMPARE( tables( QStringLiteral( "identity_" ) ), QStringList() );
}

void TestPostgis::staleStagingTablesNeedTheirLockFree()
{
  // Staging tables of runs on other machines: one whose run is gone (its advisory lock free), one whose
  // run lives (its lock held by another session), and a previous table moved aside by a killed run.
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE TABLE vbas_partial_0123456789ab_77_a1 (x int); CREATE TABLE vbas_partial_0123456789ab_77_b2 (x int); "
                                        "CREATE TABLE vbas_previous_0123456789ab_77_c3 (x int)" ),
                        out ) );
  QProcess live;
  live.start( kPgBin + "/psql", { "-h", mServer.socketFolder(), "-U", "postgres", "-d", "vbas", "-At" } );
  QVERIFY( live.waitForStarted( 30000 ) );
  live.write( "SELECT 'locked', pg_advisory_lock(x'b2'::bigint);\n" ); // the key of token b2
  QVERIFY( live.waitForReadyRead( 30000 ) );
  QVERIFY( live.readAllStandardOutput().startsWith( "locked" ) );
  e2e::ProcessResult run;
  CHECKED( mQgis.run( QStringList { "run", "vbas:anonymize", "--" } + anonymize( QStringLiteral( "patients" ), QStringLiteral( "stale_" ) ), mDir.path(), run ) );
  live.write( "\\q\n" );
  live.closeWriteChannel();
  QVERIFY( live.waitForFinished( 30000 ) );
  QVERIFY2( run.exitCode == 0, qPrintable( tail( run.err ) ) );
  QCOMPARE( tables( QStringLiteral( "vbas_p" ) ), ( QStringList { "vbas_partial_0123456789ab_77_b2", "vbas_previous_0123456789ab_77_c3" } ) );
  QVERIFY2( QString::fromUtf8( run.err + run.out ).contains( QStringLiteral( "vbas_previous_0123456789ab_77_c3" ) ), "the previous table left by a killed run is not named" );
  CHECKED( mServer.sql( QStringLiteral( "DROP TABLE vbas_partial_0123456789ab_77_b2, vbas_previous_0123456789ab_77_c3" ), out ) );
}

void TestPostgis::editedByAnotherConnectionIsNotReleased()
{
  // 320,000 records, so that the read lasts long enough to be seen.
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE TABLE big AS SELECT p.* FROM patients p, generate_series(1, 8); "
                                        "ALTER TABLE big DROP COLUMN fid; ALTER TABLE big ADD COLUMN fid serial PRIMARY KEY; ANALYZE big;" ),
                        out ) );
  QCOMPARE( mServer.number( "SELECT count(*) FROM big" ), 8 * kSampleRecords );
  QProcess plugin;
  QElapsedTimer timer;
  timer.start();
  CHECKED( mQgis.start( plugin, QStringList { "run", "vbas:anonymize", "--" } + anonymize( QStringLiteral( "big" ), QStringLiteral( "edited_" ) ), mDir.path() ) );

  // Once the plugin's connection reads the table (a COPY, or QGIS's cursor), a second connection asks for an
  // exclusive lock, changes one patient's sex and commits. The lock is granted when the read's
  // transaction ends. The records are read once, so the release is of the table as read: the edit
  // reaches no output. (Before, a second pass read the edited table, and the run aborted.)
  const QString reading = QStringLiteral( "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.relation = 'big'::regclass "
                                          "AND l.mode = 'AccessShareLock' AND a.pid <> pg_backend_pid() AND (a.query ILIKE 'FETCH%' OR a.query ILIKE 'COPY%')" );
  while ( mServer.number( reading ) == 0 )
  {
    QVERIFY2( plugin.state() == QProcess::Running, "the run ended before its read was seen" );
    QVERIFY2( timer.elapsed() < 120000, "the read was not seen within 2 minutes" );
    QThread::msleep( 5 );
  }
  const QString swapSex = QStringLiteral( "UPDATE big SET sex = CASE WHEN sex = 'F' THEN 'M' ELSE 'F' END WHERE fid = 1;" );
  QProcess editor;
  editor.start( kPgBin + "/psql", mServer.psqlArgs( QStringLiteral( "BEGIN; LOCK TABLE big IN ACCESS EXCLUSIVE MODE; %1 COMMIT;" ).arg( swapSex ) ) );
  e2e::ProcessResult run;
  CHECKED( e2e::QgisProcess::finish( plugin, QStringLiteral( "vbas:anonymize on a table edited during the run" ), timer, e2e::kProcessTimeoutMs, run ) );
  QVERIFY( editor.waitForFinished( 60000 ) );
  QCOMPARE( editor.exitCode(), 0 );
  QVERIFY2( run.exitCode == 0, qPrintable( tail( run.err ) ) );
  CHECKED( mServer.sql( swapSex, out ) ); // the table as read
  QCOMPARE( mServer.number( multisetDifference( "SELECT " + kReleased + " FROM edited_release", releasedFrom( QStringLiteral( "big" ), QStringLiteral( "edited_lookup" ) ) ) ), 0LL );
  QCOMPARE( tables( QStringLiteral( "vbas_partial" ) ), QStringList() );
  CHECKED( mServer.sql( QStringLiteral( "DROP TABLE big, edited_sites, edited_aggregated, edited_lookup, edited_release, edited_voronoi, edited_evaluation" ), out ) );
}

void TestPostgis::roleRights()
{
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'clerk') THEN CREATE ROLE clerk LOGIN; END IF; END $$; "
                                        "REVOKE CREATE ON SCHEMA public FROM PUBLIC; CREATE SCHEMA IF NOT EXISTS clerk_out; GRANT USAGE, CREATE ON SCHEMA clerk_out TO clerk; "
                                        "CREATE TABLE IF NOT EXISTS clerk_out.taken (a int); CREATE OR REPLACE VIEW clerk_out.a_view AS SELECT 1 AS a" ),
                        out ) );
}

QStringList TestPostgis::releaseAsClerk( const QString &destination ) const
{
  QStringList params;
  for ( const QString &param : anonymize( QStringLiteral( "patients" ), QStringLiteral( "clerk_" ) ) )
    if ( !param.contains( QStringLiteral( "postgis:" ) ) && !param.startsWith( QLatin1String( "REPORT=" ) ) )
      params << param;
  return params << QStringLiteral( "ANONYMIZED=postgis:dbname='vbas' host=%1 user='clerk' table=%2" ).arg( mServer.socketFolder(), destination );
}

void TestPostgis::destinationRightsAreCheckedFirst_data()
{
  QTest::addColumn<QString>( "destination" );
  QTest::addColumn<QString>( "message" );
  QTest::newRow( "no CREATE in the schema" ) << "\"public\".\"clerk_release\""
                                             << "the user clerk may not create tables in the schema public (no CREATE privilege there)";
  QTest::newRow( "a table of another owner" ) << "\"clerk_out\".\"taken\""
                                              << "the table clerk_out.taken exists and belongs to postgres, and only its owner may replace it";
  QTest::newRow( "a view" ) << "\"clerk_out\".\"a_view\""
                            << "clerk_out.a_view is a view, and an output replaces only a table";
  QTest::newRow( "no such schema" ) << "\"nowhere\".\"clerk_release\""
                                    << "the schema nowhere does not exist";
}

void TestPostgis::destinationRightsAreCheckedFirst()
{
  // A destination the role may not write is refused before any record is read, not once the whole
  // release has been computed.
  QFETCH( QString, destination );
  QFETCH( QString, message );
  CHECKED( roleRights() );
  e2e::ProcessResult run;
  CHECKED( mQgis.run( QStringList { "run", "vbas:anonymize", "--" } + releaseAsClerk( destination ), mDir.path(), run ) );
  QVERIFY2( run.exitCode != 0, "a destination the role may not write was written" );
  const QString log = QString::fromUtf8( run.err + run.out );
  QVERIFY2( log.contains( message ) && log.contains( QStringLiteral( "Nothing was read or written." ) ), qPrintable( tail( run.err ) ) );
  QVERIFY2( !log.contains( QStringLiteral( "The records are counted" ) ), "the records were read before the destination was checked" );
  QCOMPARE( mServer.number( "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'clerk%' OR tablename LIKE 'vbas_partial%'" ), 0LL );
  QCOMPARE( mServer.number( "SELECT count(*) FROM clerk_out.taken" ), 0LL );
}

void TestPostgis::destinationWithRightsIsWritten()
{
  // The same role writes where it may create tables, and replaces a table it owns.
  CHECKED( roleRights() );
  for ( int run = 0; run < 2; ++run )
  {
    QJsonObject document;
    e2e::ProcessResult result;
    CHECKED( mQgis.runJson( QStringLiteral( "vbas:anonymize" ), releaseAsClerk( QStringLiteral( "\"clerk_out\".\"clerk_release\"" ) ), mDir.path(), document, result ) );
    QCOMPARE( mServer.number( "SELECT count(*) FROM clerk_out.clerk_release" ), document.value( "results" ).toObject().value( "RELEASED" ).toVariant().toLongLong() );
  }
  QCOMPARE( mServer.number( "SELECT count(*) FROM pg_tables WHERE tableowner = 'clerk' AND tablename <> 'clerk_release'" ), 0LL );
  const QString ecs = QStringLiteral( "SELECT count(*) AS n FROM clerk_out.clerk_release GROUP BY aggregate_id, %1" ).arg( kQis.join( ',' ) );
  QCOMPARE( mServer.number( QStringLiteral( "SELECT count(*) FROM (%1) e WHERE n < %2" ).arg( ecs ).arg( kK ) ), 0LL );
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "DROP TABLE clerk_out.clerk_release" ), out ) );
}

void TestPostgis::textBeginningWithBomRefused()
{
  // QGIS drops a leading U+FEFF from PostgreSQL text: 'F' and U+FEFF 'F' would be one class. Refused
  // naming the row by its key, in the records and in the regions.
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE TABLE bom_records AS SELECT fid, tract_id, age_group, CASE WHEN fid = 17 THEN chr(65279) || sex ELSE sex END AS sex FROM patients; "
                                        "ALTER TABLE bom_records ADD PRIMARY KEY (fid); "
                                        "CREATE TABLE bom_tracts AS SELECT fid, CASE WHEN fid = 5 THEN chr(65279) || areakey ELSE areakey END AS areakey, geom FROM tracts; "
                                        "ALTER TABLE bom_tracts ADD PRIMARY KEY (fid);" ),
                        out ) );
  const QList<std::pair<QStringList, QString>> cases {
    { { "REGIONS=" + input( QStringLiteral( "tracts" ), true ), "RECORDS=" + input( QStringLiteral( "bom_records" ) ) },
      QStringLiteral( "Record with fid 17: the field 'sex' holds text that begins with U+FEFF" ) },
    { { "REGIONS=" + input( QStringLiteral( "bom_tracts" ), true ), "RECORDS=" + input( QStringLiteral( "patients" ) ) },
      QStringLiteral( "Region with fid 5: the field 'areakey' holds text that begins with U+FEFF" ) },
  };
  for ( const auto &[layers, message] : cases )
  {
    e2e::ProcessResult run;
    CHECKED( mQgis.run( QStringList { "run", "vbas:estimatesitecount", "--" } + layers + QStringList { "REGION_ID=areakey", "RECORD_REGION=tract_id", "QI_FIELDS=age_group;sex" }, mDir.path(), run ) );
    QVERIFY2( run.exitCode != 0, "text beginning with U+FEFF was read" );
    QVERIFY2( QString::fromUtf8( run.err + run.out ).contains( message ), qPrintable( tail( run.err ) ) );
  }
}

QJsonObject TestPostgis::checkSex( const QString &source, QString &log )
{
  QJsonObject document;
  e2e::ProcessResult run;
  mQgis.runJson( QStringLiteral( "vbas:checkanonymity" ), { "INPUT=" + source, "QI_FIELDS=sex", "K=6" }, mDir.path(), document, run );
  log = QString::fromUtf8( QJsonDocument( document.value( "log" ).toObject() ).toJson() + run.err );
  QJsonObject results = document.value( "results" ).toObject();
  QJsonObject outcome;
  for ( const char *name : { "PASS", "RECORDS", "ECS", "SMALLEST_EC", "VIOLATING_ECS", "VIOLATING_RECORDS", "VALUES_READ" } )
    outcome.insert( name, results.value( name ).isDouble() ? QJsonValue( results.value( name ).toVariant().toLongLong() ) : results.value( name ) );
  return outcome;
}

QJsonObject TestPostgis::recountSex( const QString &table, const QString &where ) const
{
  QString out;
  mServer.sql( QStringLiteral( "SELECT string_agg(n::text, ' ' ORDER BY n) FROM (SELECT count(*) AS n FROM %1 WHERE %2 GROUP BY sex::text) c" ).arg( table, where ), out );
  qint64 records = 0, violating = 0, violatingRecords = 0;
  const QStringList sizes = out.split( ' ', Qt::SkipEmptyParts );
  for ( const QString &size : sizes )
  {
    records += size.toLongLong();
    violating += size.toLongLong() < 6;
    violatingRecords += size.toLongLong() < 6 ? size.toLongLong() : 0;
  }
  return { { "PASS", violating == 0 },
           { "RECORDS", records },
           { "ECS", sizes.size() },
           { "SMALLEST_EC", sizes.value( 0 ).toLongLong() },
           { "VIOLATING_ECS", violating },
           { "VIOLATING_RECORDS", violatingRecords },
           { "VALUES_READ", "postgresql-text" } };
}

void TestPostgis::checkerReadsStoredValues_data()
{
  QTest::addColumn<QString>( "key" );  // the declared type of the key id
  QTest::addColumn<QString>( "type" ); // of sex
  QTest::addColumn<QString>( "first" );
  QTest::addColumn<QString>( "second" );
  QTest::newRow( "citext F and f" ) << "integer"
                                    << "citext"
                                    << "'F'"
                                    << "'f'";
  QTest::newRow( "timestamptz a microsecond apart" ) << "bigint"
                                                     << "timestamptz"
                                                     << "'2020-01-01 10:00:00.000001+00'"
                                                     << "'2020-01-01 10:00:00.000002+00'";
  QTest::newRow( "numeric 1.0 and 1.00" ) << "smallint"
                                          << "numeric"
                                          << "1.0"
                                          << "1.00";
}

void TestPostgis::checkerReadsStoredValues()
{
  // Six records whose sex QGIS reads alike (or the column's own equality joins) stored as two values
  // of 3: the check sees them apart, as the server's recount of sex::text does, and fails at K = 6.
  // The keys (1001 to 1006, stored in reverse) are not QGIS's feature ids of a bigint key. A subset
  // string picks the rows checked, as the same condition picks those the server recounts.
  QFETCH( QString, key );
  QFETCH( QString, type );
  QFETCH( QString, first );
  QFETCH( QString, second );
  const QString table = QStringLiteral( "stored_%1" ).arg( type );
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "CREATE EXTENSION IF NOT EXISTS citext; DROP TABLE IF EXISTS %1; CREATE TABLE %1 (id %2 PRIMARY KEY, sex %3); "
                                        "INSERT INTO %1 SELECT 1000 + g, CASE WHEN g <= 3 THEN %4 ELSE %5 END::%3 FROM generate_series(6, 1, -1) g;" )
                          .arg( table, key, type, first, second ),
                        out ) );
  const QJsonObject expected = recountSex( table );
  QCOMPARE( expected.value( "ECS" ).toInt(), 2 );
  const QString source = QStringLiteral( "postgres://%1 key='id' table=\"public\".\"%2\"" ).arg( mServer.connection(), table );
  QString log;
  QCOMPARE( checkSex( source, log ), expected );
  QVERIFY2( log.contains( QStringLiteral( "Compared: the values as the server writes them as text (value::text) (VALUES_READ postgresql-text)." ) ), qPrintable( log ) );
  const QString where = QStringLiteral( "\"id\" >= 1003" );
  QCOMPARE( recountSex( table, where ).value( "RECORDS" ).toInt(), 4 );
  QCOMPARE( checkSex( source + " sql=" + where, log ), recountSex( table, where ) );
}

void TestPostgis::checkerWithoutWholeNumberKey_data()
{
  QTest::addColumn<QString>( "declaration" ); // of the table's key
  QTest::addColumn<QString>( "key" );         // in the layer's source
  QTest::newRow( "a text key" ) << "code text PRIMARY KEY"
                                << " key='code'";
  QTest::newRow( "no key" ) << "code text"
                            << "";
}

void TestPostgis::checkerWithoutWholeNumberKey()
{
  // A table whose rows no whole-number key names is compared as QGIS reads it, and the log says so
  // and why: here QGIS reads timestamps a microsecond apart as one value (one class of 6), which the
  // server's recount of the stored text splits.
  QFETCH( QString, declaration );
  QFETCH( QString, key );
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "DROP TABLE IF EXISTS unkeyed; CREATE TABLE unkeyed (%1, sex timestamptz); "
                                        "INSERT INTO unkeyed SELECT 'r' || g, timestamptz '2020-01-01 10:00:00+00' + (g % 2) * interval '1 microsecond' FROM generate_series(1, 6) g;" )
                          .arg( declaration ),
                        out ) );
  QCOMPARE( recountSex( QStringLiteral( "unkeyed" ) ).value( "ECS" ).toInt(), 2 );
  QString log;
  const QJsonObject outcome = checkSex( QStringLiteral( "postgres://%1%2 table=\"public\".\"unkeyed\"" ).arg( mServer.connection(), key ), log );
  QCOMPARE( outcome.value( "VALUES_READ" ).toString(), QStringLiteral( "qgis" ) );
  QCOMPARE( outcome.value( "RECORDS" ).toInt(), 6 );
  QCOMPARE( outcome.value( "ECS" ).toInt(), 1 );
  QVERIFY2( log.contains( QStringLiteral( "are compared as QGIS reads them, not as stored: the table's key is not one column of whole numbers" ) ), qPrintable( log ) );
}

void TestPostgis::noPassword( const QString &what, const QByteArray &text )
{
  for ( const QString &piece : kPasswordPieces )
    QVERIFY2( !text.contains( piece.toUtf8() ), qPrintable( QStringLiteral( "%1 holds the password" ).arg( what ) ) );
}

void TestPostgis::runAsCustodian( const QString &algorithm, const QStringList &params, const QStringList &layerOutputs )
{
  QStringList custodian;
  for ( const QString &param : params )
    custodian << QString( param ).replace( mServer.connection(), mServer.connection( QStringLiteral( "custodian" ), kPasswordSql ) );
  QJsonObject document;
  e2e::ProcessResult run;
  CHECKED( mQgis.runJson( algorithm, custodian, mDir.path(), document, run ) );
  QJsonObject results = document.value( "results" ).toObject();
  for ( const QString &output : layerOutputs )
    QVERIFY2( results.take( output ).toString().startsWith( QStringLiteral( "postgres://" ) ), qPrintable( output ) );
  noPassword( algorithm + " log", QJsonDocument( document.value( "log" ).toObject() ).toJson() + run.err );
  noPassword( algorithm + " results", QJsonDocument( results ).toJson() );
}

void TestPostgis::passwordsNeverWritten()
{
  // The role custodian connects only with its password: runs that succeed used it. Then no report
  // (parameters, command), log line, table or anything of the database's schema holds a piece of it.
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "DROP ROLE IF EXISTS custodian; CREATE ROLE custodian LOGIN SUPERUSER PASSWORD '%1'" ).arg( kPasswordSql ), out ) );
  const QStringList layers { "SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI", "EVALUATION" };
  // A table the run wrote, with the key QGIS finds.
  const auto written = [this]( const QString &table, bool geometry ) { return input( table, geometry ).replace( QStringLiteral( " key='fid'" ), QString() ); };
  CHECKED( runAsCustodian( QStringLiteral( "vbas:anonymize" ), anonymize( QStringLiteral( "patients" ), QStringLiteral( "secret_" ) ), layers ) );
  CHECKED( runAsCustodian( QStringLiteral( "vbas:evaluate" ),
                           { "REGIONS=" + input( QStringLiteral( "tracts" ), true ), "REGION_ID=areakey", "RECORDS=" + input( QStringLiteral( "patients" ) ), "RECORD_REGION=tract_id",
                             "QI_FIELDS=" + kQis.join( ';' ), QStringLiteral( "K=%1" ).arg( kK ), "SENSITIVE_FIELD=diagnosis", "SITES=" + written( QStringLiteral( "secret_sites" ), true ),
                             "LOOKUP=" + written( QStringLiteral( "secret_lookup" ), false ), "EVALUATION=" + destination( QStringLiteral( "secret_evaluation2" ) ),
                             "AGGREGATE_METRICS=" + destination( QStringLiteral( "secret_metrics" ), true ), "REPORT=" + mDir.filePath( QStringLiteral( "secret_evaluate.html" ) ) },
                           { "EVALUATION", "AGGREGATE_METRICS" } ) );
  CHECKED( runAsCustodian( QStringLiteral( "vbas:estimatesitecount" ),
                           { "REGIONS=" + input( QStringLiteral( "tracts" ), true ), "REGION_ID=areakey", "RECORDS=" + input( QStringLiteral( "patients" ) ), "RECORD_REGION=tract_id",
                             "QI_FIELDS=" + kQis.join( ';' ), "GROUP_IN_SOURCE=true" },
                           {} ) );
  for ( const QString &report : { QStringLiteral( "secret_report.html" ), QStringLiteral( "secret_evaluate.html" ) } )
  {
    QFile file( mDir.filePath( report ) );
    QVERIFY2( file.open( QIODevice::ReadOnly ), qPrintable( report ) );
    const QByteArray html = file.readAll();
    noPassword( report, html );
    QVERIFY2( html.contains( "user='custodian'" ) && html.contains( "# The password of a connection was left out" ), qPrintable( report ) );
  }
  QProcess dump;
  dump.start( kPgBin + "/pg_dump", { "-h", mServer.socketFolder(), "-U", "postgres", "-d", "vbas", "--exclude-table-data=patients", "--exclude-table-data=big" } );
  QVERIFY( dump.waitForFinished( 120000 ) && dump.exitCode() == 0 );
  const QByteArray database = dump.readAllStandardOutput();
  QVERIFY( database.contains( "CREATE TABLE public.secret_release" ) && database.contains( "CREATE TABLE public.secret_metrics" ) );
  noPassword( QStringLiteral( "the database" ), database );

  // The report's command repeats the run with the password from PGPASSWORD, as its note says.
  QFile report( mDir.filePath( QStringLiteral( "secret_report.html" ) ) );
  QVERIFY( report.open( QIODevice::ReadOnly ) );
  const QRegularExpressionMatch command
    = QRegularExpression( QStringLiteral( "<pre id=\"command\">(.*)</pre>" ), QRegularExpression::DotMatchesEverythingOption ).match( QString::fromUtf8( report.readAll() ) );
  QVERIFY( command.hasMatch() );
  const qint64 released = mServer.number( "SELECT count(*) FROM secret_release" );
  CHECKED( mServer.sql( QStringLiteral( "DROP TABLE secret_release" ), out ) );
  const QString shell = command.captured( 1 )
                          .replace( QStringLiteral( "&quot;" ), QStringLiteral( "\"" ) )
                          .replace( QStringLiteral( "&lt;" ), QStringLiteral( "<" ) )
                          .replace( QStringLiteral( "&gt;" ), QStringLiteral( ">" ) )
                          .replace( QStringLiteral( "&amp;" ), QStringLiteral( "&" ) );
  QProcess repeat;
  QProcessEnvironment environment = mQgis.environment();
  environment.insert( QStringLiteral( "PGPASSWORD" ), QString( kPasswordSql ).replace( QStringLiteral( "''" ), QStringLiteral( "'" ) ) );
  repeat.setProcessEnvironment( environment );
  repeat.start( QStringLiteral( "bash" ), { "-c", shell } );
  QVERIFY( repeat.waitForFinished( e2e::kProcessTimeoutMs ) );
  QVERIFY2( repeat.exitCode() == 0, qPrintable( tail( repeat.readAllStandardError() ) ) );
  QCOMPARE( mServer.number( "SELECT count(*) FROM secret_release" ), released );
}

QTEST_GUILESS_MAIN( TestPostgis )
#include "test_postgis.moc"
