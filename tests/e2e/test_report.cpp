// The HTML report as a browser renders it: vbas:anonymize writes the report of the
// sample layers through qgis_process, headless Chromium (Debian's package) takes a screenshot, and
// the screenshot must show the maps and the histogram in their colours. A copy of the report without
// its drawings must fail the same check, so the check can fail.
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

} // namespace

class TestReport : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void reportRendersMapsAndHistogram();

  private:
    //! Chromium's screenshot of html.
    void screenshot( const QString &html, const QString &png );

    QgisProcess mQgis;
    QTemporaryDir mOut;
};

void TestReport::initTestCase()
{
  QVERIFY2( QFileInfo::exists( QStringLiteral( VBAS_CHROMIUM ) ), "Chromium is missing: .ci/setup installs the chromium package" );
  CHECKED( mQgis.setUp( { QStringLiteral( "vbas:anonymize" ) } ) );
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
                          { QStringLiteral( "REGIONS=%1/ny8_tracts.gpkg" ).arg( ctestPath( "VBAS_SAMPLE_DIR" ) ), QStringLiteral( "REGION_ID=AREAKEY" ),
                            QStringLiteral( "RECORDS=%1/patients.gpkg" ).arg( ctestPath( "VBAS_SAMPLE_DIR" ) ), QStringLiteral( "RECORD_REGION=tract_id" ), QStringLiteral( "QI_FIELDS=age_group" ),
                            QStringLiteral( "QI_FIELDS=sex" ), QStringLiteral( "QI_FIELDS=race" ), QStringLiteral( "K=5" ), QStringLiteral( "SENSITIVE_FIELD=diagnosis" ), QStringLiteral( "SEED=1" ),
                            QStringLiteral( "SITE_POINTS=" ) + dir + "/sites.gpkg", QStringLiteral( "AGGREGATED=" ) + dir + "/aggregated.gpkg", QStringLiteral( "LOOKUP=" ) + dir + "/lookup.gpkg",
                            QStringLiteral( "ANONYMIZED=" ) + dir + "/anonymized.gpkg", QStringLiteral( "VORONOI=" ) + dir + "/voronoi.gpkg", QStringLiteral( "EVALUATION=" ) + dir + "/evaluation.csv",
                            QStringLiteral( "REPORT=" ) + dir + "/report.html" },
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
  html.remove( QRegularExpression( QStringLiteral( "<svg.*?</svg>" ), QRegularExpression::DotMatchesEverythingOption ) );
  const QString bare = dir + "/bare.html";
  QFile out( bare );
  QVERIFY( out.open( QIODevice::WriteOnly ) );
  out.write( html.toUtf8() );
  out.close();
  CHECKED( screenshot( bare, dir + "/bare.png" ) );
  const Drawn none = count( QImage( dir + "/bare.png" ) );
  QVERIFY2( none.releasedMap < 2000 && none.riskMap < 2000 && none.bars < 1000, qPrintable( none.describe() ) );
}

QTEST_GUILESS_MAIN( TestReport )
#include "test_report.moc"
