// Suppression (paper sec. 3.3): every output EC with fewer than k records is suppressed, all its records;
// under k-map, every EC with fewer than k residents (docs/method.md, "A release at a stated risk").
#pragma once

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/aggregation/criterion.h"
#include "algorithms/base/histograms.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

struct Suppression
{
    std::vector<char> suppressed; //!< per EC entry of the histograms: 1 if suppressed
    std::int64_t releasedRecords = 0;
    std::int64_t suppressedRecords = 0;
};

Suppression suppress( const SparseHistograms &ecs, std::int64_t k );

//! The ECs of aggregation suppressed under criterion: below k records, or below k residents (the residents of the aggregate's regions' cells).
Suppression suppress( const Aggregation &aggregation, const Criterion &criterion );

//! Per aggregate: its records, released and suppressed records, and its smallest released EC (0 if none).
struct AggregateSummary
{
    std::int64_t records = 0;
    std::int64_t released = 0;
    std::int64_t suppressed = 0;
    std::int64_t smallestReleasedEc = 0;
};

std::vector<AggregateSummary> summarize( const SparseHistograms &ecs, const Suppression &suppression );

//! The aggregates all of whose records are suppressed (UNITS_RELEASING_NOTHING).
std::size_t releasingNothing( const SparseHistograms &ecs, const Suppression &suppression );

} // namespace vbas
