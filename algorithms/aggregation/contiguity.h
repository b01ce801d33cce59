// Contiguity of aggregates (docs/method.md): a region joins the Voronoi cell of its region point
// (paper sec. 3.3), so an aggregate may come in detached parts, or enclose a region of another aggregate.
// The regions' adjacency (borders of positive length, islands bridged), the connected parts
// ("fragments") of each aggregate, and the reassignment of detached fragments to the neighbouring aggregate
// they share the longest border with, whatever that costs (the cost is reported).
#pragma once

#include "algorithms/aggregation/criterion.h"
#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace vbas
{

//! A border between regions a and b, of the given length.
struct Border
{
    std::size_t a = 0;
    std::size_t b = 0;
    double length = 0;
};

//! Region adjacency in CSR form: the neighbours of region r are entries [offsets[r], offsets[r + 1]), increasing.
struct RegionAdjacency
{
    std::vector<std::size_t> offsets { 0 };
    std::vector<std::size_t> neighbours;
    std::vector<double> borderLengths; //!< length of the border shared with each neighbour, > 0

    std::size_t regions() const { return offsets.size() - 1; }
};

/**
 * The adjacency of regions 0 .. regions - 1 from their borders, each pair of distinct regions given
 * once, in either direction. Only a border of positive length makes two regions neighbours: touching
 * at a point is no adjacency.
 */
RegionAdjacency regionAdjacency( std::size_t regions, const std::vector<Border> &borders );

//! An adjacency whose islands are bridged, and the bridges.
struct BridgedAdjacency
{
    RegionAdjacency adjacency;
    std::vector<Border> bridges; //!< (a, b, distance between their region points), the border length in adjacency being 0
};

/**
 * The adjacency with its islands bridged, as max-p regionalisation tools do: while the regions fall
 * into several connected parts (islands, exclaves), the two closest region points of different
 * parts are linked (Kruskal's algorithm: the shortest links that join all parts). A bridge is an
 * adjacency with a border of length 0, so a longer real border always wins over it.
 */
BridgedAdjacency bridgeIslands( const RegionAdjacency &adjacency, const std::vector<Point> &regionPoints );

//! The fragments of a regionAggregate: the connected components of each aggregate's regions.
struct Fragments
{
    std::vector<std::size_t> regionFragment;    //!< fragment of each region
    std::vector<std::size_t> fragmentAggregate; //!< the aggregate id of each fragment

    std::size_t count() const { return fragmentAggregate.size(); }
};

/**
 * The fragments of regionAggregate (any aggregate ids, such as the site of each region): the connected
 * components of each aggregate's regions, in the adjacency restricted to borders within the aggregate.
 * Fragments are numbered in increasing order of their lowest region index.
 */
Fragments fragments( const std::vector<std::size_t> &regionAggregate, const RegionAdjacency &adjacency );

/**
 * Aggregates as dense indices 0 .. aggregates - 1, in the order of their ids, so that ties going to the
 * lower index go to the lower id: regionAggregate is renumbered, and the ids are returned by index.
 */
std::vector<std::size_t> denseAggregates( std::vector<std::size_t> &regionAggregate );

//! Borders (aggregate, length) summed by aggregate, by increasing aggregate id.
std::vector<std::pair<std::size_t, double>> bordersByAggregate( std::vector<std::pair<std::size_t, double>> borders );

//! A partition made contiguous, with what it took.
struct Contiguity
{
    std::vector<std::size_t> regionAggregate;
    std::size_t fragmentsBefore = 0;
    std::size_t fragmentsAfter = 0;
    std::size_t reassigned = 0; //!< detached fragments that joined another aggregate
    std::size_t kept = 0;       //!< detached fragments left in their aggregate in the end (no neighbouring aggregate)
    std::int64_t suppressedBefore = 0;
    std::int64_t suppressedAfter = 0;
};

/**
 * Every aggregate of more than one fragment keeps its main fragment (most records; ties: most regions;
 * then the fragment holding the lowest region index), and each detached fragment joins the
 * neighbouring aggregate it shares the longest border with (ties: the lower aggregate id; a bridge counts
 * as a border of length 0), even when that raises the records suppressed (in ECs (aggregate, class)
 * below the criterion's k): suppressedBefore and suppressedAfter say what it cost. Only a fragment without a
 * neighbour in another aggregate stays (none does once the islands are bridged). Fragments are taken in
 * order of their lowest region index, in passes until one moves nothing.
 */
Contiguity makeContiguous( std::vector<std::size_t> regionAggregate, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, const Criterion &criterion );

} // namespace vbas
