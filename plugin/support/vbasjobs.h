// Independent jobs run side by side, as many at once as the caller says (vbas:compare: one per core
// QGIS lets its background work use, fewer when the memory would not hold them). Each job reports to a feedback of its own: what it
// logs reaches the caller's feedback in the jobs' order, whatever order they end in, so the log reads
// the same on one core or many; the caller's cancel (or a signal) cancels every job; and the first job
// to fail cancels the rest and its exception comes back to the caller. Used by vbas:compare, whose
// candidates share nothing but what was read (docs/method.md, "Comparing candidate releases").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

class QgsProcessingFeedback;

//! A job: its work, reporting to the feedback it is given, and its weight (heavier jobs start first).
struct VbasJob
{
    std::function<void( QgsProcessingFeedback * )> work;
    double weight = 0;
};

/**
 * Runs every job and returns once all have ended, the heaviest started first (equal weights in their
 * order); progress is the jobs' mean. Throws the first failure, or a cancel's exception when the run was
 * canceled meanwhile. At most `threads` (at least 1) run at once.
 */
void vbasRunJobs( const std::vector<VbasJob> &jobs, QgsProcessingFeedback *feedback, int threads );

/**
 * How many jobs to run at once: cores, fewer when `available` bytes of memory would not hold that many
 * jobs of `perJob` bytes each, at least 1; cores alone when the memory available is unknown.
 */
int vbasJobsAtOnce( int cores, std::optional<std::uint64_t> available, std::uint64_t perJob );

//! The memory the system can give without swapping (Linux's MemAvailable); nothing where unknown.
std::optional<std::uint64_t> vbasAvailableMemory();
