// Small helpers shared by the core unit tests.
#pragma once

#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"

#include <QString>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

//! Compares doubles with an absolute tolerance and prints both values on failure.
#define VBAS_COMPARE_NEAR( actual, expected, tolerance ) \
  do \
  { \
    const double vbasActual_ = ( actual ); \
    const double vbasExpected_ = ( expected ); \
    QVERIFY2( std::abs( vbasActual_ - vbasExpected_ ) <= ( tolerance ), \
              qPrintable( QStringLiteral( "%1 = %2, expected %3" ).arg( QStringLiteral( #actual ) ).arg( vbasActual_, 0, 'g', 15 ).arg( vbasExpected_, 0, 'g', 15 ) ) ); \
  } while ( false )

//! Compares two points exactly (the hand-computed coordinates are exact binary fractions).
#define VBAS_COMPARE_POINT( actual, ex, ey ) \
  do \
  { \
    const vbas::Point vbasPoint_ = ( actual ); \
    QVERIFY2( vbasPoint_.x == double( ex ) && vbasPoint_.y == double( ey ), qPrintable( QStringLiteral( "%1 = (%2, %3), expected (%4, %5)" ) \
                                                                                          .arg( QStringLiteral( #actual ) ) \
                                                                                          .arg( vbasPoint_.x, 0, 'g', 15 ) \
                                                                                          .arg( vbasPoint_.y, 0, 'g', 15 ) \
                                                                                          .arg( double( ex ), 0, 'g', 15 ) \
                                                                                          .arg( double( ey ), 0, 'g', 15 ) ) ); \
  } while ( false )

namespace vbastest
{

/**
 * The records the average risk model's cut takes (docs/method.md, "A release at a stated risk"),
 * recounted with plain sums, sharing nothing with the core: the released classes, each (F, f) of F
 * residents and f records, taken the fewest residents first (then the fewest records) until the
 * average of f / F over the records left is at most the threshold.
 */
inline std::int64_t cutRecount( std::vector<std::pair<std::int64_t, std::int64_t>> released, double threshold )
{
  std::sort( released.begin(), released.end() );
  std::int64_t cut = 0;
  for ( std::size_t first = 0; first < released.size(); ++first )
  {
    long double risk = 0, left = 0;
    for ( std::size_t i = first; i < released.size(); ++i )
    {
      risk += static_cast<long double>( released[i].second ) / static_cast<long double>( released[i].first );
      left += static_cast<long double>( released[i].second );
    }
    if ( risk <= threshold * left * ( 1 + 1e-12L ) )
      break;
    cut += released[first].second;
  }
  return cut;
}

//! Signed area of a ring (shoelace), positive when counter-clockwise.
inline double ringArea( const std::vector<vbas::Point> &ring )
{
  double twice = 0;
  for ( std::size_t i = 0; i < ring.size(); ++i )
  {
    const vbas::Point &a = ring[i];
    const vbas::Point &b = ring[( i + 1 ) % ring.size()];
    twice += a.x * b.y - b.x * a.y;
  }
  return twice / 2;
}

//! Bounding box of a ring.
inline vbas::Extent ringExtent( const std::vector<vbas::Point> &ring )
{
  vbas::Extent e { ring.front().x, ring.front().y, ring.front().x, ring.front().y };
  for ( const vbas::Point &p : ring )
  {
    e.xMin = std::min( e.xMin, p.x );
    e.yMin = std::min( e.yMin, p.y );
    e.xMax = std::max( e.xMax, p.x );
    e.yMax = std::max( e.yMax, p.y );
  }
  return e;
}

//! Histograms from rows of (class, count) pairs.
inline vbas::SparseHistograms histograms( const std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> &rows )
{
  vbas::HistogramBuilder builder( rows.size() );
  for ( std::size_t r = 0; r < rows.size(); ++r )
    for ( const auto &[cls, count] : rows[r] )
      builder.add( static_cast<std::uint32_t>( r ), cls, count );
  return builder.build();
}

} // namespace vbastest
