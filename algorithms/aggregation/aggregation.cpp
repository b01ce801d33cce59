#include "algorithms/aggregation/aggregation.h"

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

  // The ECs of an aggregate: its member regions' histogram entries, counted again by aggregate.
  HistogramBuilder ecs( result.aggregateGroup.size() );
  for ( std::size_t r = 0; r < regionGroup.size(); ++r )
  {
    const auto it = std::lower_bound( result.aggregateGroup.begin(), result.aggregateGroup.end(), regionGroup[r] );
    const auto a = static_cast<std::uint32_t>( it - result.aggregateGroup.begin() );
    result.regionAggregate.push_back( a );
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      ecs.add( a, regionHistograms.classes[e], regionHistograms.counts[e] );
  }
  result.ecs = ecs.build();
  return result;
}

} // namespace vbas
