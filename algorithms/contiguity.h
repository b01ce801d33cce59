// Contiguity of aggregates (docs/method.md): a region joins the Voronoi cell of its region point
// (paper sec. 3.3), so an aggregate may come in detached parts, or enclose a region of another aggregate.
// The regions' adjacency (borders of positive length), the connected parts ("fragments") of each
// group, and the reassignment of detached fragments to the neighbouring group they share the longest
// border with, whenever that does not raise the number of suppressed records. Last, single boundary
// regions moved between neighbouring groups whenever that lowers the number of suppressed records.
#pragma once

#include "histograms.h"

#include <cstddef>
#include <cstdint>
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

//! The fragments of a grouping: the connected components of each group's regions.
struct Fragments
{
    std::vector<std::size_t> regionFragment; //!< fragment of each region
    std::vector<std::size_t> fragmentGroup;  //!< group of each fragment

    std::size_t count() const { return fragmentGroup.size(); }
};

/**
 * The fragments of regionGroup (any group ids, such as the site of each region): the connected
 * components of each group's regions, in the adjacency restricted to borders within the group.
 * Fragments are numbered in increasing order of their lowest region index.
 */
Fragments fragments( const std::vector<std::size_t> &regionGroup, const RegionAdjacency &adjacency );

//! A grouping made contiguous, with what it took.
struct Contiguity
{
    std::vector<std::size_t> regionGroup;
    std::size_t fragmentsBefore = 0;
    std::size_t fragmentsAfter = 0;
    std::size_t reassigned = 0; //!< detached fragments that joined another group
    std::size_t kept = 0;       //!< detached fragments left in their group in the end
    std::int64_t suppressedBefore = 0;
    std::int64_t suppressedAfter = 0;
};

/**
 * Every group of more than one fragment keeps its main fragment (most records; ties: most regions;
 * then the fragment holding the lowest region index), and each detached fragment joins the
 * neighbouring group it shares the longest border with (ties: the lower group id), unless that
 * raises the records suppressed (in ECs (group, class) below k). A fragment without a neighbour in
 * another group, or whose move is refused, stays. Fragments are taken in order of their lowest
 * region index, in passes until one moves nothing.
 */
Contiguity makeContiguous( std::vector<std::size_t> regionGroup, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, std::int64_t k );

//! A grouping whose boundary regions were moved to lower suppression, with what it took.
struct BoundaryRefinement
{
    std::vector<std::size_t> regionGroup;
    std::size_t moves = 0;  //!< regions moved to a neighbouring group
    std::size_t passes = 0; //!< passes over the regions, the last of which moved nothing
    std::int64_t suppressedBefore = 0;
    std::int64_t suppressedAfter = 0;
};

/**
 * Local search over single boundary regions (REFINE_BOUNDARIES): in passes over the regions in index
 * order, a region r of group A that borders regions of other groups moves to the one of them, B, that
 * lowers most the records suppressed (in ECs (group, class) below k) of A and B together (ties: the
 * longest border shared with r, then the lower group id), provided that drop is strictly positive,
 * A keeps another region, and A does not fall into more fragments without r (the regions of A that
 * border r stay connected to one another within A). B gains no fragment: r borders it. Passes go on
 * until one moves nothing. No group is lost and suppression never rises.
 */
BoundaryRefinement refineBoundaries( std::vector<std::size_t> regionGroup, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, std::int64_t k );

} // namespace vbas
