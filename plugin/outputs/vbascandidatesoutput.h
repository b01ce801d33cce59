// CANDIDATES, vbas:compare's table: one row per candidate release, with its name, what it is, its
// units, whether it is on the frontier and recommended, the command that makes it, and every measure
// of vbas:evaluate (docs/algorithms/compare.md).
#pragma once

#include "plugin/outputs/vbasoutput.h"
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
