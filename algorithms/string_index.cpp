#include "string_index.h"

namespace vbas
{

std::uint64_t StringIndex::hash( std::string_view text )
{
  // FNV-1a, 64 bit; kEmpty is reserved by FlatMap.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for ( const char c : text )
    h = ( h ^ static_cast<unsigned char>( c ) ) * 0x100000001b3ULL;
  return h == FlatMap<std::uint32_t>::kEmpty ? 0 : h;
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
