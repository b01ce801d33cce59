#include "algorithms/metrics/sensitive.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace vbas
{

SparseHistograms SensitiveHistograms::classHistograms() const
{
  HistogramBuilder builder( pairs.rows() );
  for ( std::size_t r = 0; r < pairs.rows(); ++r )
    for ( std::size_t e = pairs.offsets[r]; e < pairs.offsets[r + 1]; ++e )
      builder.add( static_cast<std::uint32_t>( r ), pairClass[pairs.classes[e]], pairs.counts[e] );
  return builder.build();
}

std::uint32_t SensitivePairs::id( std::uint32_t cls, std::uint32_t value )
{
  const std::uint64_t key = ( static_cast<std::uint64_t>( cls ) << 32 ) | value; // never FlatMap::kEmpty: classes are far below 2^32 - 1
  std::uint32_t &id = mIds.findOrInsert( key, static_cast<std::uint32_t>( mClass.size() ) );
  if ( id == mClass.size() )
  {
    mClass.push_back( cls );
    mValue.push_back( value );
  }
  return id;
}

SensitiveHistograms SensitivePairs::finish( SparseHistograms pairs, std::size_t values )
{
  SensitiveHistograms result;
  result.pairs = std::move( pairs );
  result.pairClass = std::move( mClass );
  result.pairValue = std::move( mValue );
  result.values = values;
  return result;
}

namespace
{

//! (EC entry, sensitive value, records) of every pair of every region, merged and sorted.
std::vector<std::tuple<std::size_t, std::uint32_t, std::int64_t>> ecValues( const SensitiveHistograms &sensitive, const Aggregation &aggregation )
{
  std::vector<std::tuple<std::size_t, std::uint32_t, std::int64_t>> cells;
  for ( std::size_t r = 0; r < sensitive.pairs.rows(); ++r )
    for ( std::size_t e = sensitive.pairs.offsets[r]; e < sensitive.pairs.offsets[r + 1]; ++e )
    {
      const std::uint32_t pair = sensitive.pairs.classes[e];
      if ( sensitive.pairs.counts[e] > 0 )
        cells.emplace_back( aggregation.ecs.find( aggregation.regionAggregateIndex[r], sensitive.pairClass[pair] ), sensitive.pairValue[pair], sensitive.pairs.counts[e] );
    }
  std::sort( cells.begin(), cells.end() );
  std::size_t kept = 0;
  for ( std::size_t i = 0; i < cells.size(); ++i )
  {
    if ( kept > 0 && std::get<0>( cells[kept - 1] ) == std::get<0>( cells[i] ) && std::get<1>( cells[kept - 1] ) == std::get<1>( cells[i] ) )
      std::get<2>( cells[kept - 1] ) += std::get<2>( cells[i] );
    else
      cells[kept++] = cells[i];
  }
  cells.resize( kept );
  return cells;
}

} // namespace

EcDiversity ecDiversity( const SensitiveHistograms &sensitive, const Aggregation &aggregation, const Suppression &suppression )
{
  const std::size_t ecs = aggregation.ecs.counts.size();
  EcDiversity result { std::vector<std::int64_t>( ecs, 0 ), std::vector<std::int64_t>( ecs, 0 ), std::vector<double>( ecs, 0.0 ) };
  const auto cells = ecValues( sensitive, aggregation );
  std::vector<double> released( sensitive.values, 0.0 ); // q: the released records' distribution
  for ( const auto &[ec, value, count] : cells )
    if ( !suppression.suppressed[ec] )
      released[value] += static_cast<double>( count ) / static_cast<double>( suppression.releasedRecords );
  // 0.5 * sum_v |p_v - q_v| = 0.5 * ( 1 + sum over the EC's values of ( |p_v - q_v| - q_v ) ): q sums to 1.
  std::vector<double> sum( ecs, 0.0 );
  for ( const auto &[ec, value, count] : cells )
  {
    const double p = static_cast<double>( count ) / static_cast<double>( aggregation.ecs.counts[ec] );
    ++result.distinct[ec];
    result.majority[ec] = std::max( result.majority[ec], count );
    sum[ec] += std::fabs( p - released[value] ) - released[value];
  }
  for ( std::size_t ec = 0; ec < ecs; ++ec )
    result.emd[ec] = result.distinct[ec] > 0 ? 0.5 * ( 1.0 + sum[ec] ) : 0.0;
  return result;
}

AggregateDiversity aggregateDiversity( const EcDiversity &diversity, const Aggregation &aggregation, const Suppression &suppression )
{
  const SparseHistograms &ecs = aggregation.ecs;
  AggregateDiversity result { std::vector<std::int64_t>( ecs.rows(), 0 ), std::vector<double>( ecs.rows(), 0.0 ) };
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
    {
      if ( suppression.suppressed[e] )
        continue;
      std::int64_t &l = result.smallestL[a];
      l = l == 0 ? diversity.distinct[e] : std::min( l, diversity.distinct[e] );
      result.largestT[a] = std::max( result.largestT[a], diversity.emd[e] );
    }
  return result;
}

} // namespace vbas
