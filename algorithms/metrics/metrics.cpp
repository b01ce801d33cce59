#include "algorithms/metrics/metrics.h"

#include "algorithms/metrics/nue.h"
#include "algorithms/aggregation/release.h"

#include <algorithm>
#include <numeric>
#include <cmath>
#include <cstring>

namespace vbas
{

double compactness( const std::vector<Point> &regionPoints, const std::vector<Point> &regionSites )
{
  double sum = 0;
  for ( std::size_t r = 0; r < regionPoints.size(); ++r )
    sum += std::hypot( regionPoints[r].x - regionSites[r].x, regionPoints[r].y - regionSites[r].y );
  return sum;
}

double nonUniformEntropy( const std::vector<std::int64_t> &regionRecords, const std::vector<std::size_t> &regionAggregateIndex )
{
  // Each region's records generalised to their aggregate: eq. 22-23 is the plain NUE of that step.
  std::vector<Generalised> records;
  for ( std::size_t r = 0; r < regionRecords.size(); ++r )
    records.push_back( { regionRecords[r], { static_cast<std::uint32_t>( r ), static_cast<std::uint32_t>( regionAggregateIndex[r] ) }, 1 } );
  return nonUniformEntropy( records );
}

std::vector<std::int64_t> releasedPerRegion( const SparseHistograms &regionHistograms, const Aggregation &aggregation, const Suppression &suppression )
{
  const std::vector<char> suppressed = suppressedEntries( regionHistograms, aggregation, suppression );
  std::vector<std::int64_t> released( regionHistograms.rows(), 0 );
  for ( std::size_t r = 0; r < regionHistograms.rows(); ++r )
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      released[r] += suppressed[e] ? 0 : regionHistograms.counts[e];
  return released;
}

std::vector<std::int64_t> recordsInSmallClasses( const SparseHistograms &regionHistograms, std::int64_t k )
{
  std::vector<std::int64_t> small( regionHistograms.rows(), 0 );
  for ( std::size_t r = 0; r < regionHistograms.rows(); ++r )
    for ( std::size_t e = regionHistograms.offsets[r]; e < regionHistograms.offsets[r + 1]; ++e )
      small[r] += regionHistograms.counts[e] < k ? regionHistograms.counts[e] : 0;
  return small;
}

struct ReleaseFacts
{
    std::int64_t k = 0;
    double riskThreshold = 0;
    double runSeconds = 0;
    std::int64_t records = 0;
    std::int64_t released = 0;
    std::int64_t suppressed = 0;
    std::size_t aggregates = 0;
    std::size_t releasedEcs = 0;
    std::int64_t smallestEc = 0; //!< released; 0 when nothing is released
    double squaresReleased = 0;  //!< sum of |E|^2 over released ECs
    double squaresAll = 0;       //!< over all ECs
    std::int64_t atRisk = 0;     //!< released records with 1 / |E| > riskThreshold
    double compactness = 0;
    double nue = 0;
    double nueAll = 0;
    double genericNue = 0;
    double genericNueAllSuppressed = 0;
    double generalisationSteps = 0; //!< sum over records of h / |DGH| (Prec)
    bool sensitive = false;
    std::int64_t minority = 0; //!< released records outside their EC's majority value
    std::int64_t smallestL = 0;
    double largestT = 0;
    std::int64_t sampleUniques = 0;                    //!< released records in ECs of one
    std::optional<PopulationRisk> journalist;          //!< with residents (docs/method.md, Risk against the population)
    std::optional<UniquenessEstimate> uniqueness;      //!< with residents
    std::optional<UniquenessEstimate> inputUniqueness; //!< before release, with residents
    double residents = 0;                              //!< N
};

namespace
{

std::optional<MetricNumber> whole( std::int64_t value )
{
  return static_cast<MetricNumber>( value );
}

std::optional<MetricNumber> ifSensitive( const ReleaseFacts &f, double value )
{
  return f.sensitive && f.releasedEcs > 0 ? std::optional<MetricNumber>( value ) : std::nullopt;
}

double ratio( double a, double b )
{
  return b > 0 ? a / b : 0;
}

//! A measure against the population: nothing without residents.
std::optional<MetricNumber> ifJournalist( const ReleaseFacts &f, double ( *value )( const PopulationRisk & ) )
{
  return f.journalist ? std::optional<MetricNumber>( value( *f.journalist ) ) : std::nullopt;
}

// clang-format off
const std::vector<Metric> kMetrics {
  { "records", "RECORDS", "Records", "N (rows weighted by the count field)",
    "The records in the input.", true, []( const ReleaseFacts &f ) { return whole( f.records ); } },
  { "released", "RELEASED", "Released records", "N - suppressed",
    "The records in the released table.", true, []( const ReleaseFacts &f ) { return whole( f.released ); } },
  { "suppressed", "SUPPRESSED", "Suppressed records", "records in ECs with |E| < k (paper sec. 3.3)",
    "The records left out because their class in their aggregated region had fewer than k records.", true, []( const ReleaseFacts &f ) { return whole( f.suppressed ); } },
  { "suppressed_pct", "SUPPRESSED_PERCENT", "Suppressed records (%)", "100 suppressed / N",
    "The share of the records left out.", false, []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return 100.0 * ratio( f.suppressed, f.records ); } },
  { "compactness", "COMPACTNESS", "Compactness", "eq. 20: sum over initial regions r of ||r_p - r_p'||, r_p' the site of r's aggregate",
    "How far the region points lie from the site of their aggregated region, in working CRS units: lower keeps the geography finer.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.compactness; } },
  { "discernibility", "DISCERNIBILITY", "Discernibility (paper)", "eq. 21: sum over released ECs of |E|^2",
    "Each released record is penalised by the size of its class: lower means smaller, more precise classes.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.squaresReleased; } },
  { "nue", "NUE", "Non-uniform entropy, released records", "eq. 22-23: -sum over released records i of log2( count(R_i) / count(R'_i) )",
    "The bits of geographic detail lost by replacing each released record's region with its aggregated region.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.nue; } },
  { "nue_all", "NUE_ALL", "Non-uniform entropy, all records", "eq. 22-23 over all records, before suppression",
    "The same loss if no record were suppressed.", false, []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.nueAll; } },
  { "aggregates", "AGGREGATES", "Aggregated regions", "aggregates holding at least one region",
    "The regions of the release's geographic identifier.", true, []( const ReleaseFacts &f ) { return whole( static_cast<std::int64_t>( f.aggregates ) ); } },
  { "released_ecs", "RELEASED_ECS", "Released ECs", "classes (aggregated region, QI values) with |E| >= k",
    "The equivalence classes of the released table.", true, []( const ReleaseFacts &f ) { return whole( static_cast<std::int64_t>( f.releasedEcs ) ); } },
  { "smallest_ec", "SMALLEST_EC", "Smallest released EC", "min over released ECs of |E| (0: nothing released)",
    "At least k: the release is k-anonymous.", true, []( const ReleaseFacts &f ) { return whole( f.smallestEc ); } },
  { "k", nullptr, "k", "the k of the release",
    "Every released class must hold at least k records.", true, []( const ReleaseFacts &f ) { return whole( f.k ); } },
  { "runtime_s", "RUNTIME", "Running time (s)", "seconds of the evaluated run",
    "How long the run took.", false, []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.runSeconds; } },
  { "dm", "DM", "Discernibility metric (DM)", "sum_{|E| >= k} |E|^2 + sum_{|E| < k} N |E|",
    "Discernibility with a suppressed record penalised by the whole table, as ARX reports it: lower is better.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.squaresReleased + static_cast<double>( f.records ) * static_cast<double>( f.suppressed ); } },
  { "dm_star", "DM_STAR", "DM*", "sum over all ECs of |E|^2, before suppression",
    "Discernibility without the suppression penalty: monotone in the aggregation.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.squaresAll; } },
  { "c_avg", "C_AVG", "Normalised average EC size (C_AVG)", "( released / released ECs ) / k",
    "1 is ideal: classes of exactly k records; larger means classes larger than privacy needs.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> {
      return f.releasedEcs > 0 ? std::optional<MetricNumber>( ratio( f.released, f.releasedEcs ) / f.k ) : std::nullopt;
    } },
  { "prec", "PREC", "Precision (Prec) of the geography", "1 - sum over records of h / |DGH| / N; hierarchy region (h 0) -> aggregated region (1) -> suppressed (2), |DGH| = 2",
    "1: every record keeps its region; 0: everything suppressed. A record in an aggregated region of one region keeps its region (h = 0).", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return 1.0 - ratio( f.generalisationSteps, f.records ); } },
  { "generic_nue", "GENERIC_NUE", "Generic non-uniform entropy", "sum over levels n = 1, 2 of the NUE of taking the records at level >= n from level n-1 to n (Prasser et al.)",
    "The information lost by aggregation and suppression together, in bits; unlike plain NUE it never counts a gain.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.genericNue; } },
  { "generic_nue_norm", "GENERIC_NUE_NORM", "Generic non-uniform entropy, normalised", "generic_nue / its value with every record suppressed, -sum_r n_r log2( n_r / N )",
    "0: the input; 1: everything suppressed.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return ratio( f.genericNue, f.genericNueAllSuppressed ); } },
  { "max_risk", "MAX_RISK", "Prosecutor risk, maximum", "1 / min |E| over released ECs",
    "The highest chance that an attacker who knows a patient is in the release picks out their record.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.smallestEc > 0 ? 1.0 / static_cast<double>( f.smallestEc ) : 0.0; } },
  { "avg_risk", "AVG_RISK", "Prosecutor risk, average", "released ECs / released records (the mean of 1 / |E| over released records)",
    "The chance averaged over the released records.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return ratio( static_cast<double>( f.releasedEcs ), f.released ); } },
  { "risk_threshold", nullptr, "Risk threshold", "the threshold of risk_above_pct",
    "A record is at risk above it.", false, []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return f.riskThreshold; } },
  { "risk_above_pct", "RISK_ABOVE_PERCENT", "Released records above the risk threshold (%)", "100 * released records with 1 / |E| > threshold / released",
    "The share of released records whose prosecutor risk exceeds the threshold.", false,
    []( const ReleaseFacts &f ) -> std::optional<MetricNumber> { return 100.0 * ratio( static_cast<double>( f.atRisk ), f.released ); } },
  { "cm", "CM", "Classification metric (CM)", "sum_{|E| >= k} |minority(E)| + sum_{|E| < k} |E|, minority: records outside E's most frequent sensitive value",
    "The records whose class (sensitive) value differs from their class's majority, plus the suppressed ones (needs a sensitive field).", true,
    []( const ReleaseFacts &f ) { return f.sensitive ? std::optional<MetricNumber>( static_cast<MetricNumber>( f.minority + f.suppressed ) ) : std::nullopt; } },
  { "l_diversity", "L_DIVERSITY", "Distinct l-diversity", "min over released ECs of the distinct sensitive values",
    "Every released class holds at least this many different sensitive values (needs a sensitive field).", true,
    []( const ReleaseFacts &f ) { return ifSensitive( f, static_cast<double>( f.smallestL ) ); } },
  { "t_closeness", "T_CLOSENESS", "t-closeness (EMD)", "max over released ECs of 0.5 sum_v |p_v - q_v|, q the released records' distribution",
    "No released class's sensitive distribution is further than this from the whole release's (equal ground distance; needs a sensitive field).", false,
    []( const ReleaseFacts &f ) { return ifSensitive( f, f.largestT ); } },
  { "sample_uniques", "SAMPLE_UNIQUES", "Sample uniques", "released records alone in their EC (|E| = 1)",
    "Released records that share their class with no other released record (none when k is 2 or more).", true,
    []( const ReleaseFacts &f ) { return whole( f.sampleUniques ); } },
  { "journalist_max_risk", "JOURNALIST_MAX_RISK", "Journalist risk, maximum",
    "1 / min F over released ECs, F the EC's residents: counted in the population table, or estimated as |E| * residents / records of its aggregated region (population field)",
    "The highest chance that an attacker who starts from the population (a list of its residents) picks out a released record; n/a without a population field or table.", false,
    []( const ReleaseFacts &f ) { return ifJournalist( f, []( const PopulationRisk &r ) { return r.journalistMax; } ); } },
  { "journalist_avg_risk", "JOURNALIST_AVG_RISK", "Journalist risk, average", "sum over released ECs of |E| / F, divided by the released records",
    "The same chance averaged over the released records.", false,
    []( const ReleaseFacts &f ) { return ifJournalist( f, []( const PopulationRisk &r ) { return r.journalistAverage; } ); } },
  { "journalist_above_pct", "JOURNALIST_ABOVE_PERCENT", "Released records above the risk threshold, journalist (%)", "100 * released records with 1 / F > threshold / released",
    "The share of released records whose journalist risk exceeds the threshold.", false,
    []( const ReleaseFacts &f ) { return ifJournalist( f, []( const PopulationRisk &r ) { return 100.0 * r.aboveThreshold; } ); } },
  { "marketer_risk", "MARKETER_RISK", "Marketer risk", "sum over released ECs of |E| / F, divided by the released records",
    "The expected share of released records re-identified by an attacker who matches every resident of the population with a released record.", false,
    []( const ReleaseFacts &f ) { return ifJournalist( f, []( const PopulationRisk &r ) { return r.marketer; } ); } },
  { "population_uniques", "POPULATION_UNIQUES", "Population uniques, estimated",
    "the residents alone in their class in the population: counted in the population table (F = 1), or estimated from the released ECs' sizes and N by the Pitman, Zayatz or SNB model (Dankar et al.'s rule)",
    "How many residents are alone in their class in the population; n/a without a population field or table. The log says how it was counted or estimated.", false,
    []( const ReleaseFacts &f ) { return f.uniqueness ? std::optional<MetricNumber>( f.uniqueness->uniques ) : std::nullopt; } },
  { "population_uniques_pct", "POPULATION_UNIQUES_PERCENT", "Population uniques, estimated (%)", "100 * population_uniques / N, N the residents of every region",
    "The same as a share of the residents: also the expected share of the released records that are unique in the population.", false,
    []( const ReleaseFacts &f ) { return f.uniqueness ? std::optional<MetricNumber>( 100.0 * ratio( f.uniqueness->uniques, f.residents ) ) : std::nullopt; } },
  { "population_uniques_input", "POPULATION_UNIQUES_INPUT", "Population uniques before release, estimated",
    "the same estimate from the input's (region, QI values) classes: every record with its own region, nothing suppressed",
    "What releasing the regions as they are would expose, for comparison; n/a without a population field or table.", false,
    []( const ReleaseFacts &f ) { return f.inputUniqueness ? std::optional<MetricNumber>( f.inputUniqueness->uniques ) : std::nullopt; } },
};
// clang-format on

//! The geographic hierarchy of the evaluation (docs/method.md): each region's records released at level 0 (an aggregate of that region alone), 1 (aggregated) or 2 (suppressed).
std::vector<Generalised> geographicHierarchy( const MetricInputs &in, const std::vector<std::int64_t> &released, bool allSuppressed )
{
  std::vector<std::size_t> members( in.aggregation.ecs.rows(), 0 );
  for ( const std::size_t a : in.aggregation.regionAggregateIndex )
    ++members[a];
  std::vector<Generalised> records;
  for ( std::size_t r = 0; r < released.size(); ++r )
  {
    const std::size_t a = in.aggregation.regionAggregateIndex[r];
    const std::vector<std::uint32_t> path { static_cast<std::uint32_t>( r ), static_cast<std::uint32_t>( a ), 0 };
    const std::int64_t all = in.regionHistograms.rowTotal( r );
    records.push_back( { allSuppressed ? 0 : released[r], path, members[a] > 1 ? 1u : 0u } );
    records.push_back( { allSuppressed ? all : all - released[r], path, 2 } );
  }
  return records;
}

void tallyGeography( const MetricInputs &in, ReleaseFacts &f )
{
  f.compactness = compactness( in.regionPoints, in.regionSites );
  std::vector<std::int64_t> all( in.regionHistograms.rows() );
  for ( std::size_t r = 0; r < all.size(); ++r )
    all[r] = in.regionHistograms.rowTotal( r );
  f.nueAll = nonUniformEntropy( all, in.aggregation.regionAggregateIndex );
  const std::vector<std::int64_t> released = releasedPerRegion( in.regionHistograms, in.aggregation, in.suppression );
  f.nue = nonUniformEntropy( released, in.aggregation.regionAggregateIndex );
  const std::vector<Generalised> hierarchy = geographicHierarchy( in, released, false );
  f.genericNue = genericNonUniformEntropy( hierarchy );
  f.genericNueAllSuppressed = genericNonUniformEntropy( geographicHierarchy( in, released, true ) );
  for ( const Generalised &g : hierarchy )
    f.generalisationSteps += static_cast<double>( g.count ) * static_cast<double>( g.level ) / 2.0;
}

void tallyClasses( const MetricInputs &in, ReleaseFacts &f )
{
  const SparseHistograms &ecs = in.aggregation.ecs;
  const EcDiversity diversity = in.sensitive ? ecDiversity( *in.sensitive, in.aggregation, in.suppression ) : EcDiversity();
  for ( std::size_t e = 0; e < ecs.counts.size(); ++e )
  {
    const double size = static_cast<double>( ecs.counts[e] );
    f.squaresAll += size * size;
    if ( in.suppression.suppressed[e] )
      continue;
    ++f.releasedEcs;
    f.sampleUniques += ecs.counts[e] == 1 ? 1 : 0;
    f.squaresReleased += size * size;
    f.smallestEc = f.smallestEc == 0 ? ecs.counts[e] : std::min( f.smallestEc, ecs.counts[e] );
    f.atRisk += 1.0 / size > in.riskThreshold ? ecs.counts[e] : 0;
    if ( !f.sensitive )
      continue;
    f.minority += ecs.counts[e] - diversity.majority[e];
    f.smallestL = f.releasedEcs == 1 ? diversity.distinct[e] : std::min( f.smallestL, diversity.distinct[e] );
    f.largestT = std::max( f.largestT, diversity.emd[e] );
  }
}

void tallyPopulation( const MetricInputs &in, const std::optional<PopulationMeasures> &population, ReleaseFacts &f )
{
  if ( !population || population->released.shortAggregate >= 0 )
    return;
  f.residents = population->released.residents;
  f.journalist = populationRisk( population->released.classes, in.riskThreshold );
  f.uniqueness = population->after;
  f.inputUniqueness = population->before;
}

//! Each released EC's residents counted in the cells of its aggregate's regions.
void countResidents( const MetricInputs &in, ReleasedPopulation &population )
{
  const SparseHistograms &ecs = in.aggregation.ecs;
  const Aggregation cells = aggregate( in.aggregation.regionAggregateIndex, *in.populationCells );
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
    {
      if ( in.suppression.suppressed[e] )
        continue;
      const std::size_t cell = cells.ecs.find( a, ecs.classes[e] );
      const double residents = cell == SparseHistograms::npos ? 0 : static_cast<double>( cells.ecs.counts[cell] );
      if ( residents < static_cast<double>( ecs.counts[e] ) )
      {
        population.classes.clear();
        population.aggregates.clear();
        population.shortAggregate = static_cast<std::ptrdiff_t>( a );
        return;
      }
      population.classes.push_back( { ecs.counts[e], residents } );
      population.aggregates.push_back( a );
    }
}

//! Each released EC's residents estimated from its aggregate's sampling fraction.
void estimateResidents( const MetricInputs &in, ReleasedPopulation &population )
{
  const SparseHistograms &ecs = in.aggregation.ecs;
  std::vector<double> residents( ecs.rows(), 0 );
  for ( std::size_t r = 0; r < in.regionResidents->size(); ++r )
    residents[in.aggregation.regionAggregateIndex[r]] += ( *in.regionResidents )[r];
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
  {
    const double records = static_cast<double>( ecs.rowTotal( a ) );
    if ( residents[a] < records )
    {
      population.classes.clear();
      population.aggregates.clear();
      population.shortAggregate = static_cast<std::ptrdiff_t>( a );
      return;
    }
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
      if ( !in.suppression.suppressed[e] )
      {
        population.classes.push_back( { ecs.counts[e], static_cast<double>( ecs.counts[e] ) * residents[a] / records } );
        population.aggregates.push_back( a );
      }
  }
}

//! A count of population uniques, with the sampling fraction of records in residents.
UniquenessEstimate counted( double uniques, std::int64_t records, double residents )
{
  UniquenessEstimate e;
  e.model = UniquenessModel::Counted;
  e.uniques = uniques;
  e.fraction = residents > 0 ? static_cast<double>( records ) / residents : 0;
  return e;
}

std::optional<ReleasedPopulation> releasedPopulation( const MetricInputs &in )
{
  if ( !in.regionResidents )
    return std::nullopt;
  ReleasedPopulation population;
  for ( const double residents : *in.regionResidents )
    population.residents += residents;
  population.counted = in.populationCells != nullptr;
  if ( population.counted )
    countResidents( in, population );
  else
    estimateResidents( in, population );
  return population;
}

UniquenessEstimate uniquenessOf( const ReleasedPopulation &population )
{
  std::vector<std::int64_t> sizes;
  double uniques = 0; // counted: the classes of one resident, each its one record
  for ( const ClassPopulation &c : population.classes )
  {
    sizes.push_back( c.records );
    uniques += c.residents == 1 ? 1 : 0;
  }
  if ( population.counted )
    return counted( uniques, std::accumulate( sizes.begin(), sizes.end(), std::int64_t( 0 ) ), population.residents );
  return estimatePopulationUniques( classSizes( sizes ), population.residents );
}

UniquenessEstimate inputUniqueness( const MetricInputs &in, const ReleasedPopulation &population )
{
  if ( !population.counted )
    return estimatePopulationUniques( classSizes( in.regionHistograms.counts ), population.residents );
  const SparseHistograms &cells = *in.populationCells;
  double uniques = 0;
  for ( std::size_t r = 0; r < in.regionHistograms.rows(); ++r )
    for ( std::size_t e = in.regionHistograms.offsets[r]; e < in.regionHistograms.offsets[r + 1]; ++e )
    {
      const std::size_t cell = cells.find( r, in.regionHistograms.classes[e] );
      uniques += cell != SparseHistograms::npos && cells.counts[cell] == 1 ? 1 : 0;
    }
  return counted( uniques, in.regionHistograms.total(), population.residents );
}

} // namespace

std::optional<PopulationMeasures> populationMeasures( const MetricInputs &in )
{
  std::optional<ReleasedPopulation> released = releasedPopulation( in );
  if ( !released )
    return std::nullopt;
  PopulationMeasures measures;
  if ( released->shortAggregate < 0 )
  {
    measures.before = inputUniqueness( in, *released );
    measures.after = uniquenessOf( *released );
  }
  measures.released = std::move( *released );
  return measures;
}

std::vector<double> aggregateJournalistRisk( const ReleasedPopulation &population, std::size_t aggregates )
{
  std::vector<double> risk( aggregates, 0 );
  for ( std::size_t j = 0; j < population.classes.size(); ++j )
    risk[population.aggregates[j]] = std::max( risk[population.aggregates[j]], 1.0 / population.classes[j].residents );
  return risk;
}

const std::vector<Metric> &metrics()
{
  return kMetrics;
}

MetricValues measure( const MetricInputs &in )
{
  return measure( in, populationMeasures( in ) );
}

MetricValues measure( const MetricInputs &in, const std::optional<PopulationMeasures> &population )
{
  ReleaseFacts f;
  f.k = in.k;
  f.riskThreshold = in.riskThreshold;
  f.runSeconds = in.runSeconds;
  f.released = in.suppression.releasedRecords;
  f.suppressed = in.suppression.suppressedRecords;
  f.records = f.released + f.suppressed;
  f.aggregates = in.aggregation.ecs.rows();
  f.sensitive = in.sensitive != nullptr;
  tallyGeography( in, f );
  tallyClasses( in, f );
  tallyPopulation( in, population, f );
  MetricValues values;
  for ( const Metric &metric : kMetrics )
    values.push_back( metric.value( f ) );
  return values;
}

std::optional<MetricNumber> metricValue( const MetricValues &values, const char *field )
{
  for ( std::size_t i = 0; i < kMetrics.size(); ++i )
    if ( std::strcmp( kMetrics[i].field, field ) == 0 )
      return values.at( i );
  return std::nullopt;
}

} // namespace vbas
