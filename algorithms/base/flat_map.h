// Open-addressing hash map (linear probing) from 64-bit keys to values: the table behind StringIndex
// and ADC's per-cluster EC counts, in the core's hot loops. Faster and smaller than std::unordered_map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace vbas
{

template<typename Value>
class FlatMap
{
  public:
    static constexpr std::uint64_t kEmpty = ~std::uint64_t( 0 );

    //! The value of key, inserted as fallback when absent. key must not be kEmpty.
    Value &findOrInsert( std::uint64_t key, Value fallback )
    {
      if ( ( mSize + 1 ) * 4 > mKeys.size() * 3 )
        grow();
      std::size_t i = slot( key );
      while ( mKeys[i] != kEmpty && mKeys[i] != key )
        i = ( i + 1 ) & mMask;
      if ( mKeys[i] == kEmpty )
      {
        mKeys[i] = key;
        mValues[i] = fallback;
        ++mSize;
      }
      return mValues[i];
    }

    const Value *find( std::uint64_t key ) const
    {
      if ( mKeys.empty() )
        return nullptr;
      std::size_t i = slot( key );
      while ( mKeys[i] != kEmpty )
      {
        if ( mKeys[i] == key )
          return &mValues[i];
        i = ( i + 1 ) & mMask;
      }
      return nullptr;
    }

    //! Removes key if present (backward-shift deletion: the probe runs stay unbroken, no tombstones).
    void erase( std::uint64_t key )
    {
      if ( mKeys.empty() )
        return;
      std::size_t hole = slot( key );
      while ( mKeys[hole] != key )
      {
        if ( mKeys[hole] == kEmpty )
          return;
        hole = ( hole + 1 ) & mMask;
      }
      for ( std::size_t j = ( hole + 1 ) & mMask; mKeys[j] != kEmpty; j = ( j + 1 ) & mMask )
      {
        // The entry at j may fill the hole unless its home slot lies cyclically in (hole, j].
        const std::size_t home = slot( mKeys[j] );
        const bool staysAfterHole = hole <= j ? ( hole < home && home <= j ) : ( hole < home || home <= j );
        if ( staysAfterHole )
          continue;
        mKeys[hole] = mKeys[j];
        mValues[hole] = mValues[j];
        hole = j;
      }
      mKeys[hole] = kEmpty;
      --mSize;
    }

    std::size_t size() const { return mSize; }

  private:
    std::size_t slot( std::uint64_t key ) const
    {
      key ^= key >> 33;
      key *= 0xff51afd7ed558ccdULL;
      key ^= key >> 33;
      return static_cast<std::size_t>( key ) & mMask;
    }

    void grow()
    {
      std::vector<std::uint64_t> keys( mKeys.empty() ? 64 : mKeys.size() * 2, kEmpty );
      std::vector<Value> values( keys.size() );
      keys.swap( mKeys );
      values.swap( mValues );
      mMask = mKeys.size() - 1;
      for ( std::size_t i = 0; i < keys.size(); ++i )
      {
        if ( keys[i] == kEmpty )
          continue;
        std::size_t j = slot( keys[i] );
        while ( mKeys[j] != kEmpty )
          j = ( j + 1 ) & mMask;
        mKeys[j] = keys[i];
        mValues[j] = values[i];
      }
    }

    std::vector<std::uint64_t> mKeys;
    std::vector<Value> mValues;
    std::size_t mMask = 0;
    std::size_t mSize = 0;
};

} // namespace vbas
