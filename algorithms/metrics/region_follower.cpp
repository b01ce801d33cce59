#include "algorithms/metrics/region_follower.h"

#include <algorithm>

namespace vbas
{

namespace
{

std::uint64_t fnv1a( std::string_view bytes )
{
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for ( const char c : bytes )
  {
    hash ^= static_cast<unsigned char>( c );
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

} // namespace

RegionFollower::RegionFollower( std::size_t regions )
  : mValue( regions, 0 )
  , mState( regions, State::None )
{
}

void RegionFollower::add( std::uint32_t region, std::string_view value )
{
  const std::uint64_t hash = fnv1a( value );
  State &state = mState[region];
  if ( state == State::None )
  {
    state = State::One;
    mValue[region] = hash;
  }
  else if ( state == State::One && mValue[region] != hash )
  {
    state = State::Several;
    mSeveral = true;
  }
}

std::size_t RegionFollower::splitAggregate( const std::vector<std::size_t> &regionAggregateIndex ) const
{
  if ( mSeveral )
    return npos;
  std::size_t aggregates = 0;
  for ( const std::size_t a : regionAggregateIndex )
    aggregates = std::max( aggregates, a + 1 );
  std::vector<std::uint64_t> value( aggregates, 0 );
  std::vector<bool> seen( aggregates, false ), split( aggregates, false );
  for ( std::size_t r = 0; r < regionAggregateIndex.size(); ++r )
  {
    if ( mState[r] == State::None )
      continue;
    const std::size_t a = regionAggregateIndex[r];
    if ( seen[a] && value[a] != mValue[r] )
      split[a] = true;
    seen[a] = true;
    value[a] = mValue[r];
  }
  for ( std::size_t a = 0; a < aggregates; ++a )
    if ( split[a] )
      return a;
  return npos;
}

} // namespace vbas
