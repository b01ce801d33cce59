#include "plugin/outputs/vbasreleasewriter.h"
#include "plugin/support/vbasqgiscompat.h"

#include "algorithms/metrics/distinct_count.h"
#include "algorithms/metrics/region_follower.h"
#include "algorithms/base/shuffle.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbasvaluecodec.h"
#include "plugin/support/vbasworker.h"

#include <qgsexception.h>
#include <qgsfeaturerequest.h>
#include <qgsfeaturesource.h>
#include <qgsprocessingfeedback.h>

#include <QFile>
#include <QRandomGenerator>

#include <stdexcept>

namespace
{

const QString kAggregateId = QStringLiteral( "aggregate_id" );

//! A named field whose values are about this many per released row identifies its rows (a patient id).
constexpr double kNearlyUnique = 0.9;
constexpr std::int64_t kFewestRowsToJudge = 20;
//! Rows handed between the two threads of the release pass at a time.
constexpr std::size_t kBatchRows = 4096;

//! Rows of the release pass as read, in reading order.
struct Rows
{
    std::vector<QgsAttributes> attributes;
    std::vector<QgsFeatureId> ids;
    std::vector<std::optional<std::uint32_t>> located; //!< records without a region field: the region of each row's point
};

/**
 * The fields named in RELEASE_FIELDS judged on the released rows (docs/outputs.md): one that carries
 * finer geography than the release, or is (nearly) unique per row, is refused.
 */
class NamedFields
{
  public:
    NamedFields( int fields, std::size_t regions )
      : mDistinct( static_cast<std::size_t>( fields ) )
      , mFollowers( static_cast<std::size_t>( fields ), vbas::RegionFollower( regions ) )
    {
    }

    //! A released row of region holds value in named field i.
    void add( int i, std::uint32_t region, std::string_view value )
    {
      mDistinct[static_cast<std::size_t>( i )].add( value );
      mFollowers[static_cast<std::size_t>( i )].add( region, value );
    }

    //! Throws naming every named field (names, in order) that would reveal the region of a record or identify it among rows released rows.
    void refuseRevealing( const QStringList &names, const std::vector<std::size_t> &regionAggregateIndex, std::int64_t rows ) const
    {
      QStringList reasons;
      for ( int i = 0; i < names.size(); ++i )
      {
        const std::size_t split = mFollowers[static_cast<std::size_t>( i )].splitAggregate( regionAggregateIndex );
        const double values = mDistinct[static_cast<std::size_t>( i )].estimate();
        if ( split != vbas::RegionFollower::npos )
          reasons << QObject::tr( "'%1' carries finer geography than the release: each original region's released records hold one value of it, and aggregate %2 joins "
                                  "regions with different values, so it tells which region a record comes from" )
                       .arg( names[i] )
                       .arg( split + 1 );
        else if ( rows >= kFewestRowsToJudge && values >= kNearlyUnique * static_cast<double>( rows ) )
          reasons << QObject::tr( "'%1' is (nearly) unique per record: about %2 different values in %3 released rows, so it may identify patients" )
                       .arg( names[i] )
                       .arg( qRound64( std::min( values, static_cast<double>( rows ) ) ) )
                       .arg( rows );
      }
      if ( !reasons.isEmpty() )
        throw QgsProcessingException( QObject::tr( "RELEASE_FIELDS: the released field %1. Leave it out of RELEASE_FIELDS, or declare it a QI (QI_FIELDS) so that "
                                                   "k-anonymity covers it. Nothing was written." )
                                        .arg( reasons.join( QObject::tr( "; the released field " ) ) ) );
    }

  private:
    std::vector<vbas::DistinctCount> mDistinct;
    std::vector<vbas::RegionFollower> mFollowers;
};

} // namespace

