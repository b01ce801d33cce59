// The run recounts what it writes (docs/outputs.md, "The release is recounted before it is kept"):
// before a release is committed, its rows are read back from the output as written and their classes
// (the QIs and aggregate_id) counted by VbasTableRecount, the code of vbas:checkanonymity, which shares
// none with the steps that made the release.
#pragma once

#include "algorithms/aggregation/release.h"

#include <QStringList>

#include <cstdint>

class QgsProcessingContext;
class QgsProcessingFeedback;
class VbasOutput;

/**
 * Recounts the finished, not yet committed, release anonymized: its classes keyed by the fields
 * qiNames and aggregate_id, each row standing for countField's records (empty: one). Throws, naming
 * a class by its aggregate and records only, when a class holds fewer than k records (under k-map,
 * fewer than k residents of the population table's cells, summed anew), or when the records, the
 * classes or the smallest class differ from release's own (what every output reports), including when
 * the destination stored different values alike and so joined classes of the run.
 */
void vbasRecountRelease( const VbasOutput &anonymized, const QStringList &qiNames, const QString &countField, const vbas::Release &release, const vbas::Criterion &criterion,
                         QgsProcessingContext &context, QgsProcessingFeedback *feedback );
