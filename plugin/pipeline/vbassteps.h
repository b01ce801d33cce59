// Folder pipeline/: the settings the algorithms share and their calls into the core (algorithms/), beside the regions' borders.
// The steps the algorithms share: their settings, read and checked in prepareAlgorithm (a bad value
// is refused with the user's own value, never rounded), and the calls into the core.
#pragma once

#include "algorithms/metrics/metrics.h"
#include "algorithms/base/progress.h"

#include "algorithms/aggregation/adc.h"
#include "algorithms/aggregation/balanced_density.h"
#include "algorithms/aggregation/release.h"
#include "algorithms/aggregation/site_count.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbaspopulationtable.h"

#include <QVariantMap>

#include <limits>
#include <optional>

class QgsProcessingAlgorithm;
class QgsProcessingContext;
class QgsProcessingFeedback;

//! The core's progress and cancel interface (algorithms/base/progress.h) on a Processing feedback: cancel and caught signals cancel.
class VbasCoreProgress : public vbas::Progress
{
  public:
    explicit VbasCoreProgress( QgsProcessingFeedback *feedback )
      : mFeedback( feedback )
    {
    }
    bool canceled() const override;
    void report( double percent, const std::string &status ) override;

  private:
    QgsProcessingFeedback *mFeedback;
};

/**
 * The whole number given for the number parameter name, within its declared range, or a
 * QgsProcessingException that shows the value as the user gave it (K = 2.5, K = 2147483648).
 */
std::int64_t vbasWholeNumber( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context );

//! Site number approximation (paper sec. 3.1): MODEL, COEFFICIENTS, EXP_B0, B1, FIXED_CUTOFF, FIXED_SITES, ENTROPY_BASE.
struct VbasSiteCountSettings
{
    enum class Model
    {
      Entropy,
      MaxCombs,
      FixedCutoff,
      FixedSites,
    };
    Model model = Model::Entropy;
    vbas::CutoffCoefficients coefficients;
    double fixedCutoff = 0;
    std::int64_t fixedSites = 0;
    double entropyBase = 0;

    static VbasSiteCountSettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context );
};

//! What site number approximation computed.
struct VbasSiteCount
{
    std::size_t sites = 0;
    double cutoff = 0;
    double entropy = 0;
    double maxCombs = 0;
    double population = 0; //!< on the population basis of balanced density
};

//! The site count of `records` records in regionCount regions by the model of settings, from the records' entropy (eq. 1) and MaxCombs (eq. 4).
VbasSiteCount vbasSiteCountOf( const VbasSiteCountSettings &settings, double entropy, double maxCombs, double records, std::size_t regionCount );

/**
 * Sites = R(N / Cutoff) over the N records (eq. 3, 6: always the records, whatever the
 * population basis), clamped to [1, regions], with a warning when the regions cap it.
 */
VbasSiteCount vbasEstimateSiteCount( const VbasSiteCountSettings &settings, const VbasRegions &regions, const VbasRecords &records, QgsProcessingFeedback *feedback );

//! SITES, CUTOFF, ENTROPY, MAXCOMBS, RECORDS and POPULATION.
QVariantMap vbasSiteCountOutputs( const VbasSiteCount &siteCount, const VbasRecords &records );

//! The population of each region on the basis of balanced density: the population field, or the records.
std::vector<double> vbasRegionPopulation( const VbasRegions &regions, const VbasRecords &records );

//! The SEED parameter, or a fresh seed when it is empty (logged by the caller, returned as the SEED output).
std::uint64_t vbasSeed( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context );

//! Site location selection (paper sec. 3.2): METHOD and SITE_POSITION, and for ADC OBJECTIVE, SEEDING, MAX_ITERATIONS, K and the seed.
struct VbasPlacementSettings
{
    enum class Method
    {
      BalancedDensity,
      Adc,
    };
    enum class Seeding
    {
      BalancedDensity,
      Random,
    };
    Method method = Method::BalancedDensity;
    vbas::SitePosition position = vbas::SitePosition::Mean;
    Seeding seeding = Seeding::BalancedDensity;
    vbas::AdcSettings adc;  //!< k, objective and MAX_ITERATIONS
    std::uint64_t seed = 0; //!< of the random seeding