VbasOutputSchema VbasReleaseWriter::schema( const QgsFields &recordFields, const VbasRecordFields &roles, const QSet<QString> &textFields )
{
  QgsFields fields;
  for ( const int i : roles.released )
  {
    const QgsField &field = recordFields.at( i );
    if ( field.name().compare( kAggregateId, Qt::CaseInsensitive ) == 0 )
      throw QgsProcessingException( QObject::tr( "The records table has a field '%1': rename it or leave it out of RELEASE_FIELDS, the release gets aggregate_id." ).arg( field.name() ) );
    fields.append( textFields.contains( field.name() ) ? QgsField( field.name(), vbasqgis::Field::String ) : field );
  }
  fields.append( QgsField( kAggregateId, vbasqgis::Field::LongLong ) );
  VbasOutputSchema schema { QStringLiteral( "ANONYMIZED" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem(), false, VbasOutputSchema::Audience::Published };
  for ( const int i : roles.others )
    schema.namedBy.insert( recordFields.at( i ).name(), QStringLiteral( "RELEASE_FIELDS" ) );
  return schema;
}

VbasReleaseWriter::VbasReleaseWriter( QgsFeatureSource &records, const VbasRecordFields &roles, const VbasRegions &regions, const VbasRecords &counted, const vbas::Release &release,
                                      const VbasGeneralized *generalized )
  : mRecords( records )
  , mRoles( roles )
  , mRegions( regions )
  , mCounted( counted )
  , mRelease( release )
  , mGeneralized( generalized )
{
}

void VbasReleaseWriter::write( VbasOutput &output, std::size_t memoryBudget, QgsProcessingFeedback *feedback )
{
  try
  {
    // The order: from the operating system's random source, kept nowhere, never from SEED.
    vbas::ExternalShuffle shuffle( QRandomGenerator::system()->generate64(), memoryBudget, QFile::encodeName( output.scratchPrefix() ).toStdString() );
    readAgain( shuffle, output.fields(), feedback );
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
  // Both passes read the table row by row through the same provider: what differs was edited, or the
  // source itself gives other rows or values at each reading.
  throw QgsProcessingException( QObject::tr( "The records table read differently in the release pass than in the first pass (%1). Nothing was written. Either it was "
                                             "edited while the algorithm ran: run it again when nobody edits the table; or its source gives other rows or values at "
                                             "each reading (a view or a virtual field using random() or now(), say): save the records as a table and run on that." )
                                  .arg( what ) );
}

/**
 * The checks of the release pass on each row, in the worker thread: the row's region and class derived
 * again from the values about to be written, counted against the first pass, and a released row
 * serialized for the shuffle.
 */
class VbasReleaseWriter::Check
{
  public:
    //! released: the release's fields, which say which QIs are written as text.
    Check( const VbasReleaseWriter &writer, vbas::ExternalShuffle &shuffle, const QgsFields &released )
      : mWriter( writer )
      , mTextQi( textQis( writer.mRecords.fields(), writer.mRoles, released ) )
      , mReader( writer.mRecords.fields(), writer.mRoles )
      , mRecount( writer.mCounted.histograms )
      , mSuppressed( writer.mGeneralized ? droppedEntries( *writer.mGeneralized ) : vbas::suppressedEntries( writer.mCounted.histograms, writer.mRelease.aggregation, writer.mRelease.suppression ) )
      , mNamed( writer.mRoles.others.size(), writer.mRegions.points.size() )
      , mShuffle( shuffle )
      , mDigested( writer.mRoles.read() )
    {
      if ( writer.mCounted.digest )
        mDigest.emplace( VbasRowDigest::sameKey( *writer.mCounted.digest ) );
    }

    //! located: the region of the row's point, for records without a region field.
    void take( const QgsAttributes &attributes, QgsFeatureId id, const std::optional<std::uint32_t> &located )
    {
      ++mRows;
      if ( mDigest )
        mDigest->add( id, located, attributes, mDigested );
      const std::int64_t count = mReader.count( attributes, mRows, id );
      const std::optional<std::uint32_t> region = mWriter.mCounted.locator ? located : mWriter.mRegions.find( mReader.region( attributes ) );
      if ( count == 0 || ( !region && mWriter.mCounted.dropOutside ) )
        return; // a row standing for no record, or dropped as outside every region (OUTSIDE_POINTS)
      const std::optional<std::uint32_t> cls = region ? mReader.findClass( attributes, mWriter.mCounted.encoder, mRows, id ) : std::nullopt;
      const std::size_t entry = cls ? mRecount.add( *region, *cls, count ) : vbas::SparseHistograms::npos;
      if ( entry == vbas::SparseHistograms::npos )
        mWriter.changed( QObject::tr( "%1 holds values the first pass did not count" ).arg( VbasRecordReader::rowName( mRows, id ) ) );
      if ( mSuppressed[entry] )
        return;
      mRow.clear();
      const VbasRecordFields &roles = mWriter.mRoles;
      for ( int i = 0, other = 0; i < roles.released.size(); ++i )
      {
        const std::size_t start = mRow.size();
        const int qi = mWriter.mGeneralized ? roles.qis.indexOf( roles.released[i] ) : -1;
        VbasValueCodec::encode( qi >= 0 ? written( qi, entry, attributes.at( roles.released[i] ) ) : attributes.at( roles.released[i] ), mRow );
        if ( other < roles.others.size() && roles.others[other] == roles.released[i] )
          mNamed.add( other++, *region, std::string_view( mRow ).substr( start ) );
      }
      VbasValueCodec::encode( static_cast<qlonglong>( mWriter.mRelease.aggregation.regionAggregateIndex[*region] + 1 ), mRow );
      mShuffle.add( mRow );
      ++mReleasedRows;
      mReleasedRecords += count;
    }

    //! Every entry counted as in the first pass, and as many records released as the release says.
    bool agrees() const { return mRecount.firstDifference() == vbas::SparseHistograms::npos && mReleasedRecords == mWriter.mRelease.suppression.releasedRecords; }

    //! The same rows with the same values as the first pass, when it digested them (counted row by row).
    bool sameRows() const { return !mDigest || *mDigest == *mWriter.mCounted.digest; }

    //! Refuses a named field that would reveal the region of a record or identify it.
    void refuseRevealing() const
    {
      QStringList names;
      for ( const int index : mWriter.mRoles.others )
        names << mWriter.mRecords.fields().at( index ).name();
      mNamed.refuseRevealing( names, mWriter.mRelease.aggregation.regionAggregateIndex, mReleasedRows );
    }

  private:
    //! Per QI: whether the release's field of that name is text.
    static std::vector<bool> textQis( const QgsFields &recordFields, const VbasRecordFields &roles, const QgsFields &released )
    {
      std::vector<bool> text;
      for ( const int field : roles.qis )
      {
        const int at = released.lookupField( recordFields.at( field ).name() );
        text.push_back( at >= 0 && released.at( at ).type() == vbasqgis::Field::String );
      }
      return text;
    }

    //! Per entry of the region histograms: whether its records are dropped at the generalization's node.
    static std::vector<char> droppedEntries( const VbasGeneralized &g )
    {
      std::vector<char> dropped;
      for ( const std::uint32_t cls : g.written.entryClass )
        dropped.push_back( g.written.dropped[cls] );
      return dropped;
    }

    //! QI qi of a record of entry as written at the generalization's node: "*" (NULL in a field not text), its level's label, or value itself at level 0.
    QVariant written( int qi, std::size_t entry, const QVariant &value ) const
    {
      const VbasGeneralized &g = *mWriter.mGeneralized;
      const std::size_t q = static_cast<std::size_t>( qi );
      const std::uint32_t cls = g.written.entryClass[entry];
      const std::size_t level = g.node().node[q];
      const bool text = mTextQi[q];
      if ( g.written.entryStarred[entry] >> q & 1 )
        return vbasWrittenStar( text );
      if ( level == 0 )
        return value;
      return vbasWrittenLabel( g.qis[q].hierarchy.label( level, g.node().generalization.labels[g.written.generalized[cls] * g.qis.size() + q] ), text );
    }

    const VbasReleaseWriter &mWriter;
    std::vector<bool> mTextQi; //!< per QI: released as text
    VbasRecordReader mReader;
    vbas::Recount mRecount;
    std::vector<char> mSuppressed; //!< per entry of the region histograms
    NamedFields mNamed;
    vbas::ExternalShuffle &mShuffle;
    const QgsAttributeList mDigested;
    std::optional<VbasRowDigest> mDigest;
    std::string mRow;
    std::int64_t mRows = 0, mReleasedRows = 0, mReleasedRecords = 0;
};

void VbasReleaseWriter::readAgain( vbas::ExternalShuffle &shuffle, const QgsFields &released, QgsProcessingFeedback *feedback )
{
  Check check( *this, shuffle, released );
  VbasWorker<Rows> worker( [&check]( VbasWorker<Rows> &w ) {
    while ( const std::optional<Rows> rows = w.pop() )
      for ( std::size_t i = 0; i < rows->ids.size(); ++i )
        check.take( rows->attributes[i], rows->ids[i], rows->located.empty() ? std::nullopt : rows->located[i] );
  } );
  QgsFeatureRequest request;
  const VbasPointLocator *locator = mCounted.locator.get();
  request.setFlags( locator ? vbasqgis::WithGeometry : vbasqgis::NoGeometry ).setSubsetOfAttributes( mRoles.read() );
  QgsFeatureIterator it = mRecords.getFeatures( request );
  const double step = mCounted.rows > 0 ? 50.0 / static_cast<double>( mCounted.rows ) : 0;
  std::int64_t rows = 0;
  std::uint64_t idSum = 0;
  Rows batch;
  QgsFeature f;
  bool more = true;
  while ( more )
  {
    more = it.nextFeature( f );
    if ( more )
    {
      ++rows;
      idSum += static_cast<std::uint64_t>( f.id() );
      batch.attributes.push_back( f.attributes() );
      batch.ids.push_back( f.id() );
      if ( locator ) // located here, in the reading thread: GEOS's prepared geometries are not shared between threads
        batch.located.push_back( locator->locate( f.geometry(), rows, f.id() ) );
    }
    if ( batch.ids.size() == kBatchRows || ( !more && !batch.ids.empty() ) )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      feedback->setProgress( static_cast<double>( rows ) * step );
      if ( !worker.push( std::exchange( batch, Rows() ) ) )
        break; // the worker failed: finish() says why
    }
  }
  worker.close();
  worker.finish();
  VbasInterrupt::throwIfCanceled( feedback );
  if ( rows != mCounted.rows || ( !mCounted.digest && idSum != mCounted.idSum ) )
    changed( QObject::tr( "%1 rows now, %2 in the first pass, or other rows" ).arg( rows ).arg( mCounted.rows ) );
  if ( !check.sameRows() )
    changed( QObject::tr( "other rows or values than in the first pass" ) );
  if ( !check.agrees() )
    changed( QObject::tr( "its counts differ from the first pass" ) );
  check.refuseRevealing();
}

void VbasReleaseWriter::drain( vbas::ExternalShuffle &shuffle, VbasOutput &output, QgsProcessingFeedback *feedback )
{
  // The worker reads the shuffled rows back into features; this thread writes them.
  const QgsFields fields = output.fields();
  VbasWorker<QgsFeatureList> worker( [&shuffle, &fields]( VbasWorker<QgsFeatureList> &w ) {
    QgsFeatureList batch;
    QgsAttributes attributes( fields.count() );
    shuffle.drain( [&]( std::string_view row ) {
      std::size_t position = 0;
      for ( int i = 0; i < attributes.size(); ++i )
        attributes[i] = VbasValueCodec::decode( row, position );
      // A fresh feature per row: QgsFeature::setAttributes keeps the old values when the new ones
      // compare equal, and QVariant compares reals fuzzily (0.1 + 0.2 == 0.3) and date-times by instant.
      batch << QgsFeature( fields );
      batch.back().setAttributes( attributes );
      if ( static_cast<std::size_t>( batch.size() ) == kBatchRows && !w.push( std::exchange( batch, QgsFeatureList() ) ) )
        throw VbasWorker<QgsFeatureList>::Stopped();
    } );
    if ( !batch.isEmpty() )
      w.push( std::move( batch ) );
    w.close();
  } );
  const double step = shuffle.size() > 0 ? 50.0 / static_cast<double>( shuffle.size() ) : 0;
  qlonglong written = 0;
  while ( std::optional<QgsFeatureList> batch = worker.pop() )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    feedback->setProgress( 50.0 + static_cast<double>( written ) * step );
    for ( QgsFeature &feature : *batch )
    {
      feature.setId( ++written ); // fresh ids in output order; formats that number rows themselves do the same
      output.add( feature );
    }
  }
  worker.finish();
  VbasInterrupt::throwIfCanceled( feedback );
}
