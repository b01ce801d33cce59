#include "plugin/pipeline/vbascandidates.h"

#include "plugin/pipeline/vbasgeneralization.h"
#include "plugin/pipeline/vbaspartitionsearch.h"
#include "plugin/support/vbasinterrupt.h"

#include "algorithms/aggregation/baseline.h"
#include "algorithms/aggregation/release.h"

#include <qgsexception.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>

#include <QElapsedTimer>
#include <QRegularExpression>

#include <algorithm>
#include <limits>

namespace
{

//! K_VALUES: whole numbers of at least 2, separated by commas or spaces, increasing and each once.
QList<std::int64_t> kValues( const QString &text )
{
  QList<std::int64_t> ks;
  for ( const QString &word : text.split( QRegularExpression( QStringLiteral( "[,;\\s]+" ) ), Qt::SkipEmptyParts ) )
  {
    bool ok = false;
    const qlonglong k = word.toLongLong( &ok );
    if ( !ok || k < 2 )
      throw QgsProcessingException( QObject::tr( "K_VALUES holds '%1', which is not a whole number of at least 2." ).arg( word ) );
    if ( !ks.contains( k ) )
      ks << k;
  }
  if ( ks.isEmpty() )
    throw QgsProcessingException( QObject::tr( "K_VALUES holds no k: give one or more, as in 5, 10, 20." ) );
  std::sort( ks.begin(), ks.end() );
  return ks;
}

template<typename Option>
QList<Option> options( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context )
{
  QList<Option> chosen;
  for ( const int i : QgsProcessingParameters::parameterAsEnums( algorithm.parameterDefinition( name ), parameters, context ) )
    chosen << static_cast<Option>( i );
  std::sort( chosen.begin(), chosen.end() );
  return chosen;
}

const char *const kMethodIds[] = { "balanced_density", "adc", "search" };
const char *const kBaselineIds[] = { "regions", "parent", "cropped", "safe_harbor", "no_geography" };

QString methodName( VbasCandidateSettings::Method method )
{
  switch ( method )
  {
    case VbasCandidateSettings::Method::BalancedDensity:
      return QObject::tr( "balanced density (the paper)" );
    case VbasCandidateSettings::Method::Adc:
      return QObject::tr( "ADC (fewest suppressed)" );
    case VbasCandidateSettings::Method::Search:
      return QObject::tr( "balanced density and the suppression search" );
  }
  return QString();
}

QString baselineName( VbasCandidateSettings::Baseline baseline, const VbasCandidateSettings &settings )
{
  switch ( baseline )
  {
    case VbasCandidateSettings::Baseline::Regions:
      return QObject::tr( "the regions, unaggregated" );
    case VbasCandidateSettings::Baseline::Parent:
      return QObject::tr( "the parent geography (%1)" ).arg( settings.parentField );
    case VbasCandidateSettings::Baseline::Cropped:
      return QObject::tr( "region ids cropped to %n character(s)", nullptr, settings.cropLength );
    case VbasCandidateSettings::Baseline::SafeHarbor:
      return QObject::tr( "Safe Harbor's 3-digit ZIP codes (20,000 residents or fewer merged)" );
    case VbasCandidateSettings::Baseline::NoGeography:
      return QObject::tr( "no geography" );
  }
  return QString();
}

//! The site of each aggregate of a baseline: the mean of its region points, as the site of each region.
std::vector<vbas::Point> meanSites( const std::vector<std::size_t> &regionAggregate, const std::vector<vbas::Point> &points )
{
  const std::size_t aggregates = regionAggregate.empty() ? 0 : *std::max_element( regionAggregate.begin(), regionAggregate.end() ) + 1;
  std::vector<vbas::Point> sums( aggregates );
  std::vector<double> counts( aggregates, 0 );
  for ( std::size_t r = 0; r < regionAggregate.size(); ++r )
  {
    sums[regionAggregate[r]].x += points[r].x;
    sums[regionAggregate[r]].y += points[r].y;
    counts[regionAggregate[r]] += 1;
  }
  std::vector<vbas::Point> regionSites;
  for ( const std::size_t a : regionAggregate )
    regionSites.push_back( { sums[a].x / counts[a], sums[a].y / counts[a] } );
  return regionSites;
}

//! Each region's id cropped to its first `length` characters.
std::vector<std::string> croppedIds( const VbasRegions &regions, int length )
{
  std::vector<std::string> keys;
  for ( const QVariant &id : regions.ids )
    keys.push_back( id.toString().left( length ).toStdString() );
  return keys;
}

std::vector<std::size_t> baselineAggregates( VbasCandidateSettings::Baseline baseline, const VbasCandidateSettings &settings, const VbasRegions &regions, const std::vector<std::string> &parentKeys )
{
  const std::size_t n = regions.points.size();
  switch ( baseline )
  {
    case VbasCandidateSettings::Baseline::Regions:
      return vbas::eachRegionAlone( n );
    case VbasCandidateSettings::Baseline::Parent:
      return vbas::groupByKey( parentKeys );
    case VbasCandidateSettings::Baseline::Cropped:
      return vbas::groupByKey( croppedIds( regions, settings.cropLength ) );
    case VbasCandidateSettings::Baseline::SafeHarbor:
      return vbas::mergeSparse( vbas::groupByKey( croppedIds( regions, 3 ) ), regions.population, 20000 );
    case VbasCandidateSettings::Baseline::NoGeography:
      return vbas::oneAggregate( n );
  }
  return {};
}

//! The measures of a candidate's release, as vbas:evaluate takes them (its own log kept quiet: a comparison measures many).
vbas::MetricValues measured( const VbasRegions &regions, const VbasRecords &records, const std::vector<vbas::Point> &regionSites, const vbas::Release &release, std::int64_t k, double riskThreshold,
                             double seconds )
{
  QgsProcessingFeedback quiet;
  return vbasMeasure( regions, records, regionSites, release, k, riskThreshold, seconds, &quiet ).values;
}

} // namespace

