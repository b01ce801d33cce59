// Fault tests of the VBAS plugin through qgis_process: a release that is always k-anonymous, complete
// and safe on disk.
//
// The freshly built plugin folder is linked into an isolated QGIS profile and vbas:anonymize is run on
// a generated table of 300,000 records while it is interrupted (SIGTERM, SIGINT, SIGKILL), limited in
// file size (ulimit -f) or pointed at a read-only folder: the destination folder must afterwards hold
// either nothing or, after SIGKILL, only recognisable temporaries that the next run removes. A last
// test checks that the order of the released rows says nothing about the order of the input (a table
// sorted by tract), followed through each row's aggregate, and that the same SEED repeats the release's
// rows but never their order.
//
// Privacy: the log only ever gets counts, file names and statistics, never the contents of a record.

#include "tests/e2e/e2e_util.h"

#include <QHash>
#include <QJsonArray>
#include <QRegularExpression>
#include <QSet>

#include <gdal_utils.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <numeric>
#include <random>
#include <sys/types.h>

namespace
{
using e2e::ProcessResult;
using e2e::readTable;
using e2e::Table;
using e2e::tail;

const QString kPartialPrefix = QStringLiteral( ".vbas-partial-" );
//! The temporary of the release, while it is written (not its -journal/-wal companions).
const QString kPartialRelease = QStringLiteral( ".vbas-partial-*-anonymized.gpkg" );
//! The shuffle's scratch files of the release.
const QString kScratch = QStringLiteral( ".vbas-partial-*-scratch-*" );
const QStringList kFinalNames = { QStringLiteral( "sites.gpkg" ),      QStringLiteral( "aggregated.gpkg" ), QStringLiteral( "lookup.gpkg" ),
                                  QStringLiteral( "anonymized.gpkg" ), QStringLiteral( "voronoi.gpkg" ),    QStringLiteral( "evaluation.csv" ) };
const int kGeneratedRows = 300000;
const quint64 kGeneratorSeed = 20240602;
//! No run of a test may take longer (each test stays well under 2 minutes).
const int kRunTimeoutMs = 90000;
//! How often the destination folder is looked at while a run is on its way to the release.
const int kPollMs = 20;
//! The log line of a run that has read its records ("Read 300000 record rows (...)").
const QRegularExpression kReadRecords( QStringLiteral( "Read \\d+ record rows" ) );

//! Every entry of a folder, hidden ones included.
QStringList entries( const QString &dir, const QStringList &filters = {} )
{
  return QDir( dir ).entryList( filters, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name );
}

//! Average ranks (1-based), ties sharing the mean of their ranks.
QVector<double> ranks( const QVector<double> &values )
{
  QVector<int> order( values.size() );
  std::iota( order.begin(), order.end(), 0 );
  std::stable_sort( order.begin(), order.end(), [&]( int a, int b ) { return values[a] < values[b]; } );
  QVector<double> result( values.size() );
  for ( int i = 0; i < order.size(); )
  {
    int j = i;
    while ( j + 1 < order.size() && values[order[j + 1]] == values[order[i]] )
      ++j;
    const double rank = ( i + j ) / 2.0 + 1.0;
    for ( int m = i; m <= j; ++m )
      result[order[m]] = rank;
    i = j + 1;
  }
  return result;
}

//! Spearman's rank correlation: Pearson's correlation of the (tie-averaged) ranks.
double spearman( const QVector<double> &x, const QVector<double> &y )
{
  const QVector<double> rx = ranks( x ), ry = ranks( y );
  const double n = rx.size();
  const double mx = std::accumulate( rx.begin(), rx.end(), 0.0 ) / n;
  const double my = std::accumulate( ry.begin(), ry.end(), 0.0 ) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for ( int i = 0; i < rx.size(); ++i )
  {
    sxy += ( rx[i] - mx ) * ( ry[i] - my );
    sxx += ( rx[i] - mx ) * ( rx[i] - mx );
    syy += ( ry[i] - my ) * ( ry[i] - my );
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt( sxx * syy ) : 0.0;
}

//! Position in the table (0, 1, ...) against the rank of each row's aggregate.
double orderCorrelation( const QVector<QString> &aggregatesInOrder, const QHash<QString, int> &aggregateRank )
{
  QVector<double> position( aggregatesInOrder.size() ), rank( aggregatesInOrder.size() );
  for ( int i = 0; i < aggregatesInOrder.size(); ++i )
  {
    position[i] = i;
    rank[i] = aggregateRank.value( aggregatesInOrder[i], -1 );
  }
  return spearman( position, rank );
}

/**
 * A folder that cannot be written, even by root: a read-only tmpfs mounted on it, or else the
 * immutable attribute; undone when it goes out of scope, whatever the test did.
 */
class ReadOnlyFolder
{
  public:
    explicit ReadOnlyFolder( const QString &path )
      : mPath( path )
    {
      if ( QProcess::execute( QStringLiteral( "mount" ),
                              { QStringLiteral( "-t" ), QStringLiteral( "tmpfs" ), QStringLiteral( "-o" ), QStringLiteral( "ro,size=1m" ), QStringLiteral( "tmpfs" ), mPath } )
           == 0 )
      {
        mHow = QStringLiteral( "a read-only tmpfs" );
        if ( refusesWrites() )
          return;
        undo();
      }
      if ( QProcess::execute( QStringLiteral( "chattr" ), { QStringLiteral( "+i" ), mPath } ) == 0 )
      {
        mHow = QStringLiteral( "chattr +i" );
        if ( refusesWrites() )
          return;
        undo();
      }
    }
    ~ReadOnlyFolder() { undo(); }
    ReadOnlyFolder( const ReadOnlyFolder & ) = delete;
    ReadOnlyFolder &operator=( const ReadOnlyFolder & ) = delete;

    //! How the folder was made read-only; empty when it could not be.
    QString how() const { return mHow; }

  private:
    bool refusesWrites() const
    {
      QFile probe( mPath + QStringLiteral( "/probe" ) );
      if ( !probe.open( QIODevice::WriteOnly ) )
        return true;
      probe.close();
      probe.remove();
      return false;
    }
    void undo()
    {
      if ( mHow.startsWith( QLatin1String( "a read-only" ) ) )
        QProcess::execute( QStringLiteral( "umount" ), { mPath } );
      else if ( !mHow.isEmpty() )
        QProcess::execute( QStringLiteral( "chattr" ), { QStringLiteral( "-i" ), mPath } );
      mHow.clear();
    }

    QString mPath;
    QString mHow;
};

} // namespace

class TestFaults : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void sigtermDuringReleaseLeavesNothing();
    void sigintDuringReleaseLeavesNothing();
    void sigkillLeavesNoFinalNameAndNextRunCleansUp();
    void fileSizeLimitFailsAndLeavesNothing();
    void readOnlyDestinationIsRefusedUpFront();
    void releaseOrderIsIndependentOfInputOrder();

