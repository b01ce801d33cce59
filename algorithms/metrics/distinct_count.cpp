#include "algorithms/metrics/distinct_count.h"

#include <cmath>

namespace vbas
{

namespace
{
//! Up to 8 bytes as a little-endian word, the same on every platform.
std::uint64_t word( const char *p, std::size_t size )
{
  std::uint64_t w = 0;
  for ( std::size_t i = 0; i < size; ++i )
    w |= std::uint64_t( static_cast<unsigned char>( p[i] ) ) << ( 8 * i );
  return w;
}

std::uint64_t rotl( std::uint64_t x, int k )
{
  return ( x << k ) | ( x >> ( 64 - k ) );
}

//! MurmurHash3's 64-bit finalizer: every input bit flips each output bit with probability about 1/2.
std::uint64_t fmix64( std::uint64_t h )
{
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

//! A MurmurHash3-style hash of the bytes: each 8-byte word, then the zero-padded tail, mixed in; then the size.
std::uint64_t hash( std::string_view bytes )
{
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  const auto mixIn = [&h]( std::uint64_t k ) {
    k *= 0x87c37b91114253d5ULL;
    k = rotl( k, 31 );
    k *= 0x4cf5ad432745937fULL;
    h ^= k;
    h = rotl( h, 27 ) * 5 + 0x52dce729;
  };
  std::size_t i = 0;
  for ( ; i + 8 <= bytes.size(); i += 8 )
    mixIn( word( bytes.data() + i, 8 ) );
  if ( i < bytes.size() )
    mixIn( word( bytes.data() + i, bytes.size() - i ) );
  return fmix64( h ^ bytes.size() );
}
} // namespace

void DistinctCount::add( std::string_view value )
{
  const std::uint64_t h = hash( value );
  const std::size_t index = static_cast<std::size_t>( h >> ( 64 - kPrecision ) );
  // The rank of the remaining 52 bits: 1 + their leading zeros, at most 53 (the sentinel bit).
  const std::uint64_t rest = ( h << kPrecision ) | ( std::uint64_t( 1 ) << ( kPrecision - 1 ) );
  std::uint8_t rank = 1;
  for ( std::uint64_t bit = std::uint64_t( 1 ) << 63; !( rest & bit ); bit >>= 1 )
    ++rank;
  if ( rank > mRegisters[index] )
    mRegisters[index] = rank;
}

double DistinctCount::estimate() const
{
  const double m = static_cast<double>( kRegisters );
  double sum = 0;
  std::size_t zeros = 0;
  for ( const std::uint8_t rank : mRegisters )
  {
    sum += std::ldexp( 1.0, -rank );
    zeros += rank == 0;
  }
  const double raw = 0.7213 / ( 1 + 1.079 / m ) * m * m / sum;
  // Small range: linear counting over the empty registers, more accurate there (Flajolet et al. 2007,
  // fig. 3). No large-range correction: with a 64-bit hash, collisions stay negligible (Heule, Nunkesser
  // and Hall, "HyperLogLog in practice", 2013).
  if ( raw <= 2.5 * m && zeros > 0 )
    return m * std::log( m / static_cast<double>( zeros ) );
  return raw;
}

} // namespace vbas
