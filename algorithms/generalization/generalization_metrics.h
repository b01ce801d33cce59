// Metrics of a generalized release as written (docs/method.md, Generalization metrics): the records
// generalized, the generalization cost GC (after Aggarwal et al. 2005: each QI value not written as
// it was costs one) and the average relative error ARE of count queries (after LeFevre et al. 2006),
// the queries being "records of region r with value v of QI q".
#pragma once

#include "algorithms/generalization/generalized_release.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

struct GeneralizationMetrics
{
    std::int64_t recordsGeneralized = 0; //!< released with at least one QI value coarser than its own (a label over several values, or "*")
    double gc = 0;                       //!< share of the records' QI values not written as they were: coarser, "*", or in a dropped record
    double are = 0;                      //!< mean over the queries with records of |records - estimate| / records
    std::size_t queries = 0;
};

/**
 * The metrics of node's release as written. regionHistograms: the records of each region over the
 * original classes (classCodes: qis.size() codes per class); regionAggregateIndex: each region's
 * aggregate. A query's estimate spreads each released class of the region's aggregate evenly over
 * the aggregate's regions and over the values under its label (under every value for "*").
 */
GeneralizationMetrics generalizationMetrics( const std::vector<QiHierarchy> &qis, const LatticeNode &node, const std::vector<std::uint32_t> &classCodes, const SparseHistograms &regionHistograms,
                                             const WrittenClasses &written, const std::vector<std::size_t> &regionAggregateIndex );

} // namespace vbas
