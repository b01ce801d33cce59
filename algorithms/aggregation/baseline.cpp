#include "algorithms/aggregation/baseline.h"

#include "algorithms/base/string_index.h"

#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace vbas
{

std::vector<std::size_t> eachRegionAlone( std::size_t regions )
{
  std::vector<std::size_t> regionAggregate( regions );
  std::iota( regionAggregate.begin(), regionAggregate.end(), std::size_t( 0 ) );
  return regionAggregate;
}

std::vector<std::size_t> oneAggregate( std::size_t regions )
{
  return std::vector<std::size_t>( regions, 0 );
}

std::vector<std::size_t> groupByKey( const std::vector<std::string> &keys )
{
  StringIndex index;
  std::vector<std::size_t> regionAggregate;
  regionAggregate.reserve( keys.size() );
  for ( const std::string &key : keys )
    regionAggregate.push_back( index.insert( key ) );
  return regionAggregate;
}

std::vector<std::size_t> mergeSparse( const std::vector<std::size_t> &regionAggregate, const std::vector<double> &regionResidents, double limit )
{
  if ( regionResidents.size() != regionAggregate.size() )
    throw std::invalid_argument( "mergeSparse: one number of residents per region is needed" );
  std::unordered_map<std::size_t, double> residents;
  for ( std::size_t r = 0; r < regionAggregate.size(); ++r )
    residents[regionAggregate[r]] += regionResidents[r];
  std::vector<std::string> keys;
  keys.reserve( regionAggregate.size() );
  for ( const std::size_t a : regionAggregate )
    keys.push_back( residents[a] <= limit ? std::string() : std::to_string( a ) ); // "": the merged aggregate
  return groupByKey( keys );
}

} // namespace vbas
