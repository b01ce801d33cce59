// End-to-end test of the VBAS plugin through qgis_process.
//
// The freshly built plugin folder is linked into an isolated QGIS profile, enabled, and the six vbas:
// algorithms and sample_layers/vbas_pipeline.model3 are run on the sample layers, chaining their
// outputs file to file (vbas:checkanonymity checks the chain's release). Every output is then checked independently of the plugin's code: the tables
// are read with GDAL's OGR C API and the equivalence classes, k-anonymity, counts, entropy and
// discernibility are recomputed here from patients.gpkg and ny8_tracts.gpkg.
//
// Privacy: the log only ever gets counts and aggregate metrics, never the contents of a record.

#include "tests/e2e/e2e_util.h"

#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <limits>

namespace
{
using e2e::kNull;
using e2e::readTable;
using e2e::Table;
using e2e::tail;

const QChar kSep( 0x1f );
const QStringList kAlgorithms = { QStringLiteral( "vbas:estimatesitecount" ), QStringLiteral( "vbas:placesites" ),     QStringLiteral( "vbas:voronoiaggregate" ), QStringLiteral( "vbas:evaluate" ),
                                  QStringLiteral( "vbas:anonymize" ),         QStringLiteral( "vbas:checkanonymity" ), QStringLiteral( "vbas:lpgeomask" ) };
// Central Canada, the default coefficients (paper Table 1).
const double kExpB0 = 1436.0;
const double kB1 = 0.43;

bool near( double a, double b, double rel = 1e-9 )
{
  return std::fabs( a - b ) <= rel * std::max( 1.0, std::max( std::fabs( a ), std::fabs( b ) ) );
}

//! The header and the single data row of a small CSV file (the evaluation table).
QMap<QString, QString> readCsvRow( const QString &path, QString *error )
{
  QMap<QString, QString> map;
  QFile file( path );
  if ( !file.open( QIODevice::ReadOnly | QIODevice::Text ) )
  {
    *error = QStringLiteral( "cannot open %1" ).arg( path );
    return map;
  }
  QStringList lines;
  QTextStream in( &file );
  while ( !in.atEnd() )
  {
    const QString line = in.readLine();
    if ( !line.trimmed().isEmpty() )
      lines << line;
  }
  if ( lines.size() != 2 )
  {
    *error = QStringLiteral( "%1 has %2 non-empty lines, expected a header and one row" ).arg( path ).arg( lines.size() );
    return map;
  }
  auto split = []( const QString &line ) {
    QStringList cells;
    QString cell;
    bool quoted = false;
    for ( int i = 0; i < line.size(); ++i )
    {
      const QChar c = line.at( i );
      if ( quoted )
      {
        if ( c == '"' && i + 1 < line.size() && line.at( i + 1 ) == '"' )
        {
          cell += '"';
          ++i;
        }
        else if ( c == '"' )
          quoted = false;
        else
          cell += c;
      }
      else if ( c == '"' )
        quoted = true;
      else if ( c == ',' )
      {
        cells << cell;
        cell.clear();
      }
      else
        cell += c;
    }
    cells << cell;
    return cells;
  };
  const QStringList header = split( lines.at( 0 ) );
  const QStringList values = split( lines.at( 1 ) );
  if ( header.size() != values.size() )
  {
    *error = QStringLiteral( "%1: %2 columns in the header, %3 in the row" ).arg( path ).arg( header.size() ).arg( values.size() );
    return map;
  }
  for ( int i = 0; i < header.size(); ++i )
    map.insert( header.at( i ), values.at( i ) );
  return map;
}

struct Patient
{
    QString tract;
    QHash<QString, QString> qi; // field (a QI, insurance, diagnosis) -> value (kNull for NULL)
};

//! What an algorithm reported about a release, to be recounted.
struct ReleaseClaim
{
    //! A release written to dir as anonymized.gpkg, lookup.gpkg and aggregated.gpkg.
    explicit ReleaseClaim( const QString &dir )
      : anonymized( dir + "/anonymized.gpkg" )
      , lookup( dir + "/lookup.gpkg" )
      , aggregated( dir + "/aggregated.gpkg" )
    {
    }
    QString anonymized, lookup, aggregated;
    qint64 released = -1, suppressed = -1, aggregates = -1;
};

//! What the recount of a release found.
struct Recount
{
    qint64 rows = 0;
    qint64 groups = 0;
    qint64 smallest = 0;
    double discernibility = 0;
};
} // namespace

class TestE2e : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void pipeline_data();
    void pipeline();
    void estimateOtherBases();
    void badQiField();
    void populationTableFromCsv();
    void lpGeomask();
    void lpGeomaskTinyEpsilonEnds();
    void generalization();
    void failedModelLeavesNothing_data();
    void failedModelLeavesNothing();
    void builtForAnotherQgis();

  private:
    e2e::QgisProcess mQgis;
    QTemporaryDir mOut;
    QString mRegions, mRecords, mModel;
    QStringList mRegionIds;
    QHash<QString, double> mPop8; // AREAKEY -> POP8
    double mPop8Total = 0;
    QVector<Patient> mPatients;

    void runProcess( const QStringList &args, int &exitCode, QByteArray &out, QByteArray &err );
    void runJson( const QString &algorithm, const QStringList &params, QJsonObject &results );
    QStringList commonParams() const;
    QStringList inputsFor( const QStringList &qis ) const;
    void checkEstimate( const QJsonObject &r, const QStringList &qis, double population, bool entropyModel );
    void checkSites( const QString &path, qint64 sites, double population );
    //! others: the fields released besides the QIs and aggregate_id (the sensitive field, RELEASE_FIELDS).
    void checkRelease( const QString &label, const ReleaseClaim &claim, const QStringList &qis, const QStringList &others, int k, Recount &recount );
    void checkAnonymity( const ReleaseClaim &claim, const QStringList &qis, int k, const Recount &recount );
    void checkCsvTypes( const QString &path );
    void checkEvaluationCsv( const QString &path, const Recount &rc, qint64 suppressed, qint64 aggregates, int k, QMap<QString, QString> &row );
    void compareEvaluations( const QMap<QString, QString> &a, const QMap<QString, QString> &b, const QString &what );
    /**
     * Runs algorithm naming only its release (and inputs), into a folder of its own (label): it must succeed, write
     * that one file, give no other output (unasked, absent or NULL in the results) and release the rows of
     * reference (an earlier run of the same parameters with every output, recounted), as a multiset.
     */
    void checkOnlyRelease( const QString &algorithm, const QStringList &inputs, const QString &release, const QStringList &unasked, const QString &label, const QString &reference );
    //! The randomised patients and transitions of vbas:lpgeomask, recounted: 224 rows without their code, every row of P summing to 1, every re-identification probability at most epsilon.
    void checkGeomask( const QString &randomised, const QString &transitions, double epsilon );
    void checkGeneralized( const QString &release, const QString &lookup, const QString &levels, qint64 released, qint64 starredValues, const QStringList &qis, int k );
    //! The parameters of vbas_pipeline.model3: every output into dir (the report at report), the placement (METHOD, OBJECTIVE as the algorithms name them).
    QStringList pipelineModelParams( const QString &dir, const QStringList &qis, int k, const QStringList &placement, const QString &sensitive, const QString &report ) const;
    //! The parameters of vbas_generalization.model3 on three QIs, k = 5 and the sample's age_group hierarchy: every output into dir, its file name prefixed; a report only when given.
    QStringList generalizationModelParams( const QString &dir, const QString &prefix, const QString &report ) const;
};

void TestE2e::runProcess( const QStringList &args, int &exitCode, QByteArray &out, QByteArray &err )
{
  e2e::ProcessResult r;
  CHECKED( mQgis.run( args, mOut.path(), r ) );
  exitCode = r.exitCode;
  out = r.out;
  err = r.err;
}

void TestE2e::runJson( const QString &algorithm, const QStringList &params, QJsonObject &results )
{
  QJsonObject document;
  e2e::ProcessResult r;
  CHECKED( mQgis.runJson( algorithm, params, mOut.path(), document, r ) );
  results = document.value( QStringLiteral( "results" ) ).toObject();
}

QStringList TestE2e::commonParams() const
{
  return { QStringLiteral( "REGIONS=" ) + mRegions, QStringLiteral( "REGION_ID=AREAKEY" ), QStringLiteral( "RECORDS=" ) + mRecords, QStringLiteral( "RECORD_REGION=tract_id" ) };
}

QStringList TestE2e::pipelineModelParams( const QString &dir, const QStringList &qis, int k, const QStringList &placement, const QString &sensitive, const QString &report ) const
{
  QStringList params = { QStringLiteral( "regions=" ) + mRegions,
                         QStringLiteral( "region_id=AREAKEY" ),
                         QStringLiteral( "records=" ) + mRecords,
                         QStringLiteral( "record_region=tract_id" ),
                         QStringLiteral( "qi_fields=" ) + qis.join( ';' ),
                         QStringLiteral( "k=%1" ).arg( k ),
                         QStringLiteral( "sensitive_field=" ) + sensitive,
                         QStringLiteral( "evaluate:Report=" ) + report,
                         QStringLiteral( "placesites:Sites=" ) + dir + "/sites.gpkg",
                         QStringLiteral( "voronoiaggregate:Aggregated=" ) + dir + "/aggregated.gpkg",
                         QStringLiteral( "voronoiaggregate:Lookup=" ) + dir + "/lookup.gpkg",
                         QStringLiteral( "voronoiaggregate:Anonymized=" ) + dir + "/anonymized.gpkg",
                         QStringLiteral( "voronoiaggregate:Voronoi=" ) + dir + "/voronoi.gpkg",
                         QStringLiteral( "evaluate:Evaluation=" ) + dir + "/evaluation.csv" };
  for ( const QString &p : placement )
    params << p.section( '=', 0, 0 ).toLower() + '=' + p.section( '=', 1 );
  return params;
}

