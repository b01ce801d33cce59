#include "algorithms/metrics/anonymity_check.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace vbas
{

AnonymityCheck::AnonymityCheck( bool withSensitive )
  : mWithSensitive( withSensitive )
{
}

void AnonymityCheck::add( std::string_view ecKey, std::string_view sensitiveKey, std::int64_t records )
{
  if ( records < 0 )
    throw std::invalid_argument( "a row cannot stand for fewer than 0 records" );
  if ( records == 0 )
    return;
  std::int64_t total = 0;
  if ( __builtin_add_overflow( mRecords, records, &total ) )
    throw std::overflow_error( "the records add up to more than 2^63 - 1" );
  mRecords = total;
  const std::uint32_t ec = mEcIndex.insert( ecKey ); // a flat index: a lookup allocates nothing
  if ( ec == mEcs.size() )
    mEcs.emplace_back();
  Ec &counts = mEcs[ec];
  counts.records += records;
  if ( !mWithSensitive )
    return;
  const std::uint32_t value = mValueIndex.insert( sensitiveKey );
  if ( value == mValueRecords.size() )
    mValueRecords.push_back( 0 );
  mValueRecords[value] += records;
  counts.values[value] += records;
}

// t-closeness: the earth mover's distance with the same ground distance between any two
// values is the total variation distance, 0.5 * sum_v |p_v - q_v| over the values v of the table,
// p the EC's distribution and q the table's, both weighted by records.
double AnonymityCheck::distance( const Ec &ec ) const
{
  const double n = static_cast<double>( ec.records );
  const double total = static_cast<double>( mRecords );
  double sum = 0;
  std::int64_t tableRecordsOfEcValues = 0;
  for ( const auto &[value, records] : ec.values )
  {
    sum += std::abs( static_cast<double>( records ) / n - static_cast<double>( mValueRecords[value] ) / total );
    tableRecordsOfEcValues += mValueRecords[value];
  }
  // The values absent from the EC: |0 - q_v| = q_v, together the table's other records.
  sum += static_cast<double>( mRecords - tableRecordsOfEcValues ) / total;
  return sum / 2;
}

EcMeasures AnonymityCheck::measure( const Ec &ec, const AnonymityThresholds &thresholds ) const
{
  EcMeasures m;
  m.records = ec.records;
  m.violatesK = ec.records < thresholds.k; // k-anonymity: every EC holds k records or more
  if ( !mWithSensitive )
    return m;
  m.l = static_cast<std::int64_t>( ec.values.size() ); // distinct l-diversity
  m.t = distance( ec );
  m.violatesL = m.l < thresholds.l;
  m.violatesT = m.t > thresholds.t + kClosenessTolerance;
  return m;
}

AnonymityReport AnonymityCheck::report( const AnonymityThresholds &thresholds ) const
{
  AnonymityReport report;
  report.records = mRecords;
  report.ecs = mEcs.size();
  for ( const Ec &ec : mEcs )
  {
    EcMeasures m = measure( ec, thresholds );
    report.smallestEc = std::min( report.smallestEc.value_or( m.records ), m.records );
    if ( mWithSensitive )
    {
      report.smallestL = std::min( report.smallestL.value_or( m.l ), m.l );
      report.largestT = std::max( report.largestT.value_or( m.t ), m.t );
    }
    if ( !m.violates() )
      continue;
    ++report.violatingEcs;
    report.violatingRecords += m.records;
    m.key = mEcIndex.text( static_cast<std::uint32_t>( &ec - mEcs.data() ) ); // only the violating ECs' keys are copied
    report.violations.push_back( std::move( m ) );
  }
  return report;
}

} // namespace vbas
