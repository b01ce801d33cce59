#include "metrics.h"

#include "release.h"

#include <cmath>

namespace vbas
{

double compactness( const std::vector<Point> &regionPoints, const std::vector<Point> &regionSites )
{
  double sum = 0;
  for ( std::size_t r = 0; r < regionPoints.size(); ++r )
    sum += std::hypot( regionPoints[r].x - regionSites[r].x, regionPoints[r].y - regionSites[r].y );
  return sum;
}

double discernibility( const SparseHistograms &ecs, const Suppression &suppression )
{
  double sum = 0;
  for ( std::size_t e = 0; e < ecs.counts.size(); ++e )
    if ( !suppression.suppressed[e] )
      sum += static_cast<double>( ecs.counts[e] ) * static_cast<double>( ecs.counts[e] );
  return sum;
}

double nonUniformEntropy( const std::vector<std::int64_t> &regionRecords, const std::vector<std::size_t> &regionAggregate, std::size_t aggregates )
{
  std::vector<double> aggregateRecords( aggregates, 0 );
  for ( std::size_t r = 0; r < regionRecords.size(); ++r )
    aggregateRecords[regionAggregate[r]] += static_cast<double>( regionRecords[r] );
  // Each of the n_r records of region r has Pr(r | its aggregate a) = n_r / n_a (eq. 22).
  double sum = 0;
  for ( std::size_t r = 0; r < regionRecords.size(); ++r )
    if ( regionRecords[r] > 0 )
      sum -= static_cast<double>( regionRecords[r] ) * std::log2( static_cast<double>( regionRecords[r] ) / aggregateRecords[regionAggregate[r]] );
  return sum;
}

std::vector<std::int64_t> releasedPerRegion( const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression )
{
  const std::vector<char> suppressed = suppressedEntries( regionHistograms, aggregation, suppression );
  std::vector<std::int64_t> released( regionHistograms.rows(), 0 );
  for ( std::size_t r = 0; r < regionHistograms.rows(); ++r )
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      released[r] += suppressed[e] ? 0 : regionHistograms.counts[e];
  return released;
}

Evaluation evaluate( const std::vector<Point> &regionPoints, const std::vector<Point> &regionSites, const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression )
{
  Evaluation ev;
  ev.releasedRecords = suppression.releasedRecords;
  ev.suppressedRecords = suppression.suppressedRecords;
  ev.records = ev.releasedRecords + ev.suppressedRecords;
  ev.suppressedPercent = ev.records > 0 ? 100.0 * static_cast<double>( ev.suppressedRecords ) / static_cast<double>( ev.records ) : 0;
  ev.compactness = compactness( regionPoints, regionSites );
  ev.discernibility = discernibility( aggregation.ecs, suppression );
  ev.aggregates = aggregation.ecs.rows();

  std::vector<std::int64_t> all( regionHistograms.rows() );
  for ( std::size_t r = 0; r < all.size(); ++r )
    all[r] = regionHistograms.rowTotal( r );
  ev.nonUniformEntropyAll = nonUniformEntropy( all, aggregation.regionAggregate, ev.aggregates );
  ev.nonUniformEntropy = nonUniformEntropy( releasedPerRegion( regionHistograms, aggregation, suppression ), aggregation.regionAggregate, ev.aggregates );

  for ( std::size_t e = 0; e < aggregation.ecs.counts.size(); ++e )
  {
    if ( suppression.suppressed[e] )
      continue;
    ++ev.releasedEcs;
    if ( ev.smallestReleasedEc == 0 || aggregation.ecs.counts[e] < ev.smallestReleasedEc )
      ev.smallestReleasedEc = aggregation.ecs.counts[e];
  }
  return ev;
}

} // namespace vbas
