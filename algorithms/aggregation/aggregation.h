// Construction of the aggregation (paper sec. 3.3): regions joined to aggregates by their Voronoi cell (or
// any other regionAggregate, such as a lookup table's), and the ECs of each aggregate's member regions merged.
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
    std::vector<std::size_t> regionAggregateIndex; //!< the aggregate index of each region (algorithms/README.md, Glossary)
    std::vector<std::size_t> aggregateId;          //!< the aggregate id of each aggregate index, increasing
    SparseHistograms ecs;                          //!< per aggregate: class -> records, the output ECs
};

//! Nearest site of every region point (Euclidean, ties to the lower site index).
std::vector<std::size_t> locateRegions( const std::vector<Point> &regionPoints, const VoronoiDiagram &diagram );

/**
 * One aggregate index per aggregate id that holds at least one region, in increasing id order; the
 * aggregate's ECs are the merged histograms of its member regions.
 */
Aggregation aggregate( const std::vector<std::size_t> &regionAggregate, const SparseHistograms &regionHistograms );

} // namespace vbas