  private:
    e2e::QgisProcess mQgis;
    QTemporaryDir mTmp;
    QString mRegions, mSample, mSorted, mLarge;
    QStringList mTractIds;

    void generateLarge();
    void sortSample();
    //! The parameters of vbas:anonymize (3 QIs, k = 5) on records, every output in dir, and extra ones.
    QStringList anonymizeParams( const QString &records, const QString &dir, const QStringList &extra = {} ) const;
    //! The arguments of a qgis_process run without --json, where the log (the info lines) goes to stdout.
    static QStringList plainRun( const QStringList &params ) { return QStringList { QStringLiteral( "run" ), QStringLiteral( "vbas:anonymize" ), QStringLiteral( "--" ) } + params; }
    void startUntilRelease( QProcess &p, const QString &dir, const QString &waitFor, const QStringList &extra, QElapsedTimer &timer );
    //! Interrupts a run on the large table by signal once waitFor exists in its folder: nothing may be left.
    void interruptDuringRelease( int signal, const QString &label, const QStringList &extra, const QString &waitFor );
    //! The release in dir: aggregate_id and the QIs, in file order.
    void readRelease( const QString &dir, Table &release );
};

void TestFaults::initTestCase()
{
  GDALAllRegister();
  QVERIFY( mTmp.isValid() );
  mRegions = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" );
  mSample = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" );
  for ( const QString &f : { mRegions, mSample } )
    QVERIFY2( QFileInfo::exists( f ), qPrintable( f ) );
  CHECKED( mQgis.setUp( { QStringLiteral( "vbas:anonymize" ) } ) );

  const Table regions = readTable( mRegions, { QStringLiteral( "AREAKEY" ) } );
  QVERIFY2( regions.ok, qPrintable( regions.error ) );
  for ( const QStringList &row : regions.rows )
    mTractIds << row.at( 0 );
  QCOMPARE( mTractIds.size(), 281 );

  QElapsedTimer timer;
  timer.start();
  CHECKED( generateLarge() );
  qInfo( "generated %d records in %.1f s", kGeneratedRows, timer.elapsed() / 1000.0 );
  CHECKED( sortSample() );
}

