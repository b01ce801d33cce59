// Suppression at a node of the lattice (docs/method.md, Local suppression): every EC below k in its
// aggregate (k records, or under k-map k residents) is suppressed. Record suppression drops its records (paper sec. 3.3); local suppression
// writes the fewest, least informative of their QI values as "*" instead, records of an aggregate
// whose values agree once starred forming a class of their own when it holds at least k records, and
// drops only the records that reach no such class.
#pragma once

#include "algorithms/generalization/generalization.h"
#include "algorithms/generalization/starred_residents.h"
#include "algorithms/base/histograms.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

struct ValueSuppression
{
    std::vector<std::uint32_t> starred; //!< per EC entry: bit q set when QI q is written as "*" (every bit when dropped)
    std::vector<char> dropped;          //!< per EC entry: its records are not released
    std::int64_t smallClassRecords = 0; //!< records in ECs below k (starred or dropped) or cut for the average risk
    std::int64_t starredRecords = 0;    //!< released with at least one "*"
    std::int64_t starredValues = 0;     //!< "*" written
    std::int64_t droppedRecords = 0;
};

/**
 * The largest number of QIs local suppression takes. At every lattice node it tries, in each aggregate, up to
 * 2^q - 1 star sets, each a sort of the records still unplaced: with 2 levels a QI the lattice holds 2^q nodes
 * too, so the work grows about as 4^q. At 8 QIs a search on 100,000 records ends in minutes on 2 cores; 12 QIs
 * on 3,000 records did not end in a minute (docs/benchmarks.md, Local suppression).
 */
constexpr std::size_t kMaxLocallySuppressedQis = 8;

/**
 * The star sets local suppression tries, in order: fewest QIs first, then the least weight
 * (weight[q]: the information a value of QI q carries), then the lower bits. QIs with `free` set
 * (already "*" everywhere) are left out. At most kMaxLocallySuppressedQis QIs.
 */
std::vector<std::uint32_t> starSets( const std::vector<double> &weight, std::uint32_t free );

/**
 * Suppression of the ECs (aggregate, generalized class) below k of ecs, labels the classes' labels
 * (Generalization::labels, qiCount per class). With no star sets, record suppression: every EC below
 * k dropped. Otherwise, in each aggregate, the records of ECs below k still unplaced are grouped by
 * their labels with the set's QIs starred, set after set; a group of at least k records is released
 * so; the rest is dropped. With residents (k-map, keyed by the same labels, rows the aggregates), an
 * EC or a group is below k when fewer than k residents match it, a starred QI matching every value.
 */
ValueSuppression suppressValues( const SparseHistograms &ecs, const std::vector<std::uint32_t> &labels, std::size_t qiCount, const std::vector<std::uint32_t> &sets, std::int64_t k,
                                 const StarredResidents *residents = nullptr );

/**
 * The average risk model at a node (docs/method.md, "A release at a stated risk"): the classes s releases,
 * as written (aggregate, labels with the starred QIs as "*"), each of f records and F residents (residents,
 * keyed by the same labels; nullptr: F = f, the prosecutor's), cut the riskiest first until the released
 * records' average risk is at most threshold (averageRiskCut); the ECs of a cut class dropped.
 */
void meetAverageRisk( const SparseHistograms &ecs, const std::vector<std::uint32_t> &labels, std::size_t qiCount, const StarredResidents *residents, double threshold, ValueSuppression &s );

//! Record suppression of the ECs of ecs that dropped marks, whatever their size (a release's own suppression, such as k-map's); qiCount QIs.
ValueSuppression dropClasses( const SparseHistograms &ecs, const std::vector<char> &dropped, std::size_t qiCount );

} // namespace vbas