QStringList TestE2e::generalizationModelParams( const QString &dir, const QString &prefix, const QString &report ) const
{
  const QString path = dir + '/' + prefix;
  QStringList params = { QStringLiteral( "regions=" ) + mRegions,
                         QStringLiteral( "region_id=AREAKEY" ),
                         QStringLiteral( "records=" ) + mRecords,
                         QStringLiteral( "record_region=tract_id" ),
                         QStringLiteral( "qi_fields=age_group;sex;race" ),
                         QStringLiteral( "k=5" ),
                         QStringLiteral( "hierarchies=" ) + ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/hierarchies/age_group.csv" ),
                         QStringLiteral( "generalize:Release=" ) + path + "release.gpkg",
                         QStringLiteral( "generalize:Region lookup=" ) + path + "lookup.gpkg",
                         QStringLiteral( "generalize:Sites=" ) + path + "sites.gpkg",
                         QStringLiteral( "evaluate:Evaluation=" ) + path + "evaluation.csv" };
  if ( !report.isEmpty() )
    params << QStringLiteral( "evaluate:Report=" ) + report;
  return params;
}

QStringList TestE2e::inputsFor( const QStringList &qis ) const
{
  return commonParams() << QStringLiteral( "QI_FIELDS=" ) + qis.join( ';' );
}

void TestE2e::initTestCase()
{
  GDALAllRegister();
  QVERIFY( mOut.isValid() );
  mRegions = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" );
  mRecords = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" );
  mModel = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/vbas_pipeline.model3" );
  for ( const QString &f : { mRegions, mRecords, mModel } )
    QVERIFY2( QFileInfo::exists( f ), qPrintable( f ) );

  // Isolated profile with the build's plugin folder linked in, then enabled.
  CHECKED( mQgis.setUp( kAlgorithms ) );

  // The regions.
  const Table regions = readTable( mRegions, { QStringLiteral( "AREAKEY" ), QStringLiteral( "POP8" ) } );
  QVERIFY2( regions.ok, qPrintable( regions.error ) );
  QSet<QString> ids;
  for ( const QStringList &row : regions.rows )
  {
    QVERIFY( row.at( 0 ) != kNull );
    mRegionIds << row.at( 0 );
    mPop8.insert( row.at( 0 ), row.at( 1 ).toDouble() );
    ids.insert( row.at( 0 ) );
    mPop8Total += row.at( 1 ).toDouble();
  }
  QCOMPARE( ids.size(), mRegionIds.size() );
  QCOMPARE( mRegionIds.size(), 281 );

  // The records.
  const QStringList fields
    = { QStringLiteral( "tract_id" ), QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ), QStringLiteral( "insurance" ), QStringLiteral( "diagnosis" ) };
  const Table patients = readTable( mRecords, fields );
  QVERIFY2( patients.ok, qPrintable( patients.error ) );
  int unknownTract = 0;
  for ( const QStringList &row : patients.rows )
  {
    Patient p;
    p.tract = row.at( 0 );
    if ( !ids.contains( p.tract ) )
      ++unknownTract;
    for ( int i = 1; i < fields.size(); ++i )
      p.qi.insert( fields.at( i ), row.at( i ) );
    mPatients << p;
  }
  QCOMPARE( unknownTract, 0 );
  QVERIFY( !mPatients.isEmpty() );
  qInfo( "inputs: %d regions (POP8 total %.0f), %d records", mRegionIds.size(), mPop8Total, mPatients.size() );
}

void TestE2e::checkEstimate( const QJsonObject &r, const QStringList &qis, double population, bool entropyModel )
{
  const qint64 n = mPatients.size();
  for ( const char *key : { "SITES", "CUTOFF", "ENTROPY", "MAXCOMBS", "RECORDS", "POPULATION" } )
    QVERIFY2( r.value( key ).isDouble(), qPrintable( QStringLiteral( "no number output %1" ).arg( key ) ) );
  QCOMPARE( r.value( "RECORDS" ).toVariant().toLongLong(), n );
  QVERIFY2( near( r.value( "POPULATION" ).toDouble(), population ), qPrintable( QStringLiteral( "POPULATION %1, expected %2" ).arg( r.value( "POPULATION" ).toDouble() ).arg( population ) ) );

  // Entropy (eq. 1, natural log) and MaxCombs (eq. 4), recounted here.
  QHash<QString, qint64> classes;
  QVector<QSet<QString>> distinct( qis.size() );
  for ( const Patient &p : mPatients )
  {
    QStringList key;
    for ( int i = 0; i < qis.size(); ++i )
    {
      key << p.qi.value( qis.at( i ) );
      distinct[i].insert( p.qi.value( qis.at( i ) ) );
    }
    ++classes[key.join( kSep )];
  }
  double entropy = 0;
  for ( const qint64 size : classes )
  {
    const double share = double( size ) / double( n );
    entropy -= share * std::log( share );
  }
  double maxCombs = 1;
  for ( const QSet<QString> &values : distinct )
    maxCombs *= values.size();
  const double reportedEntropy = r.value( "ENTROPY" ).toDouble();
  QVERIFY2( near( reportedEntropy, entropy ),
            qPrintable( QStringLiteral( "ENTROPY %1, recounted %2 over %3 classes" ).arg( reportedEntropy, 0, 'g', 15 ).arg( entropy, 0, 'g', 15 ).arg( classes.size() ) ) );
  QCOMPARE( r.value( "MAXCOMBS" ).toDouble(), maxCombs );

  // Cutoff = e^B0 * X^B1 (eq. 2/5), Sites = R(N / Cutoff) in [1, regions] (eq. 3/6): N is the number
  // of records whatever the population basis.
  const double x = entropyModel ? reportedEntropy : r.value( "MAXCOMBS" ).toDouble();
  const double cutoff = kExpB0 * std::pow( x, kB1 );
  const double reportedCutoff = r.value( "CUTOFF" ).toDouble();
  QVERIFY2( near( reportedCutoff, cutoff ), qPrintable( QStringLiteral( "CUTOFF %1, expected %2" ).arg( reportedCutoff, 0, 'g', 15 ).arg( cutoff, 0, 'g', 15 ) ) );
  qint64 sites = static_cast<qint64>( std::floor( double( n ) / reportedCutoff + 0.5 ) );
  sites = std::clamp<qint64>( sites, 1, mRegionIds.size() );
  QCOMPARE( r.value( "SITES" ).toVariant().toLongLong(), sites );
}

void TestE2e::checkSites( const QString &path, qint64 sites, double population )
{
  const Table t = readTable( path, { QStringLiteral( "site_id" ), QStringLiteral( "regions" ), QStringLiteral( "population" ) } );
  QVERIFY2( t.ok, qPrintable( t.error ) );
  QVERIFY( t.hasGeometry );
  QCOMPARE( qint64( t.rows.size() ), sites );
  QSet<QString> ids;
  qint64 regions = 0;
  double pop = 0;
  int missingId = 0;
  for ( const QStringList &row : t.rows )
  {
    if ( row.at( 0 ) == kNull )
      ++missingId;
    ids.insert( row.at( 0 ) );
    regions += row.at( 1 ).toLongLong();
    pop += row.at( 2 ).toDouble();
  }
  QCOMPARE( missingId, 0 );
  QCOMPARE( qint64( ids.size() ), sites );          // site ids are unique
  QCOMPARE( regions, qint64( mRegionIds.size() ) ); // every region point is in one cell
  QVERIFY2( near( pop, population, 1e-6 ), qPrintable( QStringLiteral( "site populations sum to %1, expected %2" ).arg( pop ).arg( population ) ) );
}

