#include "algorithms/generalization/hierarchy.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

namespace vbas
{

namespace
{

std::string quoted( std::string_view text )
{
  return "'" + std::string( text ) + "'";
}

//! Fields of a row without the empty ones at its end.
std::size_t width( const HierarchyRow &row )
{
  std::size_t n = row.fields.size();
  while ( n > 0 && row.fields[n - 1].empty() )
    --n;
  return n;
}

//! What an interval hierarchy reads in a value: a number (lo = hi), a band [lo, hi) or an open band [lo, inf).
struct Range
{
    double lo = 0;
    double hi = 0;
    bool open = false;
};

std::optional<double> number( std::string_view text )
{
  const std::string copy( text );
  char *end = nullptr;
  const double x = std::strtod( copy.c_str(), &end );
  if ( copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite( x ) )
    return std::nullopt;
  return x;
}

std::string_view trimmed( std::string_view text )
{
  while ( !text.empty() && ( text.front() == ' ' || text.front() == '\t' ) )
    text.remove_prefix( 1 );
  while ( !text.empty() && ( text.back() == ' ' || text.back() == '\t' ) )
    text.remove_suffix( 1 );
  return text;
}

bool whole( double x )
{
  return std::floor( x ) == x;
}

//! A number, a whole-number band "20-24" (= [20, 25)) or an open band "85+".
std::optional<Range> range( std::string_view text )
{
  text = trimmed( text );
  if ( const std::optional<double> x = number( text ) )
    return Range { *x, *x, false };
  if ( !text.empty() && text.back() == '+' )
  {
    if ( const std::optional<double> lo = number( trimmed( text.substr( 0, text.size() - 1 ) ) ) )
      return Range { *lo, *lo, true };
    return std::nullopt;
  }
  const std::size_t dash = text.find( '-', 1 );
  if ( dash == std::string_view::npos )
    return std::nullopt;
  const std::optional<double> lo = number( trimmed( text.substr( 0, dash ) ) );
  const std::optional<double> hi = number( trimmed( text.substr( dash + 1 ) ) );
  if ( !lo || !hi || !whole( *lo ) || !whole( *hi ) || *hi < *lo )
    return std::nullopt;
  return Range { *lo, *hi + 1, false };
}

std::string formatNumber( double x )
{
  char text[64];
  if ( whole( x ) && std::abs( x ) < 1e15 )
    std::snprintf( text, sizeof text, "%.0f", x );
  else
    std::snprintf( text, sizeof text, "%.15g", x );
  return text;
}

} // namespace

HierarchyError::HierarchyError( std::size_t line, std::string value, const std::string &message )
  : std::runtime_error( message )
  , line( line )
  , value( std::move( value ) )
{
}

void Hierarchy::addLevel( const std::vector<std::string> &labelOfValue )
{
  std::map<std::string, std::uint32_t> ids;
  std::vector<std::uint32_t> &labelOf = mLabelOf.emplace_back();
  std::vector<std::string> &labels = mLabels.emplace_back();
  std::vector<std::size_t> &leaves = mLeaves.emplace_back();
  std::vector<std::size_t> &first = mFirst.emplace_back();
  for ( const std::string &label : labelOfValue )
  {
    const auto [it, added] = ids.emplace( label, static_cast<std::uint32_t>( labels.size() ) );
    if ( added )
    {
      labels.push_back( label );
      leaves.push_back( 0 );
      first.push_back( labelOf.size() );
    }
    labelOf.push_back( it->second );
    ++leaves[it->second];
  }
}

Hierarchy Hierarchy::fromRows( const std::vector<HierarchyRow> &rows )
{
  if ( rows.empty() || width( rows.front() ) == 0 )
    throw HierarchyError( rows.empty() ? 0 : rows.front().line, {}, "the hierarchy has no values: its first line is empty" );
  const std::size_t levels = width( rows.front() );
  std::vector<std::vector<std::string>> labelOf( levels ); // [level][value]
  std::vector<std::size_t> lines;
  std::unordered_map<std::string, std::size_t> seen; // value -> its index
  for ( const HierarchyRow &row : rows )
  {
    const std::string value = row.fields.empty() ? std::string() : row.fields[0];
    if ( width( row ) != levels )
      throw HierarchyError( row.line, value,
                            "line " + std::to_string( row.line ) + " has " + std::to_string( width( row ) ) + " columns, line " + std::to_string( rows.front().line ) + " has "
                              + std::to_string( levels ) + ": every row needs a label at every level" );
    for ( std::size_t level = 1; level < levels; ++level )
      if ( row.fields[level].empty() )
        throw HierarchyError( row.line, value, "line " + std::to_string( row.line ) + ": the label of " + quoted( value ) + " at level " + std::to_string( level ) + " is empty" );
    const auto [it, added] = seen.emplace( value, lines.size() );
    if ( !added )
      throw HierarchyError( row.line, value, "line " + std::to_string( row.line ) + ": the value " + quoted( value ) + " is already on line " + std::to_string( lines[it->second] ) );
    lines.push_back( row.line );
    for ( std::size_t level = 0; level < levels; ++level )
      labelOf[level].push_back( row.fields[level] );
  }
  const Hierarchy h = fromLevels( labelOf );
  // Each level coarsens the one below: a label at level l has one label above it at level l + 1.
  for ( std::size_t level = 1; level + 1 < levels; ++level )
  {
    std::vector<std::optional<std::size_t>> firstValue( h.labelCount( level ) );
    for ( std::size_t v = 0; v < h.valueCount(); ++v )
    {
      std::optional<std::size_t> &first = firstValue[h.labelId( level, v )];
      if ( !first )
        first = v;
      else if ( h.labelId( level + 1, *first ) != h.labelId( level + 1, v ) )
        throw HierarchyError( lines[v], h.value( v ),
                              "line " + std::to_string( lines[v] ) + ": " + quoted( labelOf[level][v] ) + " at level " + std::to_string( level ) + " is under " + quoted( labelOf[level + 1][*first] )
                                + " at level " + std::to_string( level + 1 ) + " on line " + std::to_string( lines[*first] ) + " but under " + quoted( labelOf[level + 1][v] )
                                + " here: every level must be a coarsening of the one below" );
    }
  }
  return h;
}

Hierarchy Hierarchy::intervals( const std::vector<std::string> &values, double width )
{
  if ( !( width > 0 ) || !std::isfinite( width ) )
    throw HierarchyError( 0, formatNumber( width ), "the interval width must be a positive number" );
  if ( values.empty() )
    return suppressionOnly( values );
  std::vector<Range> ranges;
  double origin = std::numeric_limits<double>::infinity();
  std::optional<double> openFrom;
  for ( const std::string &value : values )
  {
    const std::optional<Range> r = range( value );
    if ( !r )
      throw HierarchyError( 0, value, "the value " + quoted( value ) + " is not a number, a band such as 20-24 or an open band such as 85+" );
    ranges.push_back( *r );
    origin = std::min( origin, r->lo );
    if ( r->open )
      openFrom = std::min( openFrom.value_or( r->lo ), r->lo );
  }
  origin = std::floor( origin / width ) * width;
  std::vector<std::vector<std::string>> levels { values };
  for ( double w = width; levels.size() < 64; w *= 2 )
  {
    // x's interval: its start at or below x, its end above (the quotient rounded to a whole number is moved back).
    const auto interval = [&]( double x ) {
      double i = std::floor( ( x - origin ) / w );
      if ( origin + ( i + 1 ) * w <= x )
        ++i;
      else if ( origin + i * w > x )
        --i;
      return i;
    };
    const double openInterval = openFrom ? interval( *openFrom ) : std::numeric_limits<double>::infinity();
    std::vector<std::string> labels;
    for ( std::size_t v = 0; v < values.size(); ++v )
    {
      const Range &r = ranges[v];
      const double i = std::min( interval( r.lo ), openInterval );
      const double start = origin + i * w;
      const std::string from = formatNumber( start ), to = i < openInterval ? formatNumber( start + w ) : std::string( "inf" );
      if ( from == to ) // a double holds about 16 significant digits, a label 15
        throw HierarchyError( 0, values[v],
                              "the width " + formatNumber( w ) + " is too small for values such as " + quoted( values[v] ) + ": the interval of that width from " + from + " would be labelled [" + from
                                + ", " + to + "), its ends the same to the 15 significant digits of a label; choose a larger width" );
      if ( i < openInterval && r.hi > start + w )
        throw HierarchyError( 0, values[v], "an interval of width " + formatNumber( w ) + " would split the band " + quoted( values[v] ) + ": choose a width that the bands divide" );
      labels.push_back( "[" + from + ", " + to + ")" );
    }
    if ( std::set<std::string>( labels.begin(), labels.end() ).size() <= 1 )
      break;
    levels.push_back( std::move( labels ) );
  }
  levels.emplace_back( values.size(), "*" );
  return fromLevels( levels );
}

Hierarchy Hierarchy::suppressionOnly( const std::vector<std::string> &values )
{
  return fromLevels( { values, std::vector<std::string>( values.size(), "*" ) } );
}

Hierarchy Hierarchy::fromLevels( const std::vector<std::vector<std::string>> &levels )
{
  Hierarchy h;
  for ( const std::string &value : levels.front() )
  {
    if ( !h.mIndex.emplace( value, h.mValues.size() ).second )
      throw HierarchyError( 0, value, "the value " + quoted( value ) + " is given twice" );
    h.mValues.push_back( value );
  }
  for ( const std::vector<std::string> &labels : levels )
    h.addLevel( labels );
  return h;
}

std::optional<std::size_t> Hierarchy::find( std::string_view value ) const
{
  const auto it = mIndex.find( std::string( value ) );
  return it == mIndex.end() ? std::nullopt : std::optional<std::size_t>( it->second );
}

} // namespace vbas
