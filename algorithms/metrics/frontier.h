// A comparison's frontier and its recommendation (docs/method.md, "Comparing candidate releases"):
// which candidate releases no other beats on both records suppressed and information lost, and the
// one to make.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace vbas
{

//! What the frontier and the recommendation read of a candidate release.
struct CandidateScore
{
    std::int64_t suppressed = 0;
    double loss = 0;   //!< the information loss the user chose to compare by
    bool meets = true; //!< whether it meets the stated k or risk
};

/**
 * The Pareto front: 1 for each candidate that no other beats, that is, none suppresses at most as
 * many records and loses at most as much, one of the two strictly less. Alike candidates are both on it.
 */
std::vector<char> paretoFront( const std::vector<CandidateScore> &candidates );

/**
 * The recommendation: the candidate of least loss among those that meet the stated k or risk; ties:
 * the fewer records suppressed, then the first. None when no candidate meets it.
 */
std::optional<std::size_t> recommend( const std::vector<CandidateScore> &candidates );

} // namespace vbas
