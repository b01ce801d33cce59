// Whether a released field carries finer geography than the release (docs/outputs.md): its values
// follow the original regions (one value per region on the released records) and split an aggregate
// (regions of one aggregate hold different values), so it tells which region a record comes from:
// a copy of the region id, a tract, a ZIP, a county that crosses aggregates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace vbas
{

/**
 * The values of one field on the released records, per region: a 64-bit hash (FNV-1a) of the value's
 * bytes, and whether the region holds more than one. Memory: one hash and one state per region.
 */
class RegionFollower
{
  public:
    static constexpr std::size_t npos = static_cast<std::size_t>( -1 );

    explicit RegionFollower( std::size_t regions );

    //! A released record of region holds value (its exact bytes).
    void add( std::uint32_t region, std::string_view value );

    /**
     * When every region holds a single value (the field is a function of the region), the first
     * aggregate whose regions hold different values; npos when some region holds several values or
     * no aggregate is split. regionAggregateIndex: the aggregate of each region.
     */
    std::size_t splitAggregate( const std::vector<std::size_t> &regionAggregateIndex ) const;

  private:
    enum class State : std::uint8_t
    {
      None,
      One,
      Several,
    };
    std::vector<std::uint64_t> mValue;
    std::vector<State> mState;
    bool mSeveral = false; //!< some region holds several values
};

} // namespace vbas
