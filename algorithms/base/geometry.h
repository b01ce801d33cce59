// Plain 2D types shared by the VBAS core.
#pragma once

namespace vbas
{

struct Point
{
    double x = 0;
    double y = 0;
};

struct Extent
{
    double xMin = 0;
    double yMin = 0;
    double xMax = 0;
    double yMax = 0;
};

//! R(x) of the paper: round halves up, floor(x + 0.5), not to even.
double roundHalfUp( double x );

} // namespace vbas
