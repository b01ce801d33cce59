#include "plugin/pipeline/vbaspartitionsearch.h"

#include "plugin/pipeline/vbasadjacency.h"
#include "plugin/pipeline/vbassteps.h"
#include "plugin/support/vbasinterrupt.h"

#include "algorithms/aggregation/partition_search.h"
#include "algorithms/metrics/metrics.h"

#include <qgsexception.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace
{

//! CONTIGUOUS on the partition, logged; returns the parts moved.
std::size_t contiguityStep( std::vector<std::size_t> &regionAggregate, const vbas::RegionAdjacency &adjacency, const VbasRecords &records, std::size_t aggregates, const vbas::Criterion &criterion,
                            QgsProcessingFeedback *feedback )
{
  vbas::Contiguity c = vbas::makeContiguous( regionAggregate, adjacency, records.histograms, criterion );
  feedback->pushInfo( QObject::tr( "Contiguity: %1 aggregates in %2 connected parts; %3 detached part(s) joined the neighbouring aggregate they share the longest border with; "
                                   "%4 parts remain. Suppressed records: %5 before, %6 after (what contiguity cost)." )
                        .arg( aggregates )
                        .arg( c.fragmentsBefore )
                        .arg( c.reassigned )
                        .arg( c.fragmentsAfter )
                        .arg( c.suppressedBefore )
                        .arg( c.suppressedAfter ) );
  regionAggregate = std::move( c.regionAggregate );
  return c.reassigned;
}

//! The mean-point compactness the budget allows.
double compactnessCap( const VbasBorderSteps &steps )
{
  return std::isinf( steps.compactnessBudget ) ? steps.compactnessBudget : steps.compactnessBudget * steps.referenceMeanPoint;
}

/**
 * The constraints of the border steps on the Voronoi release: the cap; the floor and ceiling (shares of
 * the mean aggregate's records), lowered and raised to its smallest and largest aggregate where it
 * breaks them, so that it keeps them all (docs/method.md, "Constraints on the aggregates"); the
 * aggregates releasing nothing now.
 */
vbas::AggregateConstraints constraints( const VbasBorderSteps &steps, const vbas::Release &release, std::size_t aggregates, const vbas::Criterion &criterion )
{
  vbas::AggregateConstraints c;
  c.maxMeanPointCompactness = compactnessCap( steps );
  std::tie( c.minRecords, c.maxRecords ) = vbasRecordBounds( { 1, steps.recordFloor, steps.recordCeiling }, release.aggregation.ecs.total(), aggregates );
  for ( const vbas::AggregateSummary &a : vbas::summarize( release.aggregation.ecs, release.suppression ) )
  {
    c.minRecords = std::min( c.minRecords, a.records );
    c.maxRecords = std::max( c.maxRecords, a.records );
  }
  // Below k, as the partition counts them: the average risk model's cut is global (vbas::Partition::aggregateSuppressed).
  vbas::Criterion floor = criterion;
  floor.averageThreshold = 1;
  c.maxReleasingNothing = vbas::releasingNothing( release.aggregation.ecs, vbas::suppress( release.aggregation, floor ) );
  return c;
}

/**
 * Refuses, before SEARCH, a budget the start (the Voronoi release, which the search returns when it
 * finds nothing that keeps the bounds) already breaks, naming the smallest budget that can be met.
 */
void refuseUnmetBudget( const VbasBorderSteps &steps, double startMeanPoint )
{
  if ( !steps.search || !( startMeanPoint > compactnessCap( steps ) ) || !( steps.referenceMeanPoint > 0 ) )
    return; // a reference of 0 (every aggregate one region) leaves no ratio to name
  const double smallest = std::ceil( 1e4 * startMeanPoint / steps.referenceMeanPoint ) / 1e4;
  throw QgsProcessingException( QObject::tr( "COMPACTNESS_BUDGET = %1 cannot be met: the Voronoi aggregation the suppression search starts from, which it returns when it finds "
                                             "nothing better, has a mean-point compactness of %2 x the reference already. The smallest budget that can be met is %2." )
                                  .arg( steps.compactnessBudget, 0, 'g', 6 )
                                  .arg( smallest, 0, 'f', 4 ) );
}

//! REFINE_BOUNDARIES on the partition, logged.
void refinementStep( vbas::Partition &partition, QgsProcessingFeedback *feedback )
{
  const vbas::BoundaryRefinement b = vbas::refineBoundaries( partition );
  feedback->pushInfo( QObject::tr( "Boundary refinement: %1 boundary region(s) moved to a neighbouring aggregate in %2 pass(es). Suppressed records: %3 before, %4 after." )
                        .arg( b.moves )
                        .arg( b.passes )
                        .arg( b.suppressedBefore )
                        .arg( b.suppressedAfter ) );
}

//! SEARCH on the partition, logged with the cost per move; the best partition and its sites replace the partition's. Throws when canceled.
vbas::SearchResult searchStep( vbas::Partition &partition, const VbasBorderSteps &steps, QgsProcessingFeedback *feedback )
{
  vbas::SearchSettings settings;
  settings.seed = steps.seed;
  settings.timeLimit = steps.timeLimit;
  settings.maxMoves = steps.maxMoves;
  VbasCoreProgress progress( feedback );
  vbas::SearchResult s = vbas::searchPartition( partition, settings, &progress );
  if ( s.stop == vbas::SearchStop::Canceled )
    VbasInterrupt::throwIfCanceled( feedback );
  const auto perMove
    = []( const vbas::MoveStats &m ) { return QStringLiteral( "%1 tried, %2 kept, %3 µs each" ).arg( m.tried ).arg( m.accepted ).arg( m.tried ? 1e6 * m.seconds / m.tried : 0, 0, 'f', 1 ); };
  feedback->pushInfo(
    QObject::tr( "Suppression search: %1 trial moves in %2 s (%3). Suppressed records: %4 at the start, %5 in the best partition (found after %10 trial moves, %11 s). Moves: regions %6; "
                 "recombinations %7; merge-splits %8; sites recentred %9." )
      .arg( s.moves )
      .arg( s.seconds, 0, 'f', 1 )
      .arg( s.stop == vbas::SearchStop::TimeLimit  ? QObject::tr( "TIME_LIMIT reached" )
            : s.stop == vbas::SearchStop::MaxMoves ? QObject::tr( "SEARCH_MOVES reached" )
                                                   : QObject::tr( "nothing left to suppress" ) )
      .arg( s.start.suppressed )
      .arg( s.best.suppressed )
      .arg( perMove( s.regionMoves ), perMove( s.recombinations ), perMove( s.mergeSplits ), perMove( s.recentres ) )
      .arg( s.bestMove )
      .arg( s.bestSeconds, 0, 'f', 1 ) );
  return s;
}

//! The aggregates of a partition in more than one piece.
std::size_t aggregatesInPieces( const std::vector<std::size_t> &regionAggregate, const vbas::RegionAdjacency &adjacency )
{
  std::vector<std::size_t> fragmentAggregate = vbas::fragments( regionAggregate, adjacency ).fragmentAggregate;
  std::sort( fragmentAggregate.begin(), fragmentAggregate.end() );
  std::size_t pieces = 0;
  for ( std::size_t i = 1; i < fragmentAggregate.size(); ++i )
    pieces += fragmentAggregate[i] == fragmentAggregate[i - 1] && ( i == 1 || fragmentAggregate[i - 1] != fragmentAggregate[i - 2] );
  return pieces;
}

//! What REFINE_BOUNDARIES and SEARCH did: the search's moves, and whether its result keeps every bound and the suppressed records it reaches.
struct PartitionStepsResult
{
    std::uint64_t moves = 0;
    bool boundsKept = true;
    std::int64_t suppressed = 0;
};

//! REFINE_BOUNDARIES and SEARCH on a partition of site indices (aggregate ids), whose sites they may move.
PartitionStepsResult partitionSteps( std::vector<std::size_t> &regionAggregate, std::vector<vbas::Point> &sites, const vbas::AggregateConstraints &aggregateConstraints, const VbasRegions &regions,
                                     const VbasRecords &records, const vbas::RegionAdjacency &adjacency, const vbas::Criterion &criterion, const VbasBorderSteps &steps,
                                     QgsProcessingFeedback *feedback )
{
  std::vector<std::size_t> regionAggregateIndex = regionAggregate;
  const std::vector<std::size_t> aggregateId = vbas::denseAggregates( regionAggregateIndex );
  std::vector<vbas::Point> indexSites; // the site of each aggregate index
  for ( const std::size_t id : aggregateId )
    indexSites.push_back( sites[id] );
  vbas::Partition partition( regionAggregateIndex, indexSites, regions.points, records.histograms, adjacency, criterion, aggregateConstraints, vbasRegionPopulation( regions, records ) );
  if ( steps.refineBoundaries )
    refinementStep( partition, feedback );
  PartitionStepsResult result;
  regionAggregateIndex = partition.regionAggregate();
  indexSites = partition.sites();
  result.boundsKept = partition.keepsBounds();
  result.suppressed = partition.score().suppressed;
  if ( steps.search )
  {
    vbas::SearchResult s = searchStep( partition, steps, feedback );
    result.moves = s.moves;
    result.boundsKept = s.boundsKept;
    result.suppressed = s.best.suppressed;
    regionAggregateIndex = std::move( s.regionAggregate );
    indexSites = std::move( s.sites );
  }
  for ( std::size_t r = 0; r < regionAggregateIndex.size(); ++r )
    regionAggregate[r] = aggregateId[regionAggregateIndex[r]];
  for ( std::size_t a = 0; a < aggregateId.size(); ++a )
    sites[aggregateId[a]] = indexSites[a];
  return result;
}

//! Whether SEARCH's result is dropped for the Voronoi release: it breaks a bound or suppresses more (logged as a warning).
bool searchDropped( const PartitionStepsResult &s, const vbas::Release &voronoi, QgsProcessingFeedback *feedback )
{
  const std::int64_t start = voronoi.suppression.suppressedRecords;
  if ( s.boundsKept && s.suppressed <= start )
    return false;
  feedback->pushWarning( s.boundsKept ? QObject::tr( "Suppression search: its best partition in one piece per aggregate suppresses %1 records, more than the %2 of the Voronoi aggregation; "
                                                     "the Voronoi aggregation is released (aggregates may be in pieces: UNITS_IN_PIECES)." )
                                          .arg( s.suppressed )
                                          .arg( start )
                                      : QObject::tr( "Suppression search: no partition in one piece per aggregate that keeps COMPACTNESS_BUDGET, RECORD_FLOOR and RECORD_CEILING was found; the "
                                                     "Voronoi aggregation is released (aggregates may be in pieces: UNITS_IN_PIECES). A longer TIME_LIMIT or a larger budget may find one." ) );
  return true;
}

} // namespace