void TestE2e::checkRelease( const QString &label, const ReleaseClaim &claim, const QStringList &qis, const QStringList &others, int k, Recount &rc )
{
  const qint64 n = mPatients.size();

  // LOOKUP: every region exactly once.
  const Table lookup = readTable( claim.lookup, { QStringLiteral( "region_id" ), QStringLiteral( "aggregate_id" ) } );
  QVERIFY2( lookup.ok, qPrintable( lookup.error ) );
  QHash<QString, QString> regionToAggregate;
  int duplicates = 0;
  for ( const QStringList &row : lookup.rows )
  {
    if ( regionToAggregate.contains( row.at( 0 ) ) )
      ++duplicates;
    regionToAggregate.insert( row.at( 0 ), row.at( 1 ) );
  }
  QCOMPARE( duplicates, 0 );
  int missingRegions = 0, nullAggregates = 0;
  for ( const QString &id : qAsConst( mRegionIds ) )
  {
    if ( !regionToAggregate.contains( id ) )
      ++missingRegions;
    else if ( regionToAggregate.value( id ) == kNull )
      ++nullAggregates;
  }
  QCOMPARE( missingRegions, 0 );
  QCOMPARE( nullAggregates, 0 );
  QCOMPARE( lookup.rows.size(), mRegionIds.size() );

  // ANONYMIZED: schema: the QIs, the other released fields and aggregate_id, nothing else (a field
  // only when named: no patient_id, no tract_id).
  const QStringList wanted = QStringList { QStringLiteral( "aggregate_id" ) } + qis + others;
  const Table anon = readTable( claim.anonymized, wanted );
  QVERIFY2( anon.ok, qPrintable( anon.error ) );
  QStringList present = anon.fieldNames, expected = wanted;
  present.sort();
  expected.sort();
  QCOMPARE( present, expected );
  QVERIFY2( !anon.hasGeometry, "the anonymized table has a geometry" );

  // k-anonymity recount: group by (aggregate_id, every QI value).
  QHash<QString, qint64> groups;
  QHash<QString, qint64> releasedRows; // the released rows as a multiset: aggregate_id, the QIs, the others
  QHash<QString, qint64> releasedPerAggregate;
  QHash<QString, qint64> smallestPerAggregate;
  for ( const QStringList &row : anon.rows )
  {
    ++groups[row.mid( 0, 1 + qis.size() ).join( kSep )];
    ++releasedRows[row.join( kSep )];
    ++releasedPerAggregate[row.at( 0 )];
  }
  rc = Recount();
  rc.rows = anon.rows.size();
  rc.groups = groups.size();
  rc.smallest = groups.isEmpty() ? 0 : std::numeric_limits<qint64>::max();
  qint64 belowK = 0, recordsBelowK = 0;
  for ( auto it = groups.constBegin(); it != groups.constEnd(); ++it )
  {
    rc.smallest = std::min( rc.smallest, it.value() );
    rc.discernibility += double( it.value() ) * double( it.value() );
    if ( it.value() < k )
    {
      ++belowK;
      recordsBelowK += it.value();
    }
    const QString aggregate = it.key().section( kSep, 0, 0 );
    auto s = smallestPerAggregate.find( aggregate );
    if ( s == smallestPerAggregate.end() )
      smallestPerAggregate.insert( aggregate, it.value() );
    else
      s.value() = std::min( s.value(), it.value() );
  }
  qInfo( "%s: %lld released rows in %lld ECs, smallest EC %lld, %lld ECs (%lld rows) below k=%d", qPrintable( label ), rc.rows, rc.groups, rc.smallest, belowK, recordsBelowK, k );
  QVERIFY2( belowK == 0, qPrintable( QStringLiteral( "%1: NOT k-anonymous: %2 released ECs (%3 rows) have fewer than k=%4 rows" ).arg( label ).arg( belowK ).arg( recordsBelowK ).arg( k ) ) );

  // Counts.
  QCOMPARE( rc.rows, claim.released );
  QCOMPARE( rc.rows + claim.suppressed, n );

  // Minimal suppression and truthfulness: the released rows are, as a multiset, exactly the records of
  // the ECs (aggregate, QIs) of size >= k, each with its original tract mapped through LOOKUP and its
  // values unchanged.
  QHash<QString, qint64> fullGroups;
  QHash<QString, qint64> recordsPerAggregate;
  const auto recordKey = [&]( const Patient &p, const QStringList &fields ) {
    QStringList key = { regionToAggregate.value( p.tract ) };
    for ( const QString &field : fields )
      key << p.qi.value( field );
    return key.join( kSep );
  };
  for ( const Patient &p : qAsConst( mPatients ) )
  {
    ++fullGroups[recordKey( p, qis )];
    ++recordsPerAggregate[regionToAggregate.value( p.tract )];
  }
  QHash<QString, qint64> expectedRows;
  qint64 expectedReleased = 0;
  for ( const Patient &p : qAsConst( mPatients ) )
    if ( fullGroups.value( recordKey( p, qis ) ) >= k )
    {
      ++expectedRows[recordKey( p, qis + others )];
      ++expectedReleased;
    }
  QCOMPARE( rc.rows, expectedReleased );
  qint64 differing = 0; // distinct rows released a different number of times than recounted
  for ( auto it = expectedRows.constBegin(); it != expectedRows.constEnd(); ++it )
    differing += releasedRows.value( it.key() ) != it.value() ? 1 : 0;
  for ( auto it = releasedRows.constBegin(); it != releasedRows.constEnd(); ++it )
    differing += expectedRows.contains( it.key() ) ? 0 : 1;
  QVERIFY2( differing == 0, qPrintable( QStringLiteral( "%1: %2 distinct row(s) of the release differ from the recount" ).arg( label ).arg( differing ) ) );

  // AGGREGATED.
  const Table agg = readTable( claim.aggregated, { QStringLiteral( "aggregate_id" ), QStringLiteral( "regions" ), QStringLiteral( "records" ), QStringLiteral( "released" ),
                                                   QStringLiteral( "suppressed" ), QStringLiteral( "smallest_ec" ) } );
  QVERIFY2( agg.ok, qPrintable( agg.error ) );
  QVERIFY( agg.hasGeometry );
  QCOMPARE( qint64( agg.rows.size() ), claim.aggregates );
  qint64 sumRegions = 0, sumRecords = 0, sumReleased = 0, sumSuppressed = 0;
  int badRecords = 0, badReleased = 0, badSmallest = 0;
  QSet<QString> aggregateIds;
  for ( const QStringList &row : agg.rows )
  {
    aggregateIds.insert( row.at( 0 ) );
    sumRegions += row.at( 1 ).toLongLong();
    sumRecords += row.at( 2 ).toLongLong();
    sumReleased += row.at( 3 ).toLongLong();
    sumSuppressed += row.at( 4 ).toLongLong();
    if ( row.at( 2 ).toLongLong() != recordsPerAggregate.value( row.at( 0 ) ) )
      ++badRecords;
    if ( row.at( 3 ).toLongLong() != releasedPerAggregate.value( row.at( 0 ) ) )
      ++badReleased;
    if ( releasedPerAggregate.value( row.at( 0 ) ) > 0 && row.at( 5 ).toLongLong() != smallestPerAggregate.value( row.at( 0 ) ) )
      ++badSmallest;
  }
  QCOMPARE( qint64( aggregateIds.size() ), claim.aggregates ); // unique aggregate ids
  QCOMPARE( sumRegions, qint64( mRegionIds.size() ) );
  QCOMPARE( sumRecords, n );
  QCOMPARE( sumReleased, claim.released );
  QCOMPARE( sumSuppressed, claim.suppressed );
  QCOMPARE( badRecords, 0 );
  QCOMPARE( badReleased, 0 );
  QCOMPARE( badSmallest, 0 );
  // The lookup's aggregates are exactly the aggregated regions (a site without regions makes none).
  const QList<QString> lookupAggregates = regionToAggregate.values();
  QCOMPARE( QSet<QString>( lookupAggregates.begin(), lookupAggregates.end() ), aggregateIds );
}

void TestE2e::checkAnonymity( const ReleaseClaim &claim, const QStringList &qis, int k, const Recount &rc )
{
  // vbas:checkanonymity on the release (QIs and aggregate_id): it passes, with the ECs of the recount.
  QJsonObject r;
  const QString violations = QFileInfo( claim.anonymized ).path() + "/violations.gpkg";
  const QStringList released = qis + QStringList { QStringLiteral( "aggregate_id" ) };
  CHECKED( runJson( QStringLiteral( "vbas:checkanonymity" ),
                    { QStringLiteral( "INPUT=" ) + claim.anonymized, QStringLiteral( "QI_FIELDS=" ) + released.join( ';' ), QStringLiteral( "K=%1" ).arg( k ),
                      QStringLiteral( "SENSITIVE_FIELD=diagnosis" ), QStringLiteral( "VIOLATIONS=" ) + violations },
                    r ) );
  QCOMPARE( r.value( "PASS" ).toBool(), true );
  QCOMPARE( r.value( "RECORDS" ).toVariant().toLongLong(), claim.released );
  QCOMPARE( r.value( "ECS" ).toVariant().toLongLong(), rc.groups );
  QCOMPARE( r.value( "SMALLEST_EC" ).toVariant().toLongLong(), rc.smallest );
  QCOMPARE( r.value( "VIOLATING_ECS" ).toVariant().toLongLong(), 0LL );
  QVERIFY( r.value( "SMALLEST_L" ).toVariant().toLongLong() >= 1 );
  QVERIFY( r.value( "LARGEST_T" ).toDouble() >= 0 && r.value( "LARGEST_T" ).toDouble() <= 1 );
  const Table table = readTable( violations, released );
  QVERIFY2( table.ok, qPrintable( table.error ) );
  QCOMPARE( table.rows.size(), 0 );
  QVERIFY( !table.hasGeometry );
  const QStringList fields = released + QStringList { "records", "l_diversity", "t_closeness", "violates", "residents" };
  QCOMPARE( table.fieldNames, fields );
}

