// Mean-point compactness (docs/method.md, "Mean-point compactness"): the one measure of compactness
// that the steps which optimise aggregates hold their budget on (ADC, REFINE_BOUNDARIES, SEARCH) and
// that every release reports, whatever its method does with sites.
#pragma once

#include "algorithms/base/geometry.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace vbas
{

/**
 * The mean-point compactness of one aggregate, the regions `visit` passes to its callable (it is called
 * twice): sum w_r ||r_p - m||, m their weighted mean point; 0 when their weights sum to 0.
 */
template<class Visit>
double meanPointSpread( const std::vector<Point> &points, const std::vector<double> &weights, Visit visit )
{
  double weight = 0;
  Point sum;
  visit( [&]( std::size_t r ) {
    weight += weights[r];
    sum.x += weights[r] * points[r].x;
    sum.y += weights[r] * points[r].y;
  } );
  if ( !( weight > 0 ) )
    return 0;
  double total = 0;
  visit( [&]( std::size_t r ) { total += weights[r] * std::hypot( points[r].x - sum.x / weight, points[r].y - sum.y / weight ); } );
  return total;
}

/**
 * Mean-point compactness of a partition: eq. 20 with each region's distance taken to the weighted
 * mean point of its aggregate's region points instead of to a site, and weighted: sum over the regions r
 * of w_r ||r_p - m_u||, m_u = sum w_r r_p / sum w_r over the regions of r's aggregate u. It depends on the
 * aggregates only, not on where a method puts their sites. weights: one per region (the population
 * basis); an aggregate whose weights sum to 0 adds 0.
 */
double meanPointCompactness( const std::vector<Point> &regionPoints, const std::vector<std::size_t> &regionAggregate, const std::vector<double> &weights );

} // namespace vbas
