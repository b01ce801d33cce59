#include "string_index.h"

#include <cstring>

namespace vbas
{

std::uint64_t StringIndex::hash( std::string_view text )
{
  // Eight bytes at a time, multiply-xorshift mixing; collisions are resolved exactly by the caller.
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ text.size();
  std::size_t i = 0;
  for ( ; i + 8 <= text.size(); i += 8 )
  {
    std::uint64_t word;
    std::memcpy( &word, text.data() + i, 8 );
    h = ( h ^ word ) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  std::uint64_t tail = 0;
  std::memcpy( &tail, text.data() + i, text.size() - i );
  h = ( h ^ tail ) * 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 29;
  return h == FlatMap<std::uint32_t>::kEmpty ? 0 : h; // kEmpty is reserved by FlatMap
}

std::uint32_t StringIndex::insert( std::string_view text )
{
  const auto next = static_cast<std::uint32_t>( mStrings.size() );
  std::uint32_t &id = mByHash.findOrInsert( hash( text ), next );
  if ( id == next )
  {
    mStrings.emplace_back( text );
    return id;
  }
  if ( mStrings[id] == text )
    return id;
  const auto [it, inserted] = mCollisions.try_emplace( std::string( text ), next );
  if ( inserted )
    mStrings.emplace_back( text );
  return it->second;
}

std::optional<std::uint32_t> StringIndex::find( std::string_view text ) const
{
  const std::uint32_t *id = mByHash.find( hash( text ) );
  if ( !id )
    return std::nullopt;
  if ( mStrings[*id] == text )
    return *id;
  const auto it = mCollisions.find( std::string( text ) );
  return it == mCollisions.end() ? std::nullopt : std::optional<std::uint32_t>( it->second );
}

} // namespace vbas
