#include "plugin/inputs/vbasreleasespool.h"

#include "plugin/support/vbasvaluecodec.h"

#include <qgsexception.h>

#include <QFile>
#include <QRandomGenerator>

#include <cstring>
#include <stdexcept>

namespace
{
//! A kept row starts with its region, class and count, in the machine's own byte order (the files never leave the run).
constexpr std::size_t kHeader = 2 * sizeof( std::uint32_t ) + sizeof( std::int64_t );
} // namespace

VbasReleaseSpool::VbasReleaseSpool( const QString &scratchPrefix, std::size_t memoryBudget, const QgsAttributeList &released )
  : mPrefix( scratchPrefix )
  , mReleased( released )
  // The order: from the operating system's random source, kept nowhere, never from SEED.
  , mShuffle( QRandomGenerator::system()->generate64(), memoryBudget, QFile::encodeName( scratchPrefix ).toStdString() )
{
}

void VbasReleaseSpool::add( std::uint32_t region, std::uint32_t cls, std::int64_t count, const QgsAttributes &attributes )
{
  mRow.resize( kHeader );
  std::memcpy( &mRow[0], &region, sizeof region );
  std::memcpy( &mRow[sizeof region], &cls, sizeof cls );
  std::memcpy( &mRow[sizeof region + sizeof cls], &count, sizeof count );
  for ( const int field : mReleased )
    VbasValueCodec::encode( attributes.at( field ), mRow );
  try
  {
    mShuffle.add( mRow );
  }
  catch ( const std::exception &e ) // a temporary file that could not be written (a full disk)
  {
    failed( e );
  }
}

void VbasReleaseSpool::drain( const std::function<void( const Row & )> &take )
{
  try
  {
    mShuffle.drain( [&take]( std::string_view bytes ) {
      Row row;
      std::memcpy( &row.region, bytes.data(), sizeof row.region );
      std::memcpy( &row.cls, bytes.data() + sizeof row.region, sizeof row.cls );
      std::memcpy( &row.count, bytes.data() + sizeof row.region + sizeof row.cls, sizeof row.count );
      row.values = bytes.substr( kHeader );
      take( row );
    } );
  }
  catch ( const std::runtime_error &e ) // a temporary file that could not be written or read back
  {
    failed( e );
  }
}

void VbasReleaseSpool::failed( const std::exception &e ) const
{
  throw QgsProcessingException( QObject::tr( "Could not keep the records for the release beside %1: %2" ).arg( mPrefix, QString::fromLocal8Bit( e.what() ) ) );
}
