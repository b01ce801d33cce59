#include "plugin/outputs/vbasreleasewriter.h"
#include "plugin/support/vbasqgiscompat.h"

#include "algorithms/metrics/distinct_count.h"
#include "algorithms/metrics/region_follower.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbasvaluecodec.h"
#include "plugin/support/vbasworker.h"

#include <qgsexception.h>
#include <qgsprocessingfeedback.h>

namespace
{

const QString kAggregateId = QStringLiteral( "aggregate_id" );

//! A named field whose values are about this many per released row identifies its rows (a patient id).
constexpr double kNearlyUnique = 0.9;
constexpr std::int64_t kFewestRowsToJudge = 20;
//! Released rows handed from the worker to the writing thread at a time.
constexpr std::size_t kBatchRows = 4096;

//! The rows kept for the release are not those the first pass counted: a fault of the plugin, never of the data.
[[noreturn]] void notAddingUp()
{
  throw QgsProcessingException( QObject::tr( "The release's rows do not add up to the records counted: nothing was written. This is a fault of the plugin: please report it." ) );
}

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

VbasReleaseWriter::VbasReleaseWriter( const QgsFields &recordFields, const VbasRecordFields &roles, const VbasRegions &regions, const VbasRecords &counted, const vbas::Release &release,
                                      const VbasGeneralized *generalized )
  : mRecordFields( recordFields )
  , mRoles( roles )
  , mRegions( regions )
  , mCounted( counted )
  , mRelease( release )
  , mGeneralized( generalized )
{
}

/**
 * The checks on each kept row, in the worker thread: its entry counted against the first pass, and a
 * released row decoded into the release's attributes, each QI at the generalization's level.
 */
class VbasReleaseWriter::Check
{
  public:
    //! released: the release's fields, which say which QIs are written as text.
    Check( const VbasReleaseWriter &writer, const QgsFields &released )
      : mWriter( writer )
      , mTextQi( textQis( writer.mRecordFields, writer.mRoles, released ) )
      , mRecount( writer.mCounted.histograms )
      , mSuppressed( writer.mGeneralized ? droppedEntries( *writer.mGeneralized ) : vbas::suppressedEntries( writer.mCounted.histograms, writer.mRelease.aggregation, writer.mRelease.suppression ) )
      , mNamed( writer.mRoles.others.size(), writer.mRegions.points.size() )
    {
    }

    //! Whether row is released; if so, attributes holds its released values and aggregate_id.
    bool take( const VbasReleaseSpool::Row &row, QgsAttributes &attributes )
    {
      const std::size_t entry = mRecount.add( row.region, row.cls, row.count );
      if ( entry == vbas::SparseHistograms::npos )
        notAddingUp();
      if ( mSuppressed[entry] )
        return false;
      const VbasRecordFields &roles = mWriter.mRoles;
      std::size_t position = 0;
      for ( int i = 0, other = 0; i < roles.released.size(); ++i )
      {
        const std::size_t start = position;
        const QVariant value = VbasValueCodec::decode( row.values, position );
        const int qi = mWriter.mGeneralized ? roles.qis.indexOf( roles.released[i] ) : -1;
        attributes[i] = qi >= 0 ? written( qi, entry, value ) : value;
        if ( other < roles.others.size() && roles.others[other] == roles.released[i] )
          mNamed.add( other++, row.region, row.values.substr( start, position - start ) );
      }
      attributes[roles.released.size()] = static_cast<qlonglong>( mWriter.mRelease.aggregation.regionAggregateIndex[row.region] + 1 );
      ++mReleasedRows;
      mReleasedRecords += row.count;
      return true;
    }

    //! Every entry counted as in the first pass, and as many records released as the release says.
    bool agrees() const { return mRecount.firstDifference() == vbas::SparseHistograms::npos && mReleasedRecords == mWriter.mRelease.suppression.releasedRecords; }

    //! Refuses a named field that would reveal the region of a record or identify it.
    void refuseRevealing() const
    {
      QStringList names;
      for ( const int index : mWriter.mRoles.others )
        names << mWriter.mRecordFields.at( index ).name();
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
    vbas::Recount mRecount;
    std::vector<char> mSuppressed; //!< per entry of the region histograms
    NamedFields mNamed;
    std::int64_t mReleasedRows = 0, mReleasedRecords = 0;
};

void VbasReleaseWriter::write( VbasOutput &output, QgsProcessingFeedback *feedback )
{
  // The worker drains the kept rows into features; this thread writes them.
  const QgsFields fields = output.fields();
  Check check( *this, fields );
  VbasReleaseSpool &spool = *mCounted.spool;
  const std::size_t kept = spool.size();
  VbasWorker<QgsFeatureList> worker( [&spool, &check, &fields]( VbasWorker<QgsFeatureList> &w ) {
    QgsFeatureList batch;
    QgsAttributes attributes( fields.count() );
    spool.drain( [&]( const VbasReleaseSpool::Row &row ) {
      if ( !check.take( row, attributes ) )
        return;
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
  const double step = kept > 0 ? 100.0 / static_cast<double>( kept ) : 0;
  qlonglong written = 0;
  while ( std::optional<QgsFeatureList> batch = worker.pop() )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    feedback->setProgress( static_cast<double>( written ) * step );
    for ( QgsFeature &feature : *batch )
    {
      feature.setId( ++written ); // fresh ids in output order; formats that number rows themselves do the same
      output.add( feature );
    }
  }
  worker.finish();
  VbasInterrupt::throwIfCanceled( feedback );
  if ( !check.agrees() )
    notAddingUp();
  check.refuseRevealing();
  output.finish();
}
