#include "algorithms/aggregation/balanced_density.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace vbas
{

namespace
{

using Group = std::vector<std::size_t>;

double groupPopulation( const Group &group, const std::vector<double> &population )
{
  double sum = 0;
  for ( const std::size_t i : group )
    sum += population[i];
  return sum;
}

/**
 * The eq. 9 walk: cuts ordered points into groups of about `target` population. A group closes once
 * it reaches the target; the point that makes it reach stays iff rp'' - p' <= p' - rp' (eq. 9), and a
 * group keeps at least one point, even one that alone overshoots the target. Once maxGroups are open, the last takes the rest.
 */
std::vector<Group> walk( const Group &ordered, const std::vector<double> &population, double target, std::size_t maxGroups )
{
  std::vector<Group> groups( 1 );
  double current = 0; // rp': population of the open group
  for ( const std::size_t i : ordered )
  {
    if ( groups.size() == maxGroups )
    {
      groups.back().push_back( i );
      continue;
    }
    const double passed = current + population[i]; // rp''
    if ( passed < target )
    {
      groups.back().push_back( i );
      current = passed;
    }
    else if ( groups.back().empty() || passed - target <= target - current )
    {
      groups.back().push_back( i );
      groups.emplace_back();
      current = 0;
    }
    else
    {
      groups.push_back( Group { i } );
      current = population[i];
      if ( current >= target && groups.size() < maxGroups )
      {
        groups.emplace_back();
        current = 0;
      }
    }
  }
  if ( groups.back().empty() )
    groups.pop_back();
  return groups;
}

//! Eq. 7-9: rows of about equal population, bottom row first.
std::vector<Group> cutRows( const std::vector<Point> &points, const std::vector<double> &population, std::size_t sites, double total )
{
  Group order( points.size() );
  std::iota( order.begin(), order.end(), 0 );
  std::sort( order.begin(), order.end(), [&points]( std::size_t a, std::size_t b ) { return std::tie( points[a].y, points[a].x, a ) < std::tie( points[b].y, points[b].x, b ); } );

  const double rows = std::max( 1.0, roundHalfUp( std::sqrt( static_cast<double>( sites ) ) ) ); // eq. 7
  const double target = roundHalfUp( total / rows );                                             // eq. 8
  std::vector<Group> result = walk( order, population, target, std::numeric_limits<std::size_t>::max() );

  // A final row that ran out of points below p'/2 joins the row below it.
  if ( result.size() > 1 && groupPopulation( result.back(), population ) < target / 2 )
  {
    result[result.size() - 2].insert( result[result.size() - 2].end(), result.back().begin(), result.back().end() );
    result.pop_back();
  }
  // No more rows than sites.
  while ( result.size() > sites )
  {
    std::size_t best = 0;
    double bestPopulation = std::numeric_limits<double>::infinity();
    for ( std::size_t j = 0; j + 1 < result.size(); ++j )
    {
      const double joint = groupPopulation( result[j], population ) + groupPopulation( result[j + 1], population );
      if ( joint < bestPopulation )
      {
        best = j;
        bestPopulation = joint;
      }
    }
    result[best].insert( result[best].end(), result[best + 1].begin(), result[best + 1].end() );
    result.erase( result.begin() + static_cast<std::ptrdiff_t>( best ) + 1 );
  }
  return result;
}

//! Eq. 10-11: cells per row, summing to the number of sites.
std::vector<std::size_t> cellsPerRow( const std::vector<Group> &rows, const std::vector<double> &population, std::size_t sites, double total )
{
  std::vector<double> share;      // s * r_alpha (eq. 10)
  std::vector<std::size_t> cells; // r_c (eq. 11)
  std::vector<std::size_t> most;
  for ( const Group &row : rows )
  {
    share.push_back( static_cast<double>( sites ) * ( groupPopulation( row, population ) / total ) ); // the quotient first: never above sites, never infinite
    most.push_back( std::min( sites, row.size() ) );
    cells.push_back( static_cast<std::size_t>( std::clamp( roundHalfUp( share.back() ), 1.0, static_cast<double>( most.back() ) ) ) );
  }
  // Largest remainder; the first row wins ties.
  for ( std::size_t sum = std::accumulate( cells.begin(), cells.end(), std::size_t( 0 ) ); sum != sites; )
  {
    const bool take = sum > sites;
    std::size_t best = rows.size();
    double bestRemainder = -std::numeric_limits<double>::infinity();
    for ( std::size_t j = 0; j < rows.size(); ++j )
    {
      const bool can = take ? cells[j] > 1 : cells[j] < most[j];
      const double remainder = take ? static_cast<double>( cells[j] ) - share[j] : share[j] - static_cast<double>( cells[j] );
      if ( can && remainder > bestRemainder )
      {
        best = j;
        bestRemainder = remainder;
      }
    }
    cells[best] += take ? std::size_t( -1 ) : 1;
    sum += take ? std::size_t( -1 ) : 1;
  }
  return cells;
}

//! Cuts one row, sorted by x, into exactly `count` cells.
std::vector<Group> cutCells( Group row, const std::vector<Point> &points, const std::vector<double> &population, std::size_t count )
{
  std::sort( row.begin(), row.end(), [&points]( std::size_t a, std::size_t b ) { return std::tie( points[a].x, points[a].y, a ) < std::tie( points[b].x, points[b].y, b ); } );
  std::vector<Group> cells = walk( row, population, roundHalfUp( groupPopulation( row, population ) / static_cast<double>( count ) ), count );
  while ( cells.size() < count )
  {
    // Split the most populated cell with at least two points (leftmost on ties) in half.
    std::size_t best = cells.size();
    double bestPopulation = -1;
    for ( std::size_t c = 0; c < cells.size(); ++c )
    {
      const double cellPopulation = groupPopulation( cells[c], population );
      if ( cells[c].size() >= 2 && cellPopulation > bestPopulation )
      {
        best = c;
        bestPopulation = cellPopulation;
      }
    }
    std::vector<Group> halves = walk( cells[best], population, roundHalfUp( bestPopulation / 2 ), 2 );
    if ( halves.size() == 1 ) // both halves stay non-empty
    {
      halves.push_back( Group { halves[0].back() } );
      halves[0].pop_back();
    }
    cells[best] = std::move( halves[1] );
    cells.insert( cells.begin() + static_cast<std::ptrdiff_t>( best ), std::move( halves[0] ) );
  }
  return cells;
}

double median( std::vector<double> values )
{
  std::sort( values.begin(), values.end() );
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : ( values[n / 2 - 1] + values[n / 2] ) / 2;
}

//! Eq. 12-13 (mean), or the true median.
Point sitePosition( const Group &cell, const std::vector<Point> &points, SitePosition position )
{
  std::vector<double> xs, ys;
  for ( const std::size_t i : cell )
  {
    xs.push_back( points[i].x );
    ys.push_back( points[i].y );
  }
  if ( position == SitePosition::Median )
    return { median( xs ), median( ys ) };
  const double n = static_cast<double>( cell.size() );
  return { std::accumulate( xs.begin(), xs.end(), 0.0 ) / n, std::accumulate( ys.begin(), ys.end(), 0.0 ) / n };
}

} // namespace

Placement balancedDensity( const std::vector<Point> &points, const std::vector<double> &population, std::size_t sites, SitePosition position )
{
  if ( sites < 1 || sites > points.size() )
    throw std::invalid_argument( "the number of sites must be between 1 and the number of regions" );
  const double total = std::accumulate( population.begin(), population.end(), 0.0 );
  if ( !( total > 0 ) )
    throw std::invalid_argument( "the total population is not positive" );
  if ( !std::isfinite( total ) )
    throw std::invalid_argument( "the populations add up to more than the largest number a double holds (about 1.8e308)" );

  const std::vector<Group> rows = cutRows( points, population, sites, total );
  const std::vector<std::size_t> counts = cellsPerRow( rows, population, sites, total );
  Placement placement;
  for ( std::size_t j = 0; j < rows.size(); ++j )
  {
    for ( Group &cell : cutCells( rows[j], points, population, counts[j] ) )
    {
      placement.sites.push_back( sitePosition( cell, points, position ) );
      placement.cellPopulation.push_back( groupPopulation( cell, population ) );
      placement.cellRow.push_back( j );
      placement.cells.push_back( std::move( cell ) );
    }
  }
  return placement;
}

} // namespace vbas
