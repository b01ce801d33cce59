// Site number approximation, the dynamic GAPS cutoff (paper sec. 3.1, eq. 1-6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

//! (e^B0, B1) of Table 1.
struct CutoffCoefficients
{
    double expB0 = 0;
    double b1 = 0;
};

constexpr CutoffCoefficients kWesternCanada { 1588, 0.42 };
constexpr CutoffCoefficients kCentralCanada { 1436, 0.43 };
constexpr CutoffCoefficients kEasternCanada { 1978, 0.304 };

//! Eq. 1: -sum_k t_k (k/N) log(k/N), over the EC sizes; log in the given base (e by default).
double entropy( const std::vector<std::int64_t> &ecSizes, double base );

//! Eq. 4: product of the category counts |q| of the QIs.
double maxCombs( const std::vector<std::size_t> &categoryCounts );

//! Eq. 2 and 5: e^B0 * X^B1.
double cutoff( const CutoffCoefficients &coefficients, double x );

//! Eq. 3 and 6: R(P / Cutoff), halves up, clamped to [1, regions], regions without records included.
std::size_t siteCount( double population, double cutoff, std::size_t regions );

} // namespace vbas
