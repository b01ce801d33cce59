// The release step (paper sec. 3.3): regions joined into aggregates, the ECs of each aggregate merged, and
// every EC below k suppressed. Voronoi aggregation, the whole pipeline, the evaluation and the
// benchmark all build a release through here. Recount checks the rows written to the release against
// the counts it was built from.
#pragma once

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"
#include "algorithms/aggregation/suppression.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

struct Release
{
    std::vector<std::size_t> regionAggregate; //!< the aggregate id of each region: its site, or a lookup's aggregate
    Aggregation aggregation;
    Suppression suppression;
};

//! The release of the aggregates of regionAggregate (any ids), with every EC below the criterion's k suppressed.
Release release( std::vector<std::size_t> regionAggregate, const SparseHistograms &regionHistograms, const Criterion &criterion );

//! The release of the Voronoi aggregation: every region joins its nearest site (ties to the lower site index).
Release voronoiRelease( const std::vector<Point> &sites, const std::vector<Point> &regionPoints, const SparseHistograms &regionHistograms, const Criterion &criterion );

/**
 * Whether each entry (region, class) of the region histograms is suppressed: its class is below k in
 * the region's aggregate. Worked out once per entry, so a pass over the records looks up one flag.
 */
std::vector<char> suppressedEntries( const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression );

/**
 * The rows written to a release counted again against the histograms they were counted into: every
 * row must land on an entry (region, class) counted, and in the end every entry must hold exactly the
 * records it held. Anything else means the rows written are not the rows counted.
 */
class Recount
{
  public:
    explicit Recount( const SparseHistograms &counted );

    //! The entry of (region, cls), its count increased by count; SparseHistograms::npos if the first pass never saw it.
    std::size_t add( std::uint32_t region, std::uint32_t cls, std::int64_t count );

    //! The first entry whose recount differs from the first pass, or SparseHistograms::npos when all agree.
    std::size_t firstDifference() const;

  private:
    const SparseHistograms &mCounted;
    std::vector<std::int64_t> mRecounted;
};

} // namespace vbas