VbasBorderResult vbasBorderRelease( const VbasRegions &regions, const VbasRecords &records, vbas::Release release, std::vector<vbas::Point> sites, const vbas::Criterion &criterion,
                                    const VbasBorderSteps &steps, QgsProcessingFeedback *feedback )
{
  VbasBorderResult result;
  if ( !vbasHasBorders( regions ) )
  {
    for ( const auto &[on, name] : { std::make_pair( steps.contiguous, "CONTIGUOUS" ), std::make_pair( steps.refineBoundaries, "REFINE_BOUNDARIES" ), std::make_pair( steps.search, "SEARCH" ) } )
      if ( on )
        feedback->pushInfo( QObject::tr( "%1 has no effect: the regions are points, which share no borders." ).arg( name ) );
    result.release = std::move( release );
    result.sites = std::move( sites );
    return result;
  }
  refuseUnmetBudget( steps, vbasMeanPointCompactness( regions, records, release ) );
  const vbas::RegionAdjacency adjacency = vbasBridgedAdjacency( regions, feedback );
  std::vector<std::size_t> regionAggregate = release.regionAggregate;
  const std::size_t aggregates = release.aggregation.aggregateId.size();
  const vbas::AggregateConstraints aggregateConstraints = constraints( steps, release, aggregates, criterion );
  if ( steps.contiguous || steps.search )
    contiguityStep( regionAggregate, adjacency, records, aggregates, criterion, feedback );
  if ( steps.refineBoundaries || steps.search )
  {
    std::vector<vbas::Point> moved = sites;
    const PartitionStepsResult s = partitionSteps( regionAggregate, moved, aggregateConstraints, regions, records, adjacency, criterion, steps, feedback );
    result.searchMoves = s.moves;
    if ( steps.search && searchDropped( s, release, feedback ) )
      regionAggregate = release.regionAggregate;
    else
      sites = std::move( moved );
  }
  result.aggregatesInPieces = aggregatesInPieces( regionAggregate, adjacency );
  result.release = regionAggregate == release.regionAggregate ? std::move( release ) : vbas::release( std::move( regionAggregate ), records.histograms, criterion );
  result.sites = std::move( sites );
  return result;
}