//! QGIS (GDAL) reads the evaluation's numbers back as numbers: the .csvt beside it types every column.
void TestE2e::checkCsvTypes( const QString &path )
{
  QVERIFY2( QFileInfo::exists( QFileInfo( path ).path() + "/" + QFileInfo( path ).completeBaseName() + ".csvt" ), qPrintable( path + " has no .csvt beside it" ) );
  GDALDatasetH ds = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  QVERIFY2( ds, qPrintable( "cannot open " + path ) );
  OGRFeatureDefnH defn = OGR_L_GetLayerDefn( GDALDatasetGetLayer( ds, 0 ) );
  QStringList wrong;
  for ( const auto &[column, type] : { std::pair<const char *, OGRFieldType> { "records", OFTInteger64 }, { "smallest_ec", OFTInteger64 }, { "suppressed_pct", OFTReal }, { "max_risk", OFTReal } } )
  {
    const int i = OGR_FD_GetFieldIndex( defn, column );
    if ( i < 0 || OGR_Fld_GetType( OGR_FD_GetFieldDefn( defn, i ) ) != type )
      wrong << QString::fromLatin1( column );
  }
  GDALClose( ds );
  QVERIFY2( wrong.isEmpty(), qPrintable( QStringLiteral( "%1 reads back with the wrong type: %2" ).arg( path, wrong.join( ", " ) ) ) );
}

void TestE2e::checkEvaluationCsv( const QString &path, const Recount &rc, qint64 suppressed, qint64 aggregates, int k, QMap<QString, QString> &row )
{
  QString error;
  row = readCsvRow( path, &error );
  QVERIFY2( error.isEmpty(), qPrintable( error ) );
  for ( const char *column : { "records",
                               "released",
                               "suppressed",
                               "suppressed_pct",
                               "compactness",
                               "discernibility",
                               "nue",
                               "nue_all",
                               "aggregates",
                               "released_ecs",
                               "smallest_ec",
                               "k",
                               "runtime_s",
                               "dm",
                               "dm_star",
                               "c_avg",
                               "prec",
                               "generic_nue",
                               "generic_nue_norm",
                               "max_risk",
                               "avg_risk",
                               "risk_threshold",
                               "risk_above_pct",
                               "cm",
                               "l_diversity",
                               "t_closeness" } )
    QVERIFY2( row.contains( column ), qPrintable( QStringLiteral( "%1 has no column %2" ).arg( path, column ) ) );
  CHECKED( checkCsvTypes( path ) );
  // The risks and class sizes from the recount of the release itself.
  const qint64 n = mPatients.size();
  QVERIFY2( near( row.value( "dm" ).toDouble(), rc.discernibility + static_cast<double>( n ) * static_cast<double>( suppressed ) ), "dm differs from the recount" );
  QVERIFY2( near( row.value( "max_risk" ).toDouble(), 1.0 / static_cast<double>( rc.smallest ) ), "max_risk differs from the recount" );
  QVERIFY2( near( row.value( "avg_risk" ).toDouble(), static_cast<double>( rc.groups ) / static_cast<double>( rc.rows ) ), "avg_risk differs from the recount" );
  QVERIFY2( near( row.value( "c_avg" ).toDouble(), static_cast<double>( rc.rows ) / static_cast<double>( rc.groups ) / k ), "c_avg differs from the recount" );
  QVERIFY( row.value( "generic_nue_norm" ).toDouble() > 0 && row.value( "generic_nue_norm" ).toDouble() < 1 );
  QVERIFY( row.value( "l_diversity" ).toLongLong() >= 1 ); // the runs give a sensitive field
  QCOMPARE( row.value( "records" ).toLongLong(), qint64( mPatients.size() ) );
  QCOMPARE( row.value( "released" ).toLongLong(), rc.rows );
  QCOMPARE( row.value( "suppressed" ).toLongLong(), suppressed );
  QCOMPARE( row.value( "aggregates" ).toLongLong(), aggregates );
  QCOMPARE( row.value( "released_ecs" ).toLongLong(), rc.groups );
  QCOMPARE( row.value( "smallest_ec" ).toLongLong(), rc.smallest );
  QCOMPARE( row.value( "k" ).toInt(), k );
  QVERIFY2( near( row.value( "discernibility" ).toDouble(), rc.discernibility ),
            qPrintable( QStringLiteral( "discernibility %1, recounted %2" ).arg( row.value( "discernibility" ) ).arg( rc.discernibility, 0, 'f', 0 ) ) );
  QVERIFY( std::fabs( row.value( "suppressed_pct" ).toDouble() - 100.0 * suppressed / mPatients.size() ) <= 0.01 );
}

void TestE2e::compareEvaluations( const QMap<QString, QString> &a, const QMap<QString, QString> &b, const QString &what )
{
  QCOMPARE( a.keys(), b.keys() );
  for ( auto it = a.constBegin(); it != a.constEnd(); ++it )
  {
    if ( it.key() == QLatin1String( "runtime_s" ) )
      continue;
    QVERIFY2( it.value() == b.value( it.key() ), qPrintable( QStringLiteral( "%1: evaluation column %2 differs: %3 vs %4" ).arg( what, it.key(), it.value(), b.value( it.key() ) ) ) );
  }
}

void TestE2e::checkOnlyRelease( const QString &algorithm, const QStringList &inputs, const QString &release, const QStringList &unasked, const QString &label, const QString &reference )
{
  const QString dir = mOut.filePath( label );
  QVERIFY( QDir().mkpath( dir ) );
  const QString path = dir + "/release.gpkg";
  QJsonObject r;
  CHECKED( runJson( algorithm, QStringList( inputs ) << release + '=' + path, r ) );
  QCOMPARE( QDir( dir ).entryList( QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot ), QStringList { QStringLiteral( "release.gpkg" ) } );
  QVERIFY( r.value( release ).toString().startsWith( path ) );
  for ( const QString &output : unasked )
    QVERIFY2( r.value( output ).isNull() || r.value( output ).isUndefined(), qPrintable( label + ": " + output + " was written" ) );
  const Table expected = readTable( reference, {} );
  QVERIFY2( expected.ok, qPrintable( expected.error ) );
  const Table expectedRows = readTable( reference, expected.fieldNames ), written = readTable( path, expected.fieldNames );
  QVERIFY2( written.ok, qPrintable( written.error ) );
  QCOMPARE( written.fieldNames, expected.fieldNames );
  QVector<QStringList> a = written.rows, b = expectedRows.rows;
  std::sort( a.begin(), a.end() );
  std::sort( b.begin(), b.end() );
  QVERIFY2( a == b, qPrintable( QStringLiteral( "%1: %2 rows released, %3 by the run with every output, or other rows" ).arg( label ).arg( a.size() ).arg( b.size() ) ) );
  qInfo( "%s: only the release written, %lld rows as the run with every output", qPrintable( label ), static_cast<long long>( a.size() ) );
}

