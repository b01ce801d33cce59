#include "algorithms/aggregation/mean_point.h"

#include <algorithm>

namespace vbas
{

double meanPointCompactness( const std::vector<Point> &regionPoints, const std::vector<std::size_t> &regionUnit, const std::vector<double> &weights )
{
  const std::size_t units = regionUnit.empty() ? 0 : *std::max_element( regionUnit.begin(), regionUnit.end() ) + 1;
  std::vector<std::vector<std::size_t>> members( units );
  for ( std::size_t r = 0; r < regionUnit.size(); ++r )
    members[regionUnit[r]].push_back( r );
  double total = 0;
  for ( const std::vector<std::size_t> &unit : members )
    total += meanPointSpread( regionPoints, weights, [&unit]( const auto &f ) {
      for ( const std::size_t r : unit )
        f( r );
    } );
  return total;
}

} // namespace vbas
