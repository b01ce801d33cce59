// The evaluation of a release (paper sec. 3.4, docs/method.md): every metric defined once, in metrics.cpp's table, with its
// table field, number output, label, formula and meaning; the plugin builds the metrics table, the
// number outputs, the help text and the report from that table. The values come from one pass over
// the release's histograms.
#pragma once

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/aggregation/mean_point.h"
#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"
#include "algorithms/metrics/sensitive.h"
#include "algorithms/aggregation/suppression.h"
#include "algorithms/risk/population_risk.h"
#include "algorithms/risk/population_uniqueness.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace vbas
{

//! Eq. 20: sum over the initial regions of the distance from the region point to its aggregate's site.
double compactness( const std::vector<Point> &regionPoints, const std::vector<Point> &regionSites );

//! Eq. 22-23: -sum_i log2 Pr(R_i | R'_i) over the records, given the records of each region.
double nonUniformEntropy( const std::vector<std::int64_t> &regionRecords, const std::vector<std::size_t> &regionAggregateIndex );

//! Released records of each initial region.
std::vector<std::int64_t> releasedPerRegion( const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression );

//! The risk before release: records of each initial region in (region, QI) classes smaller than k.
std::vector<std::int64_t> recordsInSmallClasses( const SparseHistograms &regionHistograms, std::int64_t k );

//! What the metrics are computed from.
struct MetricInputs
{
    const std::vector<Point> &regionPoints;
    const std::vector<Point> &regionSites; //!< the site of each region's aggregate
    const SparseHistograms &regionHistograms;
    const Aggregation &aggregation;
    const Suppression &suppression;
    std::int64_t k;
    double riskThreshold = 0.2;                     //!< a record is at risk above 1 / |E| > riskThreshold
    const SensitiveHistograms *sensitive = nullptr; //!< CM, l-diversity and t-closeness need it
    double runSeconds = 0;                          //!< the running time of the evaluated run
    //! Each region's residents (the population field, or the population table's rows); nullptr: not known, and no measure against the population.
    const std::vector<double> *regionResidents = nullptr;
    //! The residents of each (region, class) cell of a population table that covers every QI, classes as the records'; nullptr: estimated from regionResidents.
    const SparseHistograms *populationCells = nullptr;
};

/**
 * The released ECs with their residents F (docs/method.md, Risk against the population): counted in
 * the population table's cells of their aggregate, or estimated from their aggregate's sampling
 * fraction, F = f * residents / records of the aggregate.
 */
struct ReleasedPopulation
{
    std::vector<ClassPopulation> classes; //!< the released ECs, in EC order; empty when shortAggregate is set
    std::vector<std::size_t> aggregates;  //!< the aggregate index of each of classes
    double residents = 0;                 //!< N: the residents of every region
    bool counted = false;                 //!< F counted in the cells, not estimated
    std::ptrdiff_t shortAggregate = -1;   //!< the first aggregate index with fewer residents than records (or a class with fewer than its records), where nothing is measured
};

/**
 * The risk against the population of a release, measured once for the metrics, the log and the report:
 * the released ECs' residents, and the population uniques, counted or estimated (docs/method.md,
 * Population uniques estimated from the sample).
 */
struct PopulationMeasures
{
    ReleasedPopulation released;
    UniquenessEstimate before; //!< of the (region, QI values) classes of every record
    UniquenessEstimate after;  //!< of the released ECs
};

//! Nothing when inputs has no residents; with released.shortAggregate set, before and after are not measured.
std::optional<PopulationMeasures> populationMeasures( const MetricInputs &inputs );

//! Of each of aggregates aggregates, the largest journalist risk 1 / F of its released ECs in population; 0 where it releases none.
std::vector<double> aggregateJournalistRisk( const ReleasedPopulation &population, std::size_t aggregates );

/**
 * A metric's value: wide enough that every count up to 2^63 (records, released, suppressed) is
 * exact, where a double is exact only to 2^53; real metrics lose nothing either.
 */
using MetricNumber = long double;
static_assert( std::numeric_limits<MetricNumber>::digits >= 63, "a metric holds every 64-bit count exactly" );

struct ReleaseFacts; //!< the tallies of one pass over the release (metrics.cpp)

struct Metric
{
    const char *field;  //!< the column of the metrics table
    const char *output; //!< the number output; nullptr: table only
    const char *label;
    const char *formula;                                            //!< with its source: the paper's equation or the metric's author
    const char *meaning;                                            //!< what it tells a custodian, in a sentence
    bool whole;                                                     //!< a count: an integer column
    std::optional<MetricNumber> ( *value )( const ReleaseFacts & ); //!< nothing: does not apply (no sensitive field, no released EC)
};

//! Every metric, in table order.
const std::vector<Metric> &metrics();

//! The value of every metric, in metrics() order.
using MetricValues = std::vector<std::optional<MetricNumber>>;
//! population: populationMeasures( inputs ), from a caller that reports it too.
MetricValues measure( const MetricInputs &inputs, const std::optional<PopulationMeasures> &population );
//! The same, measuring the population here.
MetricValues measure( const MetricInputs &inputs );

//! The value of the metric with this field in values (values in metrics() order).
std::optional<MetricNumber> metricValue( const MetricValues &values, const char *field );

} // namespace vbas