void TestE2e::pipeline_data()
{
  QTest::addColumn<QStringList>( "qis" );
  QTest::addColumn<int>( "k" );
  QTest::addColumn<int>( "method" );    // METHOD: 0 balanced density, 1 ADC
  QTest::addColumn<int>( "objective" ); // ADC's OBJECTIVE
  // What does not depend on the QIs and k is run once for each method, not in every row (CI's time):
  // naming only the release (releaseOnly), and the shipped model (model; with both objectives).
  QTest::addColumn<bool>( "releaseOnly" );
  QTest::addColumn<bool>( "model" );
  const QStringList three = { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
  const QStringList four = three + QStringList { QStringLiteral( "insurance" ) };
  QTest::newRow( "3qi_k5" ) << three << 5 << 0 << 0 << true << true;
  QTest::newRow( "4qi_k10" ) << four << 10 << 0 << 0 << false << false;
  QTest::newRow( "3qi_k5_adc_suppression" ) << three << 5 << 1 << 1 << true << false;
  QTest::newRow( "4qi_k10_adc_paper" ) << four << 10 << 1 << 0 << false << true;
}

void TestE2e::pipeline()
{
  QFETCH( QStringList, qis );
  QFETCH( int, k );
  QFETCH( int, method );
  QFETCH( int, objective );
  QFETCH( bool, releaseOnly );
  QFETCH( bool, model );
  const QStringList placement = { QStringLiteral( "METHOD=%1" ).arg( method ), QStringLiteral( "OBJECTIVE=%1" ).arg( objective ) };
  const QString name = QString::fromUtf8( QTest::currentDataTag() );
  const qint64 n = mPatients.size();
  const QString chain = mOut.filePath( name + "/chain" );
  const QString whole = mOut.filePath( name + "/anonymize" );
  const QString modelDir = mOut.filePath( name + "/model" );
  for ( const QString &d : { chain, whole, modelDir } )
    QVERIFY( QDir().mkpath( d ) );
  const QString kArg = QStringLiteral( "K=%1" ).arg( k );
  const QString kSensitive = QStringLiteral( "SENSITIVE_FIELD=diagnosis" );
  QElapsedTimer timer;
  timer.start();

  // 1. Estimate the site count.
  QJsonObject est;
  CHECKED( runJson( QStringLiteral( "vbas:estimatesitecount" ), inputsFor( qis ), est ) );
  CHECKED( checkEstimate( est, qis, n, true ) );
  const qint64 sites = est.value( "SITES" ).toVariant().toLongLong();

  // 2. Place the sites.
  QJsonObject place;
  const QString sitesPath = chain + "/sites.gpkg";
  CHECKED( runJson( QStringLiteral( "vbas:placesites" ),
                    inputsFor( qis ) << placement << QStringLiteral( "K=%1" ).arg( k ) << QStringLiteral( "SITES=%1" ).arg( sites ) << QStringLiteral( "SITE_POINTS=" ) + sitesPath, place ) );
  QCOMPARE( place.value( "ADC_STOP" ).toString() == QLatin1String( "not run" ), method == 0 );
  CHECKED( checkSites( sitesPath, sites, n ) );

  // 3. Voronoi aggregation, releasing the sensitive field for checkanonymity (it has no SENSITIVE_FIELD),
  // with the SEED that scripts of earlier versions pass: accepted, ignored, its output NULL.
  QJsonObject va;
  ReleaseClaim claim( chain );
  const QStringList sensitive = { QStringLiteral( "diagnosis" ) };
  CHECKED( runJson( QStringLiteral( "vbas:voronoiaggregate" ),
                    inputsFor( qis ) << QStringLiteral( "SITES=" ) + sitesPath << kArg << QStringLiteral( "RELEASE_FIELDS=diagnosis" ) << QStringLiteral( "SEED=1" )
                                     << QStringLiteral( "AGGREGATED=" ) + claim.aggregated << QStringLiteral( "LOOKUP=" ) + claim.lookup << QStringLiteral( "ANONYMIZED=" ) + claim.anonymized
                                     << QStringLiteral( "VORONOI=" ) + chain + "/voronoi.gpkg",
                    va ) );
  claim.released = va.value( "RELEASED" ).toVariant().toLongLong();
  claim.suppressed = va.value( "SUPPRESSED" ).toVariant().toLongLong();
  claim.aggregates = va.value( "AGGREGATES" ).toVariant().toLongLong();
  QVERIFY( claim.aggregates >= 1 && claim.aggregates <= sites );
  QVERIFY( va.contains( "SEED" ) && va.value( "SEED" ).isDouble() ); // the search's seed, fresh when not given
  Recount rc;
  CHECKED( checkRelease( name + " voronoiaggregate", claim, qis, sensitive, k, rc ) );
  QVERIFY( QFileInfo::exists( chain + "/voronoi.gpkg" ) );
  CHECKED( checkAnonymity( claim, qis, k, rc ) );
  // The same, naming only the release.
  if ( releaseOnly )
    CHECKED( checkOnlyRelease( QStringLiteral( "vbas:voronoiaggregate" ), inputsFor( qis ) << QStringLiteral( "SITES=" ) + sitesPath << kArg << QStringLiteral( "RELEASE_FIELDS=diagnosis" ),
                               QStringLiteral( "ANONYMIZED" ), { "AGGREGATED", "LOOKUP", "VORONOI" }, name + "/voronoiaggregate-release-only", claim.anonymized ) );

  // 4. Evaluate the release.
  QJsonObject ev;
  const QString chainEval = chain + "/evaluation.csv";
  CHECKED( runJson( QStringLiteral( "vbas:evaluate" ),
                    inputsFor( qis ) << QStringLiteral( "SITES=" ) + sitesPath << QStringLiteral( "LOOKUP=" ) + claim.lookup << kArg << kSensitive << QStringLiteral( "EVALUATION=" ) + chainEval
                                     << QStringLiteral( "REPORT=" ) + chain + "/report.html",
                    ev ) );
  // Every metric is a number output of qgis_process --json.
  for ( const char *output : { "RECORDS",
                               "RELEASED",
                               "SUPPRESSED",
                               "SUPPRESSED_PERCENT",
                               "COMPACTNESS",
                               "DISCERNIBILITY",
                               "NUE",
                               "NUE_ALL",
                               "AGGREGATES",
                               "RELEASED_ECS",
                               "SMALLEST_EC",
                               "RUNTIME",
                               "DM",
                               "DM_STAR",
                               "C_AVG",
                               "PREC",
                               "GENERIC_NUE",
                               "GENERIC_NUE_NORM",
                               "MAX_RISK",
                               "AVG_RISK",
                               "RISK_ABOVE_PERCENT",
                               "CM",
                               "L_DIVERSITY",
                               "T_CLOSENESS" } )
    QVERIFY2( ev.value( output ).isDouble(), output );
  QVERIFY( QFileInfo( ev.value( "REPORT" ).toString() ).size() > 1000 );
  QCOMPARE( ev.value( "RECORDS" ).toVariant().toLongLong(), n );
  QCOMPARE( ev.value( "RELEASED" ).toVariant().toLongLong(), claim.released );
  QCOMPARE( ev.value( "SUPPRESSED" ).toVariant().toLongLong(), claim.suppressed );
  QCOMPARE( ev.value( "AGGREGATES" ).toVariant().toLongLong(), claim.aggregates );
  QVERIFY2( near( ev.value( "DISCERNIBILITY" ).toDouble(), rc.discernibility ),
            qPrintable( QStringLiteral( "DISCERNIBILITY %1, recounted %2" ).arg( ev.value( "DISCERNIBILITY" ).toDouble(), 0, 'f', 0 ).arg( rc.discernibility, 0, 'f', 0 ) ) );
  QMap<QString, QString> chainRow;
  CHECKED( checkEvaluationCsv( chainEval, rc, claim.suppressed, claim.aggregates, k, chainRow ) );

  // 5. The whole pipeline in one algorithm, same parameters.
  QJsonObject an;
  ReleaseClaim wholeClaim( whole );
  const QString wholeEval = whole + "/evaluation.csv";
  CHECKED( runJson( QStringLiteral( "vbas:anonymize" ),
                    inputsFor( qis ) << placement << kArg << kSensitive << QStringLiteral( "SITE_POINTS=" ) + whole + "/sites.gpkg" << QStringLiteral( "AGGREGATED=" ) + wholeClaim.aggregated
                                     << QStringLiteral( "LOOKUP=" ) + wholeClaim.lookup << QStringLiteral( "ANONYMIZED=" ) + wholeClaim.anonymized
                                     << QStringLiteral( "VORONOI=" ) + whole + "/voronoi.gpkg" << QStringLiteral( "EVALUATION=" ) + wholeEval,
                    an ) );
  CHECKED( checkEstimate( an, qis, n, true ) );
  QCOMPARE( an.value( "SITES" ).toVariant().toLongLong(), sites );
  // ADC's own count of what its clusters suppress is what the release suppresses, and the chain's.
  if ( method )
  {
    QCOMPARE( an.value( "ADC_SUPPRESSED" ).toVariant().toLongLong(), an.value( "SUPPRESSED" ).toVariant().toLongLong() );
    QCOMPARE( place.value( "ADC_SUPPRESSED" ).toVariant().toLongLong(), claim.suppressed );
  }
  CHECKED( checkSites( whole + "/sites.gpkg", sites, n ) );
  wholeClaim.released = an.value( "RELEASED" ).toVariant().toLongLong();
  wholeClaim.suppressed = an.value( "SUPPRESSED" ).toVariant().toLongLong();
  wholeClaim.aggregates = an.value( "AGGREGATES" ).toVariant().toLongLong();
  Recount wholeRc;
  CHECKED( checkRelease( name + " anonymize", wholeClaim, qis, sensitive, k, wholeRc ) );
  QVERIFY2( near( an.value( "DISCERNIBILITY" ).toDouble(), wholeRc.discernibility ), "anonymize: DISCERNIBILITY differs from the recount" );
  QMap<QString, QString> wholeRow;
  CHECKED( checkEvaluationCsv( wholeEval, wholeRc, wholeClaim.suppressed, wholeClaim.aggregates, k, wholeRow ) );
  // "The same as chaining the four component algorithms."
  CHECKED( compareEvaluations( chainRow, wholeRow, QStringLiteral( "component chain vs anonymize" ) ) );
  // The same, naming only the release: as QGIS's own algorithms, every other output is optional.
  if ( releaseOnly )
    CHECKED( checkOnlyRelease( QStringLiteral( "vbas:anonymize" ), inputsFor( qis ) << placement << kArg << kSensitive, QStringLiteral( "ANONYMIZED" ),
                               { "SITE_POINTS", "AGGREGATED", "LOOKUP", "VORONOI", "EVALUATION", "REPORT" }, name + "/anonymize-release-only", wholeClaim.anonymized ) );

  // 6. The shipped model, same parameters.
  if ( model )
  {
    QJsonObject mo;
    ReleaseClaim modelClaim( modelDir );
    const QString modelEval = modelDir + "/evaluation.csv";
    CHECKED( runJson( mModel, pipelineModelParams( modelDir, qis, k, placement, QStringLiteral( "diagnosis" ), modelDir + "/report.html" ), mo ) );
    CHECKED( checkSites( modelDir + "/sites.gpkg", sites, n ) );
    QVERIFY( QFileInfo( modelDir + "/report.html" ).size() > 1000 );
    QString error;
    const QMap<QString, QString> modelClaimRow = readCsvRow( modelEval, &error );
    QVERIFY2( error.isEmpty(), qPrintable( error ) );
    modelClaim.released = modelClaimRow.value( "released" ).toLongLong();
    modelClaim.suppressed = modelClaimRow.value( "suppressed" ).toLongLong();
    modelClaim.aggregates = modelClaimRow.value( "aggregates" ).toLongLong();
    Recount modelRc;
    CHECKED( checkRelease( name + " model", modelClaim, qis, {}, k, modelRc ) );
    QMap<QString, QString> modelRow;
    CHECKED( checkEvaluationCsv( modelEval, modelRc, modelClaim.suppressed, modelClaim.aggregates, k, modelRow ) );
    CHECKED( compareEvaluations( modelRow, wholeRow, QStringLiteral( "model vs anonymize" ) ) );
  }

  qInfo( "%s: %lld records, %lld sites, %lld aggregates, %lld released, %lld suppressed, %lld ECs, discernibility %.0f (%.1f s)", qPrintable( name ), n, sites, claim.aggregates, claim.released,
         claim.suppressed, rc.groups, rc.discernibility, timer.elapsed() / 1000.0 );
}

void TestE2e::estimateOtherBases()
{
  const QStringList qis = { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
  // Population field POP8: P = 1,057,673 residents would give far more sites than regions (the old
  // rule: no aggregation at all); the site count divides the 40,000 records instead, as without it.
  QJsonObject pop;
  CHECKED( runJson( QStringLiteral( "vbas:estimatesitecount" ), inputsFor( qis ) << QStringLiteral( "POPULATION_FIELD=POP8" ), pop ) );
  CHECKED( checkEstimate( pop, qis, mPop8Total, true ) );
  QVERIFY( pop.value( "SITES" ).toVariant().toLongLong() < qint64( mRegionIds.size() ) );
  // Max combinations model (eq. 4-6).
  QJsonObject mc;
  CHECKED( runJson( QStringLiteral( "vbas:estimatesitecount" ), inputsFor( qis ) << QStringLiteral( "MODEL=1" ), mc ) );
  CHECKED( checkEstimate( mc, qis, mPatients.size(), false ) );
}

void TestE2e::badQiField()
{
  const QString dir = mOut.filePath( QStringLiteral( "bad" ) );
  QVERIFY( QDir().mkpath( dir ) );
  const QStringList outputs = { "SITE_POINTS=" + dir + "/sites.gpkg",     "AGGREGATED=" + dir + "/aggregated.gpkg", "LOOKUP=" + dir + "/lookup.gpkg",
                                "ANONYMIZED=" + dir + "/anonymized.gpkg", "VORONOI=" + dir + "/voronoi.gpkg",       "EVALUATION=" + dir + "/evaluation.csv" };
  int exitCode = -1;
  QByteArray out, err;
  CHECKED( runProcess( QStringList { QStringLiteral( "--json" ), QStringLiteral( "run" ), QStringLiteral( "vbas:anonymize" ), QStringLiteral( "--" ) } + commonParams()
                         + QStringList { QStringLiteral( "QI_FIELDS=nosuchfield" ), QStringLiteral( "K=5" ) } + outputs,
                       exitCode, out, err ) );
  QVERIFY2( exitCode != 0, "a QI field that does not exist must fail the run" );
  QVERIFY2( QString::fromUtf8( out + err ).contains( QLatin1String( "nosuchfield" ) ), "the error does not name the missing field" );
  for ( const QString &output : outputs )
  {
    const QString path = output.section( '=', 1 );
    QVERIFY2( !QFileInfo::exists( path ), qPrintable( QFileInfo( path ).fileName() + " was written by a failed run" ) );
  }
}

void TestE2e::populationTableFromCsv()
{
  // A census table as a CSV file, every field text to GDAL: 7 n + 2 residents in each (tract, age group,
  // sex, race) cell that holds n records, and a cell no record has. vbas:evaluate with it must give the
  // journalist risks recounted here from the lookup; a count of -3 refuses the run, writing nothing.
  const QStringList qis = { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
  const QString dir = mOut.filePath( QStringLiteral( "population" ) );
  QVERIFY( QDir().mkpath( dir ) );
  QMap<QStringList, qint64> cells; // tract, then the QI values -> records
  for ( const Patient &p : mPatients )
    ++cells[QStringList { p.tract } + QStringList { p.qi.value( qis[0] ), p.qi.value( qis[1] ), p.qi.value( qis[2] ) }];
  const QString csv = dir + QStringLiteral( "/population.csv" );
  QFile file( csv );
  QVERIFY( file.open( QIODevice::WriteOnly | QIODevice::Text ) );
  QTextStream out( &file );
  out << "region,age_group,sex,race,n\n" << mRegionIds.first() << ",no such age,F,no such race,40\n";
  for ( auto it = cells.constBegin(); it != cells.constEnd(); ++it )
    out << it.key().join( ',' ) << ',' << 7 * it.value() + 2 << '\n';
  file.close();

  QJsonObject released, evaluated;
  CHECKED( runJson( QStringLiteral( "vbas:anonymize" ),
                    inputsFor( qis ) << QStringLiteral( "K=5" ) << "ANONYMIZED=" + dir + "/anonymized.gpkg"
                                     << "SITE_POINTS=" + dir + "/sites.gpkg"
                                     << "LOOKUP=" + dir + "/lookup.gpkg",
                    released ) );
  const QStringList table = { "POPULATION_TABLE=" + csv, QStringLiteral( "POPULATION_REGION=region" ), QStringLiteral( "POPULATION_COUNT=n" ) };
  const QStringList evaluation = inputsFor( qis ) << QStringLiteral( "K=5" ) << "SITES=" + dir + "/sites.gpkg"
                                                  << "LOOKUP=" + dir + "/lookup.gpkg";
  CHECKED( runJson( QStringLiteral( "vbas:evaluate" ), evaluation + table, evaluated ) );

  // The recount: each released class (aggregate, QI values) of 5 records or more, with its residents.
  using Classes = QMap<QStringList, QPair<qint64, qint64>>; // aggregate, QI values -> records, residents
  const auto classesBy = [&]( const QString &lookupPath, Classes &classes ) {
    const Table lookup = readTable( lookupPath, { QStringLiteral( "region_id" ), QStringLiteral( "aggregate_id" ) } );
    QVERIFY2( lookup.ok, qPrintable( lookup.error ) );
    QHash<QString, QString> aggregateOf;
    for ( const QStringList &row : lookup.rows )
      aggregateOf.insert( row.at( 0 ), row.at( 1 ) );
    for ( auto it = cells.constBegin(); it != cells.constEnd(); ++it )
    {
      QPair<qint64, qint64> &c = classes[QStringList { aggregateOf.value( it.key().first() ) } + it.key().mid( 1 )];
      c.first += it.value();
      c.second += 7 * it.value() + 2;
    }
  };
  Classes classes;
  CHECKED( classesBy( dir + "/lookup.gpkg", classes ) );
  qint64 fewest = 0, records = 0;
  double matched = 0;
  for ( const auto &[f, residents] : classes )
    if ( f >= 5 )
    {
      fewest = fewest == 0 ? residents : std::min( fewest, residents );
      records += f;
      matched += static_cast<double>( f ) / static_cast<double>( residents );
    }
  QCOMPARE( evaluated.value( "RELEASED" ).toVariant().toLongLong(), records );
  QVERIFY( std::fabs( evaluated.value( "JOURNALIST_MAX_RISK" ).toDouble() - 1.0 / static_cast<double>( fewest ) ) < 1e-12 );
  QVERIFY( std::fabs( evaluated.value( "JOURNALIST_AVG_RISK" ).toDouble() - matched / static_cast<double>( records ) ) < 1e-12 );
  QCOMPARE( evaluated.value( "POPULATION_UNIQUES" ).toDouble(), 0.0 ); // every cell holds 2 residents more than records

  // k-map at 40 residents from the same CSV: the release holds exactly the records of the classes of the
  // written lookup with 40 residents or more, recounted here; the checker, given the release as written,
  // its lookup and the CSV, finds it passes with the same fewest residents.
  QJsonObject kMap, checked;
  CHECKED( runJson( QStringLiteral( "vbas:anonymize" ),
                    inputsFor( qis ) << QStringLiteral( "K=40" ) << QStringLiteral( "RISK_MODEL=1" ) << "ANONYMIZED=" + dir + "/kmap.gpkg"
                                     << "LOOKUP=" + dir + "/kmap_lookup.gpkg" << table,
                    kMap ) );
  Classes units;
  CHECKED( classesBy( dir + "/kmap_lookup.gpkg", units ) );
  qint64 kMapRecords = 0, kMapFewest = 0, belowKRecords = 0;
  for ( const auto &[f, residents] : units )
    if ( residents >= 40 )
    {
      kMapRecords += f;
      kMapFewest = kMapFewest == 0 ? residents : std::min( kMapFewest, residents );
      belowKRecords += f < 40 ? f : 0;
    }
  QCOMPARE( kMap.value( "RELEASED" ).toVariant().toLongLong(), kMapRecords );
  QVERIFY2( belowKRecords > 0, "k-map released no class below 40 records: the case does not tell it from k-anonymity" );
  CHECKED( runJson( QStringLiteral( "vbas:checkanonymity" ),
                    QStringList { "INPUT=" + dir + "/kmap.gpkg", QStringLiteral( "QI_FIELDS=aggregate_id" ) } << "QI_FIELDS=" + qis[0] << "QI_FIELDS=" + qis[1] << "QI_FIELDS=" + qis[2]
                                                                                                              << QStringLiteral( "K=40" ) << QStringLiteral( "RISK_MODEL=1" )
                                                                                                              << "LOOKUP=" + dir + "/kmap_lookup.gpkg" << table,
                    checked ) );
  QVERIFY( checked.value( "PASS" ).toBool() );
  QCOMPARE( checked.value( "SMALLEST_RESIDENTS" ).toVariant().toLongLong(), kMapFewest );
  QCOMPARE( checked.value( "RECORDS" ).toVariant().toLongLong(), kMapRecords );

  QVERIFY( file.open( QIODevice::Append | QIODevice::Text ) );
  file.write( QStringLiteral( "%1,no such age,M,no such race,-3\n" ).arg( mRegionIds.last() ).toUtf8() );
  file.close();
  int exitCode = -1;
  QByteArray stdOut, stdErr;
  CHECKED( runProcess( QStringList { QStringLiteral( "run" ), QStringLiteral( "vbas:evaluate" ), QStringLiteral( "--" ) } + evaluation + table << "EVALUATION=" + dir + "/never.csv", exitCode, stdOut,
                       stdErr ) );
  QVERIFY2( exitCode != 0, "a population table with a negative count was read" );
  QVERIFY2( QString::fromUtf8( stdOut + stdErr ).contains( QStringLiteral( "the count field 'n' holds '-3', not a whole number" ) ), qPrintable( tail( stdErr ) ) );
  QVERIFY( !QFileInfo::exists( dir + "/never.csv" ) );
}

void TestE2e::checkGeomask( const QString &randomised, const QString &transitions, double epsilon )
{
  const Table r = readTable( randomised, { QStringLiteral( "new_code" ) } );
  QVERIFY2( r.ok, qPrintable( r.error ) );
  QCOMPARE( r.rows.size(), 224 );
  QVERIFY2( !r.fieldNames.contains( QStringLiteral( "tract_id" ) ), "the randomised patients keep their code" );
  for ( const QStringList &row : r.rows )
    QVERIFY( mPop8.contains( row.at( 0 ) ) );
  const Table t = readTable( transitions, { QStringLiteral( "from_code" ), QStringLiteral( "to_code" ), QStringLiteral( "probability" ) } );
  QVERIFY2( t.ok, qPrintable( t.error ) );
  QHash<QString, double> rowSum, inflow; // Q_j = sum_k n_k P_kj
  for ( const QStringList &row : t.rows )
  {
    rowSum[row.at( 0 )] += row.at( 2 ).toDouble();
    inflow[row.at( 1 )] += mPop8.value( row.at( 0 ) ) * row.at( 2 ).toDouble();
  }
  QCOMPARE( rowSum.size(), mPop8.size() );
  for ( auto it = rowSum.constBegin(); it != rowSum.constEnd(); ++it )
    QVERIFY2( std::fabs( it.value() - 1 ) < 1e-6, qPrintable( it.key() ) );
  for ( const QStringList &row : t.rows ) // Revised-LP: min(s, n_i) P_ij / Q_j <= epsilon
    QVERIFY2( std::min( 224.0, mPop8.value( row.at( 0 ) ) ) * row.at( 2 ).toDouble() / inflow.value( row.at( 1 ) ) <= epsilon + 1e-9, qPrintable( row.join( ' ' ) ) );
}

void TestE2e::lpGeomask()
{
  // The ED patients of the sample layers, the tracts standing for postal codes: the algorithm, then the shipped model.
  const QString dir = mOut.filePath( QStringLiteral( "lpgeomask" ) );
  QVERIFY( QDir().mkpath( dir ) );
  const QString patients = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ed_patients.gpkg" );
  QJsonObject r;
  const QStringList inputs
    = { QStringLiteral( "CODES=" ) + mRegions,           QStringLiteral( "CODE_FIELD=AREAKEY" ), QStringLiteral( "POPULATION_FIELD=POP8" ), QStringLiteral( "PATIENTS=" ) + patients,
        QStringLiteral( "PATIENT_CODE_FIELD=tract_id" ), QStringLiteral( "EPSILON=0.05" ),       QStringLiteral( "NEIGHBOURS=30" ),         QStringLiteral( "SEED=3" ) };
  CHECKED( runJson( QStringLiteral( "vbas:lpgeomask" ),
                    QStringList( inputs ) << QStringLiteral( "RANDOMISED=" ) + dir + "/randomised.gpkg" << QStringLiteral( "TRANSITIONS=" ) + dir + "/transitions.csv", r ) );
  QCOMPARE( r.value( "STATUS" ).toString(), QStringLiteral( "optimal" ) );
  QVERIFY( r.value( "MAX_REIDENTIFICATION" ).toDouble() <= 0.05 + 1e-9 );
  CHECKED( checkGeomask( dir + "/randomised.gpkg", dir + "/transitions.csv", 0.05 ) );
  // The same seed, naming only the release: the same draws (the rows in another order), no TRANSITIONS.
  CHECKED( checkOnlyRelease( QStringLiteral( "vbas:lpgeomask" ), inputs, QStringLiteral( "RANDOMISED" ), { "TRANSITIONS" }, QStringLiteral( "lpgeomask-release-only" ), dir + "/randomised.gpkg" ) );

  QJsonObject m;
  CHECKED( runJson( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/lp_geomask.model3" ),
                    { QStringLiteral( "codes=" ) + mRegions, QStringLiteral( "code_field=AREAKEY" ), QStringLiteral( "population_field=POP8" ), QStringLiteral( "patients=" ) + patients,
                      QStringLiteral( "patient_code_field=tract_id" ), QStringLiteral( "epsilon=0.05" ), QStringLiteral( "neighbours=30" ),
                      QStringLiteral( "lpgeomask:Randomised patients=" ) + dir + "/model-randomised.gpkg", QStringLiteral( "lpgeomask:Transitions=" ) + dir + "/model-transitions.csv" },
                    m ) );
  CHECKED( checkGeomask( dir + "/model-randomised.gpkg", dir + "/model-transitions.csv", 0.05 ) );
}

// EPSILON = 1e-20 on the sample: once CLP stopped with status 4, the exception escaped to Qt's event loop and
// qgis_process never exited. Now it exits (after some 10 s of searching the smallest feasible epsilon, 0.00228; once
// 50 to 90 s, before the search's LP was warm-started) with an error that gives that epsilon, and writes nothing.
void TestE2e::lpGeomaskTinyEpsilonEnds()
{
  const QString dir = mOut.filePath( QStringLiteral( "lpgeomask-tiny" ) );
  QVERIFY( QDir().mkpath( dir ) );
  e2e::ProcessResult r;
  CHECKED( mQgis.run( { QStringLiteral( "run" ), QStringLiteral( "vbas:lpgeomask" ), QStringLiteral( "--" ), QStringLiteral( "CODES=" ) + mRegions, QStringLiteral( "CODE_FIELD=AREAKEY" ),
                        QStringLiteral( "POPULATION_FIELD=POP8" ), QStringLiteral( "PATIENTS=" ) + ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ed_patients.gpkg" ),
                        QStringLiteral( "PATIENT_CODE_FIELD=tract_id" ), QStringLiteral( "NEIGHBOURS=30" ), QStringLiteral( "SEED=1" ), QStringLiteral( "EPSILON=1e-20" ),
                        QStringLiteral( "RANDOMISED=" ) + dir + "/randomised.gpkg" },
                      mOut.path(), r, 240000 ) );
  const QString err = QString::fromUtf8( r.err );
  QVERIFY2( r.exitCode != 0 && err.contains( QStringLiteral( "The smallest feasible epsilon is 0.00228" ) ) && !err.contains( QStringLiteral( "unhandled" ) ), qPrintable( e2e::tail( r.err ) ) );
  QVERIFY( !QFileInfo::exists( dir + "/randomised.gpkg" ) );
}

//! A generalized release recounted here: its rows, its "*", age_group's labels at the level claimed, every class k or more, the lookup's qi_levels.
void TestE2e::checkGeneralized( const QString &release, const QString &lookup, const QString &levels, qint64 released, qint64 starredValues, const QStringList &qis, int k )
{
  const Table table = readTable( release, qis + QStringList { QStringLiteral( "aggregate_id" ) } );
  QVERIFY2( table.ok, qPrintable( table.error ) );
  QCOMPARE( static_cast<qint64>( table.rows.size() ), released );
  // age_group's labels: the hierarchy file's column at the level LEVELS gives ("age_group = 2 of 3, ..."), or "*".
  const int level = levels.section( QStringLiteral( "age_group = " ), 1 ).section( ' ', 0, 0 ).toInt();
  QFile file( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/hierarchies/age_group.csv" ) );
  QVERIFY( file.open( QIODevice::ReadOnly ) );
  QSet<QString> labels { QStringLiteral( "*" ) };
  for ( const QByteArray &line : file.readAll().split( '\n' ) )
    if ( !line.trimmed().isEmpty() )
      labels.insert( QString::fromUtf8( line.trimmed() ).split( ';' ).value( level ) );
  QHash<QString, qint64> classes;
  qint64 stars = 0;
  for ( const QStringList &row : table.rows )
  {
    QVERIFY2( labels.contains( row.at( 0 ) ), qPrintable( row.at( 0 ) ) );
    stars += row.count( QStringLiteral( "*" ) );
    ++classes[row.join( '|' )];
  }
  QCOMPARE( stars, starredValues );
  for ( auto it = classes.constBegin(); it != classes.constEnd(); ++it )
    QVERIFY2( it.value() >= k, qPrintable( QStringLiteral( "%1 holds %2" ).arg( it.key() ).arg( it.value() ) ) );
  const Table rows = readTable( lookup, { QStringLiteral( "qi_levels" ) } );
  QVERIFY2( rows.ok, qPrintable( rows.error ) );
  QCOMPARE( rows.rows.size(), mRegionIds.size() );
  for ( const QStringList &row : rows.rows )
    QCOMPARE( row.at( 0 ), levels );
}

// Generalization from qgis_process: vbas:anonymize with the sample's ARX hierarchy file, then the shipped
// vbas_generalization.model3 (vbas:generalize, then vbas:evaluate) with the same: each release recounted.
void TestE2e::generalization()
{
  const QString dir = mOut.filePath( QStringLiteral( "generalization" ) );
  QVERIFY( QDir().mkpath( dir ) );
  const QStringList qis { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) };
  const QString hierarchy = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/hierarchies/age_group.csv" );
  QJsonObject a;
  CHECKED( runJson( QStringLiteral( "vbas:anonymize" ),
                    inputsFor( qis ) << QStringLiteral( "K=5" ) << QStringLiteral( "HIERARCHIES=" ) + hierarchy << QStringLiteral( "ANONYMIZED=" ) + dir + "/anonymized.gpkg"
                                     << QStringLiteral( "LOOKUP=" ) + dir + "/lookup.gpkg",
                    a ) );
  QCOMPARE( a.value( "LATTICE_SIZE" ).toVariant().toLongLong(), 16LL );
  const QString levels = a.value( "LEVELS" ).toString();
  QCOMPARE( a.value( "RELEASED" ).toVariant().toLongLong() + a.value( "SUPPRESSED" ).toVariant().toLongLong(), static_cast<qlonglong>( mPatients.size() ) );
  QVERIFY( a.value( "SUPPRESSED" ).toVariant().toLongLong() + a.value( "RECORDS_STARRED" ).toVariant().toLongLong() <= mPatients.size() / 20 );
  CHECKED( checkGeneralized( dir + "/anonymized.gpkg", dir + "/lookup.gpkg", levels, a.value( "RELEASED" ).toVariant().toLongLong(), a.value( "VALUES_STARRED" ).toVariant().toLongLong(), qis, 5 ) );

  QJsonObject m;
  CHECKED( runJson( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/vbas_generalization.model3" ), generalizationModelParams( dir, QStringLiteral( "model-" ), QString() ), m ) );
  // The model's evaluation (from the records, at the lookup's levels) claims what anonymize's release holds.
  QString error;
  const QMap<QString, QString> row = readCsvRow( dir + "/model-evaluation.csv", &error );
  QVERIFY2( error.isEmpty(), qPrintable( error ) );
  QCOMPARE( row.value( "released" ).toLongLong(), a.value( "RELEASED" ).toVariant().toLongLong() );
  QCOMPARE( row.value( "suppressed" ).toLongLong(), a.value( "SUPPRESSED" ).toVariant().toLongLong() );
  CHECKED( checkGeneralized( dir + "/model-release.gpkg", dir + "/model-lookup.gpkg", levels, row.value( "released" ).toLongLong(), a.value( "VALUES_STARRED" ).toVariant().toLongLong(), qis, 5 ) );
}

// A shipped model that fails leaves nothing: QGIS runs a model's steps one after another, each putting its outputs in
// place when it ends, and undoes none when a later step fails. So the models refuse, before their first step writes,
// a report in a folder that does not exist (the destinations are checked with the parameter values) and a sensitive
// field the records do not have (the pipeline's first step checks the records' fields).
void TestE2e::failedModelLeavesNothing_data()
{
  QTest::addColumn<QString>( "model" );
  QTest::addColumn<QString>( "named" ); // what the error must name
  QTest::addColumn<bool>( "missingReportFolder" );
  QTest::newRow( "pipeline, report in a missing folder" ) << QStringLiteral( "pipeline" ) << QStringLiteral( "evaluate:Report" ) << true;
  QTest::newRow( "pipeline, misspelt sensitive field" ) << QStringLiteral( "pipeline" ) << QStringLiteral( "diagnosiss" ) << false;
  QTest::newRow( "generalization, report in a missing folder" ) << QStringLiteral( "generalization" ) << QStringLiteral( "evaluate:Report" ) << true;
}

void TestE2e::failedModelLeavesNothing()
{
  QFETCH( QString, model );
  QFETCH( QString, named );
  QFETCH( bool, missingReportFolder );
  const QString dir = mOut.filePath( QStringLiteral( "failed-model-%1" ).arg( QTest::currentDataTag() ).replace( QRegularExpression( QStringLiteral( "\\W+" ) ), QStringLiteral( "-" ) ) );
  QVERIFY( QDir().mkpath( dir ) );
  const QString report = missingReportFolder ? dir + "/missing/report.html" : dir + "/report.html";
  const QStringList params = model == QLatin1String( "pipeline" ) ? pipelineModelParams( dir, { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) }, 5, {},
                                                                                         missingReportFolder ? QStringLiteral( "diagnosis" ) : QStringLiteral( "diagnosiss" ), report )
                                                                  : generalizationModelParams( dir, QString(), report );
  e2e::ProcessResult r;
  CHECKED(
    mQgis.run( QStringList { QStringLiteral( "--json" ), QStringLiteral( "run" ), ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/vbas_%1.model3" ).arg( model ), QStringLiteral( "--" ) } + params,
               mOut.path(), r ) );
  QVERIFY2( r.exitCode != 0, qPrintable( e2e::tail( r.err ) ) );
  const QStringList left = QDir( dir ).entryList( QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot );
  QVERIFY2( left.isEmpty(), qPrintable( QStringLiteral( "the failed run left %1" ).arg( left.join( QStringLiteral( ", " ) ) ) ) );
  QVERIFY2( QString::fromUtf8( r.err ).contains( named ), qPrintable( e2e::tail( r.err ) ) );
}

// A plugin folder whose library was built for another QGIS: qgis_process lists no vbas algorithm and says
// why on stderr, and the QGIS message log says the same. (The library is an empty file: the shim must
// not even try to load it.)
void TestE2e::builtForAnotherQgis()
{
  QTemporaryDir dir;
  QVERIFY( dir.isValid() );
  const QString plugin = dir.filePath( QStringLiteral( "vbas" ) );
  QVERIFY( QDir().mkpath( plugin ) );
  for ( const QString &file : { QStringLiteral( "metadata.txt" ), QStringLiteral( "__init__.py" ) } )
    QVERIFY( QFile::copy( ctestPath( "VBAS_PLUGIN_DIR" ) + QStringLiteral( "/" ) + file, plugin + '/' + file ) );
  QFile library( plugin + QStringLiteral( "/libvbas-3.0.0.so" ) );
  QVERIFY( library.open( QIODevice::WriteOnly ) );
  library.close();

  e2e::QgisProcess other;
  CHECKED( other.install( plugin ) );
  e2e::ProcessResult r;
  CHECKED( other.run( { QStringLiteral( "list" ) }, dir.path(), r ) );
  QCOMPARE( r.exitCode, 0 );
  QVERIFY2( !r.out.contains( "vbas:" ), qPrintable( e2e::tail( r.out ) ) );
  const QByteArray said = "this plugin was built for QGIS 3.0.0, and this is QGIS " + QByteArray( VBAS_QGIS_VERSION ) + ": its algorithms are not loaded";
  QVERIFY2( r.err.contains( said ), qPrintable( e2e::tail( r.err ) ) );

  // The message log, as QGIS desktop shows it: the plugin started by hand in a QgsApplication.
  const QString script = QStringLiteral( "import sys\n"
                                         "from qgis.core import QgsApplication\n"
                                         "app = QgsApplication([], False)\n"
                                         "app.initQgis()\n"
                                         "logged = []\n"
                                         "QgsApplication.messageLog().messageReceived.connect(lambda m, tag, level: logged.append(tag + ': ' + m))\n"
                                         "sys.path.insert(0, sys.argv[1])\n"
                                         "import vbas\n"
                                         "vbas.classFactory(None).initProcessing()\n"
                                         "print('\\n'.join(logged))\n" );
  QProcess python;
  CHECKED( other.start( python, { QStringLiteral( "-c" ), script, dir.path() }, dir.path(), QStringLiteral( "/usr/bin/python3" ) ) );
  QElapsedTimer timer;
  timer.start();
  CHECKED( e2e::QgisProcess::finish( python, QStringLiteral( "python3 with the plugin" ), timer, e2e::kProcessTimeoutMs, r ) );
  QVERIFY2( r.out.contains( "VBAS: " + said ), qPrintable( e2e::tail( r.out + r.err ) ) );
}

QTEST_GUILESS_MAIN( TestE2e )
#include "test_e2e.moc"
