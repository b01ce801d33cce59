#include "algorithms/risk/population_risk.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

namespace vbas
{

namespace
{

std::string text( double residents )
{
  std::ostringstream out;
  out << residents;
  return out.str();
}

void check( const ClassPopulation &c, std::size_t index )
{
  if ( c.records <= 0 )
    throw std::invalid_argument( "released class " + std::to_string( index ) + " holds no records" );
  if ( c.residents < static_cast<double>( c.records ) )
    throw std::invalid_argument( "released class " + std::to_string( index ) + " has " + text( c.residents ) + " residents for " + std::to_string( c.records )
                                 + " records: fewer residents than records" );
}

} // namespace

PopulationRisk populationRisk( const std::vector<ClassPopulation> &classes, double threshold )
{
  PopulationRisk risk;
  double matched = 0; // sum f / F: the records an attacker matching every identity re-identifies, expected
  std::int64_t above = 0;
  for ( std::size_t j = 0; j < classes.size(); ++j )
  {
    const ClassPopulation &c = classes[j];
    check( c, j );
    risk.records += c.records;
    risk.smallestResidents = j == 0 ? c.residents : std::min( risk.smallestResidents, c.residents );
    matched += static_cast<double>( c.records ) / c.residents;
    risk.sampleUniques += c.records == 1 ? 1 : 0;
    risk.populationUniques += c.residents == 1 ? c.records : 0; // F = 1 holds f = 1 (F >= f)
    above += 1.0 / c.residents > threshold ? c.records : 0;
  }
  if ( risk.records == 0 )
    return risk;
  const double n = static_cast<double>( risk.records );
  risk.journalistMax = 1.0 / risk.smallestResidents;
  risk.journalistAverage = matched / n;
  risk.marketer = matched / n;
  risk.aboveThreshold = static_cast<double>( above ) / n;
  return risk;
}

std::ptrdiff_t firstBelowKMap( const std::vector<ClassPopulation> &classes, double k )
{
  const auto below = std::find_if( classes.begin(), classes.end(), [k]( const ClassPopulation &c ) { return c.residents < k; } );
  return below == classes.end() ? -1 : below - classes.begin();
}

} // namespace vbas
