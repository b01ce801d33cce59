// Dense ids for byte strings (QI values, region ids): a FlatMap over a 64-bit hash of the bytes,
// verified against the stored strings, so a lookup allocates nothing and hash collisions stay exact.
#pragma once

#include "flat_map.h"

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

    std::size_t size() const { return mStrings.size(); }

  private:
    static std::uint64_t hash( std::string_view text );

    FlatMap<std::uint32_t> mByHash;
    std::vector<std::string> mStrings;
    // Strings whose hash equals an earlier, different string's: exact but slower.
    std::unordered_map<std::string, std::uint32_t> mCollisions;
};

} // namespace vbas
