// The sensitive attribute (docs/concepts.md): records per (region, QI class, sensitive value), counted in
// the same pass as the QI classes, and what the released ECs reveal of it: distinct l-diversity,
// t-closeness (earth mover's distance) and the majority value behind the classification metric.
#pragma once

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/base/flat_map.h"
#include "algorithms/base/histograms.h"
#include "algorithms/aggregation/suppression.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

//! The records of each region by pair (QI class, sensitive value); a pair's id is dense.
struct SensitiveHistograms
{
    SparseHistograms pairs;               //!< per region: pair id -> records
    std::vector<std::uint32_t> pairClass; //!< QI class of each pair
    std::vector<std::uint32_t> pairValue; //!< sensitive value (dense code) of each pair
    std::size_t values = 0;               //!< distinct sensitive values

    //! The QI-class histograms of the regions: each region's pairs merged by their class.
    SparseHistograms classHistograms() const;
};

//! Dense ids of the pairs (QI class, sensitive value) as a counting pass meets them.
class SensitivePairs
{
  public:
    std::uint32_t id( std::uint32_t cls, std::uint32_t value );
    //! The pairs' classes and values, moved into result with the pass's pair histograms.
    SensitiveHistograms finish( SparseHistograms pairs, std::size_t values );

  private:
    FlatMap<std::uint32_t> mIds;
    std::vector<std::uint32_t> mClass;
    std::vector<std::uint32_t> mValue;
};

//! The sensitive values of every EC of an aggregation (per entry of aggregation.ecs).
struct EcDiversity
{
    std::vector<std::int64_t> distinct; //!< distinct values with records: the EC's l
    std::vector<std::int64_t> majority; //!< records of its most frequent value
    /**
     * Earth mover's distance with equal ground distance between the EC's distribution and that of
     * all released records: 0.5 * sum_v |p_v - q_v| (t-closeness, Li et al.).
     */
    std::vector<double> emd;
};

EcDiversity ecDiversity( const SensitiveHistograms &sensitive, const Aggregation &aggregation, const Suppression &suppression );

//! Per aggregate, over its released ECs: the smallest l and the largest t (0 and 0 when none is released).
struct AggregateDiversity
{
    std::vector<std::int64_t> smallestL;
    std::vector<double> largestT;
};

AggregateDiversity aggregateDiversity( const EcDiversity &diversity, const Aggregation &aggregation, const Suppression &suppression );

} // namespace vbas
