#include "algorithms/base/qi_encoding.h"

namespace vbas
{

QiEncoder::QiEncoder( std::size_t qiCount )
  : mValues( qiCount )
  , mNullCode( qiCount )
  , mCodeValues( qiCount )
{
}

std::uint32_t QiEncoder::valueCode( std::size_t qi, std::optional<std::string_view> value )
{
  if ( !value )
  {
    if ( !mNullCode[qi] )
    {
      mNullCode[qi] = static_cast<std::uint32_t>( categoryCount( qi ) );
      mCodeValues[qi].emplace_back();
    }
    return *mNullCode[qi];
  }
  // Codes are dense over values and NULL together: shift the value ids past the NULL code.
  const std::uint32_t id = mValues[qi].insert( *value );
  const std::uint32_t code = mNullCode[qi] && id >= *mNullCode[qi] ? id + 1 : id;
  if ( code == mCodeValues[qi].size() )
    mCodeValues[qi].emplace_back( std::string( *value ) );
  return code;
}

std::uint32_t QiEncoder::classId( const std::uint32_t *codes )
{
  if ( mValues.empty() )
  {
    mClassCount = 1;
    return 0;
  }
  const std::uint32_t id = mClasses.insert( tuple( codes ) );
  if ( id == mClasses.size() - 1 && mClassCodes.size() < mClasses.size() * mValues.size() )
    mClassCodes.insert( mClassCodes.end(), codes, codes + mValues.size() );
  return id;
}

std::optional<std::uint32_t> QiEncoder::findValueCode( std::size_t qi, std::optional<std::string_view> value ) const
{
  if ( !value )
    return mNullCode[qi];
  const std::optional<std::uint32_t> id = mValues[qi].find( *value );
  return id && mNullCode[qi] && *id >= *mNullCode[qi] ? std::optional<std::uint32_t>( *id + 1 ) : id;
}

std::optional<std::uint32_t> QiEncoder::findClass( const std::uint32_t *codes ) const
{
  if ( mValues.empty() )
    return mClassCount > 0 ? std::optional<std::uint32_t>( 0 ) : std::nullopt;
  return mClasses.find( tuple( codes ) );
}

std::string_view QiEncoder::tuple( const std::uint32_t *codes ) const
{
  return std::string_view( reinterpret_cast<const char *>( codes ), mValues.size() * sizeof( std::uint32_t ) );
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
