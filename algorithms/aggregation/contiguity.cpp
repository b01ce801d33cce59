#include "algorithms/aggregation/contiguity.h"

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/aggregation/delaunay.h"
#include "algorithms/aggregation/suppression.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <numeric>
#include <utility>

namespace vbas
{

namespace
{

//! The CSR of directed borders: the rows in order of (region, neighbour).
RegionAdjacency csr( std::size_t regions, std::vector<Border> directed )
{
  std::sort( directed.begin(), directed.end(), []( const Border &x, const Border &y ) { return std::make_pair( x.a, x.b ) < std::make_pair( y.a, y.b ); } );
  RegionAdjacency adjacency;
  adjacency.offsets.assign( regions + 1, 0 );
  for ( const Border &b : directed )
  {
    ++adjacency.offsets[b.a + 1];
    adjacency.neighbours.push_back( b.b );
    adjacency.borderLengths.push_back( b.length );
  }
  std::partial_sum( adjacency.offsets.begin(), adjacency.offsets.end(), adjacency.offsets.begin() );
  return adjacency;
}

//! Union-find over the regions, with path halving.
class Parts
{
  public:
    explicit Parts( std::size_t regions )
      : mParent( regions )
    {
      std::iota( mParent.begin(), mParent.end(), 0 );
    }
    std::size_t root( std::size_t x )
    {
      while ( mParent[x] != x )
        x = mParent[x] = mParent[mParent[x]];
      return x;
    }
    //! Joins the parts of a and b; false when they were one already.
    bool join( std::size_t a, std::size_t b )
    {
      a = root( a );
      b = root( b );
      mParent[a] = b;
      return a != b;
    }

