#include "algorithms/generalization/information_loss.h"

#include "algorithms/metrics/nue.h"

#include <cmath>

namespace vbas
{

namespace
{

//! count x log2( whole / part ), 0 for no records.
double bitsOf( std::int64_t part, std::int64_t whole )
{
  return part > 0 ? static_cast<double>( part ) * std::log2( static_cast<double>( whole ) / static_cast<double>( part ) ) : 0.0;
}

} // namespace

double NodeLoss::objective( Objective objective ) const
{
  switch ( objective )
  {
    case Objective::GenericNue:
      return genericNue;
    case Objective::Prec:
      return 1.0 - prec;
    case Objective::Lm:
      return lm;
    case Objective::DmStar:
      return dmStar;
  }
  return genericNue;
}

LossModel::LossModel( const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &classCodes, const std::vector<std::int64_t> &classRecords, const std::vector<std::int64_t> &regionRecords )
  : mQis( qis )
  , mRegionRecords( regionRecords )
{
  for ( const std::int64_t n : regionRecords )
    mRecords += n;
  const std::size_t qiCount = qis.size();
  for ( std::size_t q = 0; q < qiCount; ++q )
  {
    const QiHierarchy &qi = qis[q];
    std::vector<std::int64_t> codeRecords( qi.valueOfCode.size(), 0 );
    for ( std::size_t c = 0; c < classRecords.size(); ++c )
      codeRecords[classCodes[c * qiCount + q]] += classRecords[c];
    const std::size_t star = qi.starLevel();
    std::vector<Level> &levels = mLevels.emplace_back( star + 1 );
    for ( std::size_t level = 0; level <= star; ++level )
    {
      Level &l = levels[level];
      std::vector<Generalised> records;
      std::vector<std::int64_t> perLabel( level < qi.hierarchy.levels() ? qi.hierarchy.labelCount( level ) : 1, 0 );
      for ( std::uint32_t code = 0; code < codeRecords.size(); ++code )
      {
        std::vector<std::uint32_t> path;
        for ( std::size_t up = 0; up <= star; ++up )
          path.push_back( qi.label( up, code ) );
        records.push_back( { codeRecords[code], path, level } );
        perLabel[qi.label( level, code )] += codeRecords[code];
      }
      l.genericNue = genericNonUniformEntropy( records );
      l.steps = star > 0 ? static_cast<double>( mRecords ) * static_cast<double>( level ) / static_cast<double>( star ) : 0.0;
      const std::size_t domain = qi.hierarchy.valueCount();
      for ( std::uint32_t label = 0; label < perLabel.size(); ++label )
      {
        const double lm = level >= qi.hierarchy.levels() ? 1.0 : domain > 1 ? static_cast<double>( qi.hierarchy.leaves( level, label ) - 1 ) / static_cast<double>( domain - 1 ) : 0.0;
        l.lmOfLabel.push_back( lm );
        l.lm += lm * static_cast<double>( perLabel[label] );
        l.information += bitsOf( perLabel[label], mRecords ) / static_cast<double>( mRecords );
      }
    }
  }
}

double LossModel::bound( Objective objective, const LatticeNode &node ) const
{
  const double cells = static_cast<double>( mRecords ) * static_cast<double>( mQis.size() + 1 );
  double sum = 0;
  for ( std::size_t q = 0; q < mQis.size(); ++q )
  {
    const Level &l = mLevels[q][node[q]];
    switch ( objective )
    {
      case Objective::GenericNue:
        sum += l.genericNue;
        break;
      case Objective::Prec:
        sum += l.steps / cells;
        break;
      case Objective::Lm:
        sum += l.lm / cells;
        break;
      case Objective::DmStar:
        break;
    }
  }
  return sum;
}

std::vector<double> LossModel::information( const LatticeNode &node ) const
{
  std::vector<double> bits;
  for ( std::size_t q = 0; q < mQis.size(); ++q )
    bits.push_back( mLevels[q][node[q]].information );
  return bits;
}

double LossModel::starredNue( std::size_t q, std::size_t level, const std::vector<std::int64_t> &starred ) const
{
  const QiHierarchy &qi = mQis[q];
  const std::size_t star = qi.starLevel();
  std::vector<Generalised> records;
  for ( std::uint32_t label = 0; label < starred.size(); ++label )
  {
    if ( starred[label] == 0 )
      continue;
    std::vector<std::uint32_t> path;
    for ( std::size_t up = level; up <= star; ++up )
      path.push_back( qi.ancestor( level, label, up ) );
    records.push_back( { starred[label], path, star - level } );
  }
  return genericNonUniformEntropy( records );
}

double LossModel::geographicNue( const std::vector<std::size_t> &regionAggregateIndex, const std::vector<std::int64_t> &dropped ) const
{
  // Level 1: every record from its region to its aggregate; level 2: the dropped records from their aggregate to the root.
  std::vector<std::int64_t> aggregateRecords( dropped.size(), 0 );
  for ( std::size_t r = 0; r < mRegionRecords.size(); ++r )
    aggregateRecords[regionAggregateIndex[r]] += mRegionRecords[r];
  double bits = 0;
  for ( std::size_t r = 0; r < mRegionRecords.size(); ++r )
    bits += bitsOf( mRegionRecords[r], aggregateRecords[regionAggregateIndex[r]] );
  std::int64_t allDropped = 0;
  for ( const std::int64_t d : dropped )
    allDropped += d;
  for ( const std::int64_t d : dropped )
    bits += bitsOf( d, allDropped );
  return bits;
}

NodeLoss LossModel::loss( const LatticeNode &node, const SparseHistograms &ecs, const std::vector<std::uint32_t> &labels, const ValueSuppression &s,
                          const std::vector<std::size_t> &regionAggregateIndex ) const
{
  const std::size_t qiCount = mQis.size();
  std::vector<std::vector<std::int64_t>> starred( qiCount );
  for ( std::size_t q = 0; q < qiCount; ++q )
    starred[q].assign( mLevels[q][node[q]].lmOfLabel.size(), 0 );
  std::vector<std::int64_t> dropped( ecs.rows(), 0 ), aggregateRecords( ecs.rows(), 0 );
  NodeLoss loss;
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
    {
      const std::int64_t n = ecs.counts[e];
      loss.dmStar += static_cast<double>( n ) * static_cast<double>( n );
      aggregateRecords[a] += n;
      dropped[a] += s.dropped[e] ? n : 0;
      for ( std::size_t q = 0; q < qiCount; ++q )
        if ( s.starred[e] >> q & 1 )
          starred[q][labels[ecs.classes[e] * qiCount + q]] += n;
    }
  double steps = 0, lm = 0;
  for ( std::size_t q = 0; q < qiCount; ++q )
  {
    const std::size_t star = mQis[q].starLevel();
    const Level &l = mLevels[q][node[q]];
    loss.genericNue += l.genericNue + starredNue( q, node[q], starred[q] );
    loss.genericNueMax += mLevels[q][star].genericNue;
    steps += l.steps;
    lm += l.lm;
    for ( std::size_t label = 0; label < starred[q].size(); ++label )
    {
      const double n = static_cast<double>( starred[q][label] );
      steps += n * ( 1.0 - ( star > 0 ? static_cast<double>( node[q] ) / static_cast<double>( star ) : 0.0 ) );
      lm += n * ( 1.0 - l.lmOfLabel[label] );
    }
  }
  loss.genericNue += geographicNue( regionAggregateIndex, dropped );
  for ( const std::int64_t n : mRegionRecords )
    loss.genericNueMax += bitsOf( n, mRecords );
  // The geography: a record released in an aggregate of several regions is at level 1 of 2, a dropped one at 2.
  std::vector<std::size_t> members( ecs.rows(), 0 );
  for ( const std::size_t a : regionAggregateIndex )
    ++members[a];
  const double regions = static_cast<double>( regionAggregateIndex.size() );
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
  {
    const double released = static_cast<double>( aggregateRecords[a] - dropped[a] );
    steps += static_cast<double>( dropped[a] ) + ( members[a] > 1 ? released / 2.0 : 0.0 );
    lm += static_cast<double>( dropped[a] ) + ( regions > 1 ? released * static_cast<double>( members[a] - 1 ) / ( regions - 1 ) : 0.0 );
  }
  const double cells = static_cast<double>( mRecords ) * static_cast<double>( qiCount + 1 );
  loss.prec = cells > 0 ? 1.0 - steps / cells : 1.0;
  loss.lm = cells > 0 ? lm / cells : 0.0;
  return loss;
}

} // namespace vbas
