#include "steps/vbasadjacency.h"
#include "support/vbasqgiscompat.h"

#include "support/vbasinterrupt.h"
#include "steps/vbassteps.h"

#include "metrics.h"
#include "partition_search.h"

#include <qgsgeometryengine.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>
#include <qgsspatialindex.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>
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

vbas::RegionAdjacency vbasBridgedAdjacency( const VbasRegions &regions, QgsProcessingFeedback *feedback )
{
  vbas::BridgedAdjacency bridged = vbas::bridgeIslands( vbasRegionAdjacency( regions, feedback ), regions.points );
  if ( !bridged.bridges.empty() )
    feedback->pushInfo( QObject::tr( "Islands: the regions fall into %n part(s) sharing no border with one another; each is bridged to the nearest region point of another "
                                     "part, so an island can join an aggregate.",
                                     nullptr, static_cast<int>( bridged.bridges.size() + 1 ) ) );
  return std::move( bridged.adjacency );
}

namespace
{

//! CONTIGUOUS on the grouping, logged; returns the parts moved.
std::size_t contiguityStep( std::vector<std::size_t> &regionGroup, const vbas::RegionAdjacency &adjacency, const VbasRecords &records, std::size_t aggregates, std::int64_t k,
                            QgsProcessingFeedback *feedback )
{
  vbas::Contiguity c = vbas::makeContiguous( regionGroup, adjacency, records.histograms, k );
  feedback->pushInfo( QObject::tr( "Contiguity: %1 aggregates in %2 connected parts; %3 detached part(s) joined the neighbouring aggregate they share the longest border with; "
                                   "%4 parts remain. Suppressed records: %5 before, %6 after (what contiguity cost)." )
                        .arg( aggregates )
                        .arg( c.fragmentsBefore )
                        .arg( c.reassigned )
                        .arg( c.fragmentsAfter )
                        .arg( c.suppressedBefore )
                        .arg( c.suppressedAfter ) );
  regionGroup = std::move( c.regionGroup );
  return c.reassigned;
}

//! The aggregates of a release all of whose records are suppressed.
std::size_t releasingNothing( const vbas::Release &release )
{
  const std::vector<vbas::AggregateSummary> summaries = vbas::summarize( release.aggregation.ecs, release.suppression );
  return static_cast<std::size_t>( std::count_if( summaries.begin(), summaries.end(), []( const vbas::AggregateSummary &a ) { return a.released == 0; } ) );
}

//! The constraints of the border steps on a grouping: the cap, the floor (a share of the mean unit's records) and the units releasing nothing now.
vbas::UnitConstraints constraints( const VbasBorderSteps &steps, const vbas::Release &release, std::size_t units )
{
  vbas::UnitConstraints c;
  c.maxCompactness = steps.compactnessCap;
  std::tie( c.minRecords, c.maxRecords ) = vbasRecordBounds( { 1, steps.recordFloor, steps.recordCeiling }, release.aggregation.ecs.total(), units );
  c.maxReleasingNothing = releasingNothing( release );
  return c;
}

//! REFINE_BOUNDARIES on the partition, logged.
void refinementStep( vbas::Partition &partition, QgsProcessingFeedback *feedback )
{
  const vbas::BoundaryRefinement b = vbas::refineBoundaries( partition );
  feedback->pushInfo( QObject::tr( "Boundary refinement: %1 boundary region(s) moved to a neighbouring aggregate in %2 pass(es). Suppressed records: %3 before, %4 after." )
                        .arg( b.moves )
                        .arg( b.passes )
                        .arg( b.suppressedBefore )
                        .arg( b.suppressedAfter ) );
}

//! SEARCH on the partition, logged with the cost per move; the best partition and its sites replace the partition's. Throws when canceled.
vbas::SearchResult searchStep( vbas::Partition &partition, const VbasBorderSteps &steps, QgsProcessingFeedback *feedback )
{
  vbas::SearchSettings settings;
  settings.seed = steps.seed;
  settings.timeLimit = steps.timeLimit;
  settings.maxMoves = steps.maxMoves;
  VbasCoreProgress progress( feedback );
  vbas::SearchResult s = vbas::searchPartition( partition, settings, &progress );
  if ( s.stop == vbas::SearchStop::Canceled )
    VbasInterrupt::throwIfCanceled( feedback );
  const auto perMove = []( const vbas::MoveStats &m ) { return QStringLiteral( "%1 tried, %2 kept, %3 µs each" ).arg( m.tried ).arg( m.accepted ).arg( m.tried ? 1e6 * m.seconds / m.tried : 0, 0, 'f', 1 ); };
  feedback->pushInfo( QObject::tr( "Suppression search: %1 trial moves in %2 s (%3). Suppressed records: %4 at the start, %5 in the best partition (found after %10 trial moves, %11 s). Moves: regions %6; "
                                   "recombinations %7; merge-splits %8; sites recentred %9." )
                        .arg( s.moves )
                        .arg( s.seconds, 0, 'f', 1 )
                        .arg( s.stop == vbas::SearchStop::TimeLimit ? QObject::tr( "TIME_LIMIT reached" ) : s.stop == vbas::SearchStop::MaxMoves ? QObject::tr( "SEARCH_MOVES reached" ) : QObject::tr( "nothing left to suppress" ) )
                        .arg( s.start.suppressed )
                        .arg( s.best.suppressed )
                        .arg( perMove( s.regionMoves ), perMove( s.recombinations ), perMove( s.mergeSplits ), perMove( s.recentres ) )
                        .arg( s.bestMove )
                        .arg( s.bestSeconds, 0, 'f', 1 ) );
  return s;
}

//! The aggregates of a grouping in more than one piece.
std::size_t unitsInPieces( const std::vector<std::size_t> &regionGroup, const vbas::RegionAdjacency &adjacency )
{
  std::vector<std::size_t> groups = vbas::fragments( regionGroup, adjacency ).fragmentGroup;
  std::sort( groups.begin(), groups.end() );
  std::size_t pieces = 0;
  for ( std::size_t i = 1; i < groups.size(); ++i )
    pieces += groups[i] == groups[i - 1] && ( i == 1 || groups[i - 1] != groups[i - 2] );
  return pieces;
}

//! REFINE_BOUNDARIES and SEARCH on a grouping of site indices, whose sites they may move; returns the search's moves.
std::uint64_t partitionSteps( std::vector<std::size_t> &regionGroup, std::vector<vbas::Point> &sites, const vbas::UnitConstraints &unitConstraints, const VbasRegions &regions,
                              const VbasRecords &records, const vbas::RegionAdjacency &adjacency, std::int64_t k, const VbasBorderSteps &steps, QgsProcessingFeedback *feedback )
{
  std::vector<std::size_t> units = regionGroup;
  const std::vector<std::size_t> ids = vbas::denseGroups( units );
  std::vector<vbas::Point> unitSites;
  for ( const std::size_t id : ids )
    unitSites.push_back( sites[id] );
  vbas::Partition partition( units, unitSites, regions.points, records.histograms, adjacency, k, unitConstraints );
  if ( steps.refineBoundaries )
    refinementStep( partition, feedback );
  std::uint64_t moves = 0;
  units = partition.regionUnit();
  unitSites = partition.sites();
  if ( steps.search )
  {
    vbas::SearchResult s = searchStep( partition, steps, feedback );
    moves = s.moves;
    units = std::move( s.regionUnit );
    unitSites = std::move( s.sites );
  }
  for ( std::size_t r = 0; r < units.size(); ++r )
    regionGroup[r] = ids[units[r]];
  for ( std::size_t u = 0; u < ids.size(); ++u )
    sites[ids[u]] = unitSites[u];
  return moves;
}

} // namespace

