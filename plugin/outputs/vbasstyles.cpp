#include "plugin/outputs/vbasstyles.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgsclassificationquantile.h>
#include <qgscolorramp.h>
#include <qgsfillsymbol.h>
#include <qgsfillsymbollayer.h>
#include <qgsgraduatedsymbolrenderer.h>
#include <qgslayermetadata.h>
#include <qgslayertree.h>
#include <qgsmarkersymbol.h>
#include <qgsmarkersymbollayer.h>
#include <qgsprocessingcontext.h>
#include <qgsproject.h>
#include <qgssinglesymbolrenderer.h>
#include <qgsvectorlayer.h>

#include <QHash>
#include <QMap>

#include <optional>

namespace
{

enum class Look
{
  Released, //!< graduated on released, quantile classes of the layer's values
  Risk,     //!< graduated on risk_share, fixed classes, white to red
  Cells,    //!< outlines only
  Sites,    //!< red circles
};

//! What an output looks like; rank orders the layers of one loading, the highest on top.
struct Style
{
    Look look;
    int rank;
};

const QMap<QString, Style> &styles()
{
  static const QMap<QString, Style> kStyles {
    { QStringLiteral( "REGION_RISK" ), { Look::Risk, 0 } }, { QStringLiteral( "AGGREGATE_METRICS" ), { Look::Released, 1 } }, { QStringLiteral( "AGGREGATED" ), { Look::Released, 2 } },
    { QStringLiteral( "VORONOI" ), { Look::Cells, 3 } },    { QStringLiteral( "SITE_POINTS" ), { Look::Sites, 4 } },
  };
  return kStyles;
}

const QColor kOutline( 35, 35, 35 );
const QColor kCellLine( 197, 27, 138 );
const QColor kSiteFill( 215, 25, 28 );
const int kClasses = 5;
const QList<double> kRiskBreaks { 0, 0.05, 0.2, 0.5, 1 };

//! The symbol of a class: a white fill with a dark outline width mm wide, or a circle on a point layer.
QgsSymbol *classSymbol( vbasqgis::GeometryType type, double width )
{
  if ( type == vbasqgis::PointGeometry )
  {
    auto *circle = new QgsSimpleMarkerSymbolLayer( vbasqgis::CircleMarker, 2.4, 0, DEFAULT_SCALE_METHOD, Qt::white, kOutline );
    circle->setStrokeWidth( width );
    return new QgsMarkerSymbol( { circle } );
  }
  return new QgsFillSymbol( { new QgsSimpleFillSymbolLayer( Qt::white, Qt::SolidPattern, kOutline, Qt::SolidLine, width ) } );
}

std::unique_ptr<QgsGraduatedSymbolRenderer> graduated( const QString &field, QgsSymbol *symbol, QgsColorRamp *ramp )
{
  auto renderer = std::make_unique<QgsGraduatedSymbolRenderer>( field );
  renderer->setSourceSymbol( symbol );
  renderer->setSourceColorRamp( ramp );
  return renderer;
}

//! released in kClasses quantile classes of the layer's own values, light to dark; ties can leave a class empty, it is dropped.
std::unique_ptr<QgsFeatureRenderer> releasedRenderer( const QgsVectorLayer &layer )
{
  std::unique_ptr<QgsGraduatedSymbolRenderer> renderer
    = graduated( QStringLiteral( "released" ), classSymbol( layer.geometryType(), 0.4 ), new QgsColorBrewerColorRamp( QStringLiteral( "YlGnBu" ), kClasses ) );
  auto *quantiles = new QgsClassificationQuantile();
  quantiles->setLabelPrecision( 0 ); // counts
  renderer->setClassificationMethod( quantiles );
  vbasqgis::updateClasses( *renderer, layer, kClasses );
  for ( int i = renderer->ranges().size() - 1; i > 0; --i ) // a class after the first holds (lower, upper]
    if ( renderer->ranges().at( i ).upperValue() <= renderer->ranges().at( i ).lowerValue() )
      renderer->deleteClass( i );
  renderer->updateColorRamp();
  return renderer;
}

//! risk_share in the fixed classes of kRiskBreaks, white to dark red.
std::unique_ptr<QgsFeatureRenderer> riskRenderer( const QgsVectorLayer &layer )
{
  std::unique_ptr<QgsGraduatedSymbolRenderer> renderer
    = graduated( QStringLiteral( "risk_share" ), classSymbol( layer.geometryType(), 0.2 ), new QgsGradientColorRamp( Qt::white, QColor( 165, 15, 21 ) ) );
  for ( int i = 1; i < kRiskBreaks.size(); ++i )
    renderer->addClass( QgsRendererRange( kRiskBreaks[i - 1], kRiskBreaks[i], renderer->sourceSymbol()->clone(), QStringLiteral( "%1 – %2" ).arg( kRiskBreaks[i - 1] ).arg( kRiskBreaks[i] ) ) );
  renderer->updateColorRamp();
  return renderer;
}

std::unique_ptr<QgsFeatureRenderer> cellsRenderer()
{
  return std::make_unique<QgsSingleSymbolRenderer>( new QgsFillSymbol( { new QgsSimpleFillSymbolLayer( Qt::transparent, Qt::NoBrush, kCellLine, Qt::DashLine, 0.5 ) } ) );
}

std::unique_ptr<QgsFeatureRenderer> sitesRenderer()
{
  auto *circle = new QgsSimpleMarkerSymbolLayer( vbasqgis::CircleMarker, 3, 0, DEFAULT_SCALE_METHOD, kSiteFill, Qt::black );
  circle->setStrokeWidth( 0.4 );
  return std::make_unique<QgsSingleSymbolRenderer>( new QgsMarkerSymbol( { circle } ) );
}

//! The renderer of look for layer; nullptr when the layer lacks the field or geometry it needs.
std::unique_ptr<QgsFeatureRenderer> renderer( Look look, const QgsVectorLayer &layer )
{
  const bool polygons = layer.geometryType() == vbasqgis::PolygonGeometry;
  const bool points = layer.geometryType() == vbasqgis::PointGeometry;
  switch ( look )
  {
    case Look::Released:
      return ( polygons || points ) && layer.fields().lookupField( QStringLiteral( "released" ) ) >= 0 ? releasedRenderer( layer ) : nullptr;
    case Look::Risk:
      return ( polygons || points ) && layer.fields().lookupField( QStringLiteral( "risk_share" ) ) >= 0 ? riskRenderer( layer ) : nullptr;
    case Look::Cells:
      return polygons ? cellsRenderer() : nullptr;
    case Look::Sites:
      return points ? sitesRenderer() : nullptr;
  }
  return nullptr;
}

//! The layer's metadata says who may see it: its rights, its abstract and a keyword.
void markAudience( QgsMapLayer &layer, VbasOutputSchema::Audience audience )
{
  const QString text = VbasStyles::audienceText( audience );
  QgsLayerMetadata metadata = layer.metadata();
  metadata.setRights( QStringList { text } );
  metadata.setAbstract( metadata.abstract().isEmpty() ? text : text + QStringLiteral( "\n\n" ) + metadata.abstract() );
  metadata.addKeywords( QStringLiteral( "VBAS audience" ), { audience == VbasOutputSchema::Audience::Published ? QStringLiteral( "publication" ) : QStringLiteral( "custodian only" ) } );
  layer.setMetadata( metadata );
}

//! Marks one output's layer with its audience when QGIS loads it, styles it if the output has a style, then places it among the layers of the same loading.
class Styler : public QgsProcessingLayerPostProcessorInterface
{
  public:
    Styler( const std::optional<Style> &style, VbasOutputSchema::Audience audience )
      : mStyle( style )
      , mAudience( audience )
    {
    }

