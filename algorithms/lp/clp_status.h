// What CLP's status means, for a message (internal to vbas_lp).
#pragma once

#include <ClpSimplex.hpp>

#include <string>

namespace vbas::lp
{

//! CLP's status and secondary status in words, with their numbers.
inline std::string clpStatusText( const ClpSimplex &clp )
{
  std::string text;
  switch ( clp.status() )
  {
    case 0:
      text = "it reported an optimum";
      break;
    case 1:
      text = "it found the LP infeasible";
      break;
    case 2:
      text = "it found the LP unbounded (dual infeasible), which an LP of non-negative distances cannot be: round-off";
      break;
    case 3:
      text = "it stopped on its iteration or time limit";
      break;
    case 4:
      text = "it stopped on numerical difficulties";
      break;
    default:
      text = "it stopped without an answer";
      break;
  }
  if ( clp.secondaryStatus() == 2 || clp.secondaryStatus() == 3 || clp.secondaryStatus() == 4 )
    text += ", optimal only once scaled (the unscaled LP breaks its constraints or optimality)";
  return text + " (CLP status " + std::to_string( clp.status() ) + ", secondary " + std::to_string( clp.secondaryStatus() ) + ")";
}

} // namespace vbas::lp
