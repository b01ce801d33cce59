#include "plugin/outputs/vbasreleaserecount.h"

#include "plugin/inputs/vbastablerecount.h"
#include "plugin/outputs/vbasoutput.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgsexception.h>
#include <qgsfields.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingutils.h>
#include <qgsvectorlayer.h>

#include "algorithms/risk/population_risk.h"

#include <algorithm>
#include <map>
#include <optional>

namespace
{

//! What the release says it holds: its records, its released classes and the records of the smallest.
struct Expected
{
    std::int64_t records = 0;
    std::size_t classes = 0;
    std::optional<std::int64_t> smallest;
};

Expected expected( const vbas::Release &release )
{
  Expected e;
  e.records = release.suppression.releasedRecords;
  const vbas::SparseHistograms &ecs = release.aggregation.ecs;
  for ( std::size_t entry = 0; entry < ecs.counts.size(); ++entry )
    if ( !release.suppression.suppressed[entry] && ecs.counts[entry] > 0 )
    {
      ++e.classes;
      e.smallest = std::min( e.smallest.value_or( ecs.counts[entry] ), ecs.counts[entry] );
    }
  return e;
}

QString shown( const std::optional<std::int64_t> &value )
{
  return value ? QString::number( *value ) : QObject::tr( "none" );
}

//! The QI fields, as the release declares them, whose kind a destination may store two different values of alike (named; "none" when none is).
QString mayStoreAlike( const QgsFields &fields, const QStringList &qiNames )
{
  QStringList named;
  for ( const QString &name : qiNames )
  {
    const int i = fields.lookupField( name );
    if ( i < 0 )
      continue;
    const vbasqgis::FieldType type = fields.at( i ).type();
    using namespace vbasqgis::Field;
    if ( type == Double || type == DateTime || type == Time || type == List || type == StringList || type == Map )
      named << name;
  }
  return named.isEmpty() ? QObject::tr( "none" ) : named.join( QStringLiteral( ", " ) );
}

/**
 * The recount's report of the release written to layer, refused when a class holds fewer than k
 * records: named by its aggregate and records alone (never its QI values: the log is read by others).
 */
vbas::AnonymityReport recountLayer( QgsVectorLayer &layer, const QStringList &qiNames, const QString &countField, std::int64_t k, QgsProcessingContext &context )
{
  QgsProcessingFeatureSource source( &layer, context, false );
  QgsAttributeList keyed;
  for ( const QString &name : qiNames + QStringList { QStringLiteral( "aggregate_id" ) } )
    keyed << source.fields().lookupField( name );
  if ( keyed.contains( -1 ) )
    throw QgsProcessingException(
      QObject::tr( "The release as written lacks one of the fields %1 and aggregate_id: it cannot be recounted. Nothing was written." ).arg( qiNames.join( QStringLiteral( ", " ) ) ) );
  // The table just written, read whole: its rows as stored, with no list of QGIS's feature ids first.
  VbasTableRecount recount( source, &layer, keyed, countField.isEmpty() ? -1 : source.fields().lookupField( countField ), -1, false, VbasStoredValues::Rows::EveryStored );
  QgsProcessingFeedback quiet; // the recount's own log lines would read as the run's
  const vbas::AnonymityReport report = recount.recount( &quiet ).report( { k, 1, 1 } );
  if ( !report.violations.empty() )
    throw QgsProcessingException( QObject::tr( "The recount of the release as written found %1 class(es) below k = %2 (the first in aggregate %3, with %4 record(s)) where the run counted "
                                               "none: this is a fault of VBAS, please report it with the run's log. Nothing was written." )
                                    .arg( report.violatingEcs )
                                    .arg( k )
                                    .arg( recount.decodeKey( report.violations.front().key ).constLast().toString() )
                                    .arg( report.violations.front().records ) );
  return report;
}

//! Each released class's records and residents, the residents summed from cells over its aggregate's regions with a map of its own (not suppression's aggregation).
std::vector<vbas::ClassPopulation> releasedResidents( const vbas::Release &release, const vbas::SparseHistograms &cells )
{
  std::map<std::pair<std::size_t, std::uint32_t>, double> residents;
  for ( std::size_t r = 0; r < cells.rows(); ++r )
    for ( std::size_t e = cells.offsets[r]; e < cells.offsets[r + 1]; ++e )
      residents[{ release.aggregation.regionAggregateIndex[r], cells.classes[e] }] += static_cast<double>( cells.counts[e] );
  const vbas::SparseHistograms &ecs = release.aggregation.ecs;
  std::vector<vbas::ClassPopulation> classes;
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
      if ( !release.suppression.suppressed[e] )
        classes.push_back( { ecs.counts[e], residents[{ a, ecs.classes[e] }] } );
  return classes;
}

/**
 * The criterion's residents recounted (docs/outputs.md, "The release is recounted before it is kept"):
 * under k-map every released class's residents (vbas::firstBelowKMap), under the average risk model the
 * released records' average risk: the journalist's (vbas::populationRisk) over the table's residents,
 * or the prosecutor's from the recount of the release as written, its classes over its records. A
 * failure is refused, named by counts alone.
 */
void recountCriterion( const vbas::Release &release, const vbas::Criterion &criterion, const vbas::AnonymityReport &written )
{
  const QString fault = QObject::tr( " where the run counted none: this is a fault of VBAS, please report it with the run's log. Nothing was written." );
  if ( criterion.residents )
  {
    const std::vector<vbas::ClassPopulation> classes = releasedResidents( release, *criterion.residents );
    const std::ptrdiff_t first = vbas::firstBelowKMap( classes, static_cast<double>( criterion.k ) );
    if ( first >= 0 )
      throw QgsProcessingException( QObject::tr( "The recount of the release found a released class with fewer than k = %1 residents (%2 resident(s), %3 record(s))" )
                                      .arg( criterion.k )
                                      .arg( classes[static_cast<std::size_t>( first )].residents )
                                      .arg( classes[static_cast<std::size_t>( first )].records )
                                    + fault );
  }
  if ( criterion.averageThreshold >= 1 || written.records == 0 )
    return;
  const double average = criterion.averagePopulation ? vbas::populationRisk( releasedResidents( release, *criterion.averagePopulation ), criterion.averageThreshold ).journalistAverage
                                                     : static_cast<double>( written.ecs ) / static_cast<double>( written.records );
  if ( average > criterion.averageThreshold * ( 1 + vbas::kAverageRiskTolerance ) )
    throw QgsProcessingException( QObject::tr( "The recount of the release found an average risk of %1, above the stated %2," ).arg( average ).arg( criterion.averageThreshold ) + fault );
}

} // namespace

