#include "aggregation.h"

#include <algorithm>

namespace vbas
{

std::vector<std::size_t> locateRegions( const std::vector<Point> &regionPoints, const VoronoiDiagram &diagram )
{
  std::vector<std::size_t> sites;
  sites.reserve( regionPoints.size() );
  for ( const Point &p : regionPoints )
    sites.push_back( diagram.nearestSite( p ) );
  return sites;
}

Aggregation aggregate( const std::vector<std::size_t> &regionGroup, const SparseHistograms &regionHistograms )
{
  Aggregation result;
  result.aggregateGroup = regionGroup;
  std::sort( result.aggregateGroup.begin(), result.aggregateGroup.end() );
  result.aggregateGroup.erase( std::unique( result.aggregateGroup.begin(), result.aggregateGroup.end() ), result.aggregateGroup.end() );

  const std::size_t aggregates = result.aggregateGroup.size();
  std::vector<std::vector<std::size_t>> members( aggregates );
  for ( std::size_t r = 0; r < regionGroup.size(); ++r )
  {
    const auto it = std::lower_bound( result.aggregateGroup.begin(), result.aggregateGroup.end(), regionGroup[r] );
    const auto a = static_cast<std::size_t>( it - result.aggregateGroup.begin() );
    result.regionAggregate.push_back( a );
    members[a].push_back( r );
  }

  // Merge the member histograms with a dense counter over class ids, touching only classes present.
  std::uint32_t classCount = 0;
  for ( const std::uint32_t c : regionHistograms.classes )
    classCount = std::max( classCount, c + 1 );
  std::vector<std::int64_t> counter( classCount, 0 );
  std::vector<std::uint32_t> touched;
  SparseHistograms &ecs = result.ecs;
  for ( std::size_t a = 0; a < aggregates; ++a )
  {
    for ( const std::size_t r : members[a] )
    {
      for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      {
        const std::uint32_t c = regionHistograms.classes[e];
        if ( counter[c] == 0 )
          touched.push_back( c );
        counter[c] += regionHistograms.counts[e];
      }
    }
    std::sort( touched.begin(), touched.end() );
    for ( const std::uint32_t c : touched )
    {
      ecs.classes.push_back( c );
      ecs.counts.push_back( counter[c] );
      counter[c] = 0;
    }
    touched.clear();
    ecs.offsets.push_back( ecs.classes.size() );
  }
  return result;
}

} // namespace vbas