//! The large records table: kGeneratedRows random rows over the NY8 tracts, in one transaction, always the same.
void TestFaults::generateLarge()
{
  mLarge = mTmp.filePath( QStringLiteral( "records300k.gpkg" ) );
  GDALDriverH driver = GDALGetDriverByName( "GPKG" );
  QVERIFY( driver );
  GDALDatasetH ds = GDALCreate( driver, mLarge.toUtf8().constData(), 0, 0, 0, GDT_Unknown, nullptr );
  QVERIFY2( ds, qPrintable( "cannot create " + mLarge ) );
  OGRLayerH layer = GDALDatasetCreateLayer( ds, "records", nullptr, wkbNone, nullptr );
  const QStringList fields
    = { QStringLiteral( "patient_id" ), QStringLiteral( "tract_id" ), QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ), QStringLiteral( "insurance" ) };
  bool created = layer != nullptr;
  for ( int i = 0; created && i < fields.size(); ++i )
  {
    OGRFieldDefnH field = OGR_Fld_Create( fields.at( i ).toUtf8().constData(), i == 0 ? OFTInteger : OFTString );
    created = OGR_L_CreateField( layer, field, TRUE ) == OGRERR_NONE;
    OGR_Fld_Destroy( field );
  }
  if ( !created )
  {
    GDALClose( ds );
    QFAIL( "cannot create the records layer" );
  }
  const QVector<QByteArray> ages = { "0-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80+" };
  const QVector<QByteArray> sexes = { "F", "M" };
  const QVector<QByteArray> races = { "White", "Hispanic", "Black", "Asian", "Other" };
  const QVector<QByteArray> insurances = { "private", "medicare", "medicaid", "uninsured" };
  QVector<QByteArray> tracts;
  for ( const QString &id : qAsConst( mTractIds ) )
    tracts << id.toUtf8();
  std::mt19937_64 random( kGeneratorSeed ); // the raw engine output is the same everywhere
  auto pick = [&random]( const QVector<QByteArray> &values ) { return values.at( static_cast<int>( random() % static_cast<quint64>( values.size() ) ) ).constData(); };

  OGRFeatureDefnH defn = OGR_L_GetLayerDefn( layer );
  GDALDatasetStartTransaction( ds, FALSE );
  int failed = 0;
  for ( int i = 1; i <= kGeneratedRows; ++i )
  {
    OGRFeatureH f = OGR_F_Create( defn );
    OGR_F_SetFieldInteger( f, 0, i );
    OGR_F_SetFieldString( f, 1, pick( tracts ) );
    OGR_F_SetFieldString( f, 2, pick( ages ) );
    OGR_F_SetFieldString( f, 3, pick( sexes ) );
    OGR_F_SetFieldString( f, 4, pick( races ) );
    OGR_F_SetFieldString( f, 5, pick( insurances ) );
    failed += OGR_L_CreateFeature( layer, f ) == OGRERR_NONE ? 0 : 1;
    OGR_F_Destroy( f );
  }
  const bool committed = GDALDatasetCommitTransaction( ds ) == OGRERR_NONE;
  GDALClose( ds );
  QCOMPARE( failed, 0 );
  QVERIFY( committed );
  const Table check = readTable( mLarge, { QStringLiteral( "patient_id" ) } );
  QVERIFY2( check.ok, qPrintable( check.error ) );
  QCOMPARE( check.rows.size(), kGeneratedRows );
}

