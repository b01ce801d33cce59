// The release (paper sec. 3.3; docs/outputs.md): ANONYMIZED, written from the rows the counting pass
// kept (VbasReleaseSpool), so the records table is read once (docs/method.md, "One read"). Each kept
// row is counted again against the first pass's histograms and the release's suppression, and a field
// named in RELEASE_FIELDS that carries finer geography than the release or is (nearly) unique aborts
// the run before the outputs are committed. The rows come in the spool's uniformly random order,
// drawn from the operating system's random source and never from SEED, and get fresh feature ids
// (1..n), so neither their order nor their ids tell anything about the input, whoever holds SEED.
#pragma once

#include "algorithms/aggregation/release.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbasgeneralization.h"

class QgsProcessingFeedback;

class VbasReleaseWriter
{
  public:
    //! ANONYMIZED: the released fields of the records in table order (those in textFields as text: generalized QIs), then aggregate_id.
    static VbasOutputSchema schema( const QgsFields &recordFields, const VbasRecordFields &roles, const QSet<QString> &textFields = {} );

    /**
     * The writer of release; with generalized, release is its release over the written classes and
     * each QI is written at its level, or as "*" (NULL in a field that is not text).
     */
    VbasReleaseWriter( const QgsFields &recordFields, const VbasRecordFields &roles, const VbasRegions &regions, const VbasRecords &counted, const vbas::Release &release,
                       const VbasGeneralized *generalized = nullptr );

    //! Writes and finishes output from the rows counted kept (VbasRecords::spool, drained: once per run), with fresh feature ids.
    void write( VbasOutput &output, QgsProcessingFeedback *feedback );

  private:
    class Check;

    const QgsFields mRecordFields;
    const VbasRecordFields &mRoles;
    const VbasRegions &mRegions;
    const VbasRecords &mCounted;
    const vbas::Release &mRelease;
    const VbasGeneralized *mGeneralized = nullptr;
};
