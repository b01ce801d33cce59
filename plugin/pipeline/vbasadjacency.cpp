#include "plugin/pipeline/vbasadjacency.h"

#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgsgeometryengine.h>
#include <qgsprocessingfeedback.h>
#include <qgsspatialindex.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

bool vbasHasBorders( const VbasRegions &regions )
{
  return std::any_of( regions.geometries.begin(), regions.geometries.end(), []( const QgsGeometry &g ) { return g.type() == vbasqgis::PolygonGeometry; } );
}

namespace
{

//! The polygons of a region: its geometry, or the polygon parts of a collection.
QgsGeometry polygons( const QgsGeometry &geometry )
{
  QgsGeometry result = geometry;
  if ( result.type() != vbasqgis::PolygonGeometry )
    result.convertGeometryCollectionToSubclass( vbasqgis::PolygonGeometry );
  return result;
}

//! The length, in the working CRS, of the part the boundaries of regions i and j share.
double sharedBorderLength( const QgsGeometryEngine &boundaryI, const QgsAbstractGeometry &boundaryJ, const VbasRegions &regions, QString *error )
{
  std::unique_ptr<QgsAbstractGeometry> shared( boundaryI.intersection( &boundaryJ, error ) );
  if ( !shared )
    return 0;
  QgsGeometry border( shared.release() );
  border.transform( regions.toWorking ); // readRegions transformed whole regions already, so this part transforms too
  return border.length();
}

} // namespace

vbas::RegionAdjacency vbasRegionAdjacency( const VbasRegions &regions, QgsProcessingFeedback *feedback )
{
  const int n = regions.geometries.size();
  std::vector<vbas::Border> borders;
  if ( !vbasHasBorders( regions ) )
    return vbas::regionAdjacency( static_cast<std::size_t>( n ), borders );

  QgsSpatialIndex index;
  QVector<QgsGeometry> geometries;
  std::vector<std::unique_ptr<QgsAbstractGeometry>> boundaries( static_cast<std::size_t>( n ) );
  for ( int i = 0; i < n; ++i )
  {
    geometries.append( polygons( regions.geometries[i] ) );
    if ( geometries[i].isEmpty() )
      continue; // nothing of this region is a polygon: no border
    index.addFeature( i, geometries[i].boundingBox() );
    boundaries[i].reset( geometries[i].constGet()->boundary() );
  }

  int failed = 0;
  QString error;
  for ( int i = 0; i < n; ++i )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    if ( !boundaries[i] )
      continue;
    const std::unique_ptr<QgsGeometryEngine> region( QgsGeometry::createGeometryEngine( geometries[i].constGet() ) );
    region->prepareGeometry();
    const std::unique_ptr<QgsGeometryEngine> boundary( QgsGeometry::createGeometryEngine( boundaries[i].get() ) );
    for ( const QgsFeatureId candidate : index.intersects( geometries[i].boundingBox() ) )
    {
      const int j = static_cast<int>( candidate );
      if ( j <= i || !region->intersects( geometries[j].constGet() ) )
        continue;
      QString pairError;
      const double length = sharedBorderLength( *boundary, *boundaries[j], regions, &pairError );
      if ( !pairError.isEmpty() )
      {
        ++failed;
        error = pairError;
      }
      else if ( length > 0 )
        borders.push_back( { static_cast<std::size_t>( i ), static_cast<std::size_t>( j ), length } );
    }
    feedback->setProgress( 100.0 * ( i + 1 ) / n );
  }
  if ( failed > 0 )
    feedback->pushWarning( QObject::tr( "The shared border of %n pair(s) of regions could not be computed (GEOS: %1); they count as not adjacent.", nullptr, failed ).arg( error ) );
  return vbas::regionAdjacency( static_cast<std::size_t>( n ), borders );
}

vbas::RegionAdjacency vbasBridgedAdjacency( const VbasRegions &regions, QgsProcessingFeedback *feedback )
{
  vbas::BridgedAdjacency bridged = vbas::bridgeIslands( vbasRegionAdjacency( regions, feedback ), regions.points );
  if ( !bridged.bridges.empty() )
    feedback->pushInfo( QObject::tr( "Islands: the regions fall into %n part(s) sharing no border with one another; each is bridged to the nearest region point of another "
                                     "part, so an island can join an aggregate.",
                                     nullptr, static_cast<int>( bridged.bridges.size() + 1 ) ) );
  return std::move( bridged.adjacency );
}
