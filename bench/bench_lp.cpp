// LP geomasking benchmark: an Ottawa-like instance, 11,740 clustered codes in a 50 km
// square (projected metres), lognormal populations with median 10, s = 224 patients, epsilon = 0.2.
// Usage: bench_lp <m> <direct|cg> [seed]. Not a test. The default seed is 2: seed 1 draws a code of 286 people
// whose nearest-30 neighbourhood reaches only 785 other people (it needs 834), so its nearest-30 LP is
// infeasible, while Ottawa's nearest-30 LP is feasible (the paper's 1,686 m at epsilon = 0.2).
#include "algorithms/lp/geomask.h"
#include "algorithms/base/random.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace vbas;

namespace
{

double uniform( Random &random )
{
  return ( static_cast<double>( random.next() >> 11 ) + 0.5 ) * 0x1.0p-53;
}

double normal( Random &random )
{
  return std::sqrt( -2 * std::log( uniform( random ) ) ) * std::cos( 2 * M_PI * uniform( random ) );
}

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

//! Prints every round's status line with the elapsed time (BENCH_LP_VERBOSE=1).
class Verbose : public Progress
{
  public:
    bool canceled() const override { return false; }
    void report( double, const std::string &status ) override
    {
      std::fprintf( stderr, "%.2f s %s\n", std::chrono::duration<double>( std::chrono::steady_clock::now() - mStart ).count(), status.c_str() );
    }

  private:
    const std::chrono::steady_clock::time_point mStart = std::chrono::steady_clock::now();
};

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
  const lp::Problem problem = ottawaLike( m, argc > 3 ? std::strtoull( argv[3], nullptr, 10 ) : 2 );
  Verbose verbose;
  Progress *progress = std::getenv( "BENCH_LP_VERBOSE" ) ? &verbose : nullptr;
  const lp::Solution solution = direct ? lp::solveDirect( problem, progress ) : lp::solveColumnGeneration( problem, {}, progress );
  const char *status[] = { "optimal", "infeasible", "canceled", "limit" };
  std::printf( "m %zu %s: %s, objective %.6f, gap %.2g, rows %zu, columns %zu, rounds %zu, %.2f s, max re-identification %.6f\n", m, direct ? "direct" : "cg", status[int( solution.status )],
               solution.objective, solution.gap, solution.rows, solution.columns, solution.rounds, solution.seconds,
               solution.probability.empty() ? 0.0 : lp::maxReidentification( problem, solution.probability ) );
}
