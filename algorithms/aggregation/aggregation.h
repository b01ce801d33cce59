// Construction of the aggregation (paper sec. 3.3): regions grouped by their Voronoi cell (or any other
// grouping, such as a lookup table), and the ECs of each group's member regions merged.
#pragma once

#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"
#include "algorithms/aggregation/voronoi.h"

#include <cstddef>
#include <vector>

namespace vbas
{

struct Aggregation
{
    std::vector<std::size_t> regionAggregate; //!< aggregate index of each initial region
    std::vector<std::size_t> aggregateGroup;  //!< group (site) of each aggregate, increasing
    SparseHistograms ecs;                     //!< per aggregate: class -> records, the output ECs
};

//! Nearest site of every region point (Euclidean, ties to the lower site index).
std::vector<std::size_t> locateRegions( const std::vector<Point> &regionPoints, const VoronoiDiagram &diagram );

/**
 * One aggregate per group that holds at least one region, numbered in increasing group order; the
 * aggregate's ECs are the merged histograms of its member regions.
 */
Aggregation aggregate( const std::vector<std::size_t> &regionGroup, const SparseHistograms &regionHistograms );

} // namespace vbas
