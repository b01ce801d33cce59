// The Voronoi diagram of the sites through CGAL's Delaunay triangulation: nearest-site location,
// cell adjacency (Delaunay edges) and cell polygons clipped to an extent (paper sec. 3.3).
#pragma once

#include "algorithms/base/geometry.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace vbas
{

class VoronoiDiagram
{
  public:
    //! Throws std::invalid_argument on an empty site list.
    explicit VoronoiDiagram( const std::vector<Point> &sites );
    ~VoronoiDiagram();

    std::size_t siteCount() const;

    //! Index of the site nearest to q (Euclidean); exact ties go to the lower site index.
    std::size_t nearestSite( const Point &q ) const;

    //! Sites whose Voronoi cells share an edge with site's cell. A site repeating an earlier
    //! site's position has no cell and no neighbours.
    const std::vector<std::size_t> &neighbours( std::size_t site ) const;

    //! Site's Voronoi cell clipped to extent, as a ring of vertices (not closed); empty if none.
    std::vector<Point> cell( std::size_t site, const Extent &extent ) const;

  private:
    struct Triangulation;
    std::unique_ptr<Triangulation> mTriangulation;
    std::vector<Point> mSites;
    std::vector<std::vector<std::size_t>> mNeighbours;
};

} // namespace vbas