    //! The settings of an algorithm that places by balanced density only: SITE_POSITION.
    static VbasPlacementSettings readBalancedDensityOnly( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context );
    //! Refuses ADC without QIs (QI_FIELDS) before anything is read.
    static VbasPlacementSettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed );
};

//! COMPACTNESS_BUDGET, RECORD_FLOOR and RECORD_CEILING: the constraints of the steps that optimise the aggregates (docs/method.md, ADC: clusters and constraints).
struct VbasConstraintSettings
{
    double compactnessBudget = 1.0; //!< ADC, REFINE_BOUNDARIES, SEARCH: the mean-point compactness of the result at most this many times that of the start
    double recordFloor = 0.25;      //!< every aggregate holds at least this share of the mean aggregate's records
    double recordCeiling = 0;       //!< every aggregate holds at most this multiple of the mean aggregate's records (0: no ceiling)

    //! Refuses a budget that is not a positive number, a floor outside [0, 1] and a ceiling between 0 and 1, with the value given.
    static VbasConstraintSettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context );
};

//! The constraints in absolute terms, for a number of aggregates.
struct VbasConstraints
{
    double referenceCompactness = 0;                                          //!< eq. 20 over the Voronoi clusters of the balanced-density sites
    double referenceMeanPointCompactness = 0;                                 //!< vbas::meanPointCompactness of the same clusters (population basis)
    double meanPointCompactnessCap = std::numeric_limits<double>::infinity(); //!< COMPACTNESS_BUDGET x referenceMeanPointCompactness: what ADC holds
    std::int64_t recordFloor = 0;                                             //!< ceil(RECORD_FLOOR x records / aggregates)
    std::int64_t recordCeiling = std::numeric_limits<std::int64_t>::max();    //!< floor(RECORD_CEILING x records / aggregates), or no ceiling
};

//! The record floor and ceiling in records for `aggregates` aggregates of `records` records in all (the ceiling: no limit when RECORD_CEILING is 0).
std::pair<std::int64_t, std::int64_t> vbasRecordBounds( const VbasConstraintSettings &settings, std::int64_t records, std::size_t aggregates );

/**
 * The constraints for `sites` aggregates: the references are eq. 20 and the mean-point compactness over the Voronoi clusters of the sites
 * balanced density places with position (on the population basis of vbasRegionPopulation), whatever
 * method or seeding the run then uses; the floor divides the records.
 */
VbasConstraints vbasConstraints( const VbasConstraintSettings &settings, const VbasRegions &regions, const VbasRecords &records, std::size_t sites, vbas::SitePosition position );

//! The sites placed, their Voronoi clusters, and what ADC did when it ran.
struct VbasPlacement
{
    std::vector<vbas::Point> sites;
    std::vector<std::size_t> siteRow;         //!< balanced density's row of each site, bottom first (also ADC's balanced-density seeding); empty for random seeding
    std::vector<std::size_t> regionAggregate; //!< the aggregate of each region: its nearest site (Voronoi aggregation, ADC's clusters)
    std::optional<vbas::AdcResult> adc;
    std::optional<VbasConstraints> constraints; //!< those ADC kept
};

/**
 * Places `sites` sites: balanced density, or ADC from its seeding under the constraints. ADC reports
 * its progress and stops at a cancel; a canceled run then ends as every canceled run does, with nothing written.
 */
VbasPlacement vbasPlaceSites( const VbasPlacementSettings &settings, const VbasConstraintSettings &constraints, const VbasRegions &regions, const VbasRecords &records, std::size_t sites,
                              QgsProcessingFeedback *feedback );

