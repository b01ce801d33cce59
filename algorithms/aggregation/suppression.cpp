#include "algorithms/aggregation/suppression.h"

namespace vbas
{

Suppression suppress( const SparseHistograms &ecs, std::int64_t k )
{
  Suppression result;
  result.suppressed.resize( ecs.counts.size() );
  for ( std::size_t e = 0; e < ecs.counts.size(); ++e )
  {
    const bool below = ecs.counts[e] < k;
    result.suppressed[e] = below;
    ( below ? result.suppressedRecords : result.releasedRecords ) += ecs.counts[e];
  }
  return result;
}

Suppression suppress( const Aggregation &aggregation, const Criterion &criterion )
{
  const SparseHistograms &ecs = aggregation.ecs;
  if ( !criterion.residents )
    return suppress( ecs, criterion.k );
  const SparseHistograms cells = aggregate( aggregation.regionAggregateIndex, *criterion.residents ).ecs;
  Suppression result;
  result.suppressed.resize( ecs.counts.size() );
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
    {
      const std::size_t cell = cells.find( a, ecs.classes[e] );
      const bool below = suppressedIn( 1, cell == SparseHistograms::npos ? 0 : cells.counts[cell], criterion.k ) > 0;
      result.suppressed[e] = below;
      ( below ? result.suppressedRecords : result.releasedRecords ) += ecs.counts[e];
    }
  return result;
}

std::vector<AggregateSummary> summarize( const SparseHistograms &ecs, const Suppression &suppression )
{
  std::vector<AggregateSummary> summaries( ecs.rows() );
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
  {
    AggregateSummary &s = summaries[a];
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
    {
      s.records += ecs.counts[e];
      if ( suppression.suppressed[e] )
        s.suppressed += ecs.counts[e];
      else
      {
        s.released += ecs.counts[e];
        if ( s.smallestReleasedEc == 0 || ecs.counts[e] < s.smallestReleasedEc )
          s.smallestReleasedEc = ecs.counts[e];
      }
    }
  }
  return summaries;
}

} // namespace vbas
