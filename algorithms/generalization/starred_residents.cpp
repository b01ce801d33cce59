#include "algorithms/generalization/starred_residents.h"

#include <stdexcept>
#include <utility>

namespace vbas
{

namespace
{

constexpr std::uint32_t kStarKey = ~std::uint32_t( 0 ) - 1; //!< a starred QI in a masked key: no label or token is this

} // namespace

void PopulationCells::add( std::uint32_t cellRegion, const std::vector<std::uint32_t> &cellValues, std::int64_t cellResidents )
{
  if ( cellValues.size() != qiCount )
    throw std::invalid_argument( "a population cell needs one value for each QI" );
  region.push_back( cellRegion );
  values.insert( values.end(), cellValues.begin(), cellValues.end() );
  residents.push_back( cellResidents );
}

StarredResidents::StarredResidents( std::size_t qiCount, std::vector<std::uint32_t> keys, std::vector<std::uint32_t> rows, const std::vector<std::int64_t> &residents )
  : mQiCount( qiCount )
  , mKeys( std::move( keys ) )
  , mRows( std::move( rows ) )
  , mResidents( residents )
  , mKeyBuffer( qiCount + 1 )
{
}

std::string_view StarredResidents::maskedKey( std::uint32_t row, const std::uint32_t *keys, std::uint32_t starred ) const
{
  mKeyBuffer[0] = row;
  for ( std::size_t q = 0; q < mQiCount; ++q )
    mKeyBuffer[q + 1] = ( starred >> q & 1 ) ? kStarKey : keys[q];
  return std::string_view( reinterpret_cast<const char *>( mKeyBuffer.data() ), mKeyBuffer.size() * sizeof( std::uint32_t ) );
}

std::int64_t StarredResidents::of( std::uint32_t row, const std::uint32_t *keys, std::uint32_t starred ) const
{
  auto sums = mSums.find( starred );
  if ( sums == mSums.end() )
  {
    // The first question with this starred set: every cell summed under its masked key once.
    sums = mSums.emplace( starred, Sums() ).first;
    for ( std::size_t cell = 0; cell < mRows.size(); ++cell )
    {
      const std::uint32_t id = sums->second.index.insert( maskedKey( mRows[cell], &mKeys[cell * mQiCount], starred ) );
      if ( id == sums->second.residents.size() )
        sums->second.residents.push_back( 0 );
      sums->second.residents[id] += mResidents[cell];
    }
  }
  const std::optional<std::uint32_t> id = sums->second.index.find( maskedKey( row, keys, starred ) );
  return id ? sums->second.residents[*id] : 0;
}

std::vector<std::uint32_t> cellLabels( const PopulationCells &cells, const std::vector<QiHierarchy> &qis, const LatticeNode &node )
{
  std::vector<std::uint32_t> labels( cells.values.size() );
  for ( std::size_t cell = 0; cell < cells.region.size(); ++cell )
    for ( std::size_t q = 0; q < qis.size(); ++q )
    {
      const std::uint32_t value = cells.values[cell * qis.size() + q];
      // A value outside the hierarchy is under no label but the one that covers every value.
      labels[cell * qis.size() + q] = node[q] >= qis[q].starLevel() ? 0 : value == kValueOutsideHierarchy ? kValueOutsideHierarchy : qis[q].hierarchy.labelId( node[q], value );
    }
  return labels;
}

StarredResidents nodeResidents( const PopulationCells &cells, const std::vector<QiHierarchy> &qis, const LatticeNode &node, const std::vector<std::size_t> &regionAggregateIndex )
{
  std::vector<std::uint32_t> rows;
  for ( const std::uint32_t region : cells.region )
    rows.push_back( static_cast<std::uint32_t>( regionAggregateIndex[region] ) );
  return StarredResidents( qis.size(), cellLabels( cells, qis, node ), std::move( rows ), cells.residents );
}

} // namespace vbas
