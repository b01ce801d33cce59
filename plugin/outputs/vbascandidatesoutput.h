// vbas:compare's outputs (docs/algorithms/compare.md): CANDIDATES, one row per candidate release with
// its name, what it is, its units, whether it is on the frontier and recommended, the command that
// makes it and every measure of vbas:evaluate; and REPORT, the frontier chart, the table and the commands.
#pragma once

#include "plugin/outputs/vbasoutput.h"
#include "plugin/outputs/vbasreport.h"
#include "plugin/pipeline/vbascandidates.h"

#include <QStringList>

#include <optional>
#include <vector>

namespace VbasCandidatesOutput
{
VbasOutputSchema schema();
//! commands: the vbas:anonymize command of each candidate (empty for a baseline); front: 1 for each candidate on the Pareto front.
void write( VbasOutput &output, const QList<VbasCandidate> &candidates, const std::vector<char> &front, std::optional<std::size_t> recommended, const QStringList &commands );
} // namespace VbasCandidatesOutput

/**
 * The recommendation in one sentence: "Recommended: <candidate>, the least <lossField> among the
 * candidates at k = <statedK> or above" (and "with an average risk at most <threshold>" under the
 * average risk model), or that none is.
 */
QString vbasRecommendation( const QList<VbasCandidate> &candidates, std::optional<std::size_t> recommended, const QString &lossField, std::int64_t statedK, std::optional<double> statedThreshold );

//! What the comparison's report shows.
struct VbasComparisonReportInputs
{
    const QList<VbasCandidate> &candidates;
    const std::vector<char> &front;
    std::optional<std::size_t> recommended;
    const QStringList &commands; //!< of each candidate, empty for a baseline
    QString lossField;           //!< the measure compared by (a metric field)
    QString verdict;             //!< vbasRecommendation
    VbasRunParameters parameters;
    QString command; //!< the qgis_process command that repeats the comparison
};

/**
 * The comparison's report: the recommendation in one sentence, the frontier chart (records kept against
 * information lost, a point per candidate, the baselines drawn as squares, the frontier as a line
 * through its points, the recommendation ringed), the candidates' table, the command of each
 * aggregation, the parameters and the command that repeats the comparison.
 */
QByteArray vbasComparisonReport( const VbasComparisonReportInputs &in );
