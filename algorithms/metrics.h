// The paper's measurements of a release (SPEC 3.4 first paragraph, paper sec. 3.4, eq. 20-23).
#pragma once

#include "aggregation.h"
#include "geometry.h"
#include "histograms.h"
#include "suppression.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

//! Eq. 20: sum over the initial regions of the distance from the region point to its aggregate's site.
double compactness( const std::vector<Point> &regionPoints, const std::vector<Point> &regionSites );

//! Eq. 21: sum of |E|^2 over the released ECs (|E| >= k).
double discernibility( const SparseHistograms &ecs, const Suppression &suppression );

//! Eq. 22-23: -sum_i log2 Pr(R_i | R'_i) over the records, given the records of each region.
double nonUniformEntropy( const std::vector<std::int64_t> &regionRecords, const std::vector<std::size_t> &regionAggregate, std::size_t aggregates );

//! Released records of each initial region.
std::vector<std::int64_t> releasedPerRegion( const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression );

struct Evaluation
{
    std::int64_t records = 0;
    std::int64_t releasedRecords = 0;
    std::int64_t suppressedRecords = 0;
    double suppressedPercent = 0;
    double compactness = 0;
    double discernibility = 0;
    double nonUniformEntropy = 0;    //!< over the released records
    double nonUniformEntropyAll = 0; //!< over all records, before suppression
    std::size_t aggregates = 0;
    std::size_t releasedEcs = 0;
    std::int64_t smallestReleasedEc = 0;
};

Evaluation evaluate( const std::vector<Point> &regionPoints, const std::vector<Point> &regionSites, const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression );

} // namespace vbas
