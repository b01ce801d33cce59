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

Aggregation aggregate( const std::vector<std::size_t> &regionAggregate, const SparseHistograms &regionHistograms )
{
  Aggregation result;
  result.aggregateId = regionAggregate;
  std::sort( result.aggregateId.begin(), result.aggregateId.end() );
  result.aggregateId.erase( std::unique( result.aggregateId.begin(), result.aggregateId.end() ), result.aggregateId.end() );

  // The ECs of an aggregate: its member regions' histogram entries, counted again by aggregate.
  HistogramBuilder ecs( result.aggregateId.size() );
  for ( std::size_t r = 0; r < regionAggregate.size(); ++r )
  {
    const auto it = std::lower_bound( result.aggregateId.begin(), result.aggregateId.end(), regionAggregate[r] );
    const auto a = static_cast<std::uint32_t>( it - result.aggregateId.begin() );
    result.regionAggregateIndex.push_back( a );
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      ecs.add( a, regionHistograms.classes[e], regionHistograms.counts[e] );
  }
  result.ecs = ecs.build();
  return result;
}

} // namespace vbas
