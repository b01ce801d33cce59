// Internal to the core: the CGAL Delaunay triangulation of the sites (vertex info = site index) and the
// distance every nearest-site decision uses (Euclidean, ties to the lower site index), shared by the Voronoi diagram and ADC.
#pragma once

#include "algorithms/base/geometry.h"

#include <CGAL/Delaunay_triangulation_2.h>
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Triangulation_vertex_base_with_info_2.h>

#include <cstddef>

namespace vbas::delaunay
{

using Kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using VertexBase = CGAL::Triangulation_vertex_base_with_info_2<std::size_t, Kernel>;
using DataStructure = CGAL::Triangulation_data_structure_2<VertexBase>;
using Triangulation = CGAL::Delaunay_triangulation_2<Kernel, DataStructure>;

//! |a - b|^2 as every nearest-site decision computes it, so exact ties are the same ties everywhere.
inline double squaredDistance( const Point &a, const Point &b )
{
  return ( a.x - b.x ) * ( a.x - b.x ) + ( a.y - b.y ) * ( a.y - b.y );
}

} // namespace vbas::delaunay
