#include "algorithms/aggregation/criterion.h"

#include <stdexcept>

namespace vbas
{

namespace
{

//! Appends to joint one entry of region r's merged row: its class, records and residents.
void append( SparseHistograms &joint, std::vector<std::int64_t> &residentsOf, std::uint32_t cls, std::int64_t records, std::int64_t residents )
{
  joint.classes.push_back( cls );
  joint.counts.push_back( records );
  residentsOf.push_back( residents );
}

} // namespace

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
  mSizeIsResidents = criterion.residents != nullptr;
  const SparseHistograms *table = criterion.residents ? criterion.residents : criterion.averageThreshold < 1 ? criterion.averagePopulation : nullptr;
  if ( !table )
    return;
  const SparseHistograms &cells = *table;
  if ( cells.rows() != regionHistograms.rows() )
    throw std::invalid_argument( "SizedHistograms: the residents' cells and the records differ in regions" );
  SparseHistograms &joint = mJoint.emplace();
  // A merge of two rows sorted by class; a record entry without a cell has no residents (under k-map, size 0: suppressed).
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
        append( joint, mResidents, record ? regionHistograms.classes[e] : cells.classes[c], record ? regionHistograms.counts[e] : 0, residents );
      e += record;
      c += cell;
    }
    joint.offsets.push_back( joint.classes.size() );
  }
}

} // namespace vbas