  private:
    std::vector<std::size_t> mParent;
};

/**
 * The candidate bridges, shortest first (ties by region indices): the edges of the Delaunay
 * triangulation of the region points, which hold the shortest link between any two parts of the
 * regions (the Euclidean minimum spanning tree is a subgraph of the Delaunay triangulation), and a
 * link of length 0 between regions at the same point, which the triangulation keeps as one vertex.
 */
std::vector<Border> candidateBridges( const std::vector<Point> &regionPoints )
{
  std::vector<std::size_t> byPoint( regionPoints.size() );
  std::iota( byPoint.begin(), byPoint.end(), 0 );
  const auto at = [&regionPoints]( std::size_t r ) { return std::make_pair( regionPoints[r].x, regionPoints[r].y ); };
  std::sort( byPoint.begin(), byPoint.end(), [&at]( std::size_t x, std::size_t y ) { return std::make_pair( at( x ), x ) < std::make_pair( at( y ), y ); } );
  std::vector<Border> bridges;
  std::vector<std::pair<delaunay::Kernel::Point_2, std::size_t>> vertices; // the lowest region at each point
  for ( std::size_t i = 0; i < byPoint.size(); ++i )
  {
    if ( i > 0 && at( byPoint[i - 1] ) == at( byPoint[i] ) )
      bridges.push_back( { vertices.back().second, byPoint[i], 0 } );
    else
      vertices.emplace_back( delaunay::Kernel::Point_2( regionPoints[byPoint[i]].x, regionPoints[byPoint[i]].y ), byPoint[i] );
  }
  const delaunay::Triangulation triangulation( vertices.begin(), vertices.end() );
  for ( auto e = triangulation.finite_edges_begin(); e != triangulation.finite_edges_end(); ++e )
  {
    const std::size_t a = e->first->vertex( triangulation.cw( e->second ) )->info();
    const std::size_t b = e->first->vertex( triangulation.ccw( e->second ) )->info();
    bridges.push_back( { std::min( a, b ), std::max( a, b ), std::sqrt( delaunay::squaredDistance( regionPoints[a], regionPoints[b] ) ) } );
  }
  std::sort( bridges.begin(), bridges.end(), []( const Border &x, const Border &y ) { return std::tie( x.length, x.a, x.b ) < std::tie( y.length, y.a, y.b ); } );
  return bridges;
}

} // namespace

RegionAdjacency regionAdjacency( std::size_t regions, const std::vector<Border> &borders )
{
  std::vector<Border> directed; // each border in both directions
  for ( const Border &b : borders )
  {
    if ( b.length <= 0 )
      continue;
    directed.push_back( b );
    directed.push_back( { b.b, b.a, b.length } );
  }
  return csr( regions, std::move( directed ) );
}

BridgedAdjacency bridgeIslands( const RegionAdjacency &adjacency, const std::vector<Point> &regionPoints )
{
  Parts parts( adjacency.regions() );
  std::size_t count = adjacency.regions();
  std::vector<Border> directed;
  for ( std::size_t r = 0; r < adjacency.regions(); ++r )
    for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
    {
      directed.push_back( { r, adjacency.neighbours[e], adjacency.borderLengths[e] } );
      count -= parts.join( r, adjacency.neighbours[e] );
    }
  BridgedAdjacency result;
  if ( count > 1 ) // Kruskal's algorithm on the parts: the shortest candidate joining two parts, until one is left
    for ( const Border &b : candidateBridges( regionPoints ) )
    {
      if ( count == 1 )
        break;
      if ( !parts.join( b.a, b.b ) )
        continue;
      --count;
      result.bridges.push_back( b );
      directed.push_back( { b.a, b.b, 0 } );
      directed.push_back( { b.b, b.a, 0 } );
    }
  result.adjacency = csr( adjacency.regions(), std::move( directed ) );
  return result;
}

Fragments fragments( const std::vector<std::size_t> &regionAggregate, const RegionAdjacency &adjacency )
{
  constexpr std::size_t unseen = ~std::size_t( 0 );
  Fragments result;
  result.regionFragment.assign( regionAggregate.size(), unseen );
  std::vector<std::size_t> stack;
  // A new fragment starts at each region not reached yet, so fragments come in order of their lowest region.
  for ( std::size_t start = 0; start < regionAggregate.size(); ++start )
  {
    if ( result.regionFragment[start] != unseen )
      continue;
    const std::size_t fragment = result.count();
    const std::size_t id = regionAggregate[start];
    result.fragmentAggregate.push_back( id );
    result.regionFragment[start] = fragment;
    stack.push_back( start );
    while ( !stack.empty() ) // depth-first, over borders within the aggregate only
    {
      const std::size_t r = stack.back();
      stack.pop_back();
      for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
      {
        const std::size_t n = adjacency.neighbours[e];
        if ( regionAggregate[n] == id && result.regionFragment[n] == unseen )
        {
          result.regionFragment[n] = fragment;
          stack.push_back( n );
        }
      }
    }
  }
  return result;
}

namespace
{

constexpr std::size_t kNone = ~std::size_t( 0 );

std::int64_t suppressedRecords( const std::vector<std::size_t> &regionAggregate, const SparseHistograms &regionHistograms, const Criterion &criterion )
{
  return suppress( aggregate( regionAggregate, regionHistograms ), criterion ).suppressedRecords;
}

//! The regions of each fragment, increasing: fragment f holds regions[offsets[f]] .. regions[offsets[f + 1] - 1].
struct Members
{
    std::vector<std::size_t> offsets;
    std::vector<std::size_t> regions;
};

Members members( const Fragments &parts )
{
  Members m;
  m.offsets.assign( parts.count() + 1, 0 );
  for ( const std::size_t f : parts.regionFragment )
    ++m.offsets[f + 1];
  std::partial_sum( m.offsets.begin(), m.offsets.end(), m.offsets.begin() );
  m.regions.resize( parts.regionFragment.size() );
  std::vector<std::size_t> next( m.offsets.begin(), m.offsets.end() - 1 );
  for ( std::size_t r = 0; r < parts.regionFragment.size(); ++r )
    m.regions[next[parts.regionFragment[r]]++] = r;
  return m;
}

//! The main fragment of each aggregate: most records; ties: most regions; then the lowest region (the lower fragment).
std::vector<std::size_t> mainFragments( const Fragments &parts, const Members &m, const SparseHistograms &regionHistograms, std::size_t aggregates )
{
  struct Candidate
  {
      std::int64_t records = -1; // below any fragment's, so the first fragment of an aggregate wins
      std::size_t regions = 0;
      std::size_t fragment = kNone;
  };
  std::vector<Candidate> best( aggregates );
  for ( std::size_t f = 0; f < parts.count(); ++f )
  {
    Candidate c { 0, m.offsets[f + 1] - m.offsets[f], f };
    for ( std::size_t i = m.offsets[f]; i < m.offsets[f + 1]; ++i )
      c.records += regionHistograms.rowTotal( m.regions[i] );
    Candidate &b = best[parts.fragmentAggregate[f]];
    if ( c.records > b.records || ( c.records == b.records && c.regions > b.regions ) )
      b = c;
  }
  std::vector<std::size_t> main( aggregates );
  std::transform( best.begin(), best.end(), main.begin(), []( const Candidate &c ) { return c.fragment; } );
  return main;
}

//! The aggregate other than `own` that fragment f shares the longest border with (ties: the lower aggregate), or kNone.
std::size_t longestBorderAggregate( std::size_t f, const Members &m, std::size_t own, const std::vector<std::size_t> &regionAggregate, const RegionAdjacency &adjacency )
{
  std::vector<std::pair<std::size_t, double>> borders; // (aggregate, length) of each border leaving the fragment
  for ( std::size_t i = m.offsets[f]; i < m.offsets[f + 1]; ++i )
  {
    const std::size_t r = m.regions[i];
    for ( std::size_t e = adjacency.offsets[r]; e < adjacency.offsets[r + 1]; ++e )
      if ( regionAggregate[adjacency.neighbours[e]] != own )
        borders.emplace_back( regionAggregate[adjacency.neighbours[e]], adjacency.borderLengths[e] );
  }
  std::size_t best = kNone;
  double bestLength = 0;
  for ( const auto &[other, length] : bordersByAggregate( std::move( borders ) ) )
  {
    if ( best == kNone || length > bestLength ) // strictly longer: a tie keeps the lower aggregate (a bridge has length 0)
    {
      best = other;
      bestLength = length;
    }
  }
  return best;
}

/**
 * One pass over the detached fragments of parts, in fragment order (their lowest region), moving
 * each to its longest-border neighbour, whatever it costs; returns the moves. An aggregate that received a
 * fragment has had fragments merged, so its own fragments wait for the next pass; the other aggregates'
 * fragments are still exactly their connected components.
 */
std::size_t reassignPass( std::vector<std::size_t> &regionAggregate, const Fragments &parts, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, std::size_t aggregates )
{
  const Members m = members( parts );
  const std::vector<std::size_t> main = mainFragments( parts, m, regionHistograms, aggregates );
  std::vector<char> received( aggregates, 0 );
  std::size_t moves = 0;
  for ( std::size_t f = 0; f < parts.count(); ++f )
  {
    const std::size_t from = parts.fragmentAggregate[f];
    if ( main[from] == f || received[from] )
      continue;
    const std::size_t to = longestBorderAggregate( f, m, from, regionAggregate, adjacency );
    if ( to == kNone )
      continue;
    for ( std::size_t i = m.offsets[f]; i < m.offsets[f + 1]; ++i )
      regionAggregate[m.regions[i]] = to;
    received[to] = 1;
    ++moves;
  }
  return moves;
}

} // namespace

std::vector<std::pair<std::size_t, double>> bordersByAggregate( std::vector<std::pair<std::size_t, double>> borders )
{
  std::sort( borders.begin(), borders.end() );
  std::vector<std::pair<std::size_t, double>> summed;
  for ( const auto &[id, length] : borders )
  {
    if ( summed.empty() || summed.back().first != id )
      summed.emplace_back( id, 0 );
    summed.back().second += length;
  }
  return summed;
}

std::vector<std::size_t> denseAggregates( std::vector<std::size_t> &regionAggregate )
{
  std::vector<std::size_t> ids = regionAggregate;
  std::sort( ids.begin(), ids.end() );
  ids.erase( std::unique( ids.begin(), ids.end() ), ids.end() );
  for ( std::size_t &g : regionAggregate )
    g = static_cast<std::size_t>( std::lower_bound( ids.begin(), ids.end(), g ) - ids.begin() );
  return ids;
}

Contiguity makeContiguous( std::vector<std::size_t> regionAggregate, const RegionAdjacency &adjacency, const SparseHistograms &regionHistograms, const Criterion &criterion )
{
  Contiguity result;
  result.suppressedBefore = suppressedRecords( regionAggregate, regionHistograms, criterion );

  const std::vector<std::size_t> ids = denseAggregates( regionAggregate );

  // Termination: a move takes a whole connected component F out of its aggregate (one fragment fewer
  // there) and joins it to m >= 1 fragments of a neighbouring aggregate (m fragments become one), so
  // each move lowers the total number of fragments by m >= 1. No aggregate ever loses its main fragment,
  // so there are never fewer fragments than aggregates: the passes stop after finitely many moves.
  for ( bool first = true;; first = false )
  {
    const Fragments parts = fragments( regionAggregate, adjacency );
    if ( first )
      result.fragmentsBefore = parts.count();
    const std::size_t moves = reassignPass( regionAggregate, parts, adjacency, regionHistograms, ids.size() );
    result.reassigned += moves;
    if ( moves == 0 )
    {
      result.fragmentsAfter = parts.count();
      break;
    }
  }
  result.kept = result.fragmentsAfter - ids.size();

  for ( std::size_t &g : regionAggregate )
    g = ids[g];
  result.suppressedAfter = suppressedRecords( regionAggregate, regionHistograms, criterion );
  result.regionAggregate = std::move( regionAggregate );
  return result;
}

} // namespace vbas
