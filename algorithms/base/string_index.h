// Dense ids for byte strings (QI values, region ids, QI tuples): a FlatMap over a 64-bit hash of the
// bytes, each hit verified, so a lookup allocates nothing and hash collisions stay exact.
#pragma once

#include "algorithms/base/flat_map.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vbas
{

class StringIndex
{
  public:
    //! The id of text, a new id (the number of strings so far) if it is new.
    std::uint32_t insert( std::string_view text );

    //! The id of text, if it was inserted.
    std::optional<std::uint32_t> find( std::string_view text ) const;

    std::size_t size() const { return mKeys.size(); }

    //! The string of id: up to 24 bytes rebuilt from its key, longer ones as kept.
    std::string text( std::uint32_t id ) const;

  private:
    /**
     * The size and three words of a string: its first, second and last 8 bytes (4 and 4 below 8 bytes,
     * three bytes below 4). Up to 24 bytes the words cover the whole string, so the key is the string.
     */
    struct Key
    {
        std::uint64_t first = 0;
        std::uint64_t second = 0;
        std::uint64_t last = 0;
        std::size_t size = 0;
        bool operator==( const Key &other ) const { return first == other.first && second == other.second && last == other.last && size == other.size; }
    };
    static constexpr std::size_t kExactKey = 24;

    static Key key( std::string_view text );
    static std::uint64_t hash( std::string_view text, const Key &key );
    //! Whether id holds text, whose key is key.
    bool holds( std::uint32_t id, std::string_view text, const Key &key ) const;

    FlatMap<std::uint32_t> mByHash;
    std::vector<Key> mKeys;         //!< key of each id
    std::vector<std::string> mLong; //!< text of each id longer than kExactKey bytes, else empty
    // Strings whose hash equals an earlier, different string's: exact but slower.
    std::unordered_map<std::string, std::uint32_t> mCollisions;
};

} // namespace vbas
