// The candidate releases that vbas:compare sets side by side (docs/method.md, "Comparing candidate
// releases"): for each k of K_VALUES, the aggregations of METHODS (the paper's balanced density, ADC
// aiming at the fewest suppressed records, the suppression search) built as vbas:anonymize builds them,
// and the baselines of BASELINES (the regions alone, a parent geography, region ids cropped, HIPAA
// Safe Harbor's 3-digit ZIP codes, no geography); each made in memory from one reading of the records
// and measured as vbas:evaluate measures a release. None is written.
#pragma once

#include "plugin/inputs/vbasinputs.h"
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
    std::uint64_t maxMoves = 0; //!< SEARCH_MOVES, 0: none
    std::uint64_t seed = 0;
    double riskThreshold = 0.2;

    //! Refuses, before anything is read: a k that is no whole number of at least 2 (naming it), no candidate, a parent geography without PARENT_FIELD, Safe Harbor without POPULATION_FIELD.
    static VbasCandidateSettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed );
};

//! One candidate release and how it measures.
struct VbasCandidate
{
    QString name; //!< in words: "k = 5, ADC (fewest suppressed)"
    std::int64_t k = 0;
    QString kind;                             //!< the option's id: balanced_density, adc, search, regions, parent, cropped, safe_harbor, no_geography
    std::size_t unitsAsked = 0;               //!< sites placed (aggregations) or groups of the baseline
    std::optional<std::size_t> unitsInPieces; //!< aggregations only
    std::size_t unitsReleasingNothing = 0;
    vbas::MetricValues values;
    QVariantMap loss;      //!< the information lost over the QIs and the geography: vbasLossOutputs (LOSS_GC, LOSS_ARE, ...)
    QVariantMap anonymize; //!< the vbas:anonymize parameters (besides the inputs) that make it; empty for a baseline
};

/**
 * Every candidate, k by k: the aggregations with `sites` sites each, then the baselines. parentKeys:
 * each region's PARENT_FIELD value (empty without the parent baseline). Stops at a cancel.
 */
QList<VbasCandidate> vbasCandidates( const VbasCandidateSettings &settings, std::size_t sites, const VbasRegions &regions, const VbasRecords &records, const std::vector<std::string> &parentKeys,
                                     QgsProcessingFeedback *feedback );
