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
      if ( ( mSize + 1 ) * 4 > mEntries.size() * 3 )
        grow();
      std::size_t i = slot( key );
      while ( mEntries[i].key != kEmpty && mEntries[i].key != key )
        i = ( i + 1 ) & mMask;
      if ( mEntries[i].key == kEmpty )
      {
        mEntries[i] = { key, fallback };
        ++mSize;
      }
      return mEntries[i].value;
    }

    const Value *find( std::uint64_t key ) const
    {
      if ( mEntries.empty() )
        return nullptr;
      std::size_t i = slot( key );
      while ( mEntries[i].key != kEmpty )
      {
        if ( mEntries[i].key == key )
          return &mEntries[i].value;
        i = ( i + 1 ) & mMask;
      }
      return nullptr;
    }

    //! Removes key if present (backward-shift deletion: the probe runs stay unbroken, no tombstones).
    void erase( std::uint64_t key )
    {
      if ( mEntries.empty() )
        return;
      std::size_t hole = slot( key );
      while ( mEntries[hole].key != key )
      {
        if ( mEntries[hole].key == kEmpty )
          return;
        hole = ( hole + 1 ) & mMask;
      }
      for ( std::size_t j = ( hole + 1 ) & mMask; mEntries[j].key != kEmpty; j = ( j + 1 ) & mMask )
      {
        // The entry at j may fill the hole unless its home slot lies cyclically in (hole, j].
        const std::size_t home = slot( mEntries[j].key );
        const bool staysAfterHole = hole <= j ? ( hole < home && home <= j ) : ( hole < home || home <= j );
        if ( staysAfterHole )
          continue;
        mEntries[hole] = mEntries[j];
        hole = j;
      }
      mEntries[hole].key = kEmpty;
      --mSize;
    }

    std::size_t size() const { return mSize; }

  private:
    //! A key beside its value: a lookup reads one place in memory, not one in each of two arrays (the ADC trial's main cost, docs/benchmarks.md).
    struct Entry
    {
        std::uint64_t key = kEmpty;
        Value value {};
    };

    std::size_t slot( std::uint64_t key ) const
    {
      key ^= key >> 33;
      key *= 0xff51afd7ed558ccdULL;
      key ^= key >> 33;
      return static_cast<std::size_t>( key ) & mMask;
    }

    void grow()
    {
      std::vector<Entry> entries( mEntries.empty() ? 64 : mEntries.size() * 2 );
      entries.swap( mEntries );
      mMask = mEntries.size() - 1;
      for ( const Entry &entry : entries )
      {
        if ( entry.key == kEmpty )
          continue;
        std::size_t j = slot( entry.key );
        while ( mEntries[j].key != kEmpty )
          j = ( j + 1 ) & mMask;
        mEntries[j] = entry;
      }
    }

    std::vector<Entry> mEntries;
    std::size_t mMask = 0;
    std::size_t mSize = 0;
};

} // namespace vbas
