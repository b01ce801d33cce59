// Per-region sparse histograms class id -> record count, stored row by row (CSR).
// A row is an initial region, or an aggregated region once regions are merged.
#pragma once

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
    //! rowTotal of every row.
    std::vector<std::int64_t> rowTotals() const;
    std::int64_t total() const;
    //! Entry index of (row, cls), or npos.
    std::size_t find( std::size_t row, std::uint32_t cls ) const;
    //! Records of every class over all rows (the EC sizes over the non-geographic QIs).
    std::vector<std::int64_t> classTotals( std::size_t classCount ) const;
};

//! The histograms with the class of each entry e replaced by entryClass[e] (the entries of a row merged).
SparseHistograms remapEntries( const SparseHistograms &histograms, const std::vector<std::uint32_t> &entryClass );

/**
 * Collects the records of one streaming pass, in any order: the row (region), class and count of
 * each record, appended as they come and counted by row at the end (a counting sort).
 */
class HistogramBuilder
{
  public:
    explicit HistogramBuilder( std::size_t rows );
    void add( std::uint32_t row, std::uint32_t cls, std::int64_t count );

    //! The histograms: a counting sort of the records by row, then a dense count per row.
    SparseHistograms build() const;

  private:
    std::size_t mRows;
    std::vector<std::uint32_t> mRecordRows;
    std::vector<std::uint32_t> mRecordClasses;
    bool mWeighted = false;            //!< false while every count is 1
    std::vector<std::int64_t> mCounts; //!< count of each record once one is not 1
};

} // namespace vbas
