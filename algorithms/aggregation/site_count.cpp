#include "algorithms/aggregation/site_count.h"
#include "algorithms/base/geometry.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vbas
{

double entropy( const std::vector<std::int64_t> &ecSizes, double base )
{
  const double n = static_cast<double>( std::accumulate( ecSizes.begin(), ecSizes.end(), std::int64_t( 0 ) ) );
  double sum = 0;
  for ( const std::int64_t size : ecSizes )
  {
    if ( size <= 0 )
      continue;
    const double share = static_cast<double>( size ) / n;
    sum -= share * std::log( share );
  }
  return sum / std::log( base );
}

double maxCombs( const std::vector<std::size_t> &categoryCounts )
{
  double product = 1;
  for ( const std::size_t count : categoryCounts )
    product *= static_cast<double>( count );
  return product;
}

double cutoff( const CutoffCoefficients &coefficients, double x )
{
  return coefficients.expB0 * std::pow( x, coefficients.b1 );
}

std::size_t siteCount( double population, double cutoff, std::size_t regions )
{
  const double sites = cutoff > 0 ? roundHalfUp( population / cutoff ) : static_cast<double>( regions );
  return static_cast<std::size_t>( std::clamp( sites, 1.0, static_cast<double>( std::max<std::size_t>( regions, 1 ) ) ) );
}

} // namespace vbas
