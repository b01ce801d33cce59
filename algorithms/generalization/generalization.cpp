#include "algorithms/generalization/generalization.h"

#include "algorithms/base/string_index.h"

#include <string_view>

namespace vbas
{

std::size_t QiHierarchy::starLevel() const
{
  const std::size_t top = hierarchy.levels() - 1;
  return hierarchy.labelCount( top ) <= 1 ? top : top + 1;
}

std::uint32_t QiHierarchy::label( std::size_t level, std::uint32_t code ) const
{
  return level < hierarchy.levels() ? hierarchy.labelId( level, valueOfCode[code] ) : 0;
}

std::uint32_t QiHierarchy::ancestor( std::size_t from, std::uint32_t labelId, std::size_t to ) const
{
  return to < hierarchy.levels() ? hierarchy.labelId( to, hierarchy.firstValue( from, labelId ) ) : 0;
}

Generalization generalize( const std::vector<std::uint32_t> &classCodes, const std::vector<QiHierarchy> &qis, const LatticeNode &node )
{
  const std::size_t q = qis.size();
  Generalization g;
  if ( q == 0 )
    return g;
  StringIndex classes;
  std::vector<std::uint32_t> labels( q );
  for ( std::size_t first = 0; first < classCodes.size(); first += q )
  {
    for ( std::size_t i = 0; i < q; ++i )
      labels[i] = qis[i].label( node[i], classCodes[first + i] );
    const std::uint32_t id = classes.insert( std::string_view( reinterpret_cast<const char *>( labels.data() ), q * sizeof( std::uint32_t ) ) );
    if ( id == g.classCount )
    {
      g.labels.insert( g.labels.end(), labels.begin(), labels.end() );
      ++g.classCount;
    }
    g.classOf.push_back( id );
  }
  return g;
}

SparseHistograms remap( const SparseHistograms &histograms, const std::vector<std::uint32_t> &classOf )
{
  std::vector<std::uint32_t> entryClass;
  for ( const std::uint32_t c : histograms.classes )
    entryClass.push_back( classOf[c] );
  return remapEntries( histograms, entryClass );
}

} // namespace vbas
