#include "algorithms/base/string_index.h"

#include <cstring>

namespace vbas
{

namespace
{
template<typename Word>
std::uint64_t load( const char *p )
{
  Word word;
  std::memcpy( &word, p, sizeof( Word ) );
  return word;
}

std::uint64_t mix( std::uint64_t h )
{
  h ^= h >> 32;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 29;
  return h;
}
} // namespace

[[gnu::always_inline]] inline StringIndex::Key StringIndex::key( std::string_view text )
{
  const char *p = text.data();
  const std::size_t n = text.size();
  Key k;
  k.size = n;
  if ( n >= 8 )
  {
    k.first = load<std::uint64_t>( p );
    k.last = load<std::uint64_t>( p + n - 8 );
    if ( n >= 16 )
      k.second = load<std::uint64_t>( p + 8 );
  }
  else if ( n >= 4 )
  {
    k.first = load<std::uint32_t>( p ) | load<std::uint32_t>( p + n - 4 ) << 32;
  }
  else if ( n > 0 )
  {
    k.first = static_cast<unsigned char>( p[0] ) | std::uint64_t( static_cast<unsigned char>( p[n / 2] ) ) << 8 | std::uint64_t( static_cast<unsigned char>( p[n - 1] ) ) << 16;
  }
  return k;
}

[[gnu::always_inline]] inline std::uint64_t StringIndex::hash( std::string_view text, const Key &key )
{
  // Up to 24 bytes the hash is a function of the key alone, so the key must tell strings apart.
  std::uint64_t h = ( ( ( key.first ^ 0xc4ceb9fe1a85ec53ULL ) * 0xff51afd7ed558ccdULL + key.size ) ^ key.second ) * 0x9e3779b97f4a7c15ULL;
  for ( std::size_t i = 16; i + 8 < text.size(); i += 8 ) // the words between the key's, in longer strings
    h = ( h ^ load<std::uint64_t>( text.data() + i ) ) * 0x9e3779b97f4a7c15ULL;
  h = mix( h ^ key.last * 0x94d049bb133111ebULL );
  return h == FlatMap<std::uint32_t>::kEmpty ? 0 : h; // kEmpty is reserved by FlatMap
}

[[gnu::always_inline]] inline bool StringIndex::holds( std::uint32_t id, std::string_view text, const Key &key ) const
{
  return mKeys[id] == key && ( key.size <= kExactKey || mLong[id] == text );
}

std::uint32_t StringIndex::insert( std::string_view text )
{
  const Key k = key( text );
  const auto next = static_cast<std::uint32_t>( mKeys.size() );
  const std::uint32_t id = mByHash.findOrInsert( hash( text, k ), next );
  if ( id != next && holds( id, text, k ) )
    return id;
  if ( id != next )
  {
    const auto [it, inserted] = mCollisions.try_emplace( std::string( text ), next );
    if ( !inserted )
      return it->second;
  }
  mKeys.push_back( k );
  mLong.emplace_back( k.size > kExactKey ? text : std::string_view() );
  return next;
}

std::optional<std::uint32_t> StringIndex::find( std::string_view text ) const
{
  const Key k = key( text );
  const std::uint32_t *id = mByHash.find( hash( text, k ) );
  if ( !id )
    return std::nullopt;
  if ( holds( *id, text, k ) )
    return *id;
  const auto it = mCollisions.find( std::string( text ) );
  return it == mCollisions.end() ? std::nullopt : std::optional<std::uint32_t>( it->second );
}

std::string StringIndex::text( std::uint32_t id ) const
{
  const Key &k = mKeys[id];
  if ( k.size > kExactKey )
    return mLong[id];
  // The inverse of key(): the words written back where key() read them (overlapping writes agree).
  std::string text( k.size, '\0' );
  char *p = &text[0];
  const std::size_t n = k.size;
  if ( n >= 8 )
  {
    std::memcpy( p, &k.first, 8 );
    std::memcpy( p + n - 8, &k.last, 8 );
    if ( n >= 16 )
      std::memcpy( p + 8, &k.second, 8 );
  }
  else if ( n >= 4 )
  {
    const std::uint32_t head = static_cast<std::uint32_t>( k.first ), tail = static_cast<std::uint32_t>( k.first >> 32 );
    std::memcpy( p, &head, 4 );
    std::memcpy( p + n - 4, &tail, 4 );
  }
  else if ( n > 0 )
  {
    p[0] = static_cast<char>( k.first & 0xff );
    p[n / 2] = static_cast<char>( k.first >> 8 & 0xff );
    p[n - 1] = static_cast<char>( k.first >> 16 & 0xff );
  }
  return text;
}

} // namespace vbas
