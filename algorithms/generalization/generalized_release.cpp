#include "algorithms/generalization/generalized_release.h"

#include "algorithms/base/string_index.h"

#include <map>
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
    const std::uint32_t writtenStarred = dropped ? 0 : starred;
    if ( id == w.generalized.size() )
    {
      w.generalized.push_back( g );
      w.dropped.push_back( dropped );
      w.starred.push_back( writtenStarred );
    }
    // Records written alike but starred on fewer QIs (a NULL value beside a "*" written as NULL) narrow what the class's "*" covers.
    w.starred[id] &= writtenStarred;
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

SparseHistograms writtenResidents( const PopulationCells &cells, const std::vector<QiHierarchy> &qis, const NodeRelease &node, const WrittenClasses &written, const WrittenTokens *tokens,
                                   std::size_t regions )
{
  const std::size_t qiCount = qis.size();
  std::vector<std::uint32_t> keys = cellLabels( cells, qis, node.node );
  const auto writtenAs = [tokens]( std::size_t q, std::uint32_t label ) { return tokens && label != kValueOutsideHierarchy ? tokens->ofLabel[q][label] : label; };
  for ( std::size_t i = 0; i < keys.size(); ++i )
    keys[i] = writtenAs( i % qiCount, keys[i] );
  // The written classes of each starred set, by their keys over the QIs not starred (a key may be a released and a dropped class's).
  std::map<std::uint32_t, std::map<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> classesOf;
  for ( std::uint32_t c = 0; c < written.generalized.size(); ++c )
  {
    std::vector<std::uint32_t> key;
    for ( std::size_t q = 0; q < qiCount; ++q )
      if ( !( written.starred[c] >> q & 1 ) )
        key.push_back( writtenAs( q, node.generalization.labels[written.generalized[c] * qiCount + q] ) );
    classesOf[written.starred[c]][key].push_back( c );
  }
  HistogramBuilder residents( regions );
  std::vector<std::uint32_t> key;
  for ( std::size_t cell = 0; cell < cells.region.size(); ++cell )
    for ( const auto &[starred, classes] : classesOf )
    {
      key.clear();
      for ( std::size_t q = 0; q < qiCount; ++q )
        if ( !( starred >> q & 1 ) )
          key.push_back( keys[cell * qiCount + q] );
      const auto matched = classes.find( key );
      if ( matched != classes.end() && cells.residents[cell] > 0 )
        for ( const std::uint32_t c : matched->second )
          residents.add( cells.region[cell], c, cells.residents[cell] );
    }
  return residents.build();
}

Release writtenRelease( const WrittenClasses &written, const NodeRelease &node, const Criterion &criterion )
{
  std::vector<std::size_t> regionAggregate;
  for ( const std::size_t a : node.aggregation->regionAggregateIndex )
    regionAggregate.push_back( node.aggregation->aggregateId[a] );
  Criterion floor = criterion; // the node met the average already (meetAverageRisk): its cut classes are the dropped ones
  floor.averageThreshold = 1;
  Release r = release( std::move( regionAggregate ), written.regions, floor );
  const SparseHistograms &ecs = r.aggregation.ecs;
  for ( std::size_t e = 0; e < ecs.counts.size(); ++e )
    if ( written.dropped[ecs.classes[e]] && !r.suppression.suppressed[e] )
    {
      r.suppression.suppressed[e] = 1;
      r.suppression.releasedRecords -= ecs.counts[e];
      r.suppression.suppressedRecords += ecs.counts[e];
    }
  return r;
}

} // namespace vbas
