// A partition of the regions into a fixed number of aggregates, each with a site, scored incrementally
// from the per-region histograms: the records suppressed (ECs (aggregate, class) below k records, paper
// sec. 3.3, or below k residents under k-map, and under the average risk model those its cut takes:
// docs/method.md, "A release at a stated risk"), compactness (eq. 20: region point to its aggregate's site), the mean-point compactness
// (metrics.h: region point to its aggregate's weighted mean point, which the budget holds), the
// aggregates releasing nothing, and the constraints every optimising step honours (docs/method.md,
// "Constraints").
#pragma once

#include "algorithms/aggregation/average_cut.h"
#include "algorithms/aggregation/contiguity.h"
#include "algorithms/aggregation/criterion.h"
#include "algorithms/base/flat_map.h"
#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace vbas
{

/**
 * What every move must honour. A constraint the partition already breaks may stay broken, but no move
 * makes it worse: an aggregate below the record floor loses no records, one above the ceiling gains
 * none, a compactness above the cap does not rise, and no aggregate falls into more pieces.
 */
struct AggregateConstraints
{
    double maxMeanPointCompactness = std::numeric_limits<double>::infinity();  //!< over all regions (vbas::meanPointCompactness)
    std::int64_t minRecords = 0;                                               //!< records in every aggregate
    std::int64_t maxRecords = std::numeric_limits<std::int64_t>::max();        //!< records in any aggregate
    std::size_t maxReleasingNothing = std::numeric_limits<std::size_t>::max(); //!< aggregates whose every record is suppressed (below k: the average risk model's cut is not counted here)
};

//! The scores of a partition.
struct PartitionScore
{
    std::int64_t suppressed = 0;
    double compactness = 0;          //!< eq. 20, to the sites
    double meanPointCompactness = 0; //!< to the aggregates' weighted mean points
    std::size_t releasingNothing = 0;
    std::size_t aggregates = 0;
};

/**
 * The state of a search: each region's aggregate, each aggregate's regions, site and totals, and the
 * records of every EC (aggregate, class). Aggregates are dense indices 0 .. aggregates - 1 and never
 * become empty.
 */
class Partition
{
  public:
    /**
     * regionAggregate: the aggregate of each region, every aggregate in 0 .. sites.size() - 1 holding at least one
     * region; sites: the site of each aggregate; weights: each region's weight in the mean-point
     * compactness (empty: 1 each). Throws std::invalid_argument otherwise.
     */
    Partition( std::vector<std::size_t> regionAggregate, std::vector<Point> sites, const std::vector<Point> &regionPoints, const SparseHistograms &regionHistograms, const RegionAdjacency &adjacency,
               const Criterion &criterion, const AggregateConstraints &constraints, std::vector<double> weights = {} );

    //! The change of the scores (after - before) and whether the constraints allow it.
    struct Change
    {
        std::int64_t suppressed = 0; //!< below k, and cut (the average risk model)
        std::int64_t cut = 0;        //!< of suppressed, the change of the records the average risk model's cut takes
        double compactness = 0;
        double meanPointCompactness = 0;
        std::ptrdiff_t releasingNothing = 0;
        bool allowed = false;
    };

    //! Region r moving to aggregate `to` (a neighbour aggregate): refused when r's aggregate would be left empty or in more pieces.
    Change regionMove( std::size_t r, std::size_t to );
    void applyRegionMove( std::size_t r, std::size_t to );

    /**
     * Whole aggregates re-formed: every region of `regions` goes to the aggregate given beside it, and
     * each aggregate of `reformed` (those the regions come from and go to) gets its site at the mean of
     * its region points (eq. 12-13). The caller keeps every aggregate non-empty and in one piece.
     */
    Change reform( const std::vector<std::pair<std::size_t, std::size_t>> &regions, const std::vector<std::size_t> &reformed );
    void applyReform( const std::vector<std::pair<std::size_t, std::size_t>> &regions, const std::vector<std::size_t> &reformed );

    //! Aggregate a's site moved to the mean of its region points (eq. 12-13).
    Change recentre( std::size_t a ) const;
    void applyRecentre( std::size_t a );

    //! Whether an aggregate that held `before` records keeps the record floor and ceiling holding `after` (or is no further from them).
    bool withinRecordBounds( std::int64_t after, std::int64_t before ) const;

    /**
     * Whether the partition keeps every bound as it stands: the mean-point compactness at most the cap,
     * every aggregate within the record floor and ceiling, the aggregates releasing nothing at most the
     * limit.
     */
    bool keepsBounds() const;

    const PartitionScore &score() const { return mScore; }
    std::size_t aggregates() const { return mSites.size(); }
    std::size_t regions() const { return mRegionAggregate.size(); }
    std::size_t aggregateOf( std::size_t r ) const { return mRegionAggregate[r]; }
    const std::vector<std::size_t> &members( std::size_t a ) const { return mMembers[a]; }
    std::int64_t aggregateRecords( std::size_t a ) const { return mAggregates[a].records; }
    //! The records of aggregate a in ECs below k (the average risk model's cut, a property of the whole partition, not included).
    std::int64_t aggregateSuppressed( std::size_t a ) const { return mAggregates[a].suppressed; }
    //! Whether the records suppressed include the average risk model's cut.
    bool cuts() const { return mCut.has_value(); }
    const std::vector<std::size_t> &regionAggregate() const { return mRegionAggregate; }
    const std::vector<Point> &sites() const { return mSites; }
    const RegionAdjacency &adjacency() const { return mAdjacency; }
    //! The region histograms as the criterion counts them: their entries' records and sizes.
    const SizedHistograms &sized() const { return mSized; }
    //! One more than the largest class id of the histograms.
    std::size_t classCount() const { return mScratch.size(); }
    const AggregateConstraints &constraints() const { return mConstraints; }

  private:
    struct AggregateTotals
    {
        std::int64_t records = 0;
        std::int64_t suppressed = 0;
        double compactness = 0;
        double meanPointCompactness = 0;
    };

    //! An EC's records, size under the criterion (its records, or its residents) and residents (SizedHistograms::residents).
    struct EcCounts
    {
        std::int64_t records = 0;
        std::int64_t size = 0;
        std::int64_t residents = 0;
    };

    static std::uint64_t key( std::size_t aggregate, std::uint32_t cls ) { return std::uint64_t( aggregate ) << 32 | cls; }
    EcCounts ecCounts( std::size_t aggregate, std::uint32_t cls ) const;
    //! Entry e of region histograms moved from aggregate `from` to `to` in mEcs.
    void moveEntry( std::size_t e, std::size_t from, std::size_t to );
    double distance( std::size_t r, const Point &site ) const;
    //! The mean-point compactness of aggregate a's regions without `without` and with `with` (either may be npos).
    double meanPointCompactness( std::size_t a, std::size_t without, std::size_t with ) const;
    //! The change of the suppressed records of r's aggregate and of aggregate `to` when r moves there.
    std::pair<std::int64_t, std::int64_t> suppressionChanges( std::size_t r, std::size_t to ) const;
    //! The totals aggregate a would have holding exactly `regions`, with its site at their mean.
    AggregateTotals totals( const std::vector<std::size_t> &regions, Point &site ) const;
    //! Calls f with the counts of each EC the regions would form together, one per class.
    template<typename F>
    void forEachEc( const std::vector<std::size_t> &regions, F f ) const;
    //! An EC of these counts joins the average risk model's cut (delta 1) or leaves it (-1), if it is released at the floor.
    void cutEc( const EcCounts &ec, int delta );
    //! The ECs the regions would form together join (1) or leave (-1) the cut.
    void cutEcs( const std::vector<std::size_t> &regions, int delta );
    //! The change of the cut's records when region r moves to `to`: kept in the cut (apply) or undone (a move scored).
    std::int64_t cutChange( std::size_t r, std::size_t to, bool keep );
    bool allowed( const Change &change ) const;

    void place( std::size_t r, std::size_t a );
    void unplace( std::size_t r );
    bool keepsPieces( std::size_t r );

    std::vector<std::size_t> mRegionAggregate;
    std::vector<Point> mSites;
    const std::vector<Point> &mPoints;
    std::vector<double> mWeights;
    const SizedHistograms mSized;
    const SparseHistograms &mHistograms; //!< mSized's entries
    const RegionAdjacency &mAdjacency;
    std::int64_t mK;
    AggregateConstraints mConstraints;
    std::vector<std::vector<std::size_t>> mMembers;
    std::vector<std::size_t> mPosition; //!< of each region in its aggregate's members
    std::vector<AggregateTotals> mAggregates;
    FlatMap<EcCounts> mEcs;
    std::optional<AverageCut> mCut; //!< the average risk model's, over the ECs released at the floor
    std::int64_t mCutRecords = 0;   //!< the records it takes, in mScore.suppressed
    PartitionScore mScore;
    std::vector<std::size_t> mSeen, mTarget, mQueue; //!< keepsPieces' search, marked with a stamp per check
    mutable std::vector<EcCounts> mScratch;          //!< totals' counts by class id, all 0 between calls
    mutable std::vector<std::uint32_t> mTouched;     //!< the classes totals met
    std::size_t mStamp = 0;
};

} // namespace vbas
