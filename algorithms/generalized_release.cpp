#include "generalized_release.h"

#include <map>
#include <utility>

namespace vbas
{

WrittenClasses writtenClasses( const SparseHistograms &regionHistograms, const NodeRelease &node )
{
  WrittenClasses w;
  // A written class: the labels with the starred ones as kStar, and whether it is dropped.
  constexpr std::uint32_t kStar = ~std::uint32_t( 0 );
  const std::size_t qiCount = node.node.size();
  std::map<std::pair<std::vector<std::uint32_t>, char>, std::uint32_t> ids;
  std::vector<std::uint32_t> labels( qiCount );
  for ( std::size_t region = 0; region < regionHistograms.rows(); ++region )
  {
    const std::size_t aggregate = node.aggregation->regionAggregate[region];
    for ( std::size_t e = regionHistograms.offsets[region]; e < regionHistograms.offsets[region + 1]; ++e )
    {
      const std::uint32_t g = node.generalization.classOf[regionHistograms.classes[e]];
      const std::size_t ec = node.ecs.find( aggregate, g );
      // A dropped EC (below k) stays a class of its own: its generalized labels, marked dropped.
      const std::uint32_t starred = node.suppression.starred[ec];
      const bool dropped = node.suppression.dropped[ec];
      for ( std::size_t q = 0; q < qiCount; ++q )
        labels[q] = ( !dropped && ( starred >> q & 1 ) ) ? kStar : node.generalization.labels[g * qiCount + q];
      const auto [it, added] = ids.emplace( std::make_pair( labels, node.suppression.dropped[ec] ), static_cast<std::uint32_t>( w.generalized.size() ) );
      if ( added )
      {
        w.generalized.push_back( g );
        w.starred.push_back( starred );
        w.dropped.push_back( node.suppression.dropped[ec] );
      }
      w.entryClass.push_back( it->second );
    }
  }
  w.regions = remapEntries( regionHistograms, w.entryClass );
  return w;
}

SensitiveHistograms writtenSensitive( const SensitiveHistograms &sensitive, const SparseHistograms &regionHistograms, const WrittenClasses &written )
{
  SensitivePairs pairs;
  std::vector<std::uint32_t> entryPair;
  for ( std::size_t region = 0; region < sensitive.pairs.rows(); ++region )
    for ( std::size_t e = sensitive.pairs.offsets[region]; e < sensitive.pairs.offsets[region + 1]; ++e )
    {
      const std::uint32_t pair = sensitive.pairs.classes[e];
      const std::uint32_t cls = written.entryClass[regionHistograms.find( region, sensitive.pairClass[pair] )];
      entryPair.push_back( pairs.id( cls, sensitive.pairValue[pair] ) );
    }
  return pairs.finish( remapEntries( sensitive.pairs, entryPair ), sensitive.values );
}

Release writtenRelease( const WrittenClasses &written, const NodeRelease &node, std::int64_t k )
{
  std::vector<std::size_t> regionGroup;
  for ( const std::size_t a : node.aggregation->regionAggregate )
    regionGroup.push_back( node.aggregation->aggregateGroup[a] );
  return release( std::move( regionGroup ), written.regions, k );
}

} // namespace vbas