//! A copy of the sample records sorted by tract_id (an extract as a hospital might export it).
void TestFaults::sortSample()
{
  mSorted = mTmp.filePath( QStringLiteral( "patients_by_tract.gpkg" ) );
  QByteArrayList words = { "-f", "GPKG", "-nln", "patients", "-sql", "SELECT patient_id, tract_id, age_group, sex, race, insurance, diagnosis FROM patients ORDER BY tract_id" };
  QVector<char *> argv;
  for ( QByteArray &w : words )
    argv << w.data();
  argv << nullptr;
  GDALVectorTranslateOptions *options = GDALVectorTranslateOptionsNew( argv.data(), nullptr );
  QVERIFY( options );
  GDALDatasetH source = GDALOpenEx( mSample.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  QVERIFY2( source, qPrintable( "cannot open " + mSample ) );
  int usageError = 0;
  GDALDatasetH sorted = GDALVectorTranslate( mSorted.toUtf8().constData(), nullptr, 1, &source, options, &usageError );
  GDALVectorTranslateOptionsFree( options );
  GDALClose( source );
  QVERIFY2( sorted && !usageError, qPrintable( "GDALVectorTranslate could not write " + mSorted ) );
  GDALClose( sorted );
}

QStringList TestFaults::anonymizeParams( const QString &records, const QString &dir, const QStringList &extra ) const
{
  QStringList args;
  args << QStringLiteral( "REGIONS=" ) + mRegions << QStringLiteral( "REGION_ID=AREAKEY" ) << QStringLiteral( "RECORDS=" ) + records << QStringLiteral( "RECORD_REGION=tract_id" )
       << QStringLiteral( "QI_FIELDS=age_group" ) << QStringLiteral( "QI_FIELDS=sex" ) << QStringLiteral( "QI_FIELDS=race" ) << QStringLiteral( "K=5" )
       << QStringLiteral( "SITE_POINTS=" ) + dir + "/sites.gpkg" << QStringLiteral( "AGGREGATED=" ) + dir + "/aggregated.gpkg" << QStringLiteral( "LOOKUP=" ) + dir + "/lookup.gpkg"
       << QStringLiteral( "ANONYMIZED=" ) + dir + "/anonymized.gpkg" << QStringLiteral( "VORONOI=" ) + dir + "/voronoi.gpkg" << QStringLiteral( "EVALUATION=" ) + dir + "/evaluation.csv";
  return args + extra;
}

/**
 * Starts anonymize on the large table into dir and returns once an entry matching waitFor exists in
 * dir (looked at every kPollMs); fails if the run ends or takes too long before that.
 */
void TestFaults::startUntilRelease( QProcess &p, const QString &dir, const QString &waitFor, const QStringList &extra, QElapsedTimer &timer )
{
  timer.start();
  CHECKED( mQgis.start( p, plainRun( anonymizeParams( mLarge, dir, extra ) ), dir ) );
  while ( entries( dir, { waitFor } ).isEmpty() )
  {
    if ( p.waitForFinished( kPollMs ) || p.state() == QProcess::NotRunning )
      QFAIL(
        qPrintable( QStringLiteral( "the run ended (%1) before %2 appeared in the folder; stderr:\n%3" )
                      .arg( p.exitStatus() == QProcess::NormalExit ? QStringLiteral( "exit %1" ).arg( p.exitCode() ) : QStringLiteral( "crashed" ), waitFor, tail( p.readAllStandardError() ) ) ) );
    if ( timer.elapsed() > kRunTimeoutMs )
    {
      p.kill();
      p.waitForFinished( 10000 );
      QFAIL( qPrintable( QStringLiteral( "%1 did not appear within %2 s" ).arg( waitFor ).arg( kRunTimeoutMs / 1000 ) ) );
    }
  }
  qInfo( "%s appeared after %.2f s; the folder holds %d entries", qPrintable( waitFor ), timer.elapsed() / 1000.0, entries( dir ).size() );
}

void TestFaults::interruptDuringRelease( int signal, const QString &label, const QStringList &extra, const QString &waitFor )
{
  const QString dir = mTmp.filePath( label );
  QVERIFY( QDir().mkpath( dir ) );
  QProcess p;
  QElapsedTimer timer;
  CHECKED( startUntilRelease( p, dir, waitFor, extra, timer ) );
  const int temporaries = entries( dir, { kPartialPrefix + '*' } ).size();
  const int scratch = entries( dir, { kScratch } ).size();
  QVERIFY( ::kill( static_cast<pid_t>( p.processId() ), signal ) == 0 );
  ProcessResult r;
  CHECKED( e2e::QgisProcess::finish( p, QStringLiteral( "anonymize sent signal %1 with %2 temporaries (%3 scratch) in the folder" ).arg( signal ).arg( temporaries ).arg( scratch ), timer,
                                     kRunTimeoutMs, r ) );
  if ( r.signal != signal )
    qWarning( "signal %d: the process did not end killed by it but with %s", signal, qPrintable( r.ending() ) );
  QVERIFY2( r.exitCode != 0, qPrintable( QStringLiteral( "the run interrupted by signal %1 ended with exit 0; stderr:\n%2" ).arg( signal ).arg( tail( r.err ) ) ) );
  const QStringList left = entries( dir );
  QVERIFY2( left.isEmpty(), qPrintable( QStringLiteral( "signal %1: %2 entries left in the folder: %3" ).arg( signal ).arg( left.size() ).arg( left.join( ", " ) ) ) );
}

void TestFaults::sigtermDuringReleaseLeavesNothing()
{
  // The release is shuffled in memory (64 MB); SIGTERM while its temporary is being written.
  interruptDuringRelease( SIGTERM, QStringLiteral( "sigterm" ), {}, kPartialRelease );
}

void TestFaults::sigintDuringReleaseLeavesNothing()
{
  // The release is shuffled through scratch files (1 MB in memory); SIGINT once they exist.
  interruptDuringRelease( SIGINT, QStringLiteral( "sigint" ), { QStringLiteral( "SHUFFLE_MEMORY_MB=1" ) }, kScratch );
}

void TestFaults::sigkillLeavesNoFinalNameAndNextRunCleansUp()
{
  const QString dir = mTmp.filePath( QStringLiteral( "sigkill" ) );
  QVERIFY( QDir().mkpath( dir ) );
  QProcess p;
  QElapsedTimer timer;
  CHECKED( startUntilRelease( p, dir, kPartialRelease, {}, timer ) );
  p.kill(); // SIGKILL
  ProcessResult r;
  CHECKED( e2e::QgisProcess::finish( p, QStringLiteral( "anonymize sent SIGKILL" ), timer, kRunTimeoutMs, r ) );
  QCOMPARE( r.signal, int( SIGKILL ) );

  for ( const QString &name : kFinalNames )
    QVERIFY2( !QFileInfo::exists( dir + '/' + name ), qPrintable( name + " exists after the run was killed" ) );
  const QStringList partial = entries( dir, { kPartialPrefix + '*' } );
  QVERIFY2( !partial.isEmpty(), "the killed run left no recognisable temporary" );
  const QStringList all = entries( dir );
  QVERIFY2( all.size() == partial.size(), qPrintable( "unrecognisable files left by the killed run: " + all.join( ", " ) ) );
  qInfo( "the killed run left %d temporaries", partial.size() );

  // The next run into that folder removes them, says so, and writes its outputs.
  QJsonObject document;
  ProcessResult next;
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:anonymize" ), anonymizeParams( mSample, dir ), dir, document, next, kRunTimeoutMs ) );
  const QStringList stillPartial = entries( dir, { kPartialPrefix + '*' } );
  QVERIFY2( stillPartial.isEmpty(), qPrintable( QStringLiteral( "%1 temporaries left after the next run: %2" ).arg( stillPartial.size() ).arg( stillPartial.join( ", " ) ) ) );
  const QJsonObject log = document.value( QStringLiteral( "log" ) ).toObject();
  const QString messages = QJsonDocument( log ).toJson() + QString::fromUtf8( next.err );
  const QRegularExpressionMatch removed = QRegularExpression( QStringLiteral( "Removed (\\d+) temporary file\\(s\\) or table\\(s\\) left by interrupted VBAS runs" ) ).match( messages );
  QVERIFY2( removed.hasMatch(), "neither the JSON log nor stderr mentions the removal of the temporaries" );
  const int locks = partial.filter( QRegularExpression( QStringLiteral( "-lock$" ) ) ).size(); // one per output, removed with the temporaries it guarded
  QVERIFY2( locks > 0, "the killed run held no lock on its temporaries" );
  QVERIFY2( removed.captured( 1 ).toInt() >= partial.size() - locks,
            qPrintable( QStringLiteral( "the log says %1 removed, the killed run left %2 and %3 locks" ).arg( removed.captured( 1 ) ).arg( partial.size() - locks ).arg( locks ) ) );
  for ( const QString &name : kFinalNames )
    QVERIFY2( QFileInfo::exists( dir + '/' + name ), qPrintable( name + " is missing after the next run" ) );
  Table release;
  CHECKED( readRelease( dir, release ) );
  QCOMPARE( qint64( release.rows.size() ), document.value( "results" ).toObject().value( "RELEASED" ).toVariant().toLongLong() );
}

void TestFaults::fileSizeLimitFailsAndLeavesNothing()
{
  // 2 MiB: QGIS starts and the small outputs fit, the release of 300,000 records (about 16 MB) does not.
  const int limitKiB = 2048;
  const QString dir = mTmp.filePath( QStringLiteral( "ulimit" ) );
  QVERIFY( QDir().mkpath( dir ) );
  QProcess p;
  QElapsedTimer timer;
  timer.start();
  CHECKED( mQgis.start(
    p, QStringList { QStringLiteral( "-c" ), QStringLiteral( "ulimit -f %1 && exec \"$0\" \"$@\"" ).arg( limitKiB ), QStringLiteral( VBAS_QGIS_PROCESS ) } + plainRun( anonymizeParams( mLarge, dir ) ),
    dir, QStringLiteral( "/bin/bash" ) ) );
  ProcessResult r;
  CHECKED( e2e::QgisProcess::finish( p, QStringLiteral( "anonymize under ulimit -f %1" ).arg( limitKiB ), timer, kRunTimeoutMs, r ) );
  QVERIFY2( r.signal == 0, qPrintable( QStringLiteral( "the process was killed by signal %1 (SIGXFSZ is %2) instead of failing with an error" ).arg( r.signal ).arg( SIGXFSZ ) ) );
  QVERIFY2( r.exitCode != 0, "a release larger than the file-size limit was written: choose a smaller limit" );
  const QString output = QString::fromUtf8( r.out + r.err );
  // QGIS started and read the records: the run failed while writing, not before.
  QVERIFY2( output.contains( kReadRecords ), qPrintable( "the run failed before it read the records; stderr:\n" + tail( r.err ) ) );
  QVERIFY2( r.err.contains( "ERROR" ) || r.err.contains( "Could not" ) || r.err.contains( "too large" ), qPrintable( "no error message on stderr:\n" + tail( r.err ) ) );
  const QStringList errorLines = QString::fromUtf8( r.err ).split( '\n' ).filter( QStringLiteral( "ERROR" ) );
  qInfo( "error: %s", qPrintable( errorLines.isEmpty() ? QStringLiteral( "(no ERROR line)" ) : errorLines.last().left( 300 ) ) );
  const QStringList left = entries( dir );
  QVERIFY2( left.isEmpty(), qPrintable( QStringLiteral( "%1 entries left in the folder: %2" ).arg( left.size() ).arg( left.join( ", " ) ) ) );
}

void TestFaults::readOnlyDestinationIsRefusedUpFront()
{
  const QString dir = mTmp.filePath( QStringLiteral( "readonly" ) );
  QVERIFY( QDir().mkpath( dir ) );
  const ReadOnlyFolder readOnly( dir );
  if ( readOnly.how().isEmpty() )
    QSKIP( "cannot make a folder read-only here (neither mount nor chattr +i works)" );
  qInfo( "the folder is read-only through %s", qPrintable( readOnly.how() ) );

  ProcessResult r;
  CHECKED( mQgis.run( plainRun( anonymizeParams( mLarge, dir ) ), mTmp.path(), r, kRunTimeoutMs ) );
  QVERIFY2( r.exitCode != 0, "a run into a read-only folder succeeded" );
  const QString output = QString::fromUtf8( r.out + r.err );
  QVERIFY2( output.contains( QStringLiteral( "cannot write in the folder %1" ).arg( dir ) ), qPrintable( "the message does not say that the folder cannot be written; stderr:\n" + tail( r.err ) ) );
  // Refused before the records are read: without --json qgis_process prints the log, and a run that
  // reads the records says "Read N record rows" (fileSizeLimitFailsAndLeavesNothing checks that it does).
  QVERIFY2( !output.contains( kReadRecords ), "the records were read before the destination was refused" );
  qInfo( "refused after %.1f s (most of it is QGIS starting)", r.ms / 1000.0 );
  QVERIFY( entries( dir ).isEmpty() );
}

void TestFaults::readRelease( const QString &dir, Table &release )
{
  release = readTable( dir + "/anonymized.gpkg", { QStringLiteral( "aggregate_id" ), QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) } );
  QVERIFY2( release.ok, qPrintable( release.error ) );
}

