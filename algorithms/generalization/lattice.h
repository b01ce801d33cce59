// The search of the generalization lattice (docs/method.md, Generalization): the node (one level per
// QI) with the least information lost among those whose ECs below k hold at most the suppression
// limit's share of the records, the geography placed for each node by the caller. Nodes are
// visited in order of a lower bound of their loss, so the search stops when no node left can do
// better; with a fixed geography, suppression shrinks under generalization (merged ECs only grow),
// so a node below one over the limit is over it too and is never evaluated (ARX's Flash prunes so).
#pragma once

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/generalization/generalization.h"
#include "algorithms/generalization/information_loss.h"
#include "algorithms/generalization/local_suppression.h"
#include "algorithms/generalization/starred_residents.h"
#include "algorithms/base/progress.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace vbas
{

struct LatticeSettings
{
    std::int64_t k = 5;
    double suppressionLimit = 0.05; //!< share of the records allowed in ECs below k (starred or dropped)
    bool localSuppression = false;  //!< star values (local_suppression.h) instead of dropping records
    Objective objective = Objective::GenericNue;
    bool fixedGeography = false; //!< the geography is the same at every node: prune below nodes over the limit
    /**
     * k-map: a class is below k when fewer than k residents of these cells match it (starred_residents.h);
     * nullptr: k records. Residents only grow under generalization too, so the pruning holds.
     */
    const PopulationCells *population = nullptr;
    /**
     * The average risk model: at each node, after the floor of k records, the released classes are cut
     * until the released records' average risk is at most this (meetAverageRisk); 1: none. The cut is
     * not known to shrink under generalization, so no node is pruned below another.
     */
    double averageThreshold = 1;
    const PopulationCells *averagePopulation = nullptr; //!< the average's residents (the journalist's); nullptr: the prosecutor's
};

//! The classes of a node, for the caller to count its sites by (paper eq. 1-6).
struct NodeClasses
{
    std::vector<std::int64_t> classRecords;  //!< records of each generalized class
    std::vector<std::size_t> categoryCounts; //!< labels present of each QI (MaxCombs' |q|)
};

//! The aggregation a node's records are released in (its ECs over the original classes).
using Geography = std::function<std::shared_ptr<const Aggregation>( const LatticeNode &node, const NodeClasses &classes )>;

//! A node evaluated: its classes, ECs, suppression and loss.
struct NodeRelease
{
    LatticeNode node;
    Generalization generalization;
    std::shared_ptr<const Aggregation> aggregation;
    SparseHistograms ecs; //!< per aggregate of aggregation: generalized class -> records
    ValueSuppression suppression;
    NodeLoss loss;
};

struct LatticeSearch
{
    std::size_t latticeSize = 0;
    std::size_t evaluated = 0;
    std::size_t prunedBelow = 0; //!< below a node over the limit (fixed geography)
    std::size_t prunedByBound = 0;
    std::optional<NodeRelease> best;
    std::int64_t leastSuppressed = -1; //!< the fewest records in ECs below k at any evaluated node
};

//! The nodes of the lattice of these hierarchies: the product of their level counts.
double latticeSize( const std::vector<QiHierarchy> &qis );

//! A node evaluated: generalized, placed by geography, suppressed and measured.
NodeRelease evaluateNode( const LatticeNode &node, const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &classCodes, const std::vector<std::int64_t> &classRecords,
                          const LossModel &model, const Geography &geography, const LatticeSettings &settings );

/**
 * The best node of the lattice, regionHistograms the records of each region over the classes with
 * codes classCodes. Stops early (best empty) when progress is canceled. At most 1,000,000 nodes.
 */
LatticeSearch searchLattice( const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &classCodes, const SparseHistograms &regionHistograms, const Geography &geography,
                             const LatticeSettings &settings, Progress &progress );

} // namespace vbas
