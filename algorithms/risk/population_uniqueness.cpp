#include "algorithms/risk/population_uniqueness.h"

#include <boost/math/tools/minima.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace vbas
{

namespace
{

//! n, u, c1 and c2 of the sample.
struct SampleTotals
{
    double records = 0;
    double classes = 0;
    double ones = 0;
    double twos = 0;
};

SampleTotals totals( const ClassSizes &sizes )
{
  SampleTotals t;
  for ( const auto &[size, count] : sizes )
  {
    t.records += static_cast<double>( size ) * static_cast<double>( count );
    t.classes += static_cast<double>( count );
  }
  const auto at = [&sizes]( std::int64_t size ) { return sizes.count( size ) ? static_cast<double>( sizes.at( size ) ) : 0.0; };
  t.ones = at( 1 );
  t.twos = at( 2 );
  return t;
}

bool valid( double uniques, double population )
{
  return std::isfinite( uniques ) && uniques > 0 && uniques <= population;
}

double lnChoose( double a, double b )
{
  return std::lgamma( a + 1 ) - std::lgamma( b + 1 ) - std::lgamma( a - b + 1 );
}

/**
 * ln Gamma(z + d) - ln Gamma(z), d >= 0. Past z = 1e6 the two lgamma values are too large for their
 * difference to keep its digits (at z = 1e15 a unit in the last place of lgamma is 4), so there it is
 * Stirling's series differenced term by term: (z + d - 1/2) ln(z + d) - (z - 1/2) ln z
 * = d ln(z + d) + (z - 1/2) ln(1 + d / z), less d, plus the 1 / (12 z) terms (the next, 1 / (360 z^3),
 * is below 1e-20). By hand: Boost.Math's tgamma_delta_ratio gives the ratio, which under- or overflows
 * for the d of a sample's classes or records.
 */
double lnGammaRatio( double z, double d )
{
  if ( z < 1e6 )
    return std::lgamma( z + d ) - std::lgamma( z );
  return d * std::log( z + d ) + ( z - 0.5 ) * std::log1p( d / z ) - d + ( 1 / ( z + d ) - 1 / z ) / 12;
}

// ---- Pitman (Hoshino 2001) ----------------------------------------------------------------------

/**
 * The log-likelihood of the sample's partition under Pitman's sampling formula,
 *   prod_{i=1}^{u-1} (theta + i alpha) / prod_{i=1}^{n-1} (theta + i) * prod_j [prod_{k=1}^{j-1} (k - alpha)]^{c_j},
 * its products written with gamma functions so that its cost is that of the distinct class sizes.
 */
double pitmanLogLikelihood( const ClassSizes &sizes, const SampleTotals &t, double theta, double alpha )
{
  const double x = theta / alpha;
  double l = ( t.classes - 1 ) * std::log( alpha ) + lnGammaRatio( x + 1, t.classes - 1 ) - lnGammaRatio( theta + 1, t.records - 1 );
  for ( const auto &[size, count] : sizes )
    if ( size >= 2 )
      l += static_cast<double>( count ) * ( std::lgamma( static_cast<double>( size ) - alpha ) - std::lgamma( 1 - alpha ) );
  return l;
}

// theta is searched as s = ln(theta + alpha) in [kLowestS, kHighestS] (theta > -alpha); alpha in (0, 1).
constexpr double kLowestS = -20;
constexpr double kHighestS = 30;
constexpr double kAlphaEdge = 1e-6;
constexpr int kBits = std::numeric_limits<double>::digits / 2; // Brent's method finds no better than half the digits

//! The s that maximizes the likelihood at alpha (Brent's method, Boost.Math).
double bestS( const ClassSizes &sizes, const SampleTotals &t, double alpha )
{
  const auto negative = [&]( double s ) { return -pitmanLogLikelihood( sizes, t, std::exp( s ) - alpha, alpha ); };
  return boost::math::tools::brent_find_minima( negative, kLowestS, kHighestS, kBits ).first;
}

// ---- SNB (Chen and Keller-McNulty 1998) ----------------------------------------------------------

/**
 * The two equations of the SNB model, relative: the expected sample classes of one and of two records
 * against c1 and c2. Population classes of F = m + 1 residents, m negative binomial (alpha, beta), each
 * resident sampled with probability pi (the sampling fraction), q = (1 - pi)(1 - beta):
 *   E c1 = K pi (beta / (1 - q))^alpha (1 + alpha q / (1 - q))
 *   E c2 = K alpha pi^2 beta^alpha (1 - beta) (2 - (1 - alpha) q) / (2 (1 - q)^(alpha + 2))
 * (sum over m of P(m) P(f = 1 | F) and P(m) P(f = 2 | F), with the negative binomial series summed).
 */
std::array<double, 2> snbResiduals( const SnbParameters &p, double pi, double c1, double c2 )
{
  const double q = ( 1 - pi ) * ( 1 - p.beta );
  const double ones = p.classes * pi * std::pow( p.beta / ( 1 - q ), p.alpha ) * ( 1 + p.alpha * q / ( 1 - q ) );
  const double twos = p.classes * p.alpha * pi * pi * std::pow( p.beta, p.alpha ) * ( 1 - p.beta ) * ( 2 - ( 1 - p.alpha ) * q ) / ( 2 * std::pow( 1 - q, p.alpha + 2 ) );
  return { ones / c1 - 1, twos / c2 - 1 };
}

bool inside( const SnbParameters &p )
{
  return p.alpha > 0 && p.beta > 0 && p.beta < 1;
}

double norm( const std::array<double, 2> &r )
{
  return std::max( std::abs( r[0] ), std::abs( r[1] ) );
}

/**
 * Newton's method on the two equations from start, the Jacobian by differences, each step halved until
 * it stays inside the model and lowers the residual. By hand: a two-unknown system of two closed
 * forms, and none of the libraries the core links solves systems (Boost.Math's roots are of one unknown).
 */
bool solveSnb( SnbParameters &p, double pi, double c1, double c2 )
{
  std::array<double, 2> r = snbResiduals( p, pi, c1, c2 );
  for ( int iteration = 0; iteration < 100 && norm( r ) > 1e-12; ++iteration )
  {
    const double ha = 1e-7 * std::max( 1.0, p.alpha ), hb = 1e-7 * std::min( p.beta, 1 - p.beta );
    SnbParameters a = p, b = p;
    a.alpha += ha;
    b.beta += hb;
    const std::array<double, 2> ra = snbResiduals( a, pi, c1, c2 ), rb = snbResiduals( b, pi, c1, c2 );
    const double j11 = ( ra[0] - r[0] ) / ha, j12 = ( rb[0] - r[0] ) / hb, j21 = ( ra[1] - r[1] ) / ha, j22 = ( rb[1] - r[1] ) / hb;
    const double det = j11 * j22 - j12 * j21;
    if ( !std::isfinite( det ) || det == 0 )
      return false;
    const double da = ( r[0] * j22 - r[1] * j12 ) / det, db = ( r[1] * j11 - r[0] * j21 ) / det;
    double step = 1;
    SnbParameters next = p;
    std::array<double, 2> rn {};
    for ( ; step > 1e-12; step /= 2 )
    {
      next.alpha = p.alpha - step * da;
      next.beta = p.beta - step * db;
      if ( inside( next ) && norm( rn = snbResiduals( next, pi, c1, c2 ) ) < norm( r ) )
        break;
    }
    if ( step <= 1e-12 )
      return false;
    p = next;
    r = rn;
  }
  return norm( r ) <= 1e-9;
}

} // namespace

const char *modelName( UniquenessModel model )
{
  switch ( model )
  {
    case UniquenessModel::Pitman:
      return "Pitman";
    case UniquenessModel::Zayatz:
      return "Zayatz";
    case UniquenessModel::Snb:
      return "SNB";
    case UniquenessModel::Counted:
      return "counted";
    case UniquenessModel::None:
      break;
  }
  return "none";
}

ClassSizes classSizes( const std::vector<std::int64_t> &classRecords )
{
  ClassSizes sizes;
  for ( std::size_t j = 0; j < classRecords.size(); ++j )
  {
    if ( classRecords[j] <= 0 )
      throw std::invalid_argument( "released class " + std::to_string( j ) + " holds no records" );
    ++sizes[classRecords[j]];
  }
  return sizes;
}

PitmanParameters pitmanParameters( const ClassSizes &sizes )
{
  const SampleTotals t = totals( sizes );
  const auto negative = [&]( double alpha ) { return -pitmanLogLikelihood( sizes, t, std::exp( bestS( sizes, t, alpha ) ) - alpha, alpha ); };
  const double alpha = boost::math::tools::brent_find_minima( negative, kAlphaEdge, 1 - kAlphaEdge, kBits ).first;
  const double s = bestS( sizes, t, alpha );
  PitmanParameters p;
  p.alpha = alpha;
  p.theta = std::exp( s ) - alpha;
  // A maximum at an end of the search is none: the likelihood still rises past it.
  p.found = alpha > 1e-4 && alpha < 1 - 1e-4 && s > kLowestS + 1e-3 && s < kHighestS - 1e-3;
  return p;
}

double shlosserClasses( const ClassSizes &sizes, double fraction )
{
  const SampleTotals t = totals( sizes );
  double unseen = 0, once = 0; // sum c_j (1 - pi)^j; sum c_j j pi (1 - pi)^(j - 1)
  for ( const auto &[size, count] : sizes )
  {
    const double j = static_cast<double>( size ), c = static_cast<double>( count );
    unseen += c * std::pow( 1 - fraction, j );
    once += c * j * fraction * std::pow( 1 - fraction, j - 1 );
  }
  return t.classes + t.ones * unseen / once;
}

SnbParameters snbParameters( const ClassSizes &sizes, double fraction )
{
  const SampleTotals t = totals( sizes );
  SnbParameters best;
  best.classes = shlosserClasses( sizes, fraction );
  if ( t.ones == 0 || t.twos == 0 || fraction <= 0 || fraction >= 1 )
    return best;
  // Several starts; where two roots exist, the one with more population uniques (the higher risk).
  for ( const double alpha : { 0.1, 0.5, 1.0, 2.0, 5.0 } )
    for ( const double beta : { 0.1, 0.3, 0.5, 0.7, 0.9 } )
    {
      SnbParameters p = best;
      p.alpha = alpha;
      p.beta = beta;
      if ( solveSnb( p, fraction, t.ones, t.twos ) && ( !best.found || std::pow( p.beta, p.alpha ) > std::pow( best.beta, best.alpha ) ) )
      {
        best = p;
        best.found = true;
      }
    }
  return best;
}

double pitmanUniques( const ClassSizes &sizes, double population )
{
  const PitmanParameters p = pitmanParameters( sizes );
  if ( !p.found )
    return kNoEstimate;
  // Hoshino 2001: the expected classes of one in a population of N, Gamma(theta + 1) / Gamma(theta + alpha) N^alpha.
  const double uniques = std::exp( std::lgamma( p.theta + 1 ) - std::lgamma( p.theta + p.alpha ) + p.alpha * std::log( population ) );
  return valid( uniques, population ) ? uniques : kNoEstimate;
}

double zayatzUniques( const ClassSizes &sizes, double population )
{
  // Zayatz 1991: of the sample uniques, the share unique in the population is c1 h_1 / sum_j c_j h_j,
  // h_j the hypergeometric probability that a sample of n from N holds exactly one of a class of j;
  // the population uniques are the sample's that are, divided by the sampling fraction (h_1 = n / N).
  const SampleTotals t = totals( sizes );
  if ( t.ones == 0 )
    return 0;
  const auto exactlyOne = [&]( double j ) { return population - j < t.records - 1 ? 0.0 : std::exp( std::log( j ) + lnChoose( population - j, t.records - 1 ) - lnChoose( population, t.records ) ); };
  double all = 0;
  for ( const auto &[size, count] : sizes )
    all += static_cast<double>( count ) * exactlyOne( static_cast<double>( size ) );
  const double unique = t.ones * exactlyOne( 1 ) / all;
  return t.ones * unique / ( t.records / population );
}

double snbUniques( const ClassSizes &sizes, double population )
{
  const SnbParameters p = snbParameters( sizes, totals( sizes ).records / population );
  const double uniques = p.classes * std::pow( p.beta, p.alpha ); // K P(F = 1)
  return p.found && valid( uniques, population ) ? uniques : kNoEstimate;
}

UniquenessEstimate estimatePopulationUniques( const ClassSizes &sizes, double population )
{
  const SampleTotals t = totals( sizes );
  if ( population < t.records )
    throw std::invalid_argument( "a population of " + std::to_string( population ) + " residents for " + std::to_string( t.records ) + " records" );
  UniquenessEstimate e;
  e.fraction = population > 0 ? t.records / population : 0;
  if ( t.ones == 0 )
    return e;
  e.pitman = pitmanUniques( sizes, population );
  e.zayatz = zayatzUniques( sizes, population );
  e.snb = snbUniques( sizes, population );
  if ( e.fraction <= 0.1 )
    e.model = valid( e.pitman, population ) ? UniquenessModel::Pitman : UniquenessModel::Zayatz;
  else
    e.model = valid( e.snb, population ) && e.snb < e.zayatz ? UniquenessModel::Snb : UniquenessModel::Zayatz;
  e.uniques = e.model == UniquenessModel::Pitman ? e.pitman : e.model == UniquenessModel::Snb ? e.snb : e.zayatz;
  return e;
}

} // namespace vbas
