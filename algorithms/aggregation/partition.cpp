#include "algorithms/aggregation/partition.h"

#include "algorithms/aggregation/mean_point.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vbas
{

namespace
{

//! An aggregate releases nothing when every one of its records is suppressed (or it holds none).
bool releasesNothing( std::int64_t records, std::int64_t suppressed )
{
  return records == suppressed;
}

//! Compactness may gather rounding over many moves: a cap is held with this relative margin.
constexpr double kCapMargin = 1e-9;

constexpr std::size_t kNone = static_cast<std::size_t>( -1 );

} // namespace

Partition::Partition( std::vector<std::size_t> regionAggregate, std::vector<Point> sites, const std::vector<Point> &regionPoints, const SparseHistograms &regionHistograms,
                      const RegionAdjacency &adjacency, const Criterion &criterion, const AggregateConstraints &constraints, std::vector<double> weights )
  : mRegionAggregate( std::move( regionAggregate ) )
  , mSites( std::move( sites ) )
  , mPoints( regionPoints )
  , mWeights( weights.empty() ? std::vector<double>( regionPoints.size(), 1.0 ) : std::move( weights ) )
  , mSized( regionHistograms, criterion )
  , mHistograms( mSized.entries() )
  , mAdjacency( adjacency )
  , mK( criterion.k )
  , mConstraints( constraints )
  , mMembers( mSites.size() )
  , mPosition( mRegionAggregate.size() )
  , mAggregates( mSites.size() )
  , mSeen( mRegionAggregate.size(), 0 )
  , mTarget( mRegionAggregate.size(), 0 )
{
  if ( regionPoints.size() != mRegionAggregate.size() || regionHistograms.rows() != mRegionAggregate.size() || adjacency.regions() != mRegionAggregate.size() )
    throw std::invalid_argument( "Partition: regions, points, histograms and adjacency differ in number" );
  if ( mWeights.size() != mRegionAggregate.size() || std::any_of( mWeights.begin(), mWeights.end(), []( double w ) { return !( w >= 0 && std::isfinite( w ) ); } ) )
    throw std::invalid_argument( "Partition: a region's weight is missing, negative or not finite" );
  for ( std::size_t e = 0; e < mHistograms.counts.size(); ++e )
    if ( mHistograms.counts[e] < 0 || mSized.size( e ) < 0 || mSized.residents( e ) < 0 || mHistograms.counts[e] + mSized.size( e ) + mSized.residents( e ) == 0 )
      throw std::invalid_argument( "Partition: a histogram entry holds neither records nor residents" );
  const auto largest = std::max_element( mHistograms.classes.begin(), mHistograms.classes.end() );
  mScratch.assign( largest == mHistograms.classes.end() ? 0 : *largest + std::size_t( 1 ), EcCounts() );
  for ( std::size_t r = 0; r < mRegionAggregate.size(); ++r )
  {
    if ( mRegionAggregate[r] >= mSites.size() )
      throw std::invalid_argument( "Partition: a region's aggregate has no site" );
    mPosition[r] = mMembers[mRegionAggregate[r]].size();
    mMembers[mRegionAggregate[r]].push_back( r );
  }
  for ( std::size_t a = 0; a < mSites.size(); ++a )
  {
    if ( mMembers[a].empty() )
      throw std::invalid_argument( "Partition: an aggregate holds no region" );
    Point mean;
    mAggregates[a] = totals( mMembers[a], mean );
    mAggregates[a].compactness = 0;
    for ( const std::size_t r : mMembers[a] )
      mAggregates[a].compactness += distance( r, mSites[a] );
    mScore.suppressed += mAggregates[a].suppressed;
    mScore.compactness += mAggregates[a].compactness;
    mScore.meanPointCompactness += mAggregates[a].meanPointCompactness;
    mScore.releasingNothing += releasesNothing( mAggregates[a].records, mAggregates[a].suppressed );
  }
  mScore.aggregates = mSites.size();
  for ( std::size_t r = 0; r < mRegionAggregate.size(); ++r )
    for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
    {
      EcCounts &ec = mEcs.findOrInsert( key( mRegionAggregate[r], mHistograms.classes[e] ), EcCounts() );
      ec.records += mHistograms.counts[e];
      ec.size += mSized.size( e );
      ec.residents += mSized.residents( e );
    }
  if ( criterion.averageThreshold >= 1 )
    return;
  mCut.emplace( criterion.averageThreshold );
  for ( std::size_t a = 0; a < mSites.size(); ++a )
    cutEcs( mMembers[a], 1 );
  mCutRecords = mCut->records();
  mScore.suppressed += mCutRecords;
}

Partition::EcCounts Partition::ecCounts( std::size_t aggregate, std::uint32_t cls ) const
{
  const EcCounts *n = mEcs.find( key( aggregate, cls ) );
  return n ? *n : EcCounts();
}

void Partition::moveEntry( std::size_t e, std::size_t from, std::size_t to )
{
  EcCounts &a = mEcs.findOrInsert( key( from, mHistograms.classes[e] ), EcCounts() );
  a.records -= mHistograms.counts[e];
  a.size -= mSized.size( e );
  EcCounts &b = mEcs.findOrInsert( key( to, mHistograms.classes[e] ), EcCounts() );
  b.records += mHistograms.counts[e];
  b.size += mSized.size( e );
  if ( mCut )
  {
    a.residents -= mSized.residents( e );
    b.residents += mSized.residents( e );
  }
}

double Partition::distance( std::size_t r, const Point &site ) const
{
  return std::hypot( mPoints[r].x - site.x, mPoints[r].y - site.y );
}

double Partition::meanPointCompactness( std::size_t a, std::size_t without, std::size_t with ) const
{
  return meanPointSpread( mPoints, mWeights, [&]( const auto &f ) {
    for ( const std::size_t r : mMembers[a] )
      if ( r != without )
        f( r );
    if ( with != kNone )
      f( with );
  } );
}

template<typename F>
void Partition::forEachEc( const std::vector<std::size_t> &regions, F f ) const
{
  for ( const std::size_t r : regions )
    for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
    {
      EcCounts &ec = mScratch[mHistograms.classes[e]];
      if ( ec.records == 0 && ec.size == 0 && ec.residents == 0 ) // every entry holds records or residents
        mTouched.push_back( mHistograms.classes[e] );
      ec.records += mHistograms.counts[e];
      ec.size += mSized.size( e );
      if ( mCut ) // only the cut reads them: the other searches skip the sum
        ec.residents += mSized.residents( e );
    }
  for ( const std::uint32_t cls : mTouched )
  {
    f( mScratch[cls] );
    mScratch[cls] = EcCounts();
  }
  mTouched.clear();
}

Partition::AggregateTotals Partition::totals( const std::vector<std::size_t> &regions, Point &site ) const
{
  site = Point();
  for ( const std::size_t r : regions )
  {
    site.x += mPoints[r].x / static_cast<double>( regions.size() );
    site.y += mPoints[r].y / static_cast<double>( regions.size() );
  }
  AggregateTotals t;
  forEachEc( regions, [&]( const EcCounts &ec ) {
    t.records += ec.records;
    t.suppressed += suppressedIn( ec.records, ec.size, mK );
  } );
  for ( const std::size_t r : regions )
    t.compactness += distance( r, site );
  t.meanPointCompactness = meanPointSpread( mPoints, mWeights, [&regions]( const auto &f ) {
    for ( const std::size_t r : regions )
      f( r );
  } );
  return t;
}

void Partition::cutEc( const EcCounts &ec, int delta )
{
  if ( ec.records > 0 && suppressedIn( ec.records, ec.size, mK ) == 0 )
    mCut->change( ec.records, ec.residents, delta );
}

void Partition::cutEcs( const std::vector<std::size_t> &regions, int delta )
{
  forEachEc( regions, [&]( const EcCounts &ec ) { cutEc( ec, delta ); } );
}

std::int64_t Partition::cutChange( std::size_t r, std::size_t to, bool keep )
{
  if ( !keep )
    mCut->mark();
  const std::size_t from = mRegionAggregate[r];
  for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
  {
    const EcCounts moved { mHistograms.counts[e], mSized.size( e ), mSized.residents( e ) };
    const EcCounts a = ecCounts( from, mHistograms.classes[e] );
    const EcCounts b = ecCounts( to, mHistograms.classes[e] );
    cutEc( a, -1 );
    cutEc( { a.records - moved.records, a.size - moved.size, a.residents - moved.residents }, 1 );
    cutEc( b, -1 );
    cutEc( { b.records + moved.records, b.size + moved.size, b.residents + moved.residents }, 1 );
  }
  const std::int64_t change = mCut->records() - mCutRecords;
  if ( !keep )
    mCut->rollback();
  return change;
}

bool Partition::withinRecordBounds( std::int64_t after, std::int64_t before ) const
{
  return ( after >= mConstraints.minRecords || after >= before ) && ( after <= mConstraints.maxRecords || after <= before );
}

bool Partition::allowed( const Change &change ) const
{
  // Within the cap with a margin for rounding, or above it and clearly lowered.
  const double compactness = mScore.meanPointCompactness + change.meanPointCompactness;
  const bool withinCap = compactness <= mConstraints.maxMeanPointCompactness * ( 1 - kCapMargin ) || change.meanPointCompactness < -kCapMargin * mScore.meanPointCompactness;
  const std::size_t releasingNothing = static_cast<std::size_t>( static_cast<std::ptrdiff_t>( mScore.releasingNothing ) + change.releasingNothing );
  const bool withinNothing = releasingNothing <= mConstraints.maxReleasingNothing || change.releasingNothing <= 0;
  return withinCap && withinNothing;
}

std::pair<std::int64_t, std::int64_t> Partition::suppressionChanges( std::size_t r, std::size_t to ) const
{
  const std::size_t from = mRegionAggregate[r];
  std::pair<std::int64_t, std::int64_t> changes;
  for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
  {
    const std::int64_t n = mHistograms.counts[e], size = mSized.size( e );
    const EcCounts a = ecCounts( from, mHistograms.classes[e] );
    const EcCounts b = ecCounts( to, mHistograms.classes[e] );
    changes.first += suppressedIn( a.records - n, a.size - size, mK ) - suppressedIn( a.records, a.size, mK );
    changes.second += suppressedIn( b.records + n, b.size + size, mK ) - suppressedIn( b.records, b.size, mK );
  }
  return changes;
}

Partition::Change Partition::regionMove( std::size_t r, std::size_t to )
{
  const std::size_t from = mRegionAggregate[r];
  Change change;
  if ( from == to || mMembers[from].size() == 1 )
    return change;
  const auto [fromChange, toChange] = suppressionChanges( r, to );
  const std::int64_t records = mHistograms.rowTotal( r );
  const AggregateTotals &f = mAggregates[from];
  const AggregateTotals &t = mAggregates[to];
  change.cut = mCut ? cutChange( r, to, false ) : 0;
  change.suppressed = fromChange + toChange + change.cut;
  change.compactness = distance( r, mSites[to] ) - distance( r, mSites[from] );
  change.meanPointCompactness = meanPointCompactness( from, r, kNone ) + meanPointCompactness( to, kNone, r ) - f.meanPointCompactness - t.meanPointCompactness;
  change.releasingNothing = ( releasesNothing( f.records - records, f.suppressed + fromChange ) - releasesNothing( f.records, f.suppressed ) )
                            + ( releasesNothing( t.records + records, t.suppressed + toChange ) - releasesNothing( t.records, t.suppressed ) );
  const bool bounds = withinRecordBounds( f.records - records, f.records ) && withinRecordBounds( t.records + records, t.records );
  change.allowed = bounds && allowed( change ) && keepsPieces( r );
  return change;
}

void Partition::applyRegionMove( std::size_t r, std::size_t to )
{
  const std::size_t from = mRegionAggregate[r];
  const auto [fromChange, toChange] = suppressionChanges( r, to );
  const std::int64_t records = mHistograms.rowTotal( r );
  const std::size_t nothingBefore = releasesNothing( mAggregates[from].records, mAggregates[from].suppressed ) + releasesNothing( mAggregates[to].records, mAggregates[to].suppressed );
  const std::int64_t cut = mCut ? cutChange( r, to, true ) : 0;
  mCutRecords += cut;
  for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
    moveEntry( e, from, to );
  const double compactness = distance( r, mSites[to] ) - distance( r, mSites[from] );
  mAggregates[from].records -= records;
  mAggregates[to].records += records;
  mAggregates[from].suppressed += fromChange;
  mAggregates[to].suppressed += toChange;
  mAggregates[from].compactness -= distance( r, mSites[from] );
  mAggregates[to].compactness += distance( r, mSites[to] );
  mScore.suppressed += fromChange + toChange + cut;
  mScore.compactness += compactness;
  mScore.releasingNothing += releasesNothing( mAggregates[from].records, mAggregates[from].suppressed ) + releasesNothing( mAggregates[to].records, mAggregates[to].suppressed );
  mScore.releasingNothing -= nothingBefore;
  unplace( r );
  place( r, to );
  for ( const std::size_t a : { from, to } )
  {
    const double before = mAggregates[a].meanPointCompactness;
    mAggregates[a].meanPointCompactness = meanPointCompactness( a, kNone, kNone );
    mScore.meanPointCompactness += mAggregates[a].meanPointCompactness - before;
  }
}

Partition::Change Partition::reform( const std::vector<std::pair<std::size_t, std::size_t>> &regions, const std::vector<std::size_t> &reformed )
{
  Change change;
  bool bounds = true;
  std::vector<std::vector<std::size_t>> after; // the regions of each reformed aggregate after
  for ( const std::size_t a : reformed )
  {
    std::vector<std::size_t> &kept = after.emplace_back();
    for ( const std::size_t r : mMembers[a] )
      if ( std::none_of( regions.begin(), regions.end(), [r]( const auto &m ) { return m.first == r; } ) )
        kept.push_back( r );
    for ( const auto &[r, to] : regions )
      if ( to == a )
        kept.push_back( r );
    Point site;
    const AggregateTotals totalsAfter = totals( kept, site );
    const AggregateTotals &before = mAggregates[a];
    change.suppressed += totalsAfter.suppressed - before.suppressed;
    change.compactness += totalsAfter.compactness - before.compactness;
    change.meanPointCompactness += totalsAfter.meanPointCompactness - before.meanPointCompactness;
    change.releasingNothing += releasesNothing( totalsAfter.records, totalsAfter.suppressed ) - releasesNothing( before.records, before.suppressed );
    bounds = bounds && !kept.empty() && withinRecordBounds( totalsAfter.records, before.records );
  }
  if ( mCut )
  {
    mCut->mark();
    for ( const std::size_t a : reformed )
      cutEcs( mMembers[a], -1 );
    for ( const std::vector<std::size_t> &regionsAfter : after )
      cutEcs( regionsAfter, 1 );
    change.cut = mCut->records() - mCutRecords;
    change.suppressed += change.cut;
    mCut->rollback();
  }
  change.allowed = bounds && allowed( change );
  return change;
}

void Partition::applyReform( const std::vector<std::pair<std::size_t, std::size_t>> &regions, const std::vector<std::size_t> &reformed )
{
  for ( const std::size_t a : reformed )
    if ( mCut && !regions.empty() )
      cutEcs( mMembers[a], -1 );
  for ( const auto &[r, to] : regions )
  {
    for ( std::size_t e = mHistograms.offsets[r]; e < mHistograms.offsets[r + 1]; ++e )
      moveEntry( e, mRegionAggregate[r], to );
    unplace( r );
    place( r, to );
  }
  for ( const std::size_t a : reformed )
  {
    const AggregateTotals before = mAggregates[a];
    mAggregates[a] = totals( mMembers[a], mSites[a] );
    mScore.suppressed += mAggregates[a].suppressed - before.suppressed;
    mScore.compactness += mAggregates[a].compactness - before.compactness;
    mScore.meanPointCompactness += mAggregates[a].meanPointCompactness - before.meanPointCompactness;
    mScore.releasingNothing += releasesNothing( mAggregates[a].records, mAggregates[a].suppressed );
    mScore.releasingNothing -= releasesNothing( before.records, before.suppressed );
    if ( mCut && !regions.empty() )
      cutEcs( mMembers[a], 1 );
  }
  if ( !mCut )
    return;
  const std::int64_t cut = mCut->records();
  mScore.suppressed += cut - mCutRecords;
  mCutRecords = cut;
}

Partition::Change Partition::recentre( std::size_t a ) const
{
  Point site;
  Change change;
  change.compactness = totals( mMembers[a], site ).compactness - mAggregates[a].compactness;
  change.allowed = allowed( change );
  return change;
}

bool Partition::keepsBounds() const
{
  const auto withinRecords = [this]( const AggregateTotals &t ) { return t.records >= mConstraints.minRecords && t.records <= mConstraints.maxRecords; };
  return mScore.meanPointCompactness <= mConstraints.maxMeanPointCompactness && mScore.releasingNothing <= mConstraints.maxReleasingNothing
         && std::all_of( mAggregates.begin(), mAggregates.end(), withinRecords );
}

void Partition::applyRecentre( std::size_t a )
{
  applyReform( {}, { a } );
}

void Partition::place( std::size_t r, std::size_t a )
{
  mRegionAggregate[r] = a;
  mPosition[r] = mMembers[a].size();
  mMembers[a].push_back( r );
}

void Partition::unplace( std::size_t r )
{
  std::vector<std::size_t> &m = mMembers[mRegionAggregate[r]];
  const std::size_t last = m.back();
  m[mPosition[r]] = last;
  mPosition[last] = mPosition[r];
  m.pop_back();
}

/**
 * Whether r's aggregate keeps its pieces without r: the regions of the aggregate that border r are
 * still connected to one another within the aggregate once r is gone. A breadth-first search over the
 * aggregate's regions from one of them, which stops once it has reached them all.
 */
bool Partition::keepsPieces( std::size_t r )
{
  ++mStamp;
  const std::size_t aggregate = mRegionAggregate[r];
  std::size_t targets = 0;
  for ( std::size_t e = mAdjacency.offsets[r]; e < mAdjacency.offsets[r + 1]; ++e )
  {
    const std::size_t n = mAdjacency.neighbours[e];
    if ( mRegionAggregate[n] == aggregate && mTarget[n] != mStamp )
    {
      mTarget[n] = mStamp;
      ++targets;
      mQueue.assign( 1, n );
    }
  }
  if ( targets <= 1 ) // r is a piece of its own, which goes, or no path within the aggregate runs through it
    return true;
  mSeen[r] = mStamp;
  mSeen[mQueue.front()] = mStamp;
  std::size_t reached = 1;
  for ( std::size_t i = 0; i < mQueue.size() && reached < targets; ++i )
  {
    const std::size_t q = mQueue[i];
    for ( std::size_t e = mAdjacency.offsets[q]; e < mAdjacency.offsets[q + 1]; ++e )
    {
      const std::size_t n = mAdjacency.neighbours[e];
      if ( mRegionAggregate[n] != aggregate || mSeen[n] == mStamp )
        continue;
      mSeen[n] = mStamp;
      reached += mTarget[n] == mStamp;
      mQueue.push_back( n );
    }
  }
  return reached == targets;
}

} // namespace vbas
