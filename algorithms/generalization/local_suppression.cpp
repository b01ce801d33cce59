#include "algorithms/generalization/local_suppression.h"

#include "algorithms/aggregation/criterion.h"
#include "algorithms/base/string_index.h"

#include <algorithm>
#include <bitset>
#include <tuple>

namespace vbas
{

namespace
{

constexpr std::uint32_t kStarred = ~std::uint32_t( 0 ); //!< a starred label in a grouping key

int bits( std::uint32_t set )
{
  return static_cast<int>( std::bitset<32>( set ).count() );
}

//! Whether a class holds k: k records, or under k-map k residents of its aggregate's cells matching its labels with the starred QIs as any value.
struct SizeOf
{
    std::int64_t k;
    const StarredResidents *residents;

    bool atLeastK( std::uint32_t row, const std::uint32_t *labels, std::uint32_t starred, std::int64_t records ) const { return ( residents ? residents->of( row, labels, starred ) : records ) >= k; }
};

/**
 * The entries of `unplaced`, in aggregate row, whose group (labels with `set` starred) holds at least k
 * records (under k-map, k residents) get `set`; the others are returned.
 */
std::vector<std::size_t> placeGroups( const std::vector<std::size_t> &unplaced, const SparseHistograms &ecs, const std::vector<std::uint32_t> &labels, std::size_t qiCount, std::uint32_t set,
                                      std::uint32_t row, const SizeOf &size, ValueSuppression &s )
{
  const auto key = [&]( std::size_t e, std::size_t q ) { return ( set >> q & 1 ) ? kStarred : labels[ecs.classes[e] * qiCount + q]; };
  const auto less = [&]( std::size_t a, std::size_t b ) {
    for ( std::size_t q = 0; q < qiCount; ++q )
      if ( key( a, q ) != key( b, q ) )
        return key( a, q ) < key( b, q );
    return false;
  };
  std::vector<std::size_t> sorted = unplaced;
  std::sort( sorted.begin(), sorted.end(), less );
  std::vector<std::size_t> rest;
  for ( std::size_t first = 0, last = 0; first < sorted.size(); first = last )
  {
    std::int64_t records = 0;
    for ( last = first; last < sorted.size() && !less( sorted[first], sorted[last] ); ++last )
      records += ecs.counts[sorted[last]];
    const bool released = size.atLeastK( row, &labels[ecs.classes[sorted[first]] * qiCount], set, records );
    for ( std::size_t i = first; i < last; ++i )
    {
      if ( released )
        s.starred[sorted[i]] = set;
      else
        rest.push_back( sorted[i] );
    }
  }
  return rest;
}

std::int64_t recordsOf( const std::vector<std::size_t> &entries, const SparseHistograms &ecs )
{
  std::int64_t records = 0;
  for ( const std::size_t e : entries )
    records += ecs.counts[e];
  return records;
}

} // namespace

std::vector<std::uint32_t> starSets( const std::vector<double> &weight, std::uint32_t free )
{
  const std::size_t q = weight.size(); // at most kMaxLocallySuppressedQis
  std::vector<std::tuple<int, double, std::uint32_t>> sets;
  for ( std::uint32_t set = 1; set < ( std::uint32_t( 1 ) << q ); ++set )
  {
    if ( set & free )
      continue;
    double w = 0;
    for ( std::size_t i = 0; i < q; ++i )
      if ( set >> i & 1 )
        w += weight[i];
    sets.emplace_back( bits( set ), w, set );
  }
  std::sort( sets.begin(), sets.end() );
  std::vector<std::uint32_t> ordered;
  for ( const auto &set : sets )
    ordered.push_back( std::get<2>( set ) );
  return ordered;
}

void meetAverageRisk( const SparseHistograms &ecs, const std::vector<std::uint32_t> &labels, std::size_t qiCount, const StarredResidents *residents, double threshold, ValueSuppression &s )
{
  // The released classes as written: the ECs of each (aggregate, labels with the starred QIs as "*").
  StringIndex written;
  std::vector<std::vector<std::size_t>> members;
  std::vector<std::int64_t> records, size;
  std::vector<std::uint32_t> key( qiCount + 1 );
  for ( std::size_t row = 0; row < ecs.rows(); ++row )
    for ( std::size_t e = ecs.offsets[row]; e < ecs.offsets[row + 1]; ++e )
    {
      if ( s.dropped[e] )
        continue;
      const std::uint32_t *own = &labels[ecs.classes[e] * qiCount];
      key[0] = static_cast<std::uint32_t>( row );
      for ( std::size_t q = 0; q < qiCount; ++q )
        key[q + 1] = ( s.starred[e] >> q & 1 ) ? kStarred : own[q];
      const std::uint32_t id = written.insert( std::string_view( reinterpret_cast<const char *>( key.data() ), key.size() * sizeof( std::uint32_t ) ) );
      if ( id == members.size() )
      {
        members.emplace_back();
        records.push_back( 0 );
        size.push_back( residents ? residents->of( static_cast<std::uint32_t>( row ), own, s.starred[e] ) : 0 );
      }
      members[id].push_back( e );
      records[id] += ecs.counts[e];
    }
  const std::vector<char> cut = averageRiskCut( records, residents ? size : records, threshold );
  const std::uint32_t all = qiCount >= 32 ? ~std::uint32_t( 0 ) : ( std::uint32_t( 1 ) << qiCount ) - 1;
  for ( std::size_t id = 0; id < members.size(); ++id )
  {
    if ( !cut[id] )
      continue;
    for ( const std::size_t e : members[id] )
    {
      if ( s.starred[e] ) // below k, counted in smallClassRecords already
      {
        s.starredRecords -= ecs.counts[e];
        s.starredValues -= ecs.counts[e] * bits( s.starred[e] );
      }
      else
        s.smallClassRecords += ecs.counts[e];
      s.dropped[e] = 1;
      s.starred[e] = all;
      s.droppedRecords += ecs.counts[e];
    }
  }
}

ValueSuppression dropClasses( const SparseHistograms &ecs, const std::vector<char> &dropped, std::size_t qiCount )
{
  ValueSuppression s;
  s.dropped = dropped;
  s.starred.assign( ecs.classes.size(), 0 );
  const std::uint32_t all = qiCount >= 32 ? ~std::uint32_t( 0 ) : ( std::uint32_t( 1 ) << qiCount ) - 1;
  for ( std::size_t e = 0; e < ecs.classes.size(); ++e )
    if ( dropped[e] )
    {
      s.starred[e] = all;
      s.droppedRecords += ecs.counts[e];
    }
  s.smallClassRecords = s.droppedRecords;
  return s;
}

ValueSuppression suppressValues( const SparseHistograms &ecs, const std::vector<std::uint32_t> &labels, std::size_t qiCount, const std::vector<std::uint32_t> &sets, std::int64_t k,
                                 const StarredResidents *residents )
{
  const SizeOf size { k, residents };
  ValueSuppression s;
  s.starred.assign( ecs.classes.size(), 0 );
  s.dropped.assign( ecs.classes.size(), 0 );
  const std::uint32_t all = qiCount >= 32 ? ~std::uint32_t( 0 ) : ( std::uint32_t( 1 ) << qiCount ) - 1;
  for ( std::size_t row = 0; row < ecs.rows(); ++row )
  {
    const std::uint32_t aggregate = static_cast<std::uint32_t>( row );
    std::vector<std::size_t> unplaced;
    for ( std::size_t e = ecs.offsets[row]; e < ecs.offsets[row + 1]; ++e )
      if ( !size.atLeastK( aggregate, &labels[ecs.classes[e] * qiCount], 0, ecs.counts[e] ) )
      {
        unplaced.push_back( e );
        s.smallClassRecords += ecs.counts[e];
      }
    // Once fewer than k records are left unplaced no group of them reaches k records: they are dropped
    // without trying the remaining sets (up to 2^q of them). Residents (k-map) may reach k still.
    for ( std::size_t i = 0; i < sets.size() && !unplaced.empty() && ( residents || recordsOf( unplaced, ecs ) >= k ); ++i )
      unplaced = placeGroups( unplaced, ecs, labels, qiCount, sets[i], aggregate, size, s );
    for ( const std::size_t e : unplaced )
    {
      s.dropped[e] = 1;
      s.starred[e] = all;
      s.droppedRecords += ecs.counts[e];
    }
  }
  for ( std::size_t e = 0; e < ecs.classes.size(); ++e )
    if ( s.starred[e] && !s.dropped[e] )
    {
      s.starredRecords += ecs.counts[e];
      s.starredValues += ecs.counts[e] * bits( s.starred[e] );
    }
  return s;
}

} // namespace vbas