VbasBorderResult vbasBorderRelease( const VbasRegions &regions, const VbasRecords &records, vbas::Release release, std::vector<vbas::Point> sites, std::int64_t k,
                                    const VbasBorderSteps &steps, QgsProcessingFeedback *feedback )
{
  VbasBorderResult result;
  if ( !hasBorders( regions ) )
  {
    for ( const auto &[on, name] : { std::make_pair( steps.contiguous, "CONTIGUOUS" ), std::make_pair( steps.refineBoundaries, "REFINE_BOUNDARIES" ), std::make_pair( steps.search, "SEARCH" ) } )
      if ( on )
        feedback->pushInfo( QObject::tr( "%1 has no effect: the regions are points, which share no borders." ).arg( name ) );
    result.release = std::move( release );
    result.sites = std::move( sites );
    return result;
  }
  const vbas::RegionAdjacency adjacency = vbasBridgedAdjacency( regions, feedback );
  std::vector<std::size_t> regionGroup = release.regionGroup;
  const std::size_t units = release.aggregation.aggregateGroup.size();
  const vbas::UnitConstraints unitConstraints = constraints( steps, release, units );
  if ( steps.contiguous || steps.search )
    contiguityStep( regionGroup, adjacency, records, units, k, feedback );
  if ( steps.refineBoundaries || steps.search )
    result.searchMoves = partitionSteps( regionGroup, sites, unitConstraints, regions, records, adjacency, k, steps, feedback );
  result.unitsInPieces = unitsInPieces( regionGroup, adjacency );
  result.release = regionGroup == release.regionGroup ? std::move( release ) : vbas::release( std::move( regionGroup ), records.histograms, k );
  result.sites = std::move( sites );
  return result;
}