VbasAggregated vbasAggregate( const VbasPlacementSettings &placementSettings, const VbasConstraintSettings &constraints, VbasBorderSteps borderSteps, const VbasRegions &regions,
                              const VbasRecords &records, std::size_t sites, const vbas::Criterion &criterion, QgsProcessingFeedback *feedback )
{
  return vbasAggregatePlaced( vbasPlaceSites( placementSettings, constraints, regions, records, sites, feedback ), constraints, std::move( borderSteps ), regions, records, criterion, feedback );
}

VbasAggregated vbasAggregatePlaced( const VbasPlacement &placement, const VbasConstraintSettings &constraints, VbasBorderSteps borderSteps, const VbasRegions &regions, const VbasRecords &records,
                                    const vbas::Criterion &criterion, QgsProcessingFeedback *feedback )
{
  VbasAggregated result;
  result.placedSites = placement.sites;
  result.siteRow = placement.siteRow;
  result.placementOutputs = vbasPlacementOutputs( placement );
  vbas::Release voronoi = vbas::voronoiRelease( placement.sites, regions.points, records.histograms, criterion );
  // The budget is a ratio to the balanced-density start, which ADC's constraints hold; with balanced density, the start is that.
  result.reference = placement.constraints ? VbasCompactnessReference { placement.constraints->referenceCompactness, placement.constraints->referenceMeanPointCompactness }
                                           : vbasCompactnessOf( regions, records, voronoi, placement.sites );
  borderSteps.compactnessBudget = constraints.compactnessBudget;
  borderSteps.referenceMeanPoint = result.reference.meanPoint;
  borderSteps.recordFloor = constraints.recordFloor;
  borderSteps.recordCeiling = constraints.recordCeiling;
  result.bordered = vbasBorderRelease( regions, records, std::move( voronoi ), placement.sites, criterion, borderSteps, feedback );
  return result;
}

