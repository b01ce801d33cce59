#include "algorithms/aggregation/average_cut.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace vbas
{

namespace
{

constexpr int kUnitBits = 62;

} // namespace

RiskExcess::RiskExcess( double threshold )
  : mThreshold( static_cast<RiskUnits>( std::floor( std::ldexp( static_cast<long double>( threshold ) * ( 1 + static_cast<long double>( kAverageRiskTolerance ) ), kUnitBits ) ) ) )
{
  if ( !( threshold > 0 && threshold <= 1 ) )
    throw std::invalid_argument( "RiskExcess: the threshold is not a risk above 0" );
}

RiskUnits RiskExcess::operator()( std::int64_t records, std::int64_t residents ) const
{
  const RiskUnits share = ( static_cast<RiskUnits>( records ) << kUnitBits ), of = std::max<std::int64_t>( residents, 1 );
  return ( share + of - 1 ) / of - records * mThreshold;
}

std::vector<char> averageRiskCut( const std::vector<std::int64_t> &records, const std::vector<std::int64_t> &residents, double threshold )
{
  const RiskExcess excessOf( threshold );
  std::vector<RiskUnits> excess( records.size() );
  std::vector<std::size_t> risky;
  RiskUnits total = 0;
  for ( std::size_t i = 0; i < records.size(); ++i )
  {
    excess[i] = excessOf( records[i], residents[i] );
    total += excess[i];
    if ( excess[i] > 0 )
      risky.push_back( i );
  }
  std::sort( risky.begin(), risky.end(), [&]( std::size_t a, std::size_t b ) { return std::tie( residents[a], records[a], a ) < std::tie( residents[b], records[b], b ); } );
  std::vector<char> cut( records.size(), 0 );
  for ( std::size_t i = 0; i < risky.size() && total > 0; ++i )
  {
    cut[risky[i]] = 1;
    total -= excess[risky[i]];
  }
  return cut;
}

AverageCut::AverageCut( double threshold )
  : mExcess( threshold )
{
}

void AverageCut::change( std::int64_t records, std::int64_t residents, int delta )
{
  const RiskUnits excess = mExcess( records, residents );
  mTotal += delta * excess;
  if ( excess > 0 )
  {
    Group &group = mRisky[{ residents, records }];
    group.classes += delta;
    group.excess = excess;
  }
  if ( mMarked )
    mJournal.emplace_back( records, residents, delta );
}

template<typename Take>
void AverageCut::walk( Take take ) const
{
  // The classes are cut, the riskiest first, while the excesses of those left sum above 0; within a
  // group they are alike, so the number cut from it is a quotient.
  RiskUnits left = mTotal;
  for ( auto group = mRisky.begin(); group != mRisky.end() && left > 0; ++group )
  {
    const Group &g = group->second;
    const std::int64_t classes = std::min<RiskUnits>( g.classes, ( left + g.excess - 1 ) / g.excess );
    if ( classes > 0 )
      take( group->first, classes );
    left -= classes * g.excess;
  }
  if ( left > 0 ) // the positive excesses sum to at least the total
    throw std::logic_error( "AverageCut: the risky classes do not cover the excess" );
}

std::int64_t AverageCut::records() const
{
  std::int64_t cut = 0;
  walk( [&cut]( const std::pair<std::int64_t, std::int64_t> &group, std::int64_t classes ) { cut += classes * group.second; } );
  return cut;
}

std::optional<std::pair<std::int64_t, std::int64_t>> AverageCut::lastGroup() const
{
  std::optional<std::pair<std::int64_t, std::int64_t>> last;
  walk( [&last]( const std::pair<std::int64_t, std::int64_t> &group, std::int64_t ) { last = group; } );
  return last;
}

void AverageCut::mark()
{
  mJournal.clear();
  mMarked = true;
}

void AverageCut::rollback()
{
  mMarked = false;
  for ( auto c = mJournal.rbegin(); c != mJournal.rend(); ++c )
    change( std::get<0>( *c ), std::get<1>( *c ), -std::get<2>( *c ) );
  mJournal.clear();
}

} // namespace vbas
