// A uniformly random permutation of byte records at bounded memory: the release is written in an
// order independent of the input order, however many records it has.
#pragma once

#include "algorithms/base/random.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace vbas
{

/**
 * Records are held in memory up to the budget. Past it, every record goes to one of 256 spill files
 * (buckets) chosen uniformly at random; drain then shuffles each bucket in memory, or splits it again
 * the same way if it is still over the budget. A spill file is created afresh (never one that exists)
 * and readable by its owner only; it is removed as soon as it is read, and by the destructor in any case. Every I/O error throws std::runtime_error naming the file.
 * After an exception the object is only fit to be destroyed.
 */
class ExternalShuffle
{
  public:
    //! spillPrefix: path prefix of the spill files (prefix + decimal index, e.g. "/dir/.x-shuffle-3"); memoryBudget: bytes of records held in memory at once (at least 1).
    ExternalShuffle( std::uint64_t seed, std::size_t memoryBudget, std::string spillPrefix );
    ~ExternalShuffle(); // removes every spill file it created, always

    ExternalShuffle( const ExternalShuffle & ) = delete;
    ExternalShuffle &operator=( const ExternalShuffle & ) = delete;

    //! Records may be empty or contain any bytes.
    void add( std::string_view record );

    //! Records added.
    std::size_t size() const { return mSize; }

    //! Whether any record went to a spill file.
    bool spilled() const { return mSpilled; }

    //! Calls emit( record ) once per record, in a uniformly random order. Call once, after the last add.
    void drain( const std::function<void( std::string_view )> &emit );

  private:
    class SpillFile;
    using Emit = std::function<void( std::string_view )>;

    //! Bytes the records held in memory take, counted against the budget.
    std::uint64_t heldCost() const;
    void hold( std::string_view record );
    //! The i-th record held in memory.
    std::string_view held( std::size_t i ) const;
    //! Emits the records held in memory in a random order, then forgets them.
    void emitHeld( const Emit &emit );
    //! count new, still unopened, spill files.
    std::vector<SpillFile> newBuckets( std::size_t count );
    //! Moves the records held in memory to new spill files.
    void spill();
    //! Emits the records of a closed spill file in a random order, and removes it.
    void consume( SpillFile &bucket, const Emit &emit );

    Random mRandom;
    std::size_t mBudget = 1;
    std::string mPrefix;
    std::size_t mNextFile = 0; //!< index of the next spill file
    std::size_t mSize = 0;
    bool mSpilled = false;
    bool mDrained = false;
    std::string mBytes;              //!< the records held in memory, back to back
    std::vector<std::size_t> mEnds;  //!< end of each record held in memory, in mBytes
    std::vector<SpillFile> mBuckets; //!< the spill files records are added to, once over the budget
};

} // namespace vbas