VbasBorderSteps VbasBorderSteps::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed )
{
  VbasBorderSteps steps;
  const auto flag = [&]( const QString &name ) { return QgsProcessingParameters::parameterAsBoolean( algorithm.parameterDefinition( name ), parameters, context ); };
  steps.contiguous = flag( QStringLiteral( "CONTIGUOUS" ) );
  steps.refineBoundaries = flag( QStringLiteral( "REFINE_BOUNDARIES" ) );
  steps.search = flag( QStringLiteral( "SEARCH" ) );
  steps.timeLimit = QgsProcessingParameters::parameterAsDouble( algorithm.parameterDefinition( QStringLiteral( "TIME_LIMIT" ) ), parameters, context );
  const std::int64_t moves = vbasWholeNumber( algorithm, parameters, QStringLiteral( "SEARCH_MOVES" ), context );
  steps.maxMoves = moves > 0 ? static_cast<std::uint64_t>( moves ) : std::numeric_limits<std::uint64_t>::max();
  steps.seed = seed;
  return steps;
}

double vbasCompactness( const VbasRegions &regions, const vbas::Release &release, const std::vector<vbas::Point> &sites )
{
  std::vector<vbas::Point> regionSites;
  for ( const std::size_t s : release.regionAggregate )
    regionSites.push_back( sites[s] );
  return vbas::compactness( regions.points, regionSites );
}

double vbasMeanPointCompactness( const VbasRegions &regions, const VbasRecords &records, const vbas::Release &release )
{
  return vbas::meanPointCompactness( regions.points, release.regionAggregate, vbasRegionPopulation( regions, records ) );
}

VbasCompactnessReference vbasCompactnessOf( const VbasRegions &regions, const VbasRecords &records, const vbas::Release &release, const std::vector<vbas::Point> &sites )
{
  return { vbasCompactness( regions, release, sites ), vbasMeanPointCompactness( regions, records, release ) };
}

QVariantMap vbasAggregateOutputs( const VbasBorderResult &result, const VbasRegions &regions, const VbasRecords &records, const VbasCompactnessReference &start )
{
  const std::size_t nothing = vbas::releasingNothing( result.release.aggregation.ecs, result.release.suppression );
  const VbasCompactnessReference now = vbasCompactnessOf( regions, records, result.release, result.sites );
  const auto ratio = []( double value, double reference ) { return reference > 0 ? value / reference : 1.0; };
  return { { QStringLiteral( "UNITS_IN_PIECES" ), static_cast<qlonglong>( result.aggregatesInPieces ) }, { QStringLiteral( "UNITS_RELEASING_NOTHING" ), static_cast<qlonglong>( nothing ) },
           { QStringLiteral( "COMPACTNESS_USED" ), ratio( now.compactness, start.compactness ) },        { QStringLiteral( "MEAN_POINT_COMPACTNESS" ), now.meanPoint },
           { QStringLiteral( "MEAN_POINT_COMPACTNESS_USED" ), ratio( now.meanPoint, start.meanPoint ) }, { QStringLiteral( "SEARCH_MOVES_MADE" ), static_cast<qlonglong>( result.searchMoves ) } };
}
