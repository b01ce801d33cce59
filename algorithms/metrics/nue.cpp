#include "algorithms/metrics/nue.h"

#include <cmath>
#include <map>
#include <utility>

namespace vbas
{

namespace
{

using Node = std::pair<std::size_t, std::uint32_t>; // (level, node id)

//! -sum count * log2( f(from) / f(to) ) over records, frequencies counted within records.
template<typename From, typename To>
double entropyOfStep( const std::vector<const Generalised *> &records, From from, To to )
{
  std::map<Node, std::int64_t> fromCount, toCount;
  for ( const Generalised *r : records )
  {
    fromCount[from( *r )] += r->count;
    toCount[to( *r )] += r->count;
  }
  double sum = 0;
  for ( const Generalised *r : records )
    if ( r->count > 0 )
      sum -= static_cast<double>( r->count ) * std::log2( static_cast<double>( fromCount[from( *r )] ) / static_cast<double>( toCount[to( *r )] ) );
  return sum;
}

} // namespace

double nonUniformEntropy( const std::vector<Generalised> &records )
{
  std::vector<const Generalised *> all;
  for ( const Generalised &r : records )
    all.push_back( &r );
  return entropyOfStep(
    all, []( const Generalised &r ) { return Node( 0, r.path[0] ); }, []( const Generalised &r ) { return Node( r.level, r.path[r.level] ); } );
}

double genericNonUniformEntropy( const std::vector<Generalised> &records )
{
  std::size_t height = 0;
  for ( const Generalised &r : records )
    height = std::max( height, r.level );
  double sum = 0;
  for ( std::size_t n = 1; n <= height; ++n )
  {
    std::vector<const Generalised *> affected; // released at level n or above
    for ( const Generalised &r : records )
      if ( r.level >= n )
        affected.push_back( &r );
    sum += entropyOfStep(
      affected, [n]( const Generalised &r ) { return Node( n - 1, r.path[n - 1] ); }, [n]( const Generalised &r ) { return Node( n, r.path[n] ); } );
  }
  return sum;
}

} // namespace vbas
