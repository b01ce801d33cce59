// The suppression search (docs/method.md, "Suppression search"): fewer suppressed records (paper
// sec. 3.3) at a fixed number of aggregates, each one piece, under the constraints of a Partition. Late
// acceptance hill climbing (Burke and Bykov, "The late acceptance hill-climbing heuristic", EJOR 2017)
// over four moves: a region to a neighbouring aggregate, two adjacent aggregates recombined (merged,
// then split along a random spanning tree at its best edge), two adjacent aggregates merged while
// another is split (the count kept), and a site moved to the mean of its aggregate's region points
// (eq. 12-13). Anytime: the best partition seen that keeps every bound is returned (the start when none
// does).
#pragma once

#include "algorithms/aggregation/partition.h"
#include "algorithms/base/progress.h"

#include <cstdint>
#include <functional>
#include <limits>

namespace vbas
{

struct SearchSettings
{
    std::uint64_t seed = 0; //!< draws every choice: the same seed and moves give the same partition
    double timeLimit = 60;  //!< seconds (TIME_LIMIT); the search stops at the first of this and maxMoves
    std::uint64_t maxMoves = std::numeric_limits<std::uint64_t>::max();
    std::size_t history = 1000;         //!< length of the late acceptance list
    std::size_t largestRecombined = 64; //!< regions at most in the aggregates a recombination or split re-forms
    //! Called after every accepted move (for checks).
    std::function<void( const Partition &partition )> afterAccept;
};

enum class SearchStop
{
  TimeLimit,
  MaxMoves,
  NothingSuppressed,
  Canceled,
};

//! What one kind of move did: tries, acceptances, and the time spent scoring and applying them.
struct MoveStats
{
    std::uint64_t tried = 0;
    std::uint64_t accepted = 0;
    std::uint64_t bestMove = 0; //!< the trial move that found the best partition
    double bestSeconds = 0;     //!< and when
    double seconds = 0;
};

struct SearchResult
{
    std::vector<std::size_t> regionAggregate; //!< the aggregate of each region in the best partition seen
    std::vector<Point> sites;
    bool boundsKept = false; //!< whether that partition keeps every bound (Partition::keepsBounds): false only when it is the start, which breaks one
    PartitionScore start;
    PartitionScore best;
    std::uint64_t moves = 0; //!< trial moves made (maxMoves = this repeats the run exactly)
    std::uint64_t accepted = 0;
    std::uint64_t bestMove = 0; //!< the trial move that found the best partition
    double bestSeconds = 0;     //!< and when
    double seconds = 0;
    SearchStop stop = SearchStop::MaxMoves;
    MoveStats regionMoves, recombinations, mergeSplits, recentres;
};

//! What the boundary refinement did.
struct BoundaryRefinement
{
    std::size_t moves = 0;  //!< regions moved to a neighbouring aggregate
    std::size_t passes = 0; //!< passes over the regions, the last of which moved nothing
    std::int64_t suppressedBefore = 0;
    std::int64_t suppressedAfter = 0;
};

/**
 * Greedy descent over single boundary regions (REFINE_BOUNDARIES): each pass first moves every site to
 * the mean of its aggregate's region points (eq. 12-13) where that lowers compactness (eq. 20), then
 * takes the regions in index order: a region moves to the neighbouring aggregate that lowers most the
 * records suppressed (ties: the longest border shared with the region, then the lower aggregate),
 * provided that drop is strictly positive and the partition allows the move (its aggregate keeps
 * another region and its pieces, the constraints hold). Passes go on until one moves no region.
 */
BoundaryRefinement refineBoundaries( Partition &partition );

/**
 * Lowers the records suppressed in `partition` by moves that keep its aggregates (count, non-empty, one
 * piece each: a move never splits an aggregate) and its constraints. The lexicographic best (suppressed
 * records, then mean-point compactness) among the partitions met that keep every bound and suppress
 * no more than the start is returned; when none does, the start (boundsKept false). Progress shows
 * both; a cancel stops at once with SearchStop::Canceled.
 */
SearchResult searchPartition( Partition &partition, const SearchSettings &settings, Progress *progress = nullptr );

} // namespace vbas
