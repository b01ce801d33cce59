#include "algorithms/aggregation/voronoi.h"

#include "algorithms/aggregation/delaunay.h"

#include <algorithm>
#include <stdexcept>

namespace vbas
{

using Delaunay = delaunay::Triangulation;
using delaunay::squaredDistance;

struct VoronoiDiagram::Triangulation
{
    Delaunay delaunay;
};

VoronoiDiagram::VoronoiDiagram( const std::vector<Point> &sites )
  : mTriangulation( std::make_unique<Triangulation>() )
  , mSites( sites )
  , mNeighbours( sites.size() )
{
  if ( sites.empty() )
    throw std::invalid_argument( "a Voronoi diagram needs at least one site" );
  Delaunay &dt = mTriangulation->delaunay;
  for ( std::size_t i = 0; i < sites.size(); ++i )
  {
    const std::size_t before = dt.number_of_vertices();
    const auto vertex = dt.insert( Delaunay::Point( sites[i].x, sites[i].y ) );
    if ( dt.number_of_vertices() > before )
      vertex->info() = i; // a repeated position keeps the first (lowest) site index
  }
  for ( auto edge = dt.finite_edges_begin(); edge != dt.finite_edges_end(); ++edge )
  {
    const std::size_t a = edge->first->vertex( Delaunay::cw( edge->second ) )->info();
    const std::size_t b = edge->first->vertex( Delaunay::ccw( edge->second ) )->info();
    mNeighbours[a].push_back( b );
    mNeighbours[b].push_back( a );
  }
  for ( auto &list : mNeighbours )
    std::sort( list.begin(), list.end() );
}

VoronoiDiagram::~VoronoiDiagram() = default;

std::size_t VoronoiDiagram::siteCount() const
{
  return mSites.size();
}

std::size_t VoronoiDiagram::nearestSite( const Point &q ) const
{
  const auto vertex = mTriangulation->delaunay.nearest_vertex( Delaunay::Point( q.x, q.y ) );
  // Sites tied with the nearest one are linked to it through Delaunay edges of equally distant sites.
  const double best = squaredDistance( q, mSites[vertex->info()] );
  std::size_t result = vertex->info();
  std::vector<std::size_t> pending { result };
  std::vector<std::size_t> seen { result };
  while ( !pending.empty() )
  {
    const std::size_t site = pending.back();
    pending.pop_back();
    for ( const std::size_t next : mNeighbours[site] )
    {
      if ( squaredDistance( q, mSites[next] ) != best || std::find( seen.begin(), seen.end(), next ) != seen.end() )
        continue;
      seen.push_back( next );
      pending.push_back( next );
      result = std::min( result, next );
    }
  }
  return result;
}

const std::vector<std::size_t> &VoronoiDiagram::neighbours( std::size_t site ) const
{
  return mNeighbours[site];
}

std::vector<Point> VoronoiDiagram::cell( std::size_t site, const Extent &extent ) const
{
  if ( site != nearestSite( mSites[site] ) )
    return {}; // a repeated position: the first site at it owns the cell
  std::vector<Point> ring { { extent.xMin, extent.yMin }, { extent.xMax, extent.yMin }, { extent.xMax, extent.yMax }, { extent.xMin, extent.yMax } };
  const Point &s = mSites[site];
  for ( const std::size_t other : mNeighbours[site] )
  {
    // Keep the half-plane nearer to s than to the neighbour t: q.(t - s) <= (|t|^2 - |s|^2) / 2.
    const Point &t = mSites[other];
    const double nx = t.x - s.x, ny = t.y - s.y;
    const double limit = ( t.x * t.x + t.y * t.y - s.x * s.x - s.y * s.y ) / 2;
    const auto side = [&]( const Point &q ) { return q.x * nx + q.y * ny - limit; };
    std::vector<Point> clipped; // Sutherland-Hodgman against one half-plane
    for ( std::size_t i = 0; i < ring.size(); ++i )
    {
      const Point &a = ring[i];
      const Point &b = ring[( i + 1 ) % ring.size()];
      const double da = side( a ), db = side( b );
      if ( da <= 0 )
        clipped.push_back( a );
      if ( ( da < 0 && db > 0 ) || ( da > 0 && db < 0 ) )
      {
        const double f = da / ( da - db );
        clipped.push_back( { a.x + f * ( b.x - a.x ), a.y + f * ( b.y - a.y ) } );
      }
    }
    ring.swap( clipped );
  }
  return ring;
}

} // namespace vbas
