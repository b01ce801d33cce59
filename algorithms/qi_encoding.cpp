#include "qi_encoding.h"

#include <algorithm>

namespace vbas
{

QiEncoder::QiEncoder( std::size_t qiCount )
  : mValues( qiCount )
  , mNullCode( qiCount )
  , mPrefix( qiCount > 1 ? qiCount - 1 : 0 )
{
}

std::uint32_t QiEncoder::valueCode( std::size_t qi, std::optional<std::string_view> value )
{
  if ( !value )
  {
    if ( !mNullCode[qi] )
      mNullCode[qi] = static_cast<std::uint32_t>( categoryCount( qi ) );
    return *mNullCode[qi];
  }
  // Codes are dense over values and NULL together: shift the value ids past the NULL code.
  const std::uint32_t id = mValues[qi].insert( *value );
  return mNullCode[qi] && id >= *mNullCode[qi] ? id + 1 : id;
}

std::uint32_t QiEncoder::classId( const std::uint32_t *codes )
{
  if ( mValues.empty() )
  {
    mClassCount = 1;
    return 0;
  }
  std::uint32_t id = codes[0];
  for ( std::size_t q = 1; q < mValues.size(); ++q )
  {
    auto &prefix = mPrefix[q - 1];
    const std::uint64_t key = ( static_cast<std::uint64_t>( id ) << 32 ) | codes[q];
    id = prefix.findOrInsert( key, static_cast<std::uint32_t>( prefix.size() ) );
  }
  mClassCount = std::max<std::size_t>( mClassCount, std::size_t( id ) + 1 );
  return id;
}

std::size_t QiEncoder::categoryCount( std::size_t qi ) const
{
  return mValues[qi].size() + ( mNullCode[qi] ? 1 : 0 );
}

std::vector<std::size_t> QiEncoder::categoryCounts() const
{
  std::vector<std::size_t> counts;
  for ( std::size_t q = 0; q < mValues.size(); ++q )
    counts.push_back( categoryCount( q ) );
  return counts;
}

} // namespace vbas