void TestFaults::releaseOrderIsIndependentOfInputOrder()
{
  // The input is sorted by tract; the release has no tract, only its aggregate. Each aggregate is
  // ranked by the mean input position of its records: in the input, a row's position correlates with
  // the rank of its aggregate (proves the measure works), and a release in the input's order would too.
  const Table input = readTable( mSorted, { QStringLiteral( "tract_id" ) } );
  QVERIFY2( input.ok, qPrintable( input.error ) );

  // First run: a fresh seed.
  const QString first = mTmp.filePath( QStringLiteral( "order-1" ) );
  QVERIFY( QDir().mkpath( first ) );
  QJsonObject document;
  ProcessResult r;
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:anonymize" ), anonymizeParams( mSorted, first ), first, document, r, kRunTimeoutMs ) );
  const QJsonObject results = document.value( QStringLiteral( "results" ) ).toObject();
  QVERIFY2( results.value( QStringLiteral( "SEED" ) ).isDouble(), "no SEED output" );
  const qint64 seed = static_cast<qint64>( results.value( QStringLiteral( "SEED" ) ).toDouble() );
  // The log names the released fields and gives no seed of the order (recorded nowhere).
  const QJsonObject log = document.value( QStringLiteral( "log" ) ).toObject();
  QVERIFY2( QJsonDocument( log.value( QStringLiteral( "info" ) ).toArray() ).toJson().contains( "The release holds the fields age_group, sex, race, aggregate_id, in a fresh random order." ),
            "the log does not name the released fields" );
  QVERIFY2( !QJsonDocument( log ).toJson().contains( "random order drawn from seed" ), "the log gives a seed of the release's order" );

  const Table lookup = readTable( first + "/lookup.gpkg", { QStringLiteral( "region_id" ), QStringLiteral( "aggregate_id" ) } );
  QVERIFY2( lookup.ok, qPrintable( lookup.error ) );
  QHash<QString, QString> aggregateOf;
  for ( const QStringList &row : lookup.rows )
    aggregateOf.insert( row.at( 0 ), row.at( 1 ) );
  QVector<QString> inputAggregates;
  QHash<QString, double> positionSum, records;
  for ( int i = 0; i < input.rows.size(); ++i )
  {
    const QString aggregate = aggregateOf.value( input.rows.at( i ).at( 0 ) );
    inputAggregates << aggregate;
    positionSum[aggregate] += i;
    records[aggregate] += 1;
  }
  QVector<QString> aggregates = QVector<QString>::fromList( positionSum.keys() );
  std::sort( aggregates.begin(), aggregates.end(), [&]( const QString &a, const QString &b ) { return positionSum[a] / records[a] < positionSum[b] / records[b]; } );
  QHash<QString, int> aggregateRank;
  for ( int i = 0; i < aggregates.size(); ++i )
    aggregateRank.insert( aggregates.at( i ), i );
  const double inputRho = orderCorrelation( inputAggregates, aggregateRank );
  qInfo( "input sorted by tract: %d rows, %d aggregates, Spearman rho of position vs aggregate %.4f", input.rows.size(), aggregates.size(), inputRho );
  QVERIFY2( inputRho > 0.5, "the sorted input does not correlate with its aggregates: the measure cannot see an order" );

  Table release;
  CHECKED( readRelease( first, release ) );
  const int n = release.rows.size();
  QCOMPARE( qint64( n ), results.value( QStringLiteral( "RELEASED" ) ).toVariant().toLongLong() );
  QVERIFY( n > 1000 );
  // (a) fresh feature ids 1..n in output order.
  int badIds = 0;
  for ( int i = 0; i < n; ++i )
    badIds += release.fids.at( i ) == i + 1 ? 0 : 1;
  QVERIFY2( badIds == 0, qPrintable( QStringLiteral( "%1 of %2 released rows do not have the feature id of their position" ).arg( badIds ).arg( n ) ) );
  // (b) the QIs and aggregate_id only: neither the region id, the input's feature id nor patient_id.
  QStringList fields = release.fieldNames;
  fields.sort();
  QCOMPARE( fields, QStringList( { "age_group", "aggregate_id", "race", "sex" } ) );
  QVERIFY( !release.hasGeometry );
  // (c) the order of the release against the rank of each row's aggregate.
  const auto aggregatesOf = []( const Table &t ) {
    QVector<QString> column;
    for ( const QStringList &row : t.rows )
      column << row.at( 0 );
    return column;
  };
  const double releaseRho = orderCorrelation( aggregatesOf( release ), aggregateRank );
  qInfo( "release: %d rows, Spearman rho of position vs aggregate %.4f (random: about +-%.4f)", n, releaseRho, 1.0 / std::sqrt( double( n ) ) );
  QVERIFY2( std::fabs( releaseRho ) < 0.03, qPrintable( QStringLiteral( "the release order follows the input order: rho %1" ).arg( releaseRho ) ) );

  // (d) the same seed repeats the content (the same rows as a multiset), never the order.
  const auto releaseWith = [&]( const QStringList &extra, const QString &name, Table &t ) {
    const QString dir = mTmp.filePath( name );
    QVERIFY( QDir().mkpath( dir ) );
    QJsonObject doc;
    ProcessResult run;
    CHECKED( mQgis.runJson( QStringLiteral( "vbas:anonymize" ), anonymizeParams( mSorted, dir, extra ), dir, doc, run, kRunTimeoutMs ) );
    QCOMPARE( QString::number( static_cast<qint64>( doc.value( "results" ).toObject().value( "SEED" ).toDouble() ) ), QString::number( seed ) );
    CHECKED( readRelease( dir, t ) );
  };
  const QString sameSeed = QStringLiteral( "SEED=%1" ).arg( seed );
  Table again;
  CHECKED( releaseWith( { sameSeed }, QStringLiteral( "order-same-seed" ), again ) );
  QCOMPARE( again.rows.size(), n );
  int samePlace = 0;
  for ( int i = 0; i < n; ++i )
    samePlace += again.rows.at( i ) == release.rows.at( i ) ? 1 : 0;
  qInfo( "seed %lld again: %d of %d rows with the same values in the same place", seed, samePlace, n );
  QVERIFY2( samePlace < n / 10, "SEED given again repeated the order of the release" );
  QVector<QStringList> sortedFirst = release.rows, sortedAgain = again.rows;
  std::sort( sortedFirst.begin(), sortedFirst.end() );
  std::sort( sortedAgain.begin(), sortedAgain.end() );
  QVERIFY2( sortedAgain == sortedFirst, "the same SEED released other rows" );

  // (e) the same through the shuffle's scratch files (1 MB in memory; the release's rows take more,
  // with insurance and diagnosis named).
  Table spilled;
  CHECKED( releaseWith( { sameSeed, QStringLiteral( "SHUFFLE_MEMORY_MB=1" ), QStringLiteral( "RELEASE_FIELDS=insurance;diagnosis" ) }, QStringLiteral( "order-spilled" ), spilled ) );
  const double spilledRho = orderCorrelation( aggregatesOf( spilled ), aggregateRank );
  qInfo( "release shuffled through scratch files: %d rows, Spearman rho of position vs aggregate %.4f", spilled.rows.size(), spilledRho );
  QCOMPARE( spilled.rows.size(), n );
  QVERIFY2( std::fabs( spilledRho ) < 0.03, qPrintable( QStringLiteral( "the release shuffled through scratch files follows the input order: rho %1" ).arg( spilledRho ) ) );
}

QTEST_GUILESS_MAIN( TestFaults )
#include "test_faults.moc"
