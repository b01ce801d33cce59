#include "algorithms/base/histograms.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace vbas
{

std::int64_t SparseHistograms::rowTotal( std::size_t row ) const
{
  return std::accumulate( counts.begin() + offsets[row], counts.begin() + offsets[row + 1], std::int64_t( 0 ) );
}

std::vector<std::int64_t> SparseHistograms::rowTotals() const
{
  std::vector<std::int64_t> totals;
  for ( std::size_t r = 0; r < rows(); ++r )
    totals.push_back( rowTotal( r ) );
  return totals;
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
  if ( count != 1 && !mWeighted )
  {
    mCounts.assign( mRecordRows.size(), 1 );
    mWeighted = true;
  }
  mRecordRows.push_back( row );
  mRecordClasses.push_back( cls );
  if ( mWeighted )
    mCounts.push_back( count );
}

SparseHistograms HistogramBuilder::build() const
{
  // Counting sort of the records' classes (and counts) by row.
  std::vector<std::size_t> start( mRows + 1, 0 );
  for ( const std::uint32_t r : mRecordRows )
    ++start[r + 1];
  std::partial_sum( start.begin(), start.end(), start.begin() );
  std::vector<std::uint32_t> classes( mRecordRows.size() );
  std::vector<std::int64_t> counts( mWeighted ? mRecordRows.size() : 0 );
  std::vector<std::size_t> next( start.begin(), start.end() - 1 );
  std::uint32_t classCount = 0;
  for ( std::size_t i = 0; i < mRecordRows.size(); ++i )
  {
    const std::size_t j = next[mRecordRows[i]]++;
    classes[j] = mRecordClasses[i];
    if ( mWeighted )
      counts[j] = mCounts[i];
    classCount = std::max( classCount, mRecordClasses[i] + 1 );
  }

  // Each row's classes counted densely, touching only the classes present.
  SparseHistograms h;
  std::vector<std::int64_t> counter( classCount, -1 ); // -1: not seen in this row
  std::vector<std::uint32_t> touched;
  for ( std::size_t r = 0; r < mRows; ++r )
  {
    for ( std::size_t j = start[r]; j < start[r + 1]; ++j )
    {
      const std::uint32_t c = classes[j];
      if ( counter[c] < 0 )
      {
        touched.push_back( c );
        counter[c] = 0;
      }
      counter[c] += mWeighted ? counts[j] : 1;
    }
    // Classes in increasing order: sort the touched ones, or scan all classes when that is cheaper.
    if ( touched.size() * 16 < classCount )
      std::sort( touched.begin(), touched.end() );
    else
    {
      touched.clear();
      for ( std::uint32_t c = 0; c < classCount; ++c )
        if ( counter[c] >= 0 )
          touched.push_back( c );
    }
    for ( const std::uint32_t c : touched )
    {
      if ( counter[c] > 0 ) // rows standing for no record make no entry
      {
        h.classes.push_back( c );
        h.counts.push_back( counter[c] );
      }
      counter[c] = -1;
    }
    touched.clear();
    h.offsets.push_back( h.classes.size() );
  }
  return h;
}

SparseHistograms remapEntries( const SparseHistograms &histograms, const std::vector<std::uint32_t> &entryClass )
{
  SparseHistograms out;
  std::vector<std::pair<std::uint32_t, std::int64_t>> row;
  for ( std::size_t r = 0; r < histograms.rows(); ++r )
  {
    row.clear();
    for ( std::size_t e = histograms.offsets[r]; e < histograms.offsets[r + 1]; ++e )
      row.emplace_back( entryClass[e], histograms.counts[e] );
    std::sort( row.begin(), row.end() );
    for ( const auto &[cls, count] : row )
    {
      if ( out.classes.size() > out.offsets.back() && out.classes.back() == cls )
        out.counts.back() += count;
      else
      {
        out.classes.push_back( cls );
        out.counts.push_back( count );
      }
    }
    out.offsets.push_back( out.classes.size() );
  }
  return out;
}

} // namespace vbas
