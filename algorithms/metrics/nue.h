// Non-uniform entropy (paper sec. 3.4): the information a generalisation loses, as in the paper (eq. 22-23,
// Gionis and Tassa), and its generic variant for local recoding and suppression (Prasser, Bild and
// Kuhn, 2016), in bits. Written for any hierarchy: a record's value has one node per
// level of its hierarchy, from the original value (level 0) up to the root, and is released at one
// of those levels. VBAS's geographic hierarchy is region (0), aggregate (1), suppressed (2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

//! count records whose value has node path[l] at level l, released at level `level`.
struct Generalised
{
    std::int64_t count = 0;
    std::vector<std::uint32_t> path; //!< node ids per level; ids only need to be distinct within a level
    std::size_t level = 0;
};

/**
 * Plain non-uniform entropy: -sum over records of log2( f(D, x) / f(D', x) ), f(D, x) the records
 * with x's original value, f(D', x) the records released with x's released value (level and node).
 * With local recoding a term can be negative: an information gain (Prasser et al., Figure 3).
 */
double nonUniformEntropy( const std::vector<Generalised> &records );

/**
 * Generic non-uniform entropy: for each level n >= 1, the plain entropy of taking the records
 * released at level n or above from level n - 1 to level n, frequencies counted within those
 * records only; the sum over the levels. Never negative.
 */
double genericNonUniformEntropy( const std::vector<Generalised> &records );

} // namespace vbas
