// What every released class must hold (docs/method.md, "A release at a stated risk"): k records
// (k-anonymity, paper sec. 3.3) or k residents of the population (k-map, El Emam and Dankar, JAMIA
// 2008), and, under the average risk model, an average risk of the released records at most a
// threshold; and the region histograms as the criterion counts them, for the search's incremental scores.
#pragma once

#include "algorithms/aggregation/average_cut.h"
#include "algorithms/base/histograms.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace vbas
{

struct Criterion
{
    /**
     * k-anonymity at k. Implicit, because k-anonymity at k is also k-map at k (a class's residents
     * are at least its records): a criterion given as k alone can suppress more than k-map would,
     * never less.
     */
    Criterion( std::int64_t k )
      : k( k )
    {
    }
    //! k-map at k, residents the residents of each (region, class) cell, one row per region, classes as the records'.
    Criterion( std::int64_t k, const SparseHistograms &residents )
      : k( k )
      , residents( &residents )
    {
    }

    /**
     * The average risk model: no class below k records (the floor), and the released records'
     * average risk at most threshold: the journalist's, 1/F of each record's class, F its residents
     * in population's cells (as residents above); the prosecutor's, 1/f, without population.
     */
    static Criterion averageRisk( std::int64_t k, double threshold, const SparseHistograms *population );

    std::int64_t k = 5;
    const SparseHistograms *residents = nullptr;         //!< nullptr: k-anonymity
    double averageThreshold = 1;                         //!< the average risk model's threshold; 1: none (a risk is at most 1)
    const SparseHistograms *averagePopulation = nullptr; //!< the average risk model's cells; nullptr: the prosecutor's average
};

//! The records suppressed in an EC of `records` records whose size under the criterion (its records, or its residents) is `size`: all of them when size < k.
inline std::int64_t suppressedIn( std::int64_t records, std::int64_t size, std::int64_t k )
{
  return size < k ? records : 0;
}

/**
 * The region histograms as a criterion counts them: each (region, class) entry's records, size and
 * residents. Under k-anonymity the entries are the records' and the size is the records. Under k-map
 * the size is the residents of the entry's cell, and a region also has an entry of 0 records for each
 * cell with residents but no records: those residents count in any aggregate the region joins. Under
 * the average risk model with a population table the entries are merged with its cells alike, and the
 * size is the records (the floor).
 */
class SizedHistograms
{
  public:
    SizedHistograms( const SparseHistograms &regionHistograms, const Criterion &criterion );

    //! The entries: their classes and records.
    const SparseHistograms &entries() const { return mJoint ? *mJoint : mRecords; }
    std::int64_t size( std::size_t entry ) const { return mSizeIsResidents ? mResidents[entry] : entries().counts[entry]; }
    //! The residents of the entry's cell: the F of the average risk model's risk f / F; its records without a population table (the prosecutor's).
    std::int64_t residents( std::size_t entry ) const { return mResidents.empty() ? entries().counts[entry] : mResidents[entry]; }
    std::int64_t k() const { return mK; }

  private:
    const SparseHistograms &mRecords;
    std::optional<SparseHistograms> mJoint; //!< with cells: the records' entries and the cells, merged
    std::vector<std::int64_t> mResidents;   //!< with cells: the residents of each entry of mJoint
    bool mSizeIsResidents = false;          //!< k-map
    std::int64_t mK = 0;
};

} // namespace vbas
