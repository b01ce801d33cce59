#include "string_index.h"

#include <cstring>

namespace vbas
{

std::uint64_t StringIndex::hash( std::string_view text )
{
  // Whole 8-byte words, the last one overlapping the previous (short strings: 4-byte or single-byte
  // loads), mixed with the length; collisions are resolved exactly by the callers.
  const char *p = text.data();
  const std::size_t n = text.size();
  const auto load = [p]( std::size_t at, std::size_t bytes ) {
    std::uint64_t word = 0;
    std::memcpy( &word, p + at, bytes );
    return word;
  };
  std::uint64_t a = 0, b = 0;
  if ( n >= 8 )
  {
    std::uint64_t h = n * 0x9e3779b97f4a7c15ULL;
    for ( std::size_t i = 0; i + 8 < n; i += 8 )
      h = ( h ^ load( i, 8 ) ) * 0xff51afd7ed558ccdULL, h ^= h >> 32;
    a = h;
    b = load( n - 8, 8 );
  }
  else if ( n >= 4 )
  {
    a = load( 0, 4 );
    b = load( n - 4, 4 );
  }
  else if ( n > 0 )
  {
    a = static_cast<unsigned char>( p[0] ) | static_cast<std::uint64_t>( static_cast<unsigned char>( p[n / 2] ) ) << 8 | static_cast<std::uint64_t>( static_cast<unsigned char>( p[n - 1] ) ) << 16;
  }
  std::uint64_t h = ( a ^ 0xc4ceb9fe1a85ec53ULL ) * ( b ^ n ^ 0x9e3779b97f4a7c15ULL );
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
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
