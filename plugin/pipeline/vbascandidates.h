// The candidate releases that vbas:compare sets side by side (docs/method.md, "Comparing candidate
// releases"): for each k of K_VALUES (and each threshold of RISK_VALUES), the releases of METHODS (the paper's balanced density, ADC
// aiming at the fewest suppressed records, the suppression search, generalization without and with
// local suppression) built as vbas:anonymize builds them under RISK_MODEL, and the baselines of BASELINES (the regions alone, a parent geography, region ids cropped, HIPAA
// Safe Harbor's 3-digit ZIP codes, no geography); each made in memory from one reading of the records
// and measured as vbas:evaluate measures a release. None is written.
#pragma once

#include "plugin/inputs/vbasinputs.h"
#include "plugin/pipeline/vbasgeneralization.h"
#include "plugin/pipeline/vbassteps.h"

#include "algorithms/metrics/metrics.h"

#include <QList>
#include <QString>
#include <QVariantMap>

#include <cstdint>
#include <optional>
#include <vector>

class QgsProcessingAlgorithm;
class QgsProcessingContext;
class QgsProcessingFeedback;

struct VbasCandidateSettings
{
    //! METHODS, in the order of its options.
    enum class Method
    {
      BalancedDensity,
      Adc,
      Search,
      Generalization,                 //!< balanced density, the QIs generalized, records below k dropped
      GeneralizationLocalSuppression, //!< and single values written as * instead
    };
    //! BASELINES, in the order of its options.
    enum class Baseline
    {
      Regions,
      Parent,
      Cropped,
      SafeHarbor,
      NoGeography,
    };
    QList<std::int64_t> ks; //!< K_VALUES, increasing, each once
    QList<Method> methods;
    QList<Baseline> baselines;
    QString parentField; //!< PARENT_FIELD
    int cropLength = 3;  //!< CROP_LENGTH
    double timeLimit = 30;
    std::uint64_t maxMoves = 0;        //!< SEARCH_MOVES, 0: none
    std::uint64_t adcMoves = 10000000; //!< MAX_ITERATIONS
    std::uint64_t seed = 0;
    double riskThreshold = 0.2;                //!< RISK_THRESHOLD, as Evaluate takes it
    VbasReleaseSettings release;               //!< RISK_MODEL; k and the average risk model's threshold are each candidate's
    QList<double> thresholds;                  //!< the average risk model's: RISK_VALUES, increasing (RISK_THRESHOLD when empty); empty under the other models
    VbasSiteCountSettings siteCount;           //!< MODEL and the rest: the aggregations' site count, and each generalization node's
    VbasGeneralizationSettings generalization; //!< HIERARCHIES, INTERVALS, SUPPRESSION_LIMIT, LOSS_METRIC; LOCAL_SUPPRESSION is the method's
    QStringList qiNames;

    /**
     * Refuses, before anything is read: a k that is no whole number of at least 2 (naming it), a risk
     * of RISK_VALUES outside (0, 1] (naming it) or RISK_VALUES without the average risk model, no
     * candidate, a parent geography without PARENT_FIELD, Safe Harbor without POPULATION_FIELD, and
     * what Anonymize refuses of the hierarchies and of local suppression; appends the hierarchy files
     * to locations.
     */
    static VbasCandidateSettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed, const QStringList &qiNames,
                                       QList<VbasLocation> &locations );

    //! A generalization method is chosen.
    bool generalizes() const;
};

//! One candidate release and how it measures.
struct VbasCandidate
{
    QString name; //!< in words: "k = 5, ADC (fewest suppressed)"
    std::int64_t k = 0;
    QString kind;                             //!< the option's id: balanced_density, adc, search, generalization, generalization_local, regions, parent, cropped, safe_harbor, no_geography
    std::size_t unitsAsked = 0;               //!< sites placed (aggregations) or groups of the baseline
    std::optional<std::size_t> unitsInPieces; //!< aggregations only
    std::size_t unitsReleasingNothing = 0;
    vbas::MetricValues values;
    QVariantMap loss;                //!< the information lost over the QIs and the geography: vbasLossOutputs (LOSS_GC, LOSS_ARE, ...)
    QVariantMap anonymize;           //!< the vbas:anonymize parameters (besides the inputs) that make it; empty for a baseline
    QString levels;                  //!< generalization: each QI's level (VbasGeneralized::levels); empty otherwise
    std::optional<double> threshold; //!< the average risk model's threshold it meets; nothing under the other models

    //! A column of its row: a measure of Evaluate's (generic_nue), or a loss output in lower case (loss_generic_nue); 0 when not measured.
    double measure( const QString &field ) const;
};

//! What the candidates are made from, read once.
struct VbasComparedInputs
{
    const VbasRegions &regions;
    const VbasRecords &records;
    std::vector<std::string> parentKeys; //!< each region's PARENT_FIELD value (empty without the parent baseline)
    const VbasPopulation *population;    //!< the population table's, read; nullptr without one
};

/**
 * Every candidate, k by k (and threshold by threshold under the average risk model): the aggregations with `sites` sites each (balanced density placed once for
 * every k), the generalizations, then the baselines. A generalization that no node makes within the
 * suppression limit is left out, with a warning. Stops at a cancel.
 */
QList<VbasCandidate> vbasCandidates( const VbasCandidateSettings &settings, std::size_t sites, const VbasComparedInputs &in, QgsProcessingFeedback *feedback );
