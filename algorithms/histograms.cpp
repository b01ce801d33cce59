#include "histograms.h"

#include <algorithm>
#include <numeric>

namespace vbas
{

std::int64_t SparseHistograms::rowTotal( std::size_t row ) const
{
  return std::accumulate( counts.begin() + offsets[row], counts.begin() + offsets[row + 1], std::int64_t( 0 ) );
}

std::int64_t SparseHistograms::total() const
{
  return std::accumulate( counts.begin(), counts.end(), std::int64_t( 0 ) );
}

std::size_t SparseHistograms::find( std::size_t row, std::uint32_t cls ) const
{
  const auto begin = classes.begin() + offsets[row];
  const auto end = classes.begin() + offsets[row + 1];
  const auto it = std::lower_bound( begin, end, cls );
  return it != end && *it == cls ? static_cast<std::size_t>( it - classes.begin() ) : npos;
}

std::vector<std::int64_t> SparseHistograms::classTotals( std::size_t classCount ) const
{
  std::vector<std::int64_t> totals( classCount, 0 );
  for ( std::size_t e = 0; e < classes.size(); ++e )
    totals[classes[e]] += counts[e];
  return totals;
}

HistogramBuilder::HistogramBuilder( std::size_t rows )
  : mRows( rows )
{
}

void HistogramBuilder::add( std::uint32_t row, std::uint32_t cls, std::int64_t count )
{
  mCells.findOrInsert( ( static_cast<std::uint64_t>( row ) << 32 ) | cls, 0 ) += count;
}

SparseHistograms HistogramBuilder::build() const
{
  std::vector<std::uint64_t> keys;
  keys.reserve( mCells.size() );
  mCells.forEach( [&keys]( std::uint64_t key, std::int64_t ) { keys.push_back( key ); } );
  std::sort( keys.begin(), keys.end() );

  SparseHistograms h;
  h.offsets.assign( mRows + 1, 0 );
  h.classes.reserve( keys.size() );
  h.counts.reserve( keys.size() );
  for ( const std::uint64_t key : keys )
  {
    ++h.offsets[( key >> 32 ) + 1];
    h.classes.push_back( static_cast<std::uint32_t>( key ) );
    h.counts.push_back( *mCells.find( key ) );
  }
  std::partial_sum( h.offsets.begin(), h.offsets.end(), h.offsets.begin() );
  return h;
}

} // namespace vbas
