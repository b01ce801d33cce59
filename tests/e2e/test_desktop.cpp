// QGIS desktop opens each algorithm's page of the user guide from its dialog's Help button, and loads the
// outputs styled. The real QGIS desktop (/usr/bin/qgis) runs under Xvfb in an isolated profile with the
// freshly built plugin enabled; desktop_check.py, given with --code, presses the Help button of every
// vbas algorithm's dialog and checks the URL opened, runs vbas:anonymize on the sample layers as the
// Processing toolbox does, checks the loaded layers' renderers and order, saves the map canvas and the
// main window as PNG files, and ends QGIS with its verdict as exit code. This test then looks at the
// URLs the Help buttons opened (help.json): each the file URL of help/algorithms/<name>.html in the
// installed plugin folder, an existing page of the build's help; and at the canvas image: every
// class's fill colour, the aggregates' outlines, the cells' lines and the sites must show; and at the
// walkthrough's screenshots, compared with the shipped ones. The images stay in the build tree
// (their paths are printed) for a human to look at. Xvfb and QGIS run in process groups of their own
// that are killed when the test ends, whatever happens, and die with the test if it is killed.
#include "tests/e2e/e2e_util.h"

#include <QImage>
#include <QJsonArray>
#include <QStandardPaths>
#include <QThread>

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace
{

const QString kOut = ctestPath( "VBAS_DESKTOP_OUT" );
const int kQgisTimeoutMs = 300000;

//! A child process in its own process group, which dies with this test and is killed, whole group, when this goes.
class Child : public QProcess
{
  public:
    ~Child() override
    {
      if ( state() == NotRunning )
        return;
      ::kill( -static_cast<pid_t>( processId() ), SIGKILL );
      waitForFinished( 10000 );
    }

  protected:
    void setupChildProcess() override
    {
      ::setpgid( 0, 0 );
      ::prctl( PR_SET_PDEATHSIG, SIGKILL );
    }
};

/**
 * Xvfb makes /tmp/.X11-unix for its socket whatever TMPDIR says, and leaves the folder (and, killed,
 * its socket). Where the test made the folder, no other X server uses it: this removes it, socket and
 * all, once Xvfb has been killed.
 */
class X11SocketFolder
{
  public:
    ~X11SocketFolder()
    {
      if ( !mExisted )
        QDir( kPath ).removeRecursively();
    }

  private:
    const QString kPath = QStringLiteral( "/tmp/.X11-unix" );
    const bool mExisted = QFileInfo::exists( kPath );
};

//! Starts Xvfb on a display it finds free (-displayfd) and returns that display, ":N".
void startXvfb( Child &xvfb, QString &display )
{
  const QString executable = QStandardPaths::findExecutable( QStringLiteral( "Xvfb" ) );
  QVERIFY2( !executable.isEmpty(), "Xvfb is missing: run .ci/setup" );
  const QString displayFile = kOut + QStringLiteral( "/display" );
  xvfb.start( QStringLiteral( "/bin/sh" ), { QStringLiteral( "-c" ), QStringLiteral( "exec \"$0\" -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3>\"$1\"" ), executable, displayFile } );
  QVERIFY( xvfb.waitForStarted( 10000 ) );
  QElapsedTimer timer;
  timer.start();
  QFile file( displayFile );
  while ( timer.elapsed() < 30000 && xvfb.state() == QProcess::Running )
  {
    if ( file.open( QIODevice::ReadOnly ) && file.readAll().endsWith( '\n' ) )
    {
      file.seek( 0 );
      display = ':' + QString::fromLatin1( file.readAll() ).trimmed();
      return;
    }
    file.close();
    QThread::msleep( 100 );
  }
  QFAIL( qPrintable( "Xvfb did not start: " + e2e::tail( xvfb.readAllStandardError() ) ) );
}

//! The colour of a JSON value such as "#1d91c0".
QColor colour( const QJsonValue &value )
{
  return QColor( value.toString() );
}

//! The pixels of image within distance (summed over red, green and blue) of colour.
int pixelsNear( const QImage &image, const QColor &colour, int distance )
{
  int count = 0;
  for ( int y = 0; y < image.height(); ++y )
  {
    const QRgb *line = reinterpret_cast<const QRgb *>( image.constScanLine( y ) );
    for ( int x = 0; x < image.width(); ++x )
      count += std::abs( qRed( line[x] ) - colour.red() ) + std::abs( qGreen( line[x] ) - colour.green() ) + std::abs( qBlue( line[x] ) - colour.blue() ) <= distance ? 1 : 0;
  }
  return count;
}

//! The walkthrough's screenshots (docs/quickstart.md), as desktop_check.py's first_run saves them and as docs/images/ ships them.
const QStringList kWalkthroughImages { QStringLiteral( "walkthrough-dialog.png" ), QStringLiteral( "walkthrough-map.png" ) };
//! The QGIS whose desktop took the shipped screenshots: other versions draw their widgets otherwise, and are compared by size only.
const QString kWalkthroughQgis = QStringLiteral( "3.22" );

//! image as a small grey picture, its layout without its details: a 64 x 40 grid of average greys.
QImage layout( const QImage &image )
{
  return image.convertToFormat( QImage::Format_Grayscale8 ).scaled( 64, 40, Qt::IgnoreAspectRatio, Qt::SmoothTransformation );
}

//! The mean difference (0 to 255) between two layouts of the same size.
double layoutDifference( const QImage &a, const QImage &b )
{
  double sum = 0;
  for ( int y = 0; y < a.height(); ++y )
    for ( int x = 0; x < a.width(); ++x )
      sum += std::abs( a.constScanLine( y )[x] - b.constScanLine( y )[x] );
  return sum / ( a.width() * a.height() );
}

} // namespace