VbasBorderSteps VbasBorderSteps::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed )
{
  VbasBorderSteps steps;
  const auto flag = [&]( const QString &name ) { return QgsProcessingParameters::parameterAsBoolean( algorithm.parameterDefinition( name ), parameters, context ); };
  steps.contiguous = flag( QStringLiteral( "CONTIGUOUS" ) );
  steps.refineBoundaries = flag( QStringLiteral( "REFINE_BOUNDARIES" ) );
  steps.search = flag( QStringLiteral( "SEARCH" ) );
  steps.timeLimit = QgsProcessingParameters::parameterAsDouble( algorithm.parameterDefinition( QStringLiteral( "TIME_LIMIT" ) ), parameters, context );
  const std::int64_t moves = vbasWholeNumber( algorithm, parameters, QStringLiteral( "SEARCH_MOVES" ), context );
  steps.maxMoves = moves > 0 ? static_cast<std::uint64_t>( moves ) : std::numeric_limits<std::uint64_t>::max();
  steps.seed = seed;
  return steps;
}

double vbasCompactness( const VbasRegions &regions, const vbas::Release &release, const std::vector<vbas::Point> &sites )
{
  std::vector<vbas::Point> regionSites;
  for ( const std::size_t s : release.regionGroup )
    regionSites.push_back( sites[s] );
  return vbas::compactness( regions.points, regionSites );
}

QVariantMap vbasUnitOutputs( const VbasBorderResult &result, const VbasRegions &regions, double startCompactness )
{
  const std::size_t nothing = releasingNothing( result.release );
  const double compactness = vbasCompactness( regions, result.release, result.sites );
  return { { QStringLiteral( "UNITS_IN_PIECES" ), static_cast<qlonglong>( result.unitsInPieces ) },
           { QStringLiteral( "UNITS_RELEASING_NOTHING" ), static_cast<qlonglong>( nothing ) },
           { QStringLiteral( "COMPACTNESS_USED" ), startCompactness > 0 ? compactness / startCompactness : 1.0 },
           { QStringLiteral( "SEARCH_MOVES_MADE" ), static_cast<qlonglong>( result.searchMoves ) } };
}
