#include "algorithms/generalization/generalized_release.h"

#include "algorithms/base/string_index.h"

#include <utility>

namespace vbas
{

WrittenClasses writtenClasses( const SparseHistograms &regionHistograms, const NodeRelease &node, const WrittenTokens *tokens )
{
  // A written class: the tokens of its labels with the starred ones as kStar (or their tokens), and
  // whether it is dropped; keyed by their bytes.
  constexpr std::uint32_t kStar = ~std::uint32_t( 0 );
  const std::size_t qiCount = node.node.size();
  WrittenClasses w;
  StringIndex ids;
  std::vector<std::uint32_t> ecClass; // the written class of each EC entry of node.ecs
  std::vector<std::uint32_t> key( qiCount + 1 );
  for ( std::size_t ec = 0; ec < node.ecs.classes.size(); ++ec )
  {
    // A dropped EC (below k) stays a class of its own: its generalized labels, marked dropped.
    const std::uint32_t g = node.ecs.classes[ec];
    const std::uint32_t starred = node.suppression.starred[ec];
    const bool dropped = node.suppression.dropped[ec];
    for ( std::size_t q = 0; q < qiCount; ++q )
    {
      const std::uint32_t label = node.generalization.labels[g * qiCount + q];
      if ( !dropped && ( starred >> q & 1 ) )
        key[q] = tokens ? tokens->star[q] : kStar;
      else
        key[q] = tokens ? tokens->ofLabel[q][label] : label;
    }
    key[qiCount] = dropped ? 1 : 0;
    const std::uint32_t id = ids.insert( std::string_view( reinterpret_cast<const char *>( key.data() ), key.size() * sizeof( std::uint32_t ) ) );
    if ( id == w.generalized.size() )
    {
      w.generalized.push_back( g );
      w.dropped.push_back( dropped );
    }
    ecClass.push_back( id );
  }
  for ( std::size_t region = 0; region < regionHistograms.rows(); ++region )
  {
    const std::size_t aggregate = node.aggregation->regionAggregateIndex[region];
    for ( std::size_t e = regionHistograms.offsets[region]; e < regionHistograms.offsets[region + 1]; ++e )
    {
      const std::size_t ec = node.ecs.find( aggregate, node.generalization.classOf[regionHistograms.classes[e]] );
      w.entryClass.push_back( ecClass[ec] );
      w.entryStarred.push_back( node.suppression.dropped[ec] ? 0 : node.suppression.starred[ec] );
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
  std::vector<std::size_t> regionAggregate;
  for ( const std::size_t a : node.aggregation->regionAggregateIndex )
    regionAggregate.push_back( node.aggregation->aggregateId[a] );
  return release( std::move( regionAggregate ), written.regions, k );
}

} // namespace vbas
