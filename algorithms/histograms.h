// Per-region sparse histograms class id -> record count (SPEC 2), stored row by row (CSR).
// A row is an initial region, or an aggregated region once regions are merged.
#pragma once

#include "flat_map.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

struct SparseHistograms
{
    static constexpr std::size_t npos = ~std::size_t( 0 );

    std::vector<std::size_t> offsets { 0 }; //!< rows + 1 entries; row r is [offsets[r], offsets[r + 1])
    std::vector<std::uint32_t> classes;     //!< class id of each entry, increasing within a row
    std::vector<std::int64_t> counts;       //!< records of each entry

    std::size_t rows() const { return offsets.size() - 1; }
    std::int64_t rowTotal( std::size_t row ) const;
    std::int64_t total() const;
    //! Entry index of (row, cls), or npos.
    std::size_t find( std::size_t row, std::uint32_t cls ) const;
    //! Records of every class over all rows (the EC sizes over the non-geographic QIs).
    std::vector<std::int64_t> classTotals( std::size_t classCount ) const;
};

//! Accumulates records in one streaming pass, in any order.
class HistogramBuilder
{
  public:
    explicit HistogramBuilder( std::size_t rows );
    void add( std::uint32_t row, std::uint32_t cls, std::int64_t count );
    SparseHistograms build() const;

  private:
    std::size_t mRows;
    FlatMap<std::int64_t> mCells;
};

} // namespace vbas
