#include "algorithms/generalization/generalization_metrics.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace vbas
{

namespace
{

//! Whether the value with this code is written coarser than it is at level: its label holds several values.
bool coarser( const QiHierarchy &qi, std::size_t level, std::uint32_t code )
{
  return qi.hierarchy.leaves( level, qi.label( level, code ) ) > 1;
}

//! The released records of one aggregate spread over each QI's values: per label at the node's level, and everywhere ("*").
struct Spread
{
    std::vector<std::vector<double>> perLabel; //!< [q][label]: records per value under it
    std::vector<double> everywhere;            //!< [q]: records per value, from "*"

    double perValue( const QiHierarchy &qi, std::size_t q, std::size_t level, std::size_t value ) const { return everywhere[q] + perLabel[q][qi.hierarchy.labelId( level, value )]; }
};

//! The released records of the regions' entries, spread (ARE's uniform estimate).
Spread spread( const std::vector<QiHierarchy> &qis, const LatticeNode &node, const std::vector<std::uint32_t> &classCodes, const SparseHistograms &regionHistograms, const WrittenClasses &written,
               const std::vector<std::size_t> &regions )
{
  const std::size_t qiCount = qis.size();
  Spread s;
  s.everywhere.assign( qiCount, 0.0 );
  for ( std::size_t q = 0; q < qiCount; ++q )
    s.perLabel.emplace_back( qis[q].hierarchy.labelCount( node[q] ), 0.0 );
  for ( const std::size_t r : regions )
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
    {
      const std::uint32_t w = written.entryClass[e];
      if ( written.dropped[w] )
        continue;
      const double n = static_cast<double>( regionHistograms.counts[e] );
      for ( std::size_t q = 0; q < qiCount; ++q )
      {
        const QiHierarchy &qi = qis[q];
        if ( written.entryStarred[e] >> q & 1u )
          s.everywhere[q] += n / static_cast<double>( qi.hierarchy.valueCount() );
        else
        {
          const std::uint32_t label = qi.label( node[q], classCodes[regionHistograms.classes[e] * qiCount + q] );
          s.perLabel[q][label] += n / static_cast<double>( qi.hierarchy.leaves( node[q], label ) );
        }
      }
    }
  return s;
}

//! One region's queries: (QI, hierarchy value, records), each once.
std::vector<std::tuple<std::size_t, std::size_t, std::int64_t>> queries( const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &classCodes, const SparseHistograms &regionHistograms,
                                                                         std::size_t r )
{
  std::vector<std::tuple<std::size_t, std::size_t, std::int64_t>> all;
  for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
    for ( std::size_t q = 0; q < qis.size(); ++q )
      all.emplace_back( q, qis[q].valueOfCode[classCodes[regionHistograms.classes[e] * qis.size() + q]], regionHistograms.counts[e] );
  std::sort( all.begin(), all.end() );
  std::vector<std::tuple<std::size_t, std::size_t, std::int64_t>> merged;
  for ( const auto &[q, value, n] : all )
    if ( !merged.empty() && std::get<0>( merged.back() ) == q && std::get<1>( merged.back() ) == value )
      std::get<2>( merged.back() ) += n;
    else
      merged.emplace_back( q, value, n );
  return merged;
}

} // namespace

GeneralizationMetrics generalizationMetrics( const std::vector<QiHierarchy> &qis, const LatticeNode &node, const std::vector<std::uint32_t> &classCodes, const SparseHistograms &regionHistograms,
                                             const WrittenClasses &written, const std::vector<std::size_t> &regionAggregateIndex )
{
  const std::size_t qiCount = qis.size();
  GeneralizationMetrics m;
  double coarse = 0, values = 0;
  for ( std::size_t e = 0; e < regionHistograms.counts.size(); ++e )
  {
    const std::uint32_t w = written.entryClass[e];
    std::size_t changed = 0;
    for ( std::size_t q = 0; q < qiCount; ++q )
      changed += written.dropped[w] || ( written.entryStarred[e] >> q & 1u ) || coarser( qis[q], node[q], classCodes[regionHistograms.classes[e] * qiCount + q] );
    const std::int64_t n = regionHistograms.counts[e];
    if ( !written.dropped[w] && changed > 0 )
      m.recordsGeneralized += n;
    coarse += static_cast<double>( n ) * static_cast<double>( changed );
    values += static_cast<double>( n ) * static_cast<double>( qiCount );
  }
  m.gc = values > 0 ? coarse / values : 0.0;

  // ARE: each aggregate's released records spread evenly over its regions and the values under each label.
  std::vector<std::vector<std::size_t>> members;
  for ( std::size_t r = 0; r < regionAggregateIndex.size(); ++r )
  {
    members.resize( std::max( members.size(), regionAggregateIndex[r] + 1 ) );
    members[regionAggregateIndex[r]].push_back( r );
  }
  double error = 0;
  for ( const std::vector<std::size_t> &regions : members )
  {
    const Spread s = spread( qis, node, classCodes, regionHistograms, written, regions );
    for ( const std::size_t r : regions )
      for ( const auto &[q, value, n] : queries( qis, classCodes, regionHistograms, r ) )
      {
        const double estimate = s.perValue( qis[q], q, node[q], value ) / static_cast<double>( regions.size() );
        error += std::abs( static_cast<double>( n ) - estimate ) / static_cast<double>( n );
        ++m.queries;
      }
  }
  m.are = m.queries > 0 ? error / static_cast<double>( m.queries ) : 0.0;
  return m;
}

} // namespace vbas