VbasCandidateSettings VbasCandidateSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed )
{
  const auto definition = [&]( const char *name ) { return algorithm.parameterDefinition( QString::fromLatin1( name ) ); };
  VbasCandidateSettings settings;
  settings.ks = kValues( QgsProcessingParameters::parameterAsString( definition( "K_VALUES" ), parameters, context ) );
  settings.methods = options<Method>( algorithm, parameters, QStringLiteral( "METHODS" ), context );
  settings.baselines = options<Baseline>( algorithm, parameters, QStringLiteral( "BASELINES" ), context );
  if ( settings.methods.isEmpty() && settings.baselines.isEmpty() )
    throw QgsProcessingException( QObject::tr( "Nothing to compare: choose one or more METHODS or BASELINES." ) );
  settings.parentField = QgsProcessingParameters::parameterAsString( definition( "PARENT_FIELD" ), parameters, context );
  if ( settings.baselines.contains( Baseline::Parent ) && settings.parentField.isEmpty() )
    throw QgsProcessingException( QObject::tr( "The parent geography baseline groups the regions by a field of REGIONS: give PARENT_FIELD (a county or health region field, say)." ) );
  settings.cropLength = QgsProcessingParameters::parameterAsInt( definition( "CROP_LENGTH" ), parameters, context );
  if ( settings.baselines.contains( Baseline::SafeHarbor ) && QgsProcessingParameters::parameterAsString( definition( "POPULATION_FIELD" ), parameters, context ).isEmpty() )
    throw QgsProcessingException( QObject::tr( "The Safe Harbor baseline merges the 3-digit ZIP codes of 20,000 residents or fewer: give the regions' residents as POPULATION_FIELD." ) );
  settings.timeLimit = QgsProcessingParameters::parameterAsDouble( definition( "TIME_LIMIT" ), parameters, context );
  settings.maxMoves = static_cast<std::uint64_t>( vbasWholeNumber( algorithm, parameters, QStringLiteral( "SEARCH_MOVES" ), context ) );
  settings.riskThreshold = QgsProcessingParameters::parameterAsDouble( definition( "RISK_THRESHOLD" ), parameters, context );
  settings.seed = seed;
  return settings;
}

