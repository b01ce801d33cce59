#include "plugin/provider/vbasprovider.h"
#include "plugin/provider/vbasanonymize.h"
#include "plugin/provider/vbascheckanonymity.h"
#include "plugin/provider/vbasestimatesitecount.h"
#include "plugin/provider/vbascompare.h"
#include "plugin/provider/vbasevaluate.h"
#include "plugin/provider/vbasgeneralize.h"
#include "plugin/provider/vbaslpgeomask.h"
#include "plugin/provider/vbasplacesites.h"
#include "plugin/provider/vbasvoronoiaggregate.h"
#include "plugin/provider/vbasguarded.h"

#include <QIcon>

VbasProvider::VbasProvider( const QString &pluginDirectory )
{
  VbasAlgorithm::setPluginDirectory( pluginDirectory );
}

QString VbasProvider::id() const
{
  return QStringLiteral( "vbas" );
}

QString VbasProvider::name() const
{
  return QObject::tr( "VBAS" );
}

QString VbasProvider::longName() const
{
  return QObject::tr( "VBAS: Voronoi-based aggregation for k-anonymous health data" );
}

QIcon VbasProvider::icon() const
{
  return QIcon( svgIconPath() );
}

QString VbasProvider::svgIconPath() const
{
  return VbasAlgorithm::pluginDirectory() + QStringLiteral( "/icons/vbas.svg" );
}

void VbasProvider::loadAlgorithms()
{
  addAlgorithm( new VbasGuarded<VbasEstimateSiteCount>() );
  addAlgorithm( new VbasGuarded<VbasPlaceSites>() );
  addAlgorithm( new VbasGuarded<VbasVoronoiAggregate>() );
  addAlgorithm( new VbasGuarded<VbasEvaluate>() );
  addAlgorithm( new VbasGuarded<VbasAnonymize>() );
  addAlgorithm( new VbasGuarded<VbasGeneralize>() );
  addAlgorithm( new VbasGuarded<VbasCheckAnonymity>() );
  addAlgorithm( new VbasGuarded<VbasLpGeomask>() );
  addAlgorithm( new VbasGuarded<VbasCompare>() );
}

//! The factory the Python shim calls through ctypes with the plugin folder; the registry takes ownership.
extern "C" Q_DECL_EXPORT QgsProcessingProvider *vbas_create_provider( const char *pluginDirectory )
{
  return new VbasProvider( QString::fromUtf8( pluginDirectory ) );
}
