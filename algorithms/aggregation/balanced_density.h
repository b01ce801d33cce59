// Site location selection by balanced density (paper sec. 3.2.1, eq. 7-13; docs/method.md, Details the paper leaves open).
#pragma once

#include "algorithms/base/geometry.h"

#include <cstddef>
#include <vector>

namespace vbas
{

enum class SitePosition
{
  Mean,   //!< eq. 12-13 as written: the mean of the cell's points
  Median, //!< the true median of the cell's x and y coordinates
};

struct Placement
{
    std::vector<Point> sites;                    //!< one site per cell
    std::vector<double> cellPopulation;          //!< population of each cell
    std::vector<std::vector<std::size_t>> cells; //!< point indices of each cell
    std::vector<std::size_t> cellRow;            //!< row of each cell, bottom row first
};

/**
 * Places `sites` sites so that every cell holds about the same population.
 * points are the region points, population their population on the chosen basis (records per region, or a population field).
 * Throws std::invalid_argument unless 1 <= sites <= points and the total population is positive.
 */
Placement balancedDensity( const std::vector<Point> &points, const std::vector<double> &population, std::size_t sites, SitePosition position );

} // namespace vbas
