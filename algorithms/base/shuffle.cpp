#include "algorithms/base/shuffle.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace vbas
{

namespace
{
//! At most this many spill files are written at once.
constexpr std::size_t kMaxBuckets = 256;

//! A record's cost against the budget: its bytes, its end offset and its index in the shuffled order.
std::uint64_t recordCost( std::size_t size )
{
  return size + 2 * sizeof( std::size_t );
}

[[noreturn]] void fail( const char *what, const std::string &path, const char *reason )
{
  throw std::runtime_error( std::string( what ) + " " + path + ": " + reason );
}
} // namespace

/**
 * One bucket: created on its first record, written record by record (each after its size, a LEB128
 * varint), closed, read back once and removed. Closes and removes its file when destroyed, whatever
 * happened before.
 */
class ExternalShuffle::SpillFile
{
  public:
    explicit SpillFile( std::string path )
      : mPath( std::move( path ) )
    {
    }

    SpillFile( SpillFile &&other ) noexcept
      : mPath( std::move( other.mPath ) )
      , mFile( std::exchange( other.mFile, nullptr ) )
      , mExists( std::exchange( other.mExists, false ) )
      , mRecords( other.mRecords )
      , mCost( other.mCost )
    {
    }

    SpillFile( const SpillFile & ) = delete;
    SpillFile &operator=( const SpillFile & ) = delete;

    ~SpillFile()
    {
      if ( mFile )
        std::fclose( mFile );
      if ( mExists )
        std::remove( mPath.c_str() );
    }

    std::uint64_t records() const { return mRecords; }
    //! The cost of its records against the budget.
    std::uint64_t cost() const { return mCost; }

    void write( std::string_view record )
    {
      if ( !mFile )
        open( "wbx" );
      // The size (a varint) and the record in one write: stdio locks the file on every call.
      mEntry.clear();
      std::uint64_t rest = record.size();
      do
      {
        mEntry.push_back( static_cast<char>( ( rest & 0x7f ) | ( rest > 0x7f ? 0x80 : 0 ) ) );
        rest >>= 7;
      } while ( rest > 0 );
      mEntry.append( record );
      put( mEntry.data(), mEntry.size() );
      ++mRecords;
      mCost += recordCost( record.size() );
    }

    //! Closes the file written, so that a failed final flush (e.g. a full disk) throws.
    void finishWriting()
    {
      if ( mFile && std::fclose( std::exchange( mFile, nullptr ) ) != 0 )
        fail( "Cannot write spill file", mPath, std::strerror( errno ) );
    }

    void startReading()
    {
      if ( mRecords > 0 )
        open( "rb" );
    }

    //! Reads the next record, appended to bytes.
    void appendNext( std::string &bytes )
    {
      std::uint64_t size = 0;
      int byte = 0x80;
      for ( int shift = 0; byte & 0x80; shift += 7 )
      {
        byte = std::getc( mFile );
        if ( byte == EOF || shift > 63 )
          failRead();
        size |= std::uint64_t( byte & 0x7f ) << shift;
      }
      const std::size_t start = bytes.size();
      bytes.resize( start + size );
      if ( size > 0 && std::fread( &bytes[start], 1, size, mFile ) != size )
        failRead();
    }

    void remove()
    {
      if ( mFile && std::fclose( std::exchange( mFile, nullptr ) ) != 0 )
        fail( "Cannot close spill file", mPath, std::strerror( errno ) );
      if ( mExists && std::remove( mPath.c_str() ) != 0 )
        fail( "Cannot remove spill file", mPath, std::strerror( errno ) );
      mExists = false;
    }

  private:
    //! Opens the file to read, or ("wbx") creates it afresh, failing if it exists, readable by its owner only before a byte is written.
    void open( const char *mode )
    {
      mFile = std::fopen( mPath.c_str(), mode );
      if ( !mFile )
        fail( "Cannot open spill file", mPath, std::strerror( errno ) );
      mExists = true;
      std::error_code error;
      if ( mode[0] == 'w' )
        std::filesystem::permissions( mPath, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, std::filesystem::perm_options::replace, error );
      if ( error )
        fail( "Cannot make spill file private", mPath, error.message().c_str() );
    }

    void put( const void *data, std::size_t size )
    {
      if ( size > 0 && std::fwrite( data, 1, size, mFile ) != size )
        fail( "Cannot write spill file", mPath, std::strerror( errno ) );
    }

    [[noreturn]] void failRead() { fail( "Cannot read spill file", mPath, std::ferror( mFile ) ? std::strerror( errno ) : "unexpected end of file" ); }

    std::string mPath;
    std::string mEntry; //!< the entry being written, reused from record to record
    std::FILE *mFile = nullptr;
    bool mExists = false; //!< whether the file was created and not removed yet
    std::uint64_t mRecords = 0;
    std::uint64_t mCost = 0;
};

ExternalShuffle::ExternalShuffle( std::uint64_t seed, std::size_t memoryBudget, std::string spillPrefix )
  : mRandom( seed )
  , mBudget( std::max<std::size_t>( memoryBudget, 1 ) )
  , mPrefix( std::move( spillPrefix ) )
{
}

ExternalShuffle::~ExternalShuffle() = default; // each SpillFile closes and removes its own file

void ExternalShuffle::add( std::string_view record )
{
  if ( mDrained )
    throw std::logic_error( "ExternalShuffle: add after drain" );
  if ( !mSpilled && heldCost() + recordCost( record.size() ) > mBudget )
    spill();
  if ( mSpilled )
    mBuckets[mRandom.below( mBuckets.size() )].write( record );
  else
    hold( record );
  ++mSize;
}

void ExternalShuffle::drain( const Emit &emit )
{
  if ( mDrained )
    throw std::logic_error( "ExternalShuffle: drain called twice" );
  mDrained = true;
  if ( !mSpilled )
  {
    emitHeld( emit );
    return;
  }
  // Close every bucket first: a failed write (e.g. a full disk) throws before any record is emitted.
  for ( SpillFile &bucket : mBuckets )
    bucket.finishWriting();
  for ( SpillFile &bucket : mBuckets )
    consume( bucket, emit );
  mBuckets.clear();
}

std::uint64_t ExternalShuffle::heldCost() const
{
  return mBytes.size() + mEnds.size() * recordCost( 0 );
}

void ExternalShuffle::hold( std::string_view record )
{
  mBytes.append( record );
  mEnds.push_back( mBytes.size() );
}

std::string_view ExternalShuffle::held( std::size_t i ) const
{
  const std::size_t start = i == 0 ? 0 : mEnds[i - 1];
  return std::string_view( mBytes ).substr( start, mEnds[i] - start );
}

void ExternalShuffle::emitHeld( const Emit &emit )
{
  std::vector<std::size_t> order( mEnds.size() );
  std::iota( order.begin(), order.end(), std::size_t( 0 ) );
  mRandom.shuffle( order.begin(), order.end() );
  for ( const std::size_t i : order )
    emit( held( i ) );
  mBytes.clear();
  mEnds.clear();
}

std::vector<ExternalShuffle::SpillFile> ExternalShuffle::newBuckets( std::size_t count )
{
  std::vector<SpillFile> buckets;
  buckets.reserve( count );
  for ( std::size_t i = 0; i < count; ++i )
    buckets.emplace_back( mPrefix + std::to_string( mNextFile++ ) );
  return buckets;
}

void ExternalShuffle::spill()
{
  // The total size is not known yet: the widest fan-out keeps the buckets of an input of up to 128
  // times the budget within half the budget each, so that drain reads each back in a single pass.
  // Buckets that get no record create no file.
  mBuckets = newBuckets( kMaxBuckets );
  mSpilled = true;
  for ( std::size_t i = 0; i < mEnds.size(); ++i )
    mBuckets[mRandom.below( mBuckets.size() )].write( held( i ) );
  std::string().swap( mBytes );
  std::vector<std::size_t>().swap( mEnds );
}

/**
 * Why the order is uniform: given which bucket each record went to, each bucket comes out as a uniform
 * permutation of its own records (Fisher-Yates in memory, or by induction when split again), bucket
 * after bucket. So an output order arises from exactly the assignments that cut it into consecutive
 * runs, one per bucket, each with probability B^-n times 1 / s! per run of s records: a sum over the
 * run lengths alone, the same for every order.
 */
void ExternalShuffle::consume( SpillFile &bucket, const Emit &emit )
{
  if ( bucket.records() == 0 )
    return;
  bucket.startReading();
  if ( bucket.records() == 1 || bucket.cost() <= mBudget ) // a record over the budget is still read whole
  {
    for ( std::uint64_t i = 0; i < bucket.records(); ++i )
    {
      bucket.appendNext( mBytes );
      mEnds.push_back( mBytes.size() );
    }
    bucket.remove();
    emitHeld( emit );
    return;
  }
  // Over the budget: split again, into buckets expected to hold half the budget each.
  const std::uint64_t half = std::max<std::uint64_t>( mBudget / 2, 1 );
  std::vector<SpillFile> parts = newBuckets( static_cast<std::size_t>( std::clamp<std::uint64_t>( ( bucket.cost() + half - 1 ) / half, 2, kMaxBuckets ) ) );
  std::string record;
  for ( std::uint64_t i = 0; i < bucket.records(); ++i )
  {
    record.clear();
    bucket.appendNext( record );
    parts[mRandom.below( parts.size() )].write( record );
  }
  bucket.remove();
  for ( SpillFile &part : parts )
    part.finishWriting();
  for ( SpillFile &part : parts )
    consume( part, emit );
}

} // namespace vbas