class TestDesktop : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void outputsLoadStyled();
    void walkthroughImagesAsShipped();
    void helpButtonsOpenTheirPages();

  private:
    e2e::QgisProcess mQgis;
};

void TestDesktop::initTestCase()
{
  QVERIFY( QDir( kOut ).removeRecursively() );
  QVERIFY( QDir().mkpath( kOut ) );
  CHECKED( mQgis.setUp( { QStringLiteral( "vbas:anonymize" ) } ) );
}

void TestDesktop::outputsLoadStyled()
{
  const X11SocketFolder socketFolder; // destroyed after Xvfb is killed
  Child xvfb;
  QString display;
  CHECKED( startXvfb( xvfb, display ) );

  QProcessEnvironment environment = mQgis.environment();
  environment.remove( QStringLiteral( "QT_QPA_PLATFORM" ) );
  environment.insert( QStringLiteral( "DISPLAY" ), display );
  environment.insert( QStringLiteral( "VBAS_DESKTOP_OUT" ), kOut );
  environment.insert( QStringLiteral( "VBAS_SAMPLE_DIR" ), ctestPath( "VBAS_SAMPLE_DIR" ) );
  Child qgis;
  qgis.setProcessEnvironment( environment );
  qgis.setWorkingDirectory( kOut );
  QElapsedTimer timer;
  timer.start();
  qgis.start( QStringLiteral( "/usr/bin/qgis" ), { QStringLiteral( "--nologo" ), QStringLiteral( "--code" ), ctestPath( "VBAS_SOURCE_DIR" ) + QStringLiteral( "/tests/e2e/desktop_check.py" ) } );
  QVERIFY2( qgis.waitForStarted( 30000 ), "cannot start /usr/bin/qgis" );
  e2e::ProcessResult r;
  CHECKED( e2e::QgisProcess::finish( qgis, QStringLiteral( "QGIS desktop" ), timer, kQgisTimeoutMs, r ) );
  QVERIFY2( r.exitCode == 0, qPrintable( QStringLiteral( "QGIS desktop: %1; stderr:\n%2" ).arg( r.ending(), e2e::tail( r.err ) ) ) );

  const QString canvasPath = kOut + QStringLiteral( "/canvas.png" );
  qInfo( "The map canvas: %s, the main window: %s/window.png", qPrintable( canvasPath ), qPrintable( kOut ) );
  const QImage canvas = QImage( canvasPath ).convertToFormat( QImage::Format_RGB32 );
  QVERIFY2( !canvas.isNull(), qPrintable( canvasPath ) );
  QVERIFY( !QImage( kOut + QStringLiteral( "/window.png" ) ).isNull() );
  QFile stylesFile( kOut + QStringLiteral( "/styles.json" ) );
  QVERIFY( stylesFile.open( QIODevice::ReadOnly ) );
  const QJsonObject styles = QJsonDocument::fromJson( stylesFile.readAll() ).object();

  // Each class fills whole aggregates (exact colour); lines and markers are antialiased (near colour).
  const int pixels = canvas.width() * canvas.height();
  const QJsonArray classes = styles.value( QStringLiteral( "classes" ) ).toArray();
  QCOMPARE( classes.size(), 5 );
  for ( const QJsonValue &fill : classes )
  {
    const int count = pixelsNear( canvas, colour( fill ), 0 );
    QVERIFY2( count > pixels / 200, qPrintable( QStringLiteral( "class colour %1: %2 of %3 pixels" ).arg( fill.toString() ).arg( count ).arg( pixels ) ) );
  }
  for ( const QString &line : { QStringLiteral( "outline" ), QStringLiteral( "cells" ), QStringLiteral( "sites" ) } )
  {
    const int count = pixelsNear( canvas, colour( styles.value( line ) ), 60 );
    QVERIFY2( count > pixels / 2000, qPrintable( QStringLiteral( "%1 colour %2: %3 of %4 pixels" ).arg( line, styles.value( line ).toString() ).arg( count ).arg( pixels ) ) );
  }
}

