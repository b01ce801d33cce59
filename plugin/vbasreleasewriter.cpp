#include "vbasreleasewriter.h"

#include "distinct_count.h"
#include "shuffle.h"
#include "vbasinterrupt.h"
#include "vbasvaluecodec.h"

#include <qgsexception.h>
#include <qgsfeaturerequest.h>
#include <qgsfeaturesource.h>
#include <qgsprocessingfeedback.h>

#include <QFile>

#include <stdexcept>

namespace
{

const QString kAggregateId = QStringLiteral( "aggregate_id" );

//! A released field whose values are about this many per row identifies its rows (a patient id).
constexpr double kNearlyUnique = 0.9;
constexpr std::int64_t kFewestRowsToJudge = 20;

} // namespace

VbasOutputSchema VbasReleaseWriter::schema( const QgsFields &recordFields, const VbasRecordFields &roles )
{
  QgsFields fields;
  for ( const int i : roles.released )
  {
    if ( recordFields.at( i ).name().compare( kAggregateId, Qt::CaseInsensitive ) == 0 )
      throw QgsProcessingException( QObject::tr( "The records table has a field '%1': rename it or leave it out of RELEASE_FIELDS, the release gets aggregate_id." ).arg( recordFields.at( i ).name() ) );
    fields.append( recordFields.at( i ) );
  }
  fields.append( QgsField( kAggregateId, QVariant::LongLong ) );
  return { QStringLiteral( "ANONYMIZED" ), fields, QgsWkbTypes::NoGeometry, QgsCoordinateReferenceSystem() };
}

VbasReleaseWriter::VbasReleaseWriter( QgsFeatureSource &records, const VbasRecordFields &roles, const VbasRegions &regions, const VbasRecords &counted, const vbas::Release &release )
  : mRecords( records )
  , mRoles( roles )
  , mRegions( regions )
  , mCounted( counted )
  , mRelease( release )
{
}

void VbasReleaseWriter::write( VbasOutput &output, std::uint64_t seed, std::size_t memoryBudget, QgsProcessingFeedback *feedback )
{
  try
  {
    vbas::ExternalShuffle shuffle( seed, memoryBudget, QFile::encodeName( output.scratchPrefix() ).toStdString() );
    readAgain( shuffle, feedback );
    drain( shuffle, output, feedback );
  }
  catch ( const std::exception &e ) // the shuffle's scratch files, a row it could not read back
  {
    throw QgsProcessingException( QObject::tr( "Could not shuffle the release beside %1: %2" ).arg( output.scratchPrefix(), QString::fromLocal8Bit( e.what() ) ) );
  }
  output.finish();
}

void VbasReleaseWriter::changed( const QString &what ) const
{
  throw QgsProcessingException( QObject::tr( "The records table changed while the release was being written (%1). Nothing was written: run the algorithm again "
                                             "when nobody edits the table." )
                                  .arg( what ) );
}

