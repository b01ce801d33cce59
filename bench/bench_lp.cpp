// LP geomasking benchmark (issue 8 item 4): an Ottawa-like instance, 11,740 clustered codes in a 50 km
// square (projected metres), lognormal populations with median 10, s = 224 patients, epsilon = 0.2.
// Usage: bench_lp <m> <direct|cg> [seed]. Not a test.
#include "geomask.h"
#include "random.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace vbas;

namespace
{

double uniform( Random &random ) { return ( static_cast<double>( random.next() >> 11 ) + 0.5 ) * 0x1.0p-53; }

double normal( Random &random ) { return std::sqrt( -2 * std::log( uniform( random ) ) ) * std::cos( 2 * M_PI * uniform( random ) ); }

lp::Problem ottawaLike( std::size_t m, std::uint64_t seed )
{
  Random random( seed );
  std::vector<lp::Location> centres( 60 );
  for ( lp::Location &centre : centres )
    centre = { 50000 * uniform( random ), 50000 * uniform( random ) };
  std::vector<lp::Location> codes;
  lp::Problem problem;
  for ( std::size_t i = 0; i < 11740; ++i )
  {
    const lp::Location &centre = centres[random.below( centres.size() )];
    codes.push_back( { centre.x + 1500 * normal( random ), centre.y + 1500 * normal( random ) } );
    problem.population.push_back( std::max( 2.0, std::round( 10 * std::exp( normal( random ) ) ) ) );
  }
  problem.patients = 224;
  problem.epsilon = 0.2;
  problem.candidates = lp::nearestCandidates( codes, lp::Distance::Euclidean, m );
  return problem;
}

} // namespace

int main( int argc, char **argv )
{
  if ( argc < 3 )
  {
    std::fprintf( stderr, "usage: bench_lp <m> <direct|cg> [seed]\n" );
    return 2;
  }
  const std::size_t m = std::strtoul( argv[1], nullptr, 10 );
  const bool direct = std::strcmp( argv[2], "direct" ) == 0;
  const lp::Problem problem = ottawaLike( m, argc > 3 ? std::strtoull( argv[3], nullptr, 10 ) : 1 );
  const lp::Solution solution = direct ? lp::solveDirect( problem ) : lp::solveColumnGeneration( problem );
  const char *status[] = { "optimal", "infeasible", "canceled", "limit" };
  std::printf( "m %zu %s: %s, objective %.6f, gap %.2g, rows %zu, columns %zu, rounds %zu, %.2f s, max re-identification %.6f\n", m, direct ? "direct" : "cg", status[int( solution.status )], solution.objective, solution.gap, solution.rows, solution.columns, solution.rounds, solution.seconds, solution.probability.empty() ? 0.0 : lp::maxReidentification( problem, solution.probability ) );
}
