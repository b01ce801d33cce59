#include "algorithms/base/geometry.h"

#include <cmath>

namespace vbas
{

double roundHalfUp( double x )
{
  return std::floor( x + 0.5 );
}

} // namespace vbas
