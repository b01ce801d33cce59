// The steps on the regions' borders that follow the Voronoi release (algorithms/aggregation/
// contiguity.h, partition_search.h): CONTIGUOUS, the detached parts of the aggregates joined to a
// neighbouring aggregate; REFINE_BOUNDARIES, single boundary regions moved; SEARCH, the suppression
// search (docs/method.md, "Suppression search (SEARCH)"); and the compactness outputs they report.
#pragma once

#include "algorithms/aggregation/release.h"
#include "algorithms/base/geometry.h"
#include "plugin/inputs/vbasinputs.h"

#include <QVariantMap>

#include <cstdint>
#include <limits>
#include <vector>

class QgsProcessingAlgorithm;
class QgsProcessingContext;
class QgsProcessingFeedback;

//! The steps on the regions' borders that follow the Voronoi release, and the constraints they honour (docs/method.md, "Constraints").
struct VbasBorderSteps
{
    bool contiguous = false;                                            //!< CONTIGUOUS
    bool refineBoundaries = false;                                      //!< REFINE_BOUNDARIES
    bool search = false;                                                //!< SEARCH, which makes the aggregates contiguous first
    double timeLimit = 30;                                              //!< TIME_LIMIT, seconds
    std::uint64_t maxMoves = std::numeric_limits<std::uint64_t>::max(); //!< SEARCH_MOVES (0 in the parameter: no limit)
    std::uint64_t seed = 0;                                             //!< of the search
    double compactnessBudget = std::numeric_limits<double>::infinity(); //!< COMPACTNESS_BUDGET: the mean-point compactness at most this times referenceMeanPoint
    double referenceMeanPoint = 0;                                      //!< the mean-point compactness the budget is a ratio to
    double recordFloor = 0;                                             //!< RECORD_FLOOR: the share of the mean aggregate's records every aggregate keeps
    double recordCeiling = 0;                                           //!< RECORD_CEILING: the multiple of the mean aggregate's records no aggregate passes (0: none)

    /**
     * CONTIGUOUS, REFINE_BOUNDARIES, SEARCH, TIME_LIMIT and SEARCH_MOVES; the search draws from seed.
     * The budget's reference, the floor and the ceiling are the caller's (they depend on the start).
     */
    static VbasBorderSteps read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed );
};

//! The release after the border steps, the sites of its aggregates, and how its aggregates stand.
struct VbasBorderResult
{
    vbas::Release release;
    std::vector<vbas::Point> sites;     //!< by site index; the search moves the sites of the aggregates it re-forms
    std::size_t aggregatesInPieces = 0; //!< aggregates in more than one piece (islands bridged); 0 for points
    std::uint64_t searchMoves = 0;      //!< the search's trial moves (0 without it)
};

//! What COMPACTNESS_USED and MEAN_POINT_COMPACTNESS_USED divide by: eq. 20 and the mean-point compactness of the start.
struct VbasCompactnessReference
{
    double compactness = 0;
    double meanPoint = 0;
};

/**
 * The release after the border steps, on one bridged adjacency of the regions. CONTIGUOUS (and
 * SEARCH) first: every detached part of an aggregate joins the neighbouring aggregate it shares the
 * longest border with, whatever it costs (vbas::makeContiguous). Then REFINE_BOUNDARIES (greedy
 * single-region moves) and SEARCH (vbas::searchPartition, TIME_LIMIT), both under the constraints:
 * no aggregate emptied or split, the compactness budget (on the mean-point compactness), the record
 * floor and ceiling (lowered and raised to the Voronoi release's smallest and largest aggregate when it
 * breaks them), and no more aggregates releasing nothing than the Voronoi release. SEARCH's result
 * keeps every bound and suppresses no more than the Voronoi release, or the Voronoi release is
 * returned (logged as a warning). A budget the Voronoi release already breaks is refused before
 * SEARCH starts, naming the smallest that can be met. Rebuilt by vbas::release
 * when a region moved. Logs every step with its counts; a point layer is logged as having no borders
 * and returned as it is. A canceled search throws, as every canceled run does.
 */
VbasBorderResult vbasBorderRelease( const VbasRegions &regions, const VbasRecords &records, vbas::Release release, std::vector<vbas::Point> sites, const vbas::Criterion &criterion,
                                    const VbasBorderSteps &steps, QgsProcessingFeedback *feedback );

struct VbasPlacementSettings;
struct VbasConstraintSettings;
struct VbasPlacement;

//! A release by the paper's pipeline (vbasAggregate): the sites placed, the reference of the compactness outputs, and the release after the border steps.
struct VbasAggregated
{
    std::vector<vbas::Point> placedSites;
    std::vector<std::size_t> siteRow; //!< balanced density's row of each site (VbasPlacement::siteRow)
    QVariantMap placementOutputs;     //!< ADC_MOVES_TRIED and the rest (vbasPlacementOutputs)
    VbasCompactnessReference reference;
    VbasBorderResult bordered;
};

/**
 * The paper's pipeline after the site count, as vbas:anonymize runs it: `sites` sites placed (balanced
 * density or ADC, under the constraints), the Voronoi release under criterion, then the border steps
 * with the constraints' budget, floor and ceiling, the budget a ratio to the balanced-density start.
 */
VbasAggregated vbasAggregate( const VbasPlacementSettings &placement, const VbasConstraintSettings &constraints, VbasBorderSteps borderSteps, const VbasRegions &regions, const VbasRecords &records,
                              std::size_t sites, const vbas::Criterion &criterion, QgsProcessingFeedback *feedback );

//! vbasAggregate from sites already placed (vbas:compare places balanced density once for every k).
VbasAggregated vbasAggregatePlaced( const VbasPlacement &placement, const VbasConstraintSettings &constraints, VbasBorderSteps borderSteps, const VbasRegions &regions, const VbasRecords &records,
                                    const vbas::Criterion &criterion, QgsProcessingFeedback *feedback );

//! Eq. 20 of a release: every region point to the site of its aggregate (sites by site index).
double vbasCompactness( const VbasRegions &regions, const vbas::Release &release, const std::vector<vbas::Point> &sites );

//! The mean-point compactness of a release (vbas::meanPointCompactness), weighted by the population basis of vbasRegionPopulation.
double vbasMeanPointCompactness( const VbasRegions &regions, const VbasRecords &records, const vbas::Release &release );

//! Eq. 20 and the mean-point compactness of a release and its sites.
VbasCompactnessReference vbasCompactnessOf( const VbasRegions &regions, const VbasRecords &records, const vbas::Release &release, const std::vector<vbas::Point> &sites );

/**
 * UNITS_IN_PIECES, UNITS_RELEASING_NOTHING, COMPACTNESS_USED (the result's eq. 20 over the start's),
 * MEAN_POINT_COMPACTNESS, MEAN_POINT_COMPACTNESS_USED (the result's over the start's, which the
 * budget holds) and SEARCH_MOVES_MADE.
 */
QVariantMap vbasAggregateOutputs( const VbasBorderResult &result, const VbasRegions &regions, const VbasRecords &records, const VbasCompactnessReference &start );
