#include "algorithms/aggregation/release.h"

#include "algorithms/aggregation/voronoi.h"

namespace vbas
{

Release release( std::vector<std::size_t> regionAggregate, const SparseHistograms &regionHistograms, const Criterion &criterion )
{
  Release result;
  result.aggregation = aggregate( regionAggregate, regionHistograms );
  result.suppression = suppress( result.aggregation, criterion );
  result.regionAggregate = std::move( regionAggregate );
  return result;
}

Release voronoiRelease( const std::vector<Point> &sites, const std::vector<Point> &regionPoints, const SparseHistograms &regionHistograms, const Criterion &criterion )
{
  return release( locateRegions( regionPoints, VoronoiDiagram( sites ) ), regionHistograms, criterion );
}

std::vector<char> suppressedEntries( const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression )
{
  std::vector<char> suppressed( regionHistograms.counts.size() );
  for ( std::size_t r = 0; r < regionHistograms.rows(); ++r )
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      suppressed[e] = suppression.suppressed[aggregation.ecs.find( aggregation.regionAggregateIndex[r], regionHistograms.classes[e] )];
  return suppressed;
}

Recount::Recount( const SparseHistograms &counted )
  : mCounted( counted )
  , mRecounted( counted.counts.size(), 0 )
{
}

std::size_t Recount::add( std::uint32_t region, std::uint32_t cls, std::int64_t count )
{
  const std::size_t entry = region < mCounted.rows() ? mCounted.find( region, cls ) : SparseHistograms::npos;
  if ( entry != SparseHistograms::npos )
    mRecounted[entry] += count;
  return entry;
}

std::size_t Recount::firstDifference() const
{
  for ( std::size_t e = 0; e < mRecounted.size(); ++e )
    if ( mRecounted[e] != mCounted.counts[e] )
      return e;
  return SparseHistograms::npos;
}

} // namespace vbas