QList<VbasCandidate> vbasCandidates( const VbasCandidateSettings &settings, std::size_t sites, const VbasRegions &regions, const VbasRecords &records, const std::vector<std::string> &parentKeys,
                                     QgsProcessingFeedback *feedback )
{
  QList<VbasCandidate> candidates;
  for ( const std::int64_t k : settings.ks )
  {
    const vbas::Criterion criterion( k );
    for ( const VbasCandidateSettings::Method method : settings.methods )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      VbasCandidate c { QObject::tr( "k = %1, %2" ).arg( k ).arg( methodName( method ) ), k, QString::fromLatin1( kMethodIds[static_cast<int>( method )] ), sites };
      feedback->pushInfo( QObject::tr( "Candidate %1: %2." ).arg( candidates.size() + 1 ).arg( c.name ) );
      QElapsedTimer timer;
      timer.start();
      VbasPlacementSettings placement;
      placement.method = method == VbasCandidateSettings::Method::Adc ? VbasPlacementSettings::Method::Adc : VbasPlacementSettings::Method::BalancedDensity;
      placement.adc.objective = vbas::AdcObjective::Suppression;
      placement.adc.criterion = criterion;
      placement.seed = settings.seed;
      VbasBorderSteps steps;
      steps.search = method == VbasCandidateSettings::Method::Search;
      steps.timeLimit = settings.timeLimit;
      steps.maxMoves = settings.maxMoves > 0 ? settings.maxMoves : std::numeric_limits<std::uint64_t>::max();
      steps.seed = settings.seed;
      const VbasAggregated a = vbasAggregate( placement, VbasConstraintSettings(), steps, regions, records, sites, criterion, feedback );
      const vbas::Release &release = a.bordered.release;
      std::vector<vbas::Point> regionSites;
      for ( const std::size_t s : release.regionAggregate )
        regionSites.push_back( a.bordered.sites[s] );
      c.values = measured( regions, records, regionSites, release, k, settings.riskThreshold, timer.elapsed() / 1000.0 );
      c.loss = vbasLossOutputs( vbasReleaseLoss( records, release ) );
      c.unitsInPieces = a.bordered.aggregatesInPieces;
      c.unitsReleasingNothing = vbas::releasingNothing( release.aggregation.ecs, release.suppression );
      c.anonymize = { { QStringLiteral( "K" ), static_cast<qlonglong>( k ) },
                      { QStringLiteral( "METHOD" ), method == VbasCandidateSettings::Method::Adc ? 1 : 0 },
                      { QStringLiteral( "OBJECTIVE" ), method == VbasCandidateSettings::Method::Adc ? 1 : 0 },
                      { QStringLiteral( "SEARCH" ), steps.search } };
      if ( steps.search )
      {
        c.anonymize.insert( QStringLiteral( "TIME_LIMIT" ), settings.timeLimit );
        c.anonymize.insert( QStringLiteral( "SEARCH_MOVES" ), static_cast<qlonglong>( settings.maxMoves ) );
      }
      candidates << c;
    }
    for ( const VbasCandidateSettings::Baseline baseline : settings.baselines )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      QElapsedTimer timer;
      timer.start();
      const std::vector<std::size_t> regionAggregate = baselineAggregates( baseline, settings, regions, parentKeys );
      const vbas::Release release = vbas::release( regionAggregate, records.histograms, criterion );
      VbasCandidate c { QObject::tr( "k = %1, %2" ).arg( k ).arg( baselineName( baseline, settings ) ), k, QString::fromLatin1( kBaselineIds[static_cast<int>( baseline )] ),
                        release.aggregation.aggregateId.size() };
      c.values = measured( regions, records, meanSites( regionAggregate, regions.points ), release, k, settings.riskThreshold, timer.elapsed() / 1000.0 );
      c.loss = vbasLossOutputs( vbasReleaseLoss( records, release ) );
      c.unitsReleasingNothing = vbas::releasingNothing( release.aggregation.ecs, release.suppression );
      candidates << c;
    }
  }
  return candidates;
}
