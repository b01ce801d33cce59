#include "steps/vbasadjacency.h"
#include "support/vbasqgiscompat.h"

#include "support/vbasinterrupt.h"

#include <qgsgeometryengine.h>
#include <qgsprocessingfeedback.h>
#include <qgsspatialindex.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace
{

//! Whether the regions are polygons: points share no borders.
bool hasBorders( const VbasRegions &regions )
{
  return std::any_of( regions.geometries.begin(), regions.geometries.end(), []( const QgsGeometry &g ) { return g.type() == vbasqgis::PolygonGeometry; } );
}

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
  if ( !hasBorders( regions ) )
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

namespace
{

//! CONTIGUOUS on the grouping, logged; returns the fragments moved.
std::size_t contiguityStep( std::vector<std::size_t> &regionGroup, const vbas::RegionAdjacency &adjacency, const VbasRecords &records, std::size_t aggregates, std::int64_t k,
                            QgsProcessingFeedback *feedback )
{
  vbas::Contiguity c = vbas::makeContiguous( regionGroup, adjacency, records.histograms, k );
  feedback->pushInfo( QObject::tr( "Contiguity: %1 aggregates in %2 connected parts; %3 detached part(s) joined the neighbouring aggregate they share the longest border with, "
                                   "%4 stayed (no neighbouring aggregate, or the move would suppress more records); %5 parts remain. Suppressed records: %6 before, %7 after." )
                        .arg( aggregates )
                        .arg( c.fragmentsBefore )
                        .arg( c.reassigned )
                        .arg( c.kept )
                        .arg( c.fragmentsAfter )
                        .arg( c.suppressedBefore )
                        .arg( c.suppressedAfter ) );
  regionGroup = std::move( c.regionGroup );
  return c.reassigned;
}

//! REFINE_BOUNDARIES on the grouping, logged; returns the regions moved.
std::size_t refinementStep( std::vector<std::size_t> &regionGroup, const vbas::RegionAdjacency &adjacency, const VbasRecords &records, std::int64_t k, QgsProcessingFeedback *feedback )
{
  vbas::BoundaryRefinement b = vbas::refineBoundaries( regionGroup, adjacency, records.histograms, k );
  feedback->pushInfo( QObject::tr( "Boundary refinement: %1 boundary region(s) moved to a neighbouring aggregate in %2 pass(es). Suppressed records: %3 before, %4 after." )
                        .arg( b.moves )
                        .arg( b.passes )
                        .arg( b.suppressedBefore )
                        .arg( b.suppressedAfter ) );
  regionGroup = std::move( b.regionGroup );
  return b.moves;
}

} // namespace

vbas::Release vbasBorderRelease( const VbasRegions &regions, const VbasRecords &records, vbas::Release release, std::int64_t k, VbasBorderSteps steps, QgsProcessingFeedback *feedback )
{
  if ( !hasBorders( regions ) )
  {
    for ( const auto &[on, name] : { std::make_pair( steps.contiguous, "CONTIGUOUS" ), std::make_pair( steps.refineBoundaries, "REFINE_BOUNDARIES" ) } )
      if ( on )
        feedback->pushInfo( QObject::tr( "%1 has no effect: the regions are points, which share no borders." ).arg( name ) );
    return release;
  }
  const vbas::RegionAdjacency adjacency = vbasRegionAdjacency( regions, feedback );
  std::vector<std::size_t> regionGroup = release.regionGroup;
  std::size_t moves = 0;
  if ( steps.contiguous )
    moves += contiguityStep( regionGroup, adjacency, records, release.aggregation.aggregateGroup.size(), k, feedback );
  if ( steps.refineBoundaries )
    moves += refinementStep( regionGroup, adjacency, records, k, feedback );
  if ( moves == 0 )
    return release;
  return vbas::release( std::move( regionGroup ), records.histograms, k );
}
