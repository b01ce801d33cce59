#include "algorithms/aggregation/criterion.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace vbas
{

namespace
{

//! Appends to joint one entry of region r's merged row: its class, records and size.
void append( SparseHistograms &joint, std::vector<std::int64_t> &sizes, std::uint32_t cls, std::int64_t records, std::int64_t size )
{
  joint.classes.push_back( cls );
  joint.counts.push_back( records );
  sizes.push_back( size );
}

} // namespace

std::vector<char> averageRiskCut( const std::vector<std::int64_t> &records, const std::vector<std::int64_t> &residents, double threshold )
{
  // f / F: a class's share of the sum; a population has at least as many residents as records in each class.
  const auto riskOf = [&]( std::size_t i ) { return static_cast<double>( records[i] ) / static_cast<double>( std::max<std::int64_t>( residents[i], 1 ) ); };
  std::vector<std::size_t> order( records.size() );
  std::iota( order.begin(), order.end(), std::size_t( 0 ) );
  std::sort( order.begin(), order.end(), [&]( std::size_t a, std::size_t b ) { return std::tie( residents[a], records[a], a ) < std::tie( residents[b], records[b], b ); } );
  // The sums of f / F and of f over order[i ..], added from the end: no cancellation, whatever is cut.
  std::vector<long double> risky( order.size() + 1, 0 ), released( order.size() + 1, 0 );
  for ( std::size_t i = order.size(); i-- > 0; )
  {
    risky[i] = risky[i + 1] + riskOf( order[i] );
    released[i] = released[i + 1] + static_cast<long double>( records[order[i]] );
  }
  std::vector<char> cut( records.size(), 0 );
  for ( std::size_t i = 0; risky[i] > threshold * released[i] * ( 1 + kAverageRiskTolerance ); ++i )
    cut[order[i]] = 1;
  return cut;
}

Criterion Criterion::averageRisk( std::int64_t k, double threshold, const SparseHistograms *population )
{
  Criterion criterion( k );
  criterion.averageThreshold = threshold;
  criterion.averagePopulation = population;
  return criterion;
}

SizedHistograms::SizedHistograms( const SparseHistograms &regionHistograms, const Criterion &criterion )
  : mRecords( regionHistograms )
  , mK( criterion.k )
{
  if ( !criterion.residents )
    return;
  const SparseHistograms &cells = *criterion.residents;
  if ( cells.rows() != regionHistograms.rows() )
    throw std::invalid_argument( "SizedHistograms: the residents' cells and the records differ in regions" );
  SparseHistograms &joint = mJoint.emplace();
  // A merge of two rows sorted by class; a record entry without a cell has no residents (size 0: suppressed).
  for ( std::size_t r = 0; r < regionHistograms.rows(); ++r )
  {
    std::size_t e = regionHistograms.offsets[r], c = cells.offsets[r];
    const std::size_t eEnd = regionHistograms.offsets[r + 1], cEnd = cells.offsets[r + 1];
    while ( e < eEnd || c < cEnd )
    {
      const bool record = e < eEnd && ( c == cEnd || regionHistograms.classes[e] <= cells.classes[c] );
      const bool cell = c < cEnd && ( e == eEnd || cells.classes[c] <= regionHistograms.classes[e] );
      const std::int64_t residents = cell ? cells.counts[c] : 0;
      if ( record || residents > 0 )
        append( joint, mSizes, record ? regionHistograms.classes[e] : cells.classes[c], record ? regionHistograms.counts[e] : 0, residents );
      e += record;
      c += cell;
    }
    joint.offsets.push_back( joint.classes.size() );
  }
}

} // namespace vbas