    void postProcessLayer( QgsMapLayer *layer, QgsProcessingContext &context, QgsProcessingFeedback * ) override
    {
      markAudience( *layer, mAudience );
      auto *vector = qobject_cast<QgsVectorLayer *>( layer );
      std::unique_ptr<QgsFeatureRenderer> look = vector && mStyle ? renderer( mStyle->look, *vector ) : nullptr;
      if ( !look )
        return;
      vector->setRenderer( look.release() );
      vector->triggerRepaint();
      place( *vector, context );
      mLayerId = vector->id();
    }

  private:
    //! The layers of this loading styled so far (QGIS loads the context's layers one after the other), with their ranks.
    static QHash<QString, int> styledSoFar( const QgsProcessingContext &context )
    {
      QHash<QString, int> styled;
      for ( const QgsProcessingContext::LayerDetails &details : context.layersToLoadOnCompletion() )
        if ( const auto *other = dynamic_cast<const Styler *>( details.postProcessor() ); other && !other->mLayerId.isEmpty() )
          styled.insert( other->mLayerId, other->mStyle->rank );
      return styled;
    }

    //! Moves the layer in its group just above the topmost layer styled so far that does not rank above it, else just below the lowest that does.
    void place( const QgsMapLayer &layer, const QgsProcessingContext &context ) const
    {
      QgsLayerTreeLayer *node = layer.project() ? layer.project()->layerTreeRoot()->findLayer( layer.id() ) : nullptr;
      auto *group = node ? qobject_cast<QgsLayerTreeGroup *>( node->parent() ) : nullptr;
      if ( !group )
        return;
      const QHash<QString, int> styled = styledSoFar( context );
      const QList<QgsLayerTreeNode *> children = group->children();
      int target = -1;
      for ( int i = 0; i < children.size(); ++i )
      {
        const auto *child = qobject_cast<QgsLayerTreeLayer *>( children[i] );
        const auto other = child ? styled.constFind( child->layerId() ) : styled.constEnd();
        if ( other == styled.constEnd() )
          continue;
        if ( *other <= mStyle->rank )
        {
          target = i;
          break;
        }
        target = i + 1;
      }
      const int current = children.indexOf( node );
      if ( target < 0 || target == current || target == current + 1 )
        return;
      group->insertChildNode( target, node->clone() ); // the layer stays in the project: it is still in the tree
      group->removeChildNode( node );
    }

    std::optional<Style> mStyle;
    VbasOutputSchema::Audience mAudience;
    QString mLayerId; //!< the layer this styled, once done
};

} // namespace

std::unique_ptr<QgsProcessingLayerPostProcessorInterface> VbasStyles::postProcessor( const VbasOutputSchema &schema )
{
  const auto style = styles().constFind( schema.name );
  return std::make_unique<Styler>( style == styles().constEnd() ? std::nullopt : std::optional<Style>( *style ), schema.audience );
}

QString VbasStyles::audienceText( VbasOutputSchema::Audience audience )
{
  return audience == VbasOutputSchema::Audience::Published ? QObject::tr( "VBAS for QGIS: for publication. This layer is computed only from the released records (check it before you publish it)." )
                                                           : QObject::tr( "VBAS for QGIS: for the data custodian only, not for publication. This layer tells more than the released records." );
}
