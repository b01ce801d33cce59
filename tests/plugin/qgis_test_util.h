// What the QGIS-level tests share: QGIS with the vbas provider, a feedback that records what an
// algorithm reports, the 3 x 3 grid of regions, and running an algorithm through
// QgsProcessingAlgorithm::run.
#pragma once

#include "plugin/provider/vbasprovider.h"
#include "tests/shared/checked.h"
#include "tests/shared/ctest_path.h"

#include <qgsapplication.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>
#include <qgsprocessingregistry.h>
#include <qgsprocessingutils.h>
#include <qgsvectorfilewriter.h>
#include <qgsvectorlayer.h>

#include <QtTest>

#include <functional>
#include <limits>
#include <memory>

namespace vbastest
{

//! Collects what an algorithm reports; onInfo, if set, sees every info message as it comes.
class Feedback : public QgsProcessingFeedback
{
  public:
    void pushInfo( const QString &info ) override
    {
      messages << info;
      if ( onInfo )
        onInfo( info );
    }
    void pushWarning( const QString &warning ) override { warnings << warning; }
    void reportError( const QString &error, bool ) override { errors << error; }
    bool saw( const QString &text ) const { return ( messages + warnings ).join( '\n' ).contains( text ); }
    bool warned( const QString &text ) const { return warnings.join( '\n' ).contains( text ); }
    QString error() const { return errors.join( ' ' ); }
    QStringList messages;
    QStringList warnings;
    QStringList errors;
    std::function<void( const QString & )> onInfo;
};

//! QGIS with the vbas provider registered (initTestCase).
inline void initQgisWithProvider()
{
  QgsApplication::init();
  QgsApplication::setPrefixPath( QStringLiteral( "/usr" ), true ); // Debian's QGIS: its data providers (delimited text, PostgreSQL, ...)
  QgsApplication::initQgis();
  QgsApplication::processingRegistry()->addProvider( new VbasProvider( ctestPath( "VBAS_PLUGIN_DIR" ) ) );
}

/**
 * Regions r<col><row>: a 3 x 3 grid of unit squares (scaled by cellSize) in UTM 18N, col and row
 * 0..2, so region (c, r) has its centroid at (c + 0.5, r + 0.5); every region has population 1.
 */
inline std::unique_ptr<QgsVectorLayer> grid( const QString &crs = QStringLiteral( "EPSG:32618" ), double cellSize = 1 )
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "Polygon?crs=%1&field=id:string&field=pop:integer" ).arg( crs ), QStringLiteral( "regions" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( int c = 0; c < 3; ++c )
  {
    for ( int r = 0; r < 3; ++r )
    {
      QgsFeature f( layer->fields() );
      f.setAttributes( QgsAttributes() << QStringLiteral( "r%1%2" ).arg( c ).arg( r ) << 1 );
      f.setGeometry( QgsGeometry::fromRect( QgsRectangle( c * cellSize, r * cellSize, ( c + 1 ) * cellSize, ( r + 1 ) * cellSize ) ) );
      features << f;
    }
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! Sites 1 at (0.5, 1.5) and 2 at (2.5, 1.5) on the grid(): aggregate 1 is columns 0 and 1 (column 1 is equidistant and goes to the lower site), aggregate 2 column 2.
inline std::unique_ptr<QgsVectorLayer> twoSites()
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "Point?crs=EPSG:32618&field=site_id:integer" ), QStringLiteral( "sites" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( const auto &[id, x] : { std::pair<int, double> { 1, 0.5 }, { 2, 2.5 } } )
  {
    QgsFeature f( layer->fields() );
    f.setAttributes( QgsAttributes() << id );
    f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( x, 1.5 ) ) );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! A memory table of the given fields (memory-provider URI, e.g. "field=region:string") and rows.
inline std::unique_ptr<QgsVectorLayer> table( const QString &fields, const QList<QgsAttributes> &rows )
{
  auto layer = std::make_unique<QgsVectorLayer>( QStringLiteral( "None?" ) + fields, QStringLiteral( "records" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( const QgsAttributes &row : rows )
  {
    QgsFeature f( layer->fields() );
    f.setAttributes( row );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! The same, with rows written as brace lists: { "r00", "F", 1 }.
inline std::unique_ptr<QgsVectorLayer> table( const QString &fields, const QList<QVariantList> &rows )
{
  QList<QgsAttributes> attributes;
  for ( const QVariantList &row : rows )
    attributes << QgsAttributes( row.toVector() );
  return table( fields, attributes );
}

//! Writes layer to a file (GeoPackage, CSV, ...) named path, as layer name name, with GDAL's layerOptions.
inline void save( QgsVectorLayer *layer, const QString &path, const QString &name, const QStringList &layerOptions = QStringList() )
{
  QgsVectorFileWriter::SaveVectorOptions options;
  options.driverName = QgsVectorFileWriter::driverForExtension( QFileInfo( path ).suffix() );
  options.layerName = name;
  options.layerOptions = layerOptions;
  QString error;
  QCOMPARE( QgsVectorFileWriter::writeAsVectorFormatV3( layer, path, QgsCoordinateTransformContext(), options, &error ), QgsVectorFileWriter::NoError );
}

//! Every entry of a folder, hidden ones included, sorted.
inline QStringList entries( const QString &folder )
{
  QStringList names = QDir( folder ).entryList( QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot );
  names.sort();
  return names;
}

//! Runs algorithm id; records a test failure unless it succeeds exactly when expectOk.
inline QVariantMap run( const QString &id, const QVariantMap &parameters, QgsProcessingContext &context, bool expectOk, Feedback *feedback = nullptr )
{
  const QgsProcessingAlgorithm *alg = QgsApplication::processingRegistry()->algorithmById( id );
  if ( !alg )
  {
    [&] { QFAIL( qPrintable( QStringLiteral( "no algorithm %1" ).arg( id ) ) ); }();
    return {};
  }
  Feedback own;
  Feedback *f = feedback ? feedback : &own;
  bool ok = false;
  const QVariantMap results = alg->run( parameters, context, f, &ok );
  if ( ok != expectOk )
    qWarning() << id << "errors:" << f->errors;
  [&] { QCOMPARE( ok, expectOk ); }();
  return results;
}

//! The errors of a run of id that must be refused, one a line.
inline QString refusal( const QString &id, const QVariantMap &parameters )
{
  QgsProcessingContext context;
  Feedback feedback;
  run( id, parameters, context, false, &feedback );
  return feedback.errors.join( '\n' );
}

//! The layer an algorithm returned for output name.
inline QgsVectorLayer *output( const QVariantMap &results, const QString &name, QgsProcessingContext &context )
{
  return qobject_cast<QgsVectorLayer *>( QgsProcessingUtils::mapLayerFromString( results.value( name ).toString(), context ) );
}

//! Calls visit with every feature of the layer an algorithm returned for output name; false when there is no such layer.
inline bool forEachFeature( const QVariantMap &results, const QString &name, QgsProcessingContext &context, const std::function<void( const QgsFeature & )> &visit )
{
  QgsVectorLayer *layer = output( results, name, context );
  if ( !layer )
    return false;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
    visit( f );
  return true;
}

inline QVariant layerValue( QgsVectorLayer *layer )
{
  return QVariant::fromValue( layer );
}

//! Regions by regionId, records by recordRegion, the QIs, and every output temporary (an algorithm ignores the outputs it does not declare).
inline QVariantMap inputParameters( QgsVectorLayer *regions, const QString &regionId, QgsVectorLayer *records, const QString &recordRegion, const QStringList &qis )
{
  QVariantMap p;
  p.insert( QStringLiteral( "REGIONS" ), layerValue( regions ) );
  p.insert( QStringLiteral( "REGION_ID" ), regionId );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( records ) );
  p.insert( QStringLiteral( "RECORD_REGION" ), recordRegion );
  p.insert( QStringLiteral( "QI_FIELDS" ), qis );
  for ( const char *sink : { "SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI", "EVALUATION" } )
    p.insert( sink, QgsProcessing::TEMPORARY_OUTPUT );
  return p;
}

/**
 * vbas:estimatesitecount on records read by recordRegion and qis, twice: as given, where the log says
 * reader, and forced through QGIS by a feature limit. Each run's outcome into outcomes: its refusal,
 * then its line "Read ... record rows" (docs/preparing-data.md, "How the records are read").
 */
inline void readBothWays( QgsVectorLayer *regions, QgsVectorLayer *records, const QString &recordRegion, const QStringList &qis, const QString &reader, bool ok, QStringList &outcomes )
{
  for ( const bool limited : { false, true } )
  {
    QVariantMap p = inputParameters( regions, QStringLiteral( "id" ), records, recordRegion, qis );
    const QString source = records->providerType() == QLatin1String( "postgres" ) ? QStringLiteral( "postgres://" ) + records->source() : records->source();
    if ( limited )
      p.insert( QStringLiteral( "RECORDS" ), QVariant::fromValue( QgsProcessingFeatureSourceDefinition( source, false, 1000 ) ) );
    Feedback feedback;
    QgsProcessingContext context; // holds the layer of the limited input until the test's end, before QGIS exits
    run( QStringLiteral( "vbas:estimatesitecount" ), p, context, ok, &feedback );
    QVERIFY2( feedback.saw( limited ? QStringLiteral( "The records are read through QGIS: the input has a feature limit." ) : reader ), qPrintable( feedback.messages.join( '\n' ) ) );
    outcomes << feedback.error();
    for ( const QString &message : std::as_const( feedback.messages ) )
      if ( message.startsWith( QStringLiteral( "Read " ) ) )
        outcomes.last() += message;
  }
}

//! The runs on a grid(): regions by id, records by region, the QI sex.
inline QVariantMap gridParameters( QgsVectorLayer *regions, QgsVectorLayer *records )
{
  return inputParameters( regions, QStringLiteral( "id" ), records, QStringLiteral( "region" ), { QStringLiteral( "sex" ) } );
}

//! vbas:anonymize on the sample layers as sample_layers/run_sample.sh runs it (QIs age_group, sex, race; K = 5), with SEED = 1.
inline QVariantMap sampleParameters( QgsVectorLayer *tracts, QgsVectorLayer *patients )
{
  QVariantMap p = inputParameters( tracts, QStringLiteral( "AREAKEY" ), patients, QStringLiteral( "tract_id" ), { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) } );
  p.insert( QStringLiteral( "K" ), 5 );
  p.insert( QStringLiteral( "SEED" ), 1 );
  return p;
}

//! The values a writer of the release is handed, each to be stored as QGIS's own writer stores it or refused as it refuses it: NULLs, text that looks like a NULL, an escape or a number, control characters, NUL, non-ASCII text, 300 characters and 3 MB, whole numbers at their types' limits, reals at the edges of a double, infinities and NaN, and values of other types.
inline QList<QVariant> writerValues()
{
  return { QVariant(),
           QVariant( QVariant::String ),
           QString(),
           QStringLiteral( "" ),
           QStringLiteral( "NULL" ),
           QStringLiteral( "\\N" ),
           QStringLiteral( "\\." ),
           QStringLiteral( "a\tb\nc\rd\\e" ),
           QString::fromUtf8( "a\0b", 3 ),
           QStringLiteral( "é ü 中文 🙂" ),
           QStringLiteral( "it's \"quoted\"" ),
           QStringLiteral( "12" ),
           QStringLiteral( " 7 " ),
           QStringLiteral( "1.5" ),
           QStringLiteral( "1e3" ),
           QStringLiteral( "NaN" ),
           QStringLiteral( "-Infinity" ),
           QStringLiteral( "abcdef" ),
           QString( 3 << 20, QChar( 'x' ) ), // more than a piece the sink sends at once,
           0,
           -1,
           std::numeric_limits<int>::max(),
           std::numeric_limits<int>::min(),
           static_cast<qlonglong>( 0 ),
           std::numeric_limits<qlonglong>::max(),
           std::numeric_limits<qlonglong>::min(),
           static_cast<qlonglong>( 3000000000LL ),
           std::numeric_limits<uint>::max(),
           true,
           false,
           0.0,
           -0.0,
           0.1,
           0.30000000000000004,
           1.0 / 3,
           1e308,
           -2.5e-300,
           5e-324,
           123456789012345678.0,
           12345678.125,
           std::numeric_limits<double>::infinity(),
           -std::numeric_limits<double>::infinity(),
           std::numeric_limits<double>::quiet_NaN(),
           QDate( 2000, 1, 2 ),
           QByteArray( "bytes" ),
           QString( 300, QChar( 'x' ) ),
           1e300 };
}

} // namespace vbastest
