#include "algorithms/aggregation/suppression.h"

#include <algorithm>
#include <tuple>

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

namespace
{

//! The residents of each EC entry of aggregation: the sum of its member regions' cells (0 without one).
std::vector<std::int64_t> ecResidents( const Aggregation &aggregation, const SparseHistograms &residents )
{
  const SparseHistograms &ecs = aggregation.ecs;
  const SparseHistograms cells = aggregate( aggregation.regionAggregateIndex, residents ).ecs;
  std::vector<std::int64_t> result( ecs.counts.size(), 0 );
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
    {
      const std::size_t cell = cells.find( a, ecs.classes[e] );
      result[e] = cell == SparseHistograms::npos ? 0 : cells.counts[cell];
    }
  return result;
}

//! The average risk model (docs/method.md, "A release at a stated risk"): released ECs cut, the riskiest first, until the average holds (averageRiskCut).
void meetAverageRisk( const Aggregation &aggregation, const Criterion &criterion, Suppression &s )
{
  const SparseHistograms &ecs = aggregation.ecs;
  const std::vector<std::int64_t> residents = criterion.averagePopulation ? ecResidents( aggregation, *criterion.averagePopulation ) : ecs.counts;
  std::vector<std::size_t> released;
  std::vector<std::int64_t> f, F;
  for ( std::size_t e = 0; e < ecs.counts.size(); ++e )
    if ( !s.suppressed[e] )
    {
      released.push_back( e );
      f.push_back( ecs.counts[e] );
      F.push_back( residents[e] );
    }
  const std::vector<char> cut = averageRiskCut( f, F, criterion.averageThreshold );
  for ( std::size_t i = 0; i < released.size(); ++i )
    if ( cut[i] )
    {
      s.suppressed[released[i]] = 1;
      s.releasedRecords -= f[i];
      s.suppressedRecords += f[i];
    }
}

//! Every EC below k of its size: its records, or (k-map) its residents.
Suppression suppressBelowK( const Aggregation &aggregation, const Criterion &criterion )
{
  const SparseHistograms &ecs = aggregation.ecs;
  if ( !criterion.residents )
    return suppress( ecs, criterion.k );
  const std::vector<std::int64_t> residents = ecResidents( aggregation, *criterion.residents );
  Suppression result;
  result.suppressed.resize( ecs.counts.size() );
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
    {
      const bool below = suppressedIn( 1, residents[e], criterion.k ) > 0;
      result.suppressed[e] = below;
      ( below ? result.suppressedRecords : result.releasedRecords ) += ecs.counts[e];
    }
  return result;
}

} // namespace

Suppression suppress( const Aggregation &aggregation, const Criterion &criterion )
{
  Suppression s = suppressBelowK( aggregation, criterion );
  if ( criterion.averageThreshold < 1 )
    meetAverageRisk( aggregation, criterion, s );
  return s;
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

std::size_t releasingNothing( const SparseHistograms &ecs, const Suppression &suppression )
{
  const std::vector<AggregateSummary> summaries = summarize( ecs, suppression );
  return static_cast<std::size_t>( std::count_if( summaries.begin(), summaries.end(), []( const AggregateSummary &a ) { return a.released == 0; } ) );
}

} // namespace vbas
