// How the outputs look once loaded into a project. vbas:anonymize runs on the sample layers
// with a project, and its layers are loaded as QGIS desktop loads them (processing/gui/Postprocessing.py:
// take the layer from the temporary store, add it to the project, run the details' post-processor).
// AGGREGATED is graduated on released in classes that span the data, with visible outlines; VORONOI is
// outlines only; SITE_POINTS are circles; the tables get no post-processor. REGION_RISK and
// AGGREGATE_METRICS, which vbas:evaluate is about to declare, are checked on hand-made layers. In every
// loading order the sites end above the cells above the fills, and a later loading stays above an
// earlier one. A run without a project registers nothing to load (qgis_process).
#include "tests/plugin/qgis_test_util.h"
#include "plugin/support/vbasqgiscompat.h"
#include "plugin/outputs/vbasstyles.h"

#include <qgsfillsymbollayer.h>
#include <qgsgraduatedsymbolrenderer.h>
#include <qgslayermetadata.h>
#include <qgslayertree.h>
#include <qgsmarkersymbollayer.h>
#include <qgsproject.h>
#include <qgssinglesymbolrenderer.h>
#include <qgssymbol.h>

#include <algorithm>

using vbastest::Feedback;

namespace
{

//! The styled outputs, in the order they stack, top to bottom.
const QStringList kStyled { QStringLiteral( "SITE_POINTS" ), QStringLiteral( "VORONOI" ), QStringLiteral( "AGGREGATED" ), QStringLiteral( "AGGREGATE_METRICS" ), QStringLiteral( "REGION_RISK" ) };

//! A memory layer (uri) with one square, or point, per value of field.
std::unique_ptr<QgsVectorLayer> layerOf( const QString &uri, const QString &field, const QList<double> &values )
{
  auto layer = std::make_unique<QgsVectorLayer>( uri, QStringLiteral( "hand-made" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( int i = 0; i < values.size(); ++i )
  {
    QgsFeature f( layer->fields() );
    f.setAttribute( field, values[i] );
    f.setGeometry( layer->geometryType() == vbasqgis::PointGeometry ? QgsGeometry::fromPointXY( QgsPointXY( i + 0.5, 0.5 ) ) : QgsGeometry::fromRect( QgsRectangle( i, 0, i + 1, 1 ) ) );
    features << f;
  }
  layer->dataProvider()->addFeatures( features );
  return layer;
}

//! A hand-made layer of output name (one of kStyled) with the fields and geometry it has in the plugin; values go to its styled field.
std::unique_ptr<QgsVectorLayer> handMade( const QString &name, const QList<double> &values )
{
  const QString crs = QStringLiteral( "?crs=EPSG:32618" );
  if ( name == QLatin1String( "REGION_RISK" ) )
    return layerOf( "Polygon" + crs + "&field=region_id:string&field=records:integer&field=at_risk:integer&field=risk_share:double", QStringLiteral( "risk_share" ), values );
  if ( name == QLatin1String( "AGGREGATE_METRICS" ) )
    return layerOf( "MultiPolygon" + crs
                      + "&field=aggregate_id:integer&field=regions:integer&field=records:integer&field=released:integer&field=suppressed:integer"
                        "&field=smallest_ec:integer&field=l_diversity:integer&field=t_closeness:double",
                    QStringLiteral( "released" ), values );
  if ( name == QLatin1String( "AGGREGATED" ) )
    return layerOf( "MultiPolygon" + crs + "&field=aggregate_id:integer&field=released:integer", QStringLiteral( "released" ), values );
  if ( name == QLatin1String( "VORONOI" ) )
    return layerOf( "Polygon" + crs + "&field=site_id:integer&field=aggregate_id:integer", QStringLiteral( "site_id" ), values );
  return layerOf( "Point" + crs + "&field=site_id:integer", QStringLiteral( "site_id" ), values );
}

/**
 * Loads the layers ids of context into their projects in that order, as processing/gui/Postprocessing.py
 * does in QGIS 3.22; returns them by output name.
 */
QMap<QString, QgsVectorLayer *> load( QgsProcessingContext &context, const QStringList &ids )
{
  QMap<QString, QgsVectorLayer *> loaded;
  Feedback feedback;
  for ( const QString &id : ids )
  {
    const QgsProcessingContext::LayerDetails details = context.layerToLoadOnCompletionDetails( id );
    QgsMapLayer *layer = QgsProcessingUtils::mapLayerFromString( id, context, true, details.layerTypeHint );
    if ( !layer )
      continue;
    details.setOutputLayerName( layer );
    context.temporaryLayerStore()->takeMapLayer( layer );
    details.project->addMapLayer( layer );
    if ( details.postProcessor() )
      details.postProcessor()->postProcessLayer( layer, context, &feedback );
    loaded.insert( details.outputName, qobject_cast<QgsVectorLayer *>( layer ) );
  }
  return loaded;
}

//! One loading of hand-made layers of names (with values) into project, in that order.
QMap<QString, QgsVectorLayer *> loadHandMade( QgsProject &project, const QStringList &names, const QList<double> &values )
{
  QgsProcessingContext context;
  context.setProject( &project );
  QStringList ids;
  for ( const QString &name : names )
  {
    std::unique_ptr<QgsVectorLayer> layer = handMade( name, values );
    ids << layer->id();
    QgsProcessingContext::LayerDetails details( name, &project, name, QgsProcessingUtils::LayerHint::Vector );
    VbasOutputSchema schema;
    schema.name = name;
    details.setPostProcessor( VbasStyles::postProcessor( schema ).release() ); // as VbasOutputSet::commit
    context.addLayerToLoadOnCompletion( layer->id(), details );
    context.temporaryLayerStore()->addMapLayer( layer.release() );
  }
  return load( context, ids );
}

//! The styled outputs among loaded in project's layer tree, top to bottom.
QStringList stacking( QgsProject &project, const QMap<QString, QgsVectorLayer *> &loaded )
{
  QStringList order;
  for ( QgsLayerTreeLayer *node : project.layerTreeRoot()->findLayers() )
    if ( const QString name = loaded.key( qobject_cast<QgsVectorLayer *>( node->layer() ), QString() ); kStyled.contains( name ) )
      order << name;
  return order;
}

//! What is wrong with the outline of a fill symbol: it must be solid, opaque and at least 0.2 mm wide.
QString outlineProblem( const QgsSymbol *symbol )
{
  const auto *fill = dynamic_cast<const QgsSimpleFillSymbolLayer *>( symbol->symbolLayer( 0 ) );
  if ( !fill )
    return QStringLiteral( "not a simple fill" );
  if ( fill->strokeStyle() != Qt::SolidLine || fill->strokeWidth() < 0.2 || fill->strokeColor().alpha() != 255 )
    return QStringLiteral( "outline style %1, width %2 mm, alpha %3" ).arg( fill->strokeStyle() ).arg( fill->strokeWidth() ).arg( fill->strokeColor().alpha() );
  return QString();
}

/**
 * What is wrong with layer's graduated renderer: it must classify field in classes ranges that are
 * contiguous, none empty, with increasing breaks (the first class may be a single value), that span the
 * layer's values, each with its own colour and an outline.
 */
QString graduatedProblem( const QgsVectorLayer &layer, const QString &field, int classes )
{
  if ( layer.renderer()->type() != QLatin1String( "graduatedSymbol" ) )
    return QStringLiteral( "renderer %1" ).arg( layer.renderer()->type() );
  const auto *renderer = static_cast<const QgsGraduatedSymbolRenderer *>( layer.renderer() );
  const QgsRangeList ranges = renderer->ranges();
  if ( renderer->classAttribute() != field || ranges.size() != classes )
    return QStringLiteral( "%1 classes on %2" ).arg( ranges.size() ).arg( renderer->classAttribute() );
  QSet<QRgb> colours;
  for ( int i = 0; i < ranges.size(); ++i )
  {
    const bool empty = i > 0 ? ranges[i].lowerValue() >= ranges[i].upperValue() : ranges[i].lowerValue() > ranges[i].upperValue(); // the first class holds its lower bound
    if ( empty || ( i > 0 && ranges[i].lowerValue() != ranges[i - 1].upperValue() ) )
      return QStringLiteral( "class %1 is %2" ).arg( i ).arg( ranges[i].label() );
    if ( const QString problem = outlineProblem( ranges[i].symbol() ); !problem.isEmpty() )
      return QStringLiteral( "class %1: %2" ).arg( i ).arg( problem );
    colours.insert( ranges[i].symbol()->color().rgb() );
  }
  QVariant minimum, maximum;
  layer.minimumAndMaximumValue( layer.fields().lookupField( field ), minimum, maximum );
  if ( ranges.first().lowerValue() > minimum.toDouble() || ranges.last().upperValue() < maximum.toDouble() )
    return QStringLiteral( "the classes %1 to %2 miss values %3 to %4" ).arg( ranges.first().lowerValue() ).arg( ranges.last().upperValue() ).arg( minimum.toDouble() ).arg( maximum.toDouble() );
  return colours.size() == classes ? QString() : QStringLiteral( "%1 colours" ).arg( colours.size() );
}

QgsSymbol *singleSymbol( const QgsVectorLayer &layer )
{
  const auto *renderer = dynamic_cast<const QgsSingleSymbolRenderer *>( layer.renderer() );
  return renderer ? renderer->symbol() : nullptr;
}

} // namespace

class TestStyles : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void anonymizeLoadsStyled();
    void regionRiskHasFixedBreaks();
    void aggregateMetricsClassesFollowTheData();
    void stackingDoesNotDependOnLoadingOrder();
    void noProjectNothingToLoad();
};

void TestStyles::initTestCase()
{
  vbastest::initQgisWithProvider();
}

void TestStyles::cleanupTestCase()
{
  QgsApplication::exitQgis();
}

void TestStyles::anonymizeLoadsStyled()
{
  QgsVectorLayer tracts( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  QgsVectorLayer patients( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QgsProject project;
  QgsProcessingContext context;
  context.setProject( &project );
  QVariantMap p = vbastest::sampleParameters( &tracts, &patients );
  for ( QVariant &value : p )
    if ( value.toString() == QgsProcessing::TEMPORARY_OUTPUT )
      value = QVariant::fromValue( QgsProcessingOutputLayerDefinition( QgsProcessing::TEMPORARY_OUTPUT, &project ) );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, context, true );

  const QMap<QString, QgsProcessingContext::LayerDetails> toLoad = context.layersToLoadOnCompletion();
  QCOMPARE( toLoad.size(), 6 );
  const QMap<QString, QgsVectorLayer *> loaded = load( context, toLoad.keys() );
  QCOMPARE( loaded.size(), 6 );
  // Every layer's metadata says who may see it; only the release is for publication.
  for ( auto layer = loaded.constBegin(); layer != loaded.constEnd(); ++layer )
  {
    const QgsLayerMetadata metadata = layer.value()->metadata();
    const bool published = layer.key() == QLatin1String( "ANONYMIZED" );
    QCOMPARE( metadata.rights().join( ' ' ).contains( published ? QStringLiteral( "for publication" ) : QStringLiteral( "for the data custodian only" ) ), true );
    QVERIFY2( metadata.abstract().startsWith( QStringLiteral( "VBAS for QGIS: for " ) ), qPrintable( layer.key() ) );
    QCOMPARE( metadata.keywords( QStringLiteral( "VBAS audience" ) ), QStringList { published ? QStringLiteral( "publication" ) : QStringLiteral( "custodian only" ) } );
  }

  const QString aggregated = graduatedProblem( *loaded[QStringLiteral( "AGGREGATED" )], QStringLiteral( "released" ), 5 );
  QVERIFY2( aggregated.isEmpty(), qPrintable( aggregated ) );

  const QgsSymbol *cell = singleSymbol( *loaded[QStringLiteral( "VORONOI" )] );
  QVERIFY( cell );
  const auto *cellLine = dynamic_cast<const QgsSimpleFillSymbolLayer *>( cell->symbolLayer( 0 ) );
  QVERIFY( cellLine );
  QCOMPARE( cellLine->brushStyle(), Qt::NoBrush );
  QVERIFY( cellLine->strokeStyle() != Qt::NoPen && cellLine->strokeWidth() >= 0.2 );
  const auto *aggregateFill
    = dynamic_cast<const QgsSimpleFillSymbolLayer *>( static_cast<const QgsGraduatedSymbolRenderer *>( loaded[QStringLiteral( "AGGREGATED" )]->renderer() )->sourceSymbol()->symbolLayer( 0 ) );
  QVERIFY( cellLine->strokeColor() != aggregateFill->strokeColor() );

  const QgsSymbol *site = singleSymbol( *loaded[QStringLiteral( "SITE_POINTS" )] );
  QVERIFY( site && site->type() == Qgis::SymbolType::Marker );
  const auto *circle = dynamic_cast<const QgsSimpleMarkerSymbolLayer *>( site->symbolLayer( 0 ) );
  QVERIFY( circle );
  QCOMPARE( circle->shape(), vbasqgis::CircleMarker );
  QVERIFY( circle->size() >= 2.5 && circle->strokeWidth() > 0 );

  QCOMPARE( stacking( project, loaded ), QStringList( { "SITE_POINTS", "VORONOI", "AGGREGATED" } ) );
}

void TestStyles::regionRiskHasFixedBreaks()
{
  QgsProject project;
  const QList<double> shares { 0, 0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 1 };
  QgsVectorLayer *risk = loadHandMade( project, { QStringLiteral( "REGION_RISK" ) }, shares ).value( QStringLiteral( "REGION_RISK" ) );
  const QString problem = graduatedProblem( *risk, QStringLiteral( "risk_share" ), 4 );
  QVERIFY2( problem.isEmpty(), qPrintable( problem ) );
  const QgsRangeList ranges = static_cast<const QgsGraduatedSymbolRenderer *>( risk->renderer() )->ranges();
  QList<double> breaks { ranges.first().lowerValue() };
  for ( const QgsRendererRange &range : ranges )
    breaks << range.upperValue();
  QCOMPARE( breaks, QList<double>( { 0, 0.05, 0.2, 0.5, 1 } ) );
  QCOMPARE( ranges.first().symbol()->color(), QColor( Qt::white ) );
  for ( int i = 1; i < ranges.size(); ++i )
  {
    const QColor lighter = ranges[i - 1].symbol()->color(), darker = ranges[i].symbol()->color();
    QVERIFY( darker.lightness() < lighter.lightness() && darker.red() > darker.green() + 30 );
  }
}

void TestStyles::aggregateMetricsClassesFollowTheData()
{
  QgsProject project;
  const QString name = QStringLiteral( "AGGREGATE_METRICS" );
  QgsVectorLayer *spread = loadHandMade( project, { name }, { 120, 15, 300, 44, 71, 9, 230, 180, 52, 98 } ).value( name );
  QString problem = graduatedProblem( *spread, QStringLiteral( "released" ), 5 );
  QVERIFY2( problem.isEmpty(), qPrintable( problem ) );
  // Ties put several quantile breaks on one value: the classes they would leave empty are dropped.
  QgsVectorLayer *ties = loadHandMade( project, { name }, { 5, 5, 5, 5, 5, 5, 5, 9, 50, 50 } ).value( name );
  problem = graduatedProblem( *ties, QStringLiteral( "released" ), 3 );
  QVERIFY2( problem.isEmpty(), qPrintable( problem ) );
}

void TestStyles::stackingDoesNotDependOnLoadingOrder()
{
  QStringList order = kStyled;
  std::sort( order.begin(), order.end() );
  do
  {
    QgsProject project;
    project.addMapLayer( layerOf( QStringLiteral( "Point?crs=EPSG:32618&field=x:integer" ), QStringLiteral( "x" ), { 1 } ).release() ); // not ours
    const QMap<QString, QgsVectorLayer *> earlier = loadHandMade( project, kStyled, { 1, 2, 3 } );
    const QMap<QString, QgsVectorLayer *> later = loadHandMade( project, order, { 1, 2, 3 } );
    QCOMPARE( stacking( project, later ), kStyled );
    QCOMPARE( stacking( project, earlier ), kStyled );
    const QList<QgsLayerTreeLayer *> nodes = project.layerTreeRoot()->findLayers();
    QCOMPARE( nodes.size(), 11 );
    for ( int i = 0; i < 5; ++i )
      QVERIFY( later.values().contains( qobject_cast<QgsVectorLayer *>( nodes[i]->layer() ) ) );
    QCOMPARE( nodes.last()->layer()->name(), QStringLiteral( "hand-made" ) );
  } while ( std::next_permutation( order.begin(), order.end() ) );
}

void TestStyles::noProjectNothingToLoad()
{
  // As qgis_process runs it: plain destinations, no project.
  auto regions = vbastest::grid();
  auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string" ), QList<QVariantList> { { "r00", "F" }, { "r11", "M" }, { "r22", "F" } } );
  QVariantMap p = vbastest::gridParameters( regions.get(), records.get() );
  p.insert( QStringLiteral( "SITES" ), 2 );
  QgsProcessingContext context;
  vbastest::run( QStringLiteral( "vbas:placesites" ), p, context, true );
  QVERIFY( context.layersToLoadOnCompletion().isEmpty() );
}

QTEST_MAIN( TestStyles )
#include "test_styles.moc"
