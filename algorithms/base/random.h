// Reproducible pseudo-random numbers: for a given seed, the same sequence on every platform and with
// every standard library (the std distributions are implementation-defined, so none is used here).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace vbas
{

/**
 * xoshiro256** 1.0 (Blackman and Vigna, "Scrambled linear pseudorandom number generators", 2018;
 * https://prng.di.unimi.it/xoshiro256starstar.c), its state filled from the seed by splitmix64
 * (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014), as its authors advise.
 * Not cryptographic.
 */
class Random
{
  public:
    explicit Random( std::uint64_t seed )
    {
      for ( std::uint64_t &word : mState )
        word = splitMix64( seed );
    }

    //! The next 64 random bits.
    std::uint64_t next()
    {
      const std::uint64_t result = rotl( mState[1] * 5, 7 ) * 9;
      const std::uint64_t t = mState[1] << 17;
      mState[2] ^= mState[0];
      mState[3] ^= mState[1];
      mState[1] ^= mState[2];
      mState[0] ^= mState[3];
      mState[2] ^= t;
      mState[3] = rotl( mState[3], 45 );
      return result;
    }

    /**
     * Uniform in [0, n), n >= 1, without bias: the high word of next() * n, redrawn when the low word
     * falls in the 2^64 mod n values that would favour some results (Lemire, "Fast random integer
     * generation in an interval", ACM TOMACS 2019).
     */
    std::uint64_t below( std::uint64_t n )
    {
      std::uint64_t high = 0;
      std::uint64_t low = multiply( next(), n, high );
      if ( low < n )
      {
        const std::uint64_t threshold = ( 0 - n ) % n; // 2^64 mod n
        while ( low < threshold )
          low = multiply( next(), n, high );
      }
      return high;
    }

    //! Fisher-Yates (Durstenfeld) shuffle: every order of [first, last) equally likely.
    template<typename RandomIt>
    void shuffle( RandomIt first, RandomIt last )
    {
      using Difference = typename std::iterator_traits<RandomIt>::difference_type;
      for ( Difference i = last - first - 1; i > 0; --i )
        std::iter_swap( first + i, first + static_cast<Difference>( below( static_cast<std::uint64_t>( i ) + 1 ) ) );
    }

    //! SplitMix64: the next word of the sequence from state (which it moves on), as the seeding and the core's hashes of small lists take it.
    static std::uint64_t splitMix64( std::uint64_t &state )
    {
      std::uint64_t z = ( state += 0x9e3779b97f4a7c15ULL );
      z = ( z ^ ( z >> 30 ) ) * 0xbf58476d1ce4e5b9ULL;
      z = ( z ^ ( z >> 27 ) ) * 0x94d049bb133111ebULL;
      return z ^ ( z >> 31 );
    }

  private:
    static std::uint64_t rotl( std::uint64_t x, int k ) { return ( x << k ) | ( x >> ( 64 - k ) ); }

    //! The 128-bit product a * b: returns its low word, sets high to its high word (portable, no __int128).
    static std::uint64_t multiply( std::uint64_t a, std::uint64_t b, std::uint64_t &high )
    {
      const std::uint64_t aLow = a & 0xffffffffULL, aHigh = a >> 32;
      const std::uint64_t bLow = b & 0xffffffffULL, bHigh = b >> 32;
      const std::uint64_t lowLow = aLow * bLow;
      const std::uint64_t lowHigh = aLow * bHigh;
      const std::uint64_t highLow = aHigh * bLow;
      const std::uint64_t middle = ( lowLow >> 32 ) + ( lowHigh & 0xffffffffULL ) + ( highLow & 0xffffffffULL );
      high = aHigh * bHigh + ( lowHigh >> 32 ) + ( highLow >> 32 ) + ( middle >> 32 );
      return a * b;
    }

    std::uint64_t mState[4];
};

} // namespace vbas