void TestDesktop::walkthroughImagesAsShipped()
{
  // The walkthrough's screenshots, taken from the real dialog and window by desktop_check.py's
  // first_run, show what the shipped ones (docs/images/) show: the same size, and on the QGIS that took
  // those, the same layout. VBAS_UPDATE_WALKTHROUGH=1 copies the new ones over the shipped ones instead.
  const QString shipped = ctestPath( "VBAS_SOURCE_DIR" ) + QStringLiteral( "/docs/images/" );
  for ( const QString &name : kWalkthroughImages )
  {
    const QImage made( kOut + '/' + name );
    QVERIFY2( !made.isNull(), qPrintable( kOut + '/' + name ) );
    if ( qEnvironmentVariableIsSet( "VBAS_UPDATE_WALKTHROUGH" ) )
    {
      QFile::remove( shipped + name );
      QVERIFY( QFile::copy( kOut + '/' + name, shipped + name ) );
      continue;
    }
    const QImage expected( shipped + name );
    QVERIFY2( !expected.isNull(), qPrintable( shipped + name ) );
    QCOMPARE( made.size(), expected.size() );
    if ( QStringLiteral( VBAS_QGIS_VERSION ).startsWith( kWalkthroughQgis + '.' ) )
    {
      const double difference = layoutDifference( layout( made ), layout( expected ) );
      QVERIFY2( difference < 2,
                qPrintable( QStringLiteral( "%1 differs from docs/images/%1 by %2 greys on average: look at it, and update the shipped one if it is right" ).arg( name ).arg( difference ) ) );
    }
  }
}

void TestDesktop::helpButtonsOpenTheirPages()
{
  QFile file( kOut + QStringLiteral( "/help.json" ) );
  QVERIFY2( file.open( QIODevice::ReadOnly ), "help.json is missing: QGIS desktop did not press the Help buttons" );
  const QJsonObject help = QJsonDocument::fromJson( file.readAll() ).object();
  const QString installed = mQgis.environment().value( QStringLiteral( "QGIS_CUSTOM_CONFIG_PATH" ) ) + QStringLiteral( "/profiles/default/python/plugins/vbas/help" );
  QCOMPARE( help.value( QStringLiteral( "help" ) ).toString(), installed );
  const QJsonObject urls = help.value( QStringLiteral( "urls" ) ).toObject();
  const QStringList names = { "anonymize", "checkanonymity", "compare", "estimatesitecount", "evaluate", "generalize", "lpgeomask", "placesites", "voronoiaggregate" };
  QStringList ids;
  for ( const QString &name : names )
    ids << QStringLiteral( "vbas:" ) + name;
  QCOMPARE( urls.keys(), ids );
  for ( const QString &name : names )
  {
    const QUrl url( urls.value( QStringLiteral( "vbas:" ) + name ).toString() );
    const QString page = QStringLiteral( "/algorithms/%1.html" ).arg( name );
    QVERIFY2( url.isLocalFile() && url.toLocalFile() == installed + page, qPrintable( name + QStringLiteral( ": " ) + url.toString() ) );
    const QFileInfo opened( url.toLocalFile() );
    QVERIFY2( opened.isFile() && opened.canonicalFilePath() == QFileInfo( ctestPath( "VBAS_PLUGIN_DIR" ) + QStringLiteral( "/help" ) + page ).canonicalFilePath(), qPrintable( url.toString() ) );
  }
}

QTEST_GUILESS_MAIN( TestDesktop )
#include "test_desktop.moc"
