// The release (paper sec. 3.3; docs/outputs.md): ANONYMIZED, written by a second pass over the
// records. Each row's region and class are derived again from the very values about to be written
// and counted against the first pass; any difference aborts the run, and so does a field named in
// RELEASE_FIELDS that carries finer geography than the release or is (nearly) unique. The
// released rows are shuffled into a uniformly random order drawn from the operating system's random
// source, never from SEED, and kept nowhere (an external shuffle beyond a memory budget), so neither
// their order nor their feature ids (fresh, 1..n) tell anything about the input, whoever holds SEED.
#pragma once

#include "algorithms/aggregation/release.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbasgeneralization.h"

class QgsFeatureSource;
class QgsProcessingFeedback;

namespace vbas
{
class ExternalShuffle;
}

class VbasReleaseWriter
{
  public:
    //! ANONYMIZED: the released fields of the records in table order (those in textFields as text: generalized QIs), then aggregate_id.
    static VbasOutputSchema schema( const QgsFields &recordFields, const VbasRecordFields &roles, const QSet<QString> &textFields = {} );

    /**
     * The writer of release; with generalized, release is its release over the written classes and
     * each QI is written at its level, or as "*" (NULL in a field that is not text).
     */
    VbasReleaseWriter( QgsFeatureSource &records, const VbasRecordFields &roles, const VbasRegions &regions, const VbasRecords &counted, const vbas::Release &release,
                       const VbasGeneralized *generalized = nullptr );

    //! Writes and finishes output in a fresh random order; memoryBudget (bytes) bounds the rows held in memory.
    void write( VbasOutput &output, std::size_t memoryBudget, QgsProcessingFeedback *feedback );

  private:
    class Check;

    //! The second pass: every row checked, the released ones handed to the shuffle.
    void readAgain( vbas::ExternalShuffle &shuffle, const QgsFields &released, QgsProcessingFeedback *feedback );
    //! The shuffled rows written with fresh feature ids.
    void drain( vbas::ExternalShuffle &shuffle, VbasOutput &output, QgsProcessingFeedback *feedback );
    [[noreturn]] void changed( const QString &what ) const;

    QgsFeatureSource &mRecords;
    const VbasRecordFields &mRoles;
    const VbasRegions &mRegions;
    const VbasRecords &mCounted;
    const vbas::Release &mRelease;
    const VbasGeneralized *mGeneralized = nullptr;
};
