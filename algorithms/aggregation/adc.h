// Anonymity-driven clustering, ADC (paper sec. 3.2.2, eq. 14-19): k-means style, the sites
// are moved one trial at a time toward the members of their clusters' bottleneck ECs, and a move is
// kept only when it improves the objective and keeps the constraints (docs/method.md, ADC: clusters and
// constraints). A cluster is a site's Voronoi cell (nearest site, ties to the lower index), so
// the final clusters are exactly the aggregates that Voronoi aggregation builds from the sites.
#pragma once

#include "algorithms/aggregation/criterion.h"
#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"
#include "algorithms/base/progress.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace vbas
{

enum class AdcObjective
{
  Anonymity,   //!< the paper's eq. 14: f = alpha * |R| - |R_alpha|, higher is better
  Suppression, //!< fewer suppressed records; on a tie, a smaller compactness sum (eq. 20)
};

//! Where ADC is: what progress shows and the result reports.
struct AdcStatus
{
    std::int64_t alpha = 0;            //!< global anonymity: the smallest EC of any cluster (in records, or residents under k-map), capped at k (alpha >= k is done)
    std::int64_t clustersAtAlpha = 0;  //!< |R_alpha|
    std::int64_t objective = 0;        //!< f of eq. 14, with |R| = the number of sites
    std::int64_t suppressed = 0;       //!< records in ECs (cluster, QI class) below k (records, or residents under k-map)
    double compactness = 0;            //!< eq. 20 over the current clusters
    double meanPointCompactness = 0;   //!< vbas::meanPointCompactness of the current clusters, with AdcSettings::regionWeights
    std::int64_t clusters = 0;         //!< clusters holding at least one region point
    std::int64_t releasingNothing = 0; //!< of those, the clusters whose every record is in an EC below k
    std::uint64_t tried = 0;           //!< trial moves
    std::uint64_t evaluated = 0;       //!< trial moves re-scored (the others were known to fail, see AdcSettings::reuseTrials)
    std::uint64_t repeated = 0;        //!< of the others, the ones that repeated the move of the failed trial just before them (see AdcSettings::reuseTrials)
    std::uint64_t limited = 0;         //!< of those, the ones that broke a constraint read from the regions and records alone, before their ECs were counted
    std::uint64_t counted = 0;         //!< of the others, the ones whose ECs were counted (the rest moved the same regions as one before them, see AdcSettings::reuseTrials)
    std::uint64_t committed = 0;       //!< trial moves kept
    std::uint64_t passes = 0;          //!< passes over the target clusters
};

struct AdcSettings
{
    /**
     * What an EC must hold (docs/method.md, "A release at a stated risk"): k records; under k-map k
     * residents of its cells (an EC is below k with fewer, and alpha is the fewest residents); under
     * the average risk model k records, and the Suppression objective counts the records its cut takes too.
     */
    Criterion criterion = Criterion( 5 );
    AdcObjective objective = AdcObjective::Anonymity;
    std::uint64_t maxMoves = 10000000; //!< trial moves before ADC stops with the sites it has (MAX_ITERATIONS)
    /**
     * Reuse what earlier trials found when everything it depends on is unchanged: skip re-scoring a trial
     * that failed before (the clusters it touched, their sites and, for eq. 14, alpha unchanged) or that
     * moves the same site to the same target as the failed trial just before it, with no commit between; take
     * the EC counts of a trial that moves the same regions between the same clusters as one scored since
     * the last commit in the same cluster's visit (only eq. 20's compactness, which follows the site, is
     * worked out again). Same result, less work; tests turn it off to check exactly that. (Either way, a
     * trial that breaks a constraint read from the regions and records alone fails before its ECs are counted.)
     */
    bool reuseTrials = true;
    /**
     * The constraints every trial keeps, besides never emptying a cluster and never raising the
     * clusters releasing nothing. A constraint already broken may stay broken, but no trial makes it worse:
     * the mean-point compactness over all regions after the trial (vbas::meanPointCompactness with
     * regionWeights, which does not depend on the sites) at most maxMeanPointCompactness, or not above
     * its value before; every cluster the trial changes holds at least minClusterRecords records, or no
     * fewer than before, and at most maxClusterRecords, or no more than before.
     */
    double maxMeanPointCompactness = std::numeric_limits<double>::infinity();
    std::vector<double> regionWeights; //!< one per region point for the mean-point compactness (the population basis); empty: 1 each
    std::int64_t minClusterRecords = 0;
    std::int64_t maxClusterRecords = std::numeric_limits<std::int64_t>::max();
    using Callback = std::function<void( const std::vector<Point> &sites, const std::vector<std::size_t> &regionAggregate, const AdcStatus &status )>;
    //! Called after every committed move with the sites, each region's aggregate (its cluster) and the status (for checks).
    Callback afterCommit;
};

enum class AdcStop
{
  ReachedK,      //!< alpha >= k (eq. 14), or nothing suppressed (Suppression)
  NoImprovement, //!< a full pass over every target committed nothing: a local optimum
  MaxMoves,
  Canceled,
};

struct AdcResult
{
    std::vector<Point> sites;                 //!< one per seed, moved
    std::vector<std::size_t> regionAggregate; //!< the aggregate of each region point: its nearest site
    AdcStatus before;                         //!< at the seeds
    AdcStatus after;
    AdcStop stop = AdcStop::NoImprovement;
};

/**
 * Moves the seeds (from balanced density or randomSites) to raise anonymity (paper sec. 3.2.2):
 * - targets: each cluster at the lowest anonymity alpha, in site order, and in it each bottleneck EC
 *   (its QI classes of exactly alpha records); with the Suppression objective, each cluster with
 *   suppressed records and in it each class below k;
 * - a trial moves the cluster's site to the mean of the region points in its neighbourhood that hold
 *   the class, weighted by the class's records in each (eq. 18-19); the neighbourhood is the cluster's
 *   own points plus the points in the polygon through its Voronoi neighbours' sites in order;
 * - a trial is committed only if it keeps the constraints (it empties no cluster, raises no count of
 *   clusters releasing nothing, and makes none of AdcSettings::maxMeanPointCompactness,
 *   minClusterRecords and maxClusterRecords worse) and the objective improves; when a cluster's anonymity rises the pass starts again from the
 *   clusters now lowest; it ends at alpha >= k or after a pass that commits nothing.
 * Throws std::invalid_argument for no seeds, k < 2, or points, histograms and weights that do not match.
 */
AdcResult anonymityDrivenClustering( const std::vector<Point> &seeds, const std::vector<Point> &regionPoints, const SparseHistograms &regionHistograms, const AdcSettings &settings,
                                     Progress *progress = nullptr );

//! ADC's random seeding: sites distinct region points (by index), drawn uniformly from seed.
std::vector<Point> randomSites( const std::vector<Point> &regionPoints, std::size_t sites, std::uint64_t seed );

} // namespace vbas
