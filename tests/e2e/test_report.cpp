// The HTML reports as a browser renders them: vbas:anonymize and vbas:compare write their reports of
// the sample layers through qgis_process, headless Chromium (Debian's package) takes a screenshot, and
// the screenshot must show the maps and the histogram, and the frontier chart, in their colours. A
// copy of each report without its drawings must fail the same check, so the check can fail.
#include "tests/e2e/e2e_util.h"

#include <QImage>
#include <QRegularExpression>

using namespace e2e;

namespace
{

//! Pixels of a screenshot in each colour of a drawing (exact RGB: the fills are flat).
struct Drawn
{
    int releasedMap = 0; //!< the released map's blue ramp, but its lightest class
    int riskMap = 0;     //!< the risk map's reds, but its lightest class
    int marks = 0;       //!< the orange marks of suppressed records
    int bars = 0;        //!< the histogram's released and suppressed bars

    QString describe() const { return QStringLiteral( "released map %1 px, risk map %2 px, marks %3 px, bars %4 px" ).arg( releasedMap ).arg( riskMap ).arg( marks ).arg( bars ); }
};

Drawn count( const QImage &image )
{
  const QSet<QRgb> blues { qRgb( 0xbd, 0xd7, 0xe7 ), qRgb( 0x6b, 0xae, 0xd6 ), qRgb( 0x31, 0x82, 0xbd ), qRgb( 0x08, 0x51, 0x9c ) };
  const QSet<QRgb> reds { qRgb( 0xfc, 0xbb, 0xa1 ), qRgb( 0xfb, 0x6a, 0x4a ), qRgb( 0xcb, 0x18, 0x1d ), qRgb( 0x67, 0x00, 0x0d ) };
  const QSet<QRgb> bars { qRgb( 0x75, 0x6b, 0xb1 ), qRgb( 0xde, 0x2d, 0x26 ) };
  Drawn d;
  for ( int y = 0; y < image.height(); ++y )
    for ( int x = 0; x < image.width(); ++x )
    {
      const QRgb p = image.pixel( x, y ) | 0xff000000;
      d.releasedMap += blues.contains( p );
      d.riskMap += reds.contains( p );
      d.marks += p == qRgb( 0xff, 0x7f, 0x00 );
      d.bars += bars.contains( p );
    }
  return d;
}

//! Pixels of image in exactly the colour rgb.
int pixels( const QImage &image, QRgb rgb )
{
  int n = 0;
  for ( int y = 0; y < image.height(); ++y )
    for ( int x = 0; x < image.width(); ++x )
      n += ( image.pixel( x, y ) | 0xff000000 ) == ( rgb | 0xff000000 );
  return n;
}

//! The frontier chart's colours on a screenshot: the frontier (line and points), the other candidates, the baselines' squares, the recommendation's ring.
struct Chart
{
    int front = 0;
    int others = 0;
    int baselines = 0;
    int ring = 0;

    explicit Chart( const QImage &image )
      : front( pixels( image, qRgb( 0x3c, 0x9a, 0x5f ) ) )
      , others( pixels( image, qRgb( 0x2b, 0x6f, 0x8e ) ) )
      , baselines( pixels( image, qRgb( 0xbb, 0xbb, 0xbb ) ) )
      , ring( pixels( image, qRgb( 0xcc, 0x00, 0x00 ) ) )
    {
    }
    QString describe() const { return QStringLiteral( "frontier %1 px, other candidates %2 px, baselines %3 px, ring %4 px" ).arg( front ).arg( others ).arg( baselines ).arg( ring ); }
};

//! The sample layers' regions, records and QIs, and K=5.
QStringList sampleAtK5()
{
  const QString dir = ctestPath( "VBAS_SAMPLE_DIR" );
  return { QStringLiteral( "REGIONS=%1/ny8_tracts.gpkg" ).arg( dir ),
           QStringLiteral( "REGION_ID=AREAKEY" ),
           QStringLiteral( "RECORDS=%1/patients.gpkg" ).arg( dir ),
           QStringLiteral( "RECORD_REGION=tract_id" ),
           QStringLiteral( "QI_FIELDS=age_group" ),
           QStringLiteral( "QI_FIELDS=sex" ),
           QStringLiteral( "QI_FIELDS=race" ),
           QStringLiteral( "K=5" ) };
}

//! html with every SVG drawing removed, written beside it as bare.html: its path.
QString withoutDrawings( const QString &html, const QString &dir )
{
  QString bare = html;
  bare.remove( QRegularExpression( QStringLiteral( "<svg.*?</svg>" ), QRegularExpression::DotMatchesEverythingOption ) );
  const QString path = dir + "/bare.html";
  QFile out( path );
  if ( out.open( QIODevice::WriteOnly ) )
    out.write( bare.toUtf8() );
  return path;
}

} // namespace

class TestReport : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void reportRendersMapsAndHistogram();
    void comparisonRendersTheFrontier();

  private:
    //! Chromium's screenshot of html.
    void screenshot( const QString &html, const QString &png );

    QgisProcess mQgis;
    QTemporaryDir mOut;
};

void TestReport::initTestCase()
{
  QVERIFY2( QFileInfo::exists( QStringLiteral( VBAS_CHROMIUM ) ), "Chromium is missing: .ci/setup installs the chromium package" );
  CHECKED( mQgis.setUp( { QStringLiteral( "vbas:anonymize" ), QStringLiteral( "vbas:compare" ) } ) );
}