void VbasReleaseWriter::readAgain( vbas::ExternalShuffle &shuffle, QgsProcessingFeedback *feedback )
{
  VbasRecordReader reader( mRecords.fields(), mRoles );
  vbas::Recount recount( mCounted.histograms );
  const std::vector<char> suppressed = vbas::suppressedEntries( mCounted.histograms, mRelease.aggregation, mRelease.suppression );
  std::vector<vbas::DistinctCount> distinct( static_cast<std::size_t>( mRoles.others.size() ) );
  QgsFeatureRequest request;
  request.setFlags( QgsFeatureRequest::NoGeometry ).setSubsetOfAttributes( mRoles.read() );
  QgsFeatureIterator it = mRecords.getFeatures( request );
  const double step = mCounted.rows > 0 ? 50.0 / static_cast<double>( mCounted.rows ) : 0;
  std::int64_t rows = 0, releasedRows = 0, releasedRecords = 0;
  std::uint64_t digest = 0;
  std::string row;
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    if ( ( rows & 0xfff ) == 0 )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      feedback->setProgress( static_cast<double>( rows ) * step );
    }
    ++rows;
    digest += VbasRecordReader::digest( f.id() );
    const QgsAttributes attributes = f.attributes();
    const std::int64_t count = reader.count( attributes, rows, f.id() );
    if ( count == 0 )
      continue; // a row standing for no record
    // The region and class of the values about to be written, which the first pass must have counted.
    const std::optional<std::uint32_t> region = mRegions.find( reader.region( attributes ) );
    const std::optional<std::uint32_t> cls = region ? reader.findClass( attributes, mCounted.encoder, rows, f.id() ) : std::nullopt;
    const std::size_t entry = cls ? recount.add( *region, *cls, count ) : vbas::SparseHistograms::npos;
    if ( entry == vbas::SparseHistograms::npos )
      changed( QObject::tr( "%1 holds values the first pass did not count" ).arg( VbasRecordReader::rowName( rows, f.id() ) ) );
    if ( suppressed[entry] )
      continue;
    row.clear();
    for ( int i = 0, other = 0; i < mRoles.released.size(); ++i )
    {
      const std::size_t start = row.size();
      VbasValueCodec::encode( attributes.at( mRoles.released[i] ), row );
      if ( other < mRoles.others.size() && mRoles.others[other] == mRoles.released[i] )
        distinct[static_cast<std::size_t>( other++ )].add( std::string_view( row ).substr( start ) );
    }
    VbasValueCodec::encode( static_cast<qlonglong>( mRelease.aggregation.regionAggregate[*region] + 1 ), row );
    shuffle.add( row );
    ++releasedRows;
    releasedRecords += count;
  }
  VbasInterrupt::throwIfCanceled( feedback );
  if ( rows != mCounted.rows || digest != mCounted.digest )
    changed( QObject::tr( "%1 rows now, %2 in the first pass, or other rows" ).arg( rows ).arg( mCounted.rows ) );
  if ( recount.firstDifference() != vbas::SparseHistograms::npos || releasedRecords != mRelease.suppression.releasedRecords )
    changed( QObject::tr( "its counts differ from the first pass" ) );
  for ( int other = 0; other < mRoles.others.size(); ++other )
  {
    const double values = distinct[static_cast<std::size_t>( other )].estimate();
    if ( releasedRows >= kFewestRowsToJudge && values >= kNearlyUnique * static_cast<double>( releasedRows ) )
      feedback->pushWarning( QObject::tr( "The released field '%1' is (nearly) unique per record: about %2 different values in %3 released rows. It may identify "
                                          "patients: leave it out with RELEASE_FIELDS unless it must be released." )
                               .arg( mRecords.fields().at( mRoles.others[other] ).name() )
                               .arg( qRound64( std::min( values, static_cast<double>( releasedRows ) ) ) )
                               .arg( releasedRows ) );
  }
}

void VbasReleaseWriter::drain( vbas::ExternalShuffle &shuffle, VbasOutput &output, QgsProcessingFeedback *feedback )
{
  const double step = shuffle.size() > 0 ? 50.0 / static_cast<double>( shuffle.size() ) : 0;
  QgsAttributes attributes( output.fields().count() );
  qlonglong written = 0;
  shuffle.drain( [&]( std::string_view row ) {
    if ( ( written & 0xfff ) == 0 )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      feedback->setProgress( 50.0 + static_cast<double>( written ) * step );
    }
    std::size_t position = 0;
    for ( int i = 0; i < attributes.size(); ++i )
      attributes[i] = VbasValueCodec::decode( row, position );
    // A fresh feature per row: QgsFeature::setAttributes keeps the old values when the new ones compare
    // equal, and QVariant compares reals fuzzily (0.1 + 0.2 == 0.3) and date-times by instant.
    QgsFeature feature( output.fields() );
    feature.setAttributes( attributes );
    feature.setId( ++written ); // fresh ids in output order; formats that number rows themselves do the same
    output.add( feature );
  } );
  VbasInterrupt::throwIfCanceled( feedback );
}