void vbasRecountRelease( const VbasOutput &anonymized, const QStringList &qiNames, const QString &countField, const vbas::Release &release, const vbas::Criterion &criterion,
                         QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  VbasInterrupt::throwIfCanceled( feedback );
  std::optional<vbas::AnonymityReport> report;
  // Under k-map a released class may hold fewer than k records: its records are recounted, and its residents after.
  const std::int64_t k = criterion.residents ? 1 : criterion.k;
  anonymized.readWritten( [&]( QgsVectorLayer &layer ) { report = recountLayer( layer, qiNames, countField, k, context ); } );
  const Expected e = expected( release );
  // A destination may store different values alike (-0 and 0, one instant at two UTC offsets, a list
  // as its JSON text): its classes then join whole classes of the run. The release would still be
  // k-anonymous, but the run's numbers would count classes that were never written, so it is refused
  // (docs/outputs.md, "The release is recounted before it is kept").
  if ( report->records == e.records && report->ecs < e.classes && report->smallestEc >= e.smallest )
    throw QgsProcessingException( QObject::tr( "The destination of the release stores some different QI values alike, so the release as written would hold %1 classes, the smallest of %2, "
                                               "where the run counted %3, the smallest of %4, and the run's numbers would describe classes that were never written. Nothing was written. "
                                               "QI fields of a kind a destination may store alike (-0 and 0, one date and time at two UTC offsets, numbers beyond its precision, a list as its "
                                               "text): %5. Make such values one in the records (with the Field calculator, say) or write the release to a format that keeps them apart." )
                                    .arg( report->ecs )
                                    .arg( shown( report->smallestEc ) )
                                    .arg( e.classes )
                                    .arg( shown( e.smallest ) )
                                    .arg( mayStoreAlike( anonymized.fields(), qiNames ) ) );
  if ( report->records != e.records || report->ecs != e.classes || report->smallestEc != e.smallest )
    throw QgsProcessingException( QObject::tr( "The recount of the release as written differs from the run's own count: %1 records in %2 classes, the smallest of %3, where the run "
                                               "counted %4 records in %5 classes, the smallest of %6. This is a fault of VBAS, please report it with the run's log. Nothing was written." )
                                    .arg( report->records )
                                    .arg( report->ecs )
                                    .arg( shown( report->smallestEc ) )
                                    .arg( e.records )
                                    .arg( e.classes )
                                    .arg( shown( e.smallest ) ) );
  recountCriterion( release, criterion, *report );
  feedback->pushInfo( QObject::tr( "The release as written, recounted from its stored values: %1 records in %2 classes, the smallest of %3, as the run counted%4." )
                        .arg( report->records )
                        .arg( report->ecs )
                        .arg( shown( report->smallestEc ) )
                        .arg( criterion.residents              ? QObject::tr( "; every class has at least k = %1 residents in the population table" ).arg( criterion.k )
                              : criterion.averageThreshold < 1 ? QObject::tr( "; the average risk is at most %1" ).arg( criterion.averageThreshold )
                                                               : QString() ) );
}