void TestReport::screenshot( const QString &html, const QString &png )
{
  QProcess chromium;
  chromium.start( QStringLiteral( VBAS_CHROMIUM ), { QStringLiteral( "--headless=new" ), QStringLiteral( "--no-sandbox" ), QStringLiteral( "--disable-gpu" ), QStringLiteral( "--hide-scrollbars" ),
                                                     QStringLiteral( "--user-data-dir=" ) + mOut.filePath( QStringLiteral( "chromium-profile" ) ), QStringLiteral( "--window-size=1100,4400" ),
                                                     QStringLiteral( "--screenshot=" ) + png, QUrl::fromLocalFile( html ).toString() } );
  QVERIFY2( chromium.waitForFinished( 120000 ), "Chromium did not finish" );
  QVERIFY2( QFileInfo::exists( png ), qPrintable( QStringLiteral( "no screenshot; Chromium said:\n" ) + tail( chromium.readAllStandardError() ) ) );
}

void TestReport::reportRendersMapsAndHistogram()
{
  const QString dir = mOut.path();
  QJsonObject document;
  ProcessResult r;
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:anonymize" ),
                          sampleAtK5()
                            + QStringList { QStringLiteral( "SENSITIVE_FIELD=diagnosis" ), QStringLiteral( "SEED=1" ), QStringLiteral( "SITE_POINTS=" ) + dir + "/sites.gpkg",
                                            QStringLiteral( "AGGREGATED=" ) + dir + "/aggregated.gpkg", QStringLiteral( "LOOKUP=" ) + dir + "/lookup.gpkg",
                                            QStringLiteral( "ANONYMIZED=" ) + dir + "/anonymized.gpkg", QStringLiteral( "VORONOI=" ) + dir + "/voronoi.gpkg",
                                            QStringLiteral( "EVALUATION=" ) + dir + "/evaluation.csv", QStringLiteral( "REPORT=" ) + dir + "/report.html" },
                          dir, document, r ) );
  const QString report = document.value( QStringLiteral( "results" ) ).toObject().value( QStringLiteral( "REPORT" ) ).toString();
  QCOMPARE( report, dir + "/report.html" );

  const QString png = ctestPath( "VBAS_SCREENSHOT_DIR" ) + QStringLiteral( "/report-screenshot.png" );
  QFile::remove( png );
  CHECKED( screenshot( report, png ) );
  qInfo( "screenshot of the report: %s", qPrintable( png ) );
  const Drawn drawn = count( QImage( png ) );
  qInfo( "%s", qPrintable( drawn.describe() ) );
  // The maps are ~620 px wide: each shows tens of thousands of pixels of its ramp; the histogram's
  // bars thousands; the marks of the 15 aggregates' suppressed records hundreds.
  QVERIFY2( drawn.releasedMap > 20000 && drawn.riskMap > 20000 && drawn.marks > 300 && drawn.bars > 3000, qPrintable( drawn.describe() ) );

  // The same page without its drawings fails the check.
  QFile file( report );
  QVERIFY( file.open( QIODevice::ReadOnly ) );
  QString html = QString::fromUtf8( file.readAll() );
  // The page's first visible line says it is for the custodian only.
  QString visible = html.mid( html.indexOf( QStringLiteral( "<body>" ) ) );
  visible.remove( QRegularExpression( QStringLiteral( "<[^>]*>" ) ) );
  QVERIFY2( visible.trimmed().startsWith( QStringLiteral( "For the data custodian only: not for publication." ) ), qPrintable( visible.left( 200 ) ) );
  CHECKED( screenshot( withoutDrawings( html, dir ), dir + "/bare.png" ) );
  const Drawn none = count( QImage( dir + "/bare.png" ) );
  QVERIFY2( none.releasedMap < 2000 && none.riskMap < 2000 && none.bars < 1000, qPrintable( none.describe() ) );
}

void TestReport::comparisonRendersTheFrontier()
{
  // The sample at k = 5 and 10 (the paper's method, ADC, generalization with local suppression; the
  // tracts, the counties, no geography): the frontier drawn, the others, the baselines' squares, the ring.
  QTemporaryDir out;
  const QString dir = out.path();
  QJsonObject document;
  ProcessResult r;
  CHECKED( mQgis.runJson( QStringLiteral( "vbas:compare" ),
                          sampleAtK5()
                            + QStringList { QStringLiteral( "K_VALUES=5,10" ), QStringLiteral( "METHODS=0,1,4" ), QStringLiteral( "BASELINES=0,2,4" ), QStringLiteral( "CROP_LENGTH=5" ),
                                            QStringLiteral( "CANDIDATES=" ) + dir + "/candidates.csv", QStringLiteral( "REPORT=" ) + dir + "/comparison.html" },
                          dir, document, r ) );
  const QString report = dir + "/comparison.html";
  const QString png = ctestPath( "VBAS_SCREENSHOT_DIR" ) + QStringLiteral( "/comparison-screenshot.png" );
  QFile::remove( png );
  CHECKED( screenshot( report, png ) );
  qInfo( "screenshot of the comparison: %s", qPrintable( png ) );
  const Chart chart( ( QImage( png ) ) );
  qInfo( "%s", qPrintable( chart.describe() ) );
  // 12 points of ~80 px (circles r = 5, squares 9 x 9), the frontier's line, one ring of r = 10.
  QVERIFY2( chart.front > 150 && chart.others > 150 && chart.ring > 30, qPrintable( chart.describe() ) );

  // Without the chart, none of its colours but the baselines' grey (the tables' borders use it too).
  QFile file( report );
  QVERIFY( file.open( QIODevice::ReadOnly ) );
  CHECKED( screenshot( withoutDrawings( QString::fromUtf8( file.readAll() ), dir ), dir + "/bare.png" ) );
  const Chart none( ( QImage( dir + "/bare.png" ) ) );
  QVERIFY2( none.front < 20 && none.others < 20 && none.ring < 5 && chart.baselines - none.baselines > 150, qPrintable( none.describe() ) );
}

QTEST_GUILESS_MAIN( TestReport )
#include "test_report.moc"
