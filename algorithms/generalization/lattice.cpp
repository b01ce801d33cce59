#include "algorithms/generalization/lattice.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace vbas
{

namespace
{

constexpr double kMaxLatticeSize = 1e6;

//! Every node of the lattice, the first QI's level changing fastest.
std::vector<LatticeNode> allNodes( const std::vector<QiHierarchy> &qis )
{
  std::vector<LatticeNode> nodes { LatticeNode( qis.size(), 0 ) };
  for ( std::size_t q = 0; q < qis.size(); ++q )
  {
    const std::size_t below = nodes.size();
    for ( std::size_t level = 1; level < qis[q].hierarchy.levels(); ++level )
      for ( std::size_t i = 0; i < below; ++i )
      {
        LatticeNode node = nodes[i];
        node[q] = level;
        nodes.push_back( std::move( node ) );
      }
  }
  return nodes;
}

//! Whether a is at or below b: no QI of a at a higher level.
bool atOrBelow( const LatticeNode &a, const LatticeNode &b )
{
  for ( std::size_t q = 0; q < a.size(); ++q )
    if ( a[q] > b[q] )
      return false;
  return true;
}

NodeClasses classesOf( const Generalization &g, const std::vector<QiHierarchy> &qis, const LatticeNode &node, const std::vector<std::int64_t> &classRecords )
{
  NodeClasses classes;
  classes.classRecords.assign( g.classCount, 0 );
  for ( std::size_t c = 0; c < classRecords.size(); ++c )
    classes.classRecords[g.classOf[c]] += classRecords[c];
  for ( std::size_t q = 0; q < qis.size(); ++q )
  {
    std::vector<char> present( node[q] < qis[q].hierarchy.levels() ? qis[q].hierarchy.labelCount( node[q] ) : 1, 0 );
    for ( std::size_t c = 0; c < g.classCount; ++c )
      present[g.labels[c * qis.size() + q]] = 1;
    classes.categoryCounts.push_back( static_cast<std::size_t>( std::count( present.begin(), present.end(), 1 ) ) );
  }
  return classes;
}

//! The QIs local suppression leaves alone at node: one label for every value already.
std::uint32_t singleLabelQis( const std::vector<QiHierarchy> &qis, const LatticeNode &node )
{
  std::uint32_t set = 0;
  for ( std::size_t q = 0; q < qis.size(); ++q )
    if ( node[q] >= qis[q].starLevel() || qis[q].hierarchy.labelCount( node[q] ) <= 1 )
      set |= std::uint32_t( 1 ) << q;
  return set;
}

} // namespace

double latticeSize( const std::vector<QiHierarchy> &qis )
{
  double size = 1;
  for ( const QiHierarchy &qi : qis )
    size *= static_cast<double>( qi.hierarchy.levels() );
  return size;
}

NodeRelease evaluateNode( const LatticeNode &node, const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &classCodes, const std::vector<std::int64_t> &classRecords,
                          const LossModel &model, const Geography &geography, const LatticeSettings &settings )
{
  NodeRelease r;
  r.node = node;
  r.generalization = generalize( classCodes, qis, node );
  r.aggregation = geography( node, classesOf( r.generalization, qis, node, classRecords ) );
  r.ecs = remap( r.aggregation->ecs, r.generalization.classOf );
  const std::vector<std::uint32_t> sets = settings.localSuppression ? starSets( model.information( node ), singleLabelQis( qis, node ) ) : std::vector<std::uint32_t>();
  std::optional<StarredResidents> residents;
  if ( settings.population )
    residents.emplace( nodeResidents( *settings.population, qis, node, r.aggregation->regionAggregateIndex ) );
  r.suppression = suppressValues( r.ecs, r.generalization.labels, qis.size(), sets, settings.k, residents ? &*residents : nullptr );
  if ( settings.averageThreshold < 1 )
  {
    std::optional<StarredResidents> average;
    if ( settings.averagePopulation )
      average.emplace( nodeResidents( *settings.averagePopulation, qis, node, r.aggregation->regionAggregateIndex ) );
    meetAverageRisk( r.ecs, r.generalization.labels, qis.size(), average ? &*average : nullptr, settings.averageThreshold, r.suppression );
  }
  r.loss = model.loss( node, r.ecs, r.generalization.labels, r.suppression, r.aggregation->regionAggregateIndex );
  return r;
}

LatticeSearch searchLattice( const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &classCodes, const SparseHistograms &regionHistograms, const Geography &geography,
                             const LatticeSettings &settings, Progress &progress )
{
  if ( qis.empty() || latticeSize( qis ) > kMaxLatticeSize )
    throw std::invalid_argument( "the lattice needs 1 to 1,000,000 nodes" );
  const std::vector<std::int64_t> classRecords = regionHistograms.classTotals( classCodes.size() / qis.size() );
  const std::vector<std::int64_t> regionRecords = regionHistograms.rowTotals();
  const double records = static_cast<double>( std::accumulate( regionRecords.begin(), regionRecords.end(), std::int64_t( 0 ) ) );
  const LossModel model( qis, classCodes, classRecords, regionRecords );

  // Visit the nodes by their bound, then fewest levels, then in lattice order.
  const std::vector<LatticeNode> nodes = allNodes( qis );
  std::vector<std::tuple<double, std::size_t, std::size_t>> order;
  for ( std::size_t i = 0; i < nodes.size(); ++i )
    order.emplace_back( model.bound( settings.objective, nodes[i] ), std::accumulate( nodes[i].begin(), nodes[i].end(), std::size_t( 0 ) ), i );
  std::sort( order.begin(), order.end() );

  LatticeSearch search;
  search.latticeSize = nodes.size();
  std::vector<LatticeNode> overLimit;
  for ( std::size_t i = 0; i < order.size(); ++i )
  {
    if ( progress.canceled() )
    {
      search.best.reset();
      return search;
    }
    progress.report( 100.0 * static_cast<double>( i ) / static_cast<double>( order.size() ), "lattice node " + std::to_string( i + 1 ) + " of " + std::to_string( order.size() ) );
    if ( search.best && std::get<0>( order[i] ) >= search.best->loss.objective( settings.objective ) )
    {
      search.prunedByBound = order.size() - i;
      break;
    }
    const LatticeNode &node = nodes[std::get<2>( order[i] )];
    if ( settings.fixedGeography && settings.averageThreshold >= 1 && std::any_of( overLimit.begin(), overLimit.end(), [&]( const LatticeNode &over ) { return atOrBelow( node, over ); } ) )
    {
      ++search.prunedBelow;
      continue;
    }
    NodeRelease r = evaluateNode( node, qis, classCodes, classRecords, model, geography, settings );
    ++search.evaluated;
    const std::int64_t small = r.suppression.smallClassRecords;
    search.leastSuppressed = search.leastSuppressed < 0 ? small : std::min( search.leastSuppressed, small );
    if ( static_cast<double>( small ) > settings.suppressionLimit * records )
      overLimit.push_back( node );
    else if ( !search.best || r.loss.objective( settings.objective ) < search.best->loss.objective( settings.objective ) )
      search.best = std::move( r );
  }
  return search;
}

} // namespace vbas
