// The candidate destinations of every code (the nearest m codes, the code itself included, as in the
// Revised-LP of Jung and El Emam; or every code within a radius), from a CGAL k-d tree. Haversine
// searches run on 3-D unit-sphere points, where the chord length is monotone in the great-circle
// distance; Euclidean ones on (x, y, 0). Reported distances are then computed by distance() itself.
#include "algorithms/lp/geomask.h"

#include <CGAL/Fuzzy_sphere.h>
#include <CGAL/Orthogonal_k_neighbor_search.h>
#include <CGAL/Search_traits_3.h>
#include <CGAL/Search_traits_adapter.h>
#include <CGAL/Simple_cartesian.h>
#include <CGAL/property_map.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace vbas::lp
{

namespace
{

using Kernel = CGAL::Simple_cartesian<double>;
using Point3 = Kernel::Point_3;
using PointMap = CGAL::Pointer_property_map<Point3>::type;
using Traits = CGAL::Search_traits_adapter<std::size_t, PointMap, CGAL::Search_traits_3<Kernel>>;
using KnnSearch = CGAL::Orthogonal_k_neighbor_search<Traits>;
using Tree = KnnSearch::Tree;
using Sphere = CGAL::Fuzzy_sphere<Traits>;

constexpr double EarthRadius = 6371008.8;
constexpr double Degree = M_PI / 180;
//! Relative slack on search radii, so that rounding never loses a point at the boundary.
constexpr double Slack = 1e-9;

Point3 searchPoint( const Location &code, Distance distance )
{
  if ( distance == Distance::Euclidean )
    return Point3( code.x, code.y, 0 );
  const double lon = code.x * Degree, lat = code.y * Degree;
  return Point3( std::cos( lat ) * std::cos( lon ), std::cos( lat ) * std::sin( lon ), std::sin( lat ) );
}

//! The search radius (Euclidean units or unit-sphere chord) that holds every code within radius.
double searchRadius( double radius, Distance distance )
{
  if ( distance == Distance::Euclidean )
    return radius;
  const double angle = radius / EarthRadius;
  return angle >= M_PI ? 2.0 : 2 * std::sin( angle / 2 );
}

class Index
{
  public:
    Index( const std::vector<Location> &codes, Distance distance )
      : mCodes( codes )
      , mDistance( distance )
    {
      for ( const Location &code : codes )
        mPoints.push_back( searchPoint( code, distance ) );
      std::vector<std::size_t> indices( codes.size() );
      std::iota( indices.begin(), indices.end(), std::size_t( 0 ) );
      mTree = std::make_unique<Tree>( indices.begin(), indices.end(), Tree::Splitter(), Traits( CGAL::make_property_map( mPoints ) ) );
      mTree->build();
    }

    //! Code i's m nearest, sorted by distance, then index (itself first): when the (m+1)-th nearest may tie the m-th, every code at that distance competes.
    std::vector<std::uint32_t> nearest( std::size_t i, std::size_t m ) const
    {
      const std::size_t k = std::min( m + 1, mCodes.size() );
      const KnnSearch::Distance metric( mTree->traits().point_property_map() );
      KnnSearch search( *mTree, mPoints[i], static_cast<unsigned>( k ), 0, true, metric );
      std::vector<std::uint32_t> result;
      std::vector<double> chords;
      for ( const auto &[code, transformed] : search )
      {
        result.push_back( static_cast<std::uint32_t>( code ) );
        chords.push_back( metric.inverse_of_transformed_distance( transformed ) );
      }
      if ( result.size() > m && chords[m] <= chords[m - 1] * ( 1 + Slack ) + 1e-15 )
        result = within( i, chords[m - 1] * ( 1 + Slack ) + 1e-15 );
      sortByDistance( i, result );
      result.resize( std::min( m, result.size() ) );
      return result;
    }

    //! Every code within radius of code i (in the reported distance), sorted by distance, then index.
    std::vector<std::uint32_t> inRadius( std::size_t i, double radius ) const
    {
      std::vector<std::uint32_t> result = within( i, searchRadius( radius, mDistance ) * ( 1 + Slack ) + 1e-15 );
      result.erase( std::remove_if( result.begin(), result.end(), [&]( std::uint32_t j ) { return distance( mCodes[i], mCodes[j], mDistance ) > radius; } ), result.end() );
      sortByDistance( i, result );
      return result;
    }

    double between( std::size_t i, std::uint32_t j ) const { return distance( mCodes[i], mCodes[j], mDistance ); }

  private:
    std::vector<std::uint32_t> within( std::size_t i, double searchRadius ) const
    {
      std::vector<std::size_t> found;
      mTree->search( std::back_inserter( found ), Sphere( mPoints[i], searchRadius, 0, mTree->traits() ) );
      return std::vector<std::uint32_t>( found.begin(), found.end() );
    }

    void sortByDistance( std::size_t i, std::vector<std::uint32_t> &codes ) const
    {
      std::vector<std::tuple<double, bool, std::uint32_t>> keyed;
      for ( const std::uint32_t j : codes )
        keyed.emplace_back( between( i, j ), j != i, j );
      std::sort( keyed.begin(), keyed.end() );
      for ( std::size_t r = 0; r < keyed.size(); ++r )
        codes[r] = std::get<2>( keyed[r] );
    }

    const std::vector<Location> &mCodes;
    const Distance mDistance;
    std::vector<Point3> mPoints;
    std::unique_ptr<Tree> mTree;
};

template<typename Find>
Candidates collect( const std::vector<Location> &codes, Distance distance, Find find )
{
  Candidates candidates;
  if ( codes.empty() )
    return candidates;
  const Index index( codes, distance );
  for ( std::size_t i = 0; i < codes.size(); ++i )
  {
    for ( const std::uint32_t j : find( index, i ) )
    {
      candidates.targets.push_back( j );
      candidates.distances.push_back( index.between( i, j ) );
    }
    candidates.offsets.push_back( candidates.targets.size() );
  }
  return candidates;
}

} // namespace

double distance( const Location &a, const Location &b, Distance distance )
{
  if ( distance == Distance::Euclidean )
    return std::hypot( a.x - b.x, a.y - b.y );
  const double sinLat = std::sin( ( b.y - a.y ) * Degree / 2 );
  const double sinLon = std::sin( ( b.x - a.x ) * Degree / 2 );
  const double h = sinLat * sinLat + std::cos( a.y * Degree ) * std::cos( b.y * Degree ) * sinLon * sinLon;
  return 2 * EarthRadius * std::asin( std::min( 1.0, std::sqrt( h ) ) );
}

Candidates nearestCandidates( const std::vector<Location> &codes, Distance distance, std::size_t m )
{
  if ( m < 1 )
    throw std::invalid_argument( "nearestCandidates: m must be at least 1" );
  return collect( codes, distance, [m]( const Index &index, std::size_t i ) { return index.nearest( i, m ); } );
}

Candidates radiusCandidates( const std::vector<Location> &codes, Distance distance, double radius )
{
  if ( !( radius >= 0 ) )
    throw std::invalid_argument( "radiusCandidates: the radius must be at least 0" );
  return collect( codes, distance, [radius]( const Index &index, std::size_t i ) { return index.inRadius( i, radius ); } );
}

} // namespace vbas::lp