/**
 * The aggregates that hold at least one region, regionAggregate giving each region's aggregate (a partition of
 * the regions among `sites` sites), with a warning when they are fewer than min(sites, regions).
 */
std::size_t vbasNonEmptyAggregates( const std::vector<std::size_t> &regionAggregate, std::size_t sites, QgsProcessingFeedback *feedback );

//! ADC_MOVES_TRIED, ADC_MOVES_COMMITTED, ADC_ALPHA, ADC_SUPPRESSED and ADC_STOP.
QVariantMap vbasPlacementOutputs( const VbasPlacement &placement );

//! K, RISK_MODEL and SHUFFLE_MEMORY_MB: how the release is built. Its order never depends on SEED (docs/outputs.md).
struct VbasReleaseSettings
{
    //! RISK_MODEL (docs/method.md, "A release at a stated risk").
    enum class Model
    {
      KAnonymity,  //!< k records in every released class
      KMap,        //!< k residents of the population table in every released class
      AverageRisk, //!< k records in every released class, and the released records' average risk at most RISK_THRESHOLD
    };

    std::int64_t k = 5;
    Model model = Model::KAnonymity;
    double averageThreshold = 1;                       //!< the average risk model's RISK_THRESHOLD
    std::size_t memoryBudget = 0;                      //!< bytes of released rows the shuffle holds in memory
    const vbas::SparseHistograms *residents = nullptr; //!< the population table's cells, once read (useResidents): k-map's, or the average risk model's journalist average

    static VbasReleaseSettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context );

    /**
     * Refuses, before anything is read: k-map without a population table; k-map or the average risk model
     * with a table that lacks a field for some QI.
     */
    void refuseUnmetModel( const VbasPopulationTable *table ) const;
    //! k-map and the average risk model count the residents of population (read from the table refuseUnmetModel accepted) from now on.
    void useResidents( const std::optional<VbasPopulation> &population );
    //! What every released class must hold: k records, or under k-map k residents; under the average risk model, the average too.
    vbas::Criterion criterion() const;
};

//! The metrics of a release, and what the report says of its risk against the population.
struct VbasMeasured
{
    vbas::MetricValues values;
    QList<QPair<QString, QString>> populationFacts;     //!< where the residents come from and the population uniques (vbasLogPopulation)
    std::optional<vbas::PopulationMeasures> population; //!< the released classes' residents and the population uniques; nothing when not measured
};

/**
 * Every metric (vbas::measure) of a release of records, the sites of the regions' aggregates given;
 * with a sensitive field, its distinct values go to the log (a count). The residents are population's
 * (a population table), or else the regions' population field, or not known.
 */
VbasMeasured vbasMeasure( const VbasRegions &regions, const VbasRecords &records, const std::vector<vbas::Point> &regionSites, const vbas::Release &release, std::int64_t k, double riskThreshold,
                          double runSeconds, QgsProcessingFeedback *feedback, const VbasPopulation *population = nullptr );

/**
 * The risk against the population, to the log and as the report's facts: that it is not measured (no
 * residents, or an aggregated region with fewer residents than records), or the residents, from origin
 * (the table or the field) as method says, and the population uniques before and in the release,
 * counted or with the model that estimated them.
 */
QList<QPair<QString, QString>> vbasLogPopulation( const std::optional<vbas::PopulationMeasures> &measures, const QString &origin, const QString &method, QgsProcessingFeedback *feedback );

//! Logs a release's counts, with a warning when it is empty or suppresses more than half the records.
void vbasLogRelease( const vbas::Release &release, std::size_t sites, const vbas::Criterion &criterion, QgsProcessingFeedback *feedback );

//! The run in one line at the end of its log: records, released, suppressed (share), aggregates, smallest released class and k.
void vbasLogSummary( const vbas::MetricValues &values, QgsProcessingFeedback *feedback );
