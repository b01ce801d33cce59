#include "algorithms/aggregation/mean_point.h"

#include <algorithm>

namespace vbas
{

double meanPointCompactness( const std::vector<Point> &regionPoints, const std::vector<std::size_t> &regionAggregate, const std::vector<double> &weights )
{
  const std::size_t aggregates = regionAggregate.empty() ? 0 : *std::max_element( regionAggregate.begin(), regionAggregate.end() ) + 1;
  std::vector<std::vector<std::size_t>> members( aggregates );
  for ( std::size_t r = 0; r < regionAggregate.size(); ++r )
    members[regionAggregate[r]].push_back( r );
  double total = 0;
  for ( const std::vector<std::size_t> &aggregate : members )
    total += meanPointSpread( regionPoints, weights, [&aggregate]( const auto &f ) {
      for ( const std::size_t r : aggregate )
        f( r );
    } );
  return total;
}

} // namespace vbas
