#include "plugin/pipeline/vbascandidates.h"

#include "plugin/pipeline/vbasgeneralization.h"
#include "plugin/pipeline/vbaspartitionsearch.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbasjobs.h"

#include "algorithms/aggregation/baseline.h"
#include "algorithms/aggregation/release.h"

#include <qgsexception.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>

#include <QElapsedTimer>
#include <QRegularExpression>
#include <QThreadPool>

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

//! RISK_VALUES: numbers above 0 and at most 1, separated by commas or spaces, increasing and each once.
QList<double> riskValues( const QString &text )
{
  QList<double> values;
  for ( const QString &word : text.split( QRegularExpression( QStringLiteral( "[,;\\s]+" ) ), Qt::SkipEmptyParts ) )
  {
    bool ok = false;
    const double value = word.toDouble( &ok );
    if ( !ok || !( value > 0 && value <= 1 ) )
      throw QgsProcessingException( QObject::tr( "RISK_VALUES holds '%1', which is not a risk above 0 and at most 1." ).arg( word ) );
    if ( !values.contains( value ) )
      values << value;
  }
  std::sort( values.begin(), values.end() );
  return values;
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

const char *const kMethodIds[] = { "balanced_density", "adc", "search", "generalization", "generalization_local" };
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
    case VbasCandidateSettings::Method::Generalization:
      return QObject::tr( "the QIs generalized" );
    case VbasCandidateSettings::Method::GeneralizationLocalSuppression:
      return QObject::tr( "the QIs generalized, with local suppression" );
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

//! The site of each group of a baseline: the mean of its regions' points (docs/method.md, "Comparing candidate releases").
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
  for ( std::size_t a = 0; a < aggregates; ++a )
    sums[a] = { sums[a].x / counts[a], sums[a].y / counts[a] };
  return sums;
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
vbas::MetricValues measured( const VbasRegions &regions, const VbasRecords &records, const std::vector<vbas::Point> &sites, const vbas::Release &release, std::int64_t k, double riskThreshold,
                             double seconds, const VbasPopulation *population )
{
  std::vector<vbas::Point> regionSites;
  for ( const std::size_t s : release.regionAggregate )
    regionSites.push_back( sites[s] );
  QgsProcessingFeedback quiet;
  return vbasMeasure( regions, records, regionSites, release, k, riskThreshold, seconds, &quiet, population ).values;
}

//! What a candidate must meet: RISK_MODEL at its k and, under the average risk model, its threshold.
struct Target
{
    VbasReleaseSettings release;
    double evaluationThreshold; //!< the RISK_THRESHOLD it is measured with: the model's own under the average risk model

    Target( const VbasCandidateSettings &settings, std::int64_t k, std::optional<double> threshold )
      : release( settings.release )
      , evaluationThreshold( threshold.value_or( settings.riskThreshold ) )
    {
      release.k = k;
      if ( threshold )
        release.averageThreshold = *threshold;
    }
    std::optional<double> threshold() const { return release.model == VbasReleaseSettings::Model::AverageRisk ? std::optional<double>( release.averageThreshold ) : std::nullopt; }
    //! A candidate named "k = 5, <what>" (", average risk at most 0.05" under that model), no command yet.
    VbasCandidate candidate( const QString &what, const char *kind, std::size_t units ) const
    {
      const QString at = threshold() ? QObject::tr( "k = %1, average risk at most %2" ).arg( release.k ).arg( *threshold() ) : QObject::tr( "k = %1" ).arg( release.k );
      VbasCandidate c { QStringLiteral( "%1, %2" ).arg( at, what ), release.k, QString::fromLatin1( kind ), units };
      c.threshold = threshold();
      return c;
    }
};

//! A candidate of METHODS, its name logged.
VbasCandidate named( VbasCandidateSettings::Method method, const Target &target, std::size_t sites, int number, QgsProcessingFeedback *feedback )
{
  VbasInterrupt::throwIfCanceled( feedback );
  VbasCandidate c = target.candidate( methodName( method ), kMethodIds[static_cast<int>( method )], sites );
  c.anonymize.insert( QStringLiteral( "K" ), static_cast<qlonglong>( c.k ) ); // what Anonymize's command sets of the target
  if ( c.threshold )
    c.anonymize.insert( QStringLiteral( "RISK_THRESHOLD" ), *c.threshold );
  feedback->pushInfo( QObject::tr( "Candidate %1: %2." ).arg( number ).arg( c.name ) );
  return c;
}

//! An aggregation of METHODS at target, from the sites placed by balanced density (density) or by ADC.
VbasCandidate aggregation( const VbasCandidateSettings &settings, VbasCandidateSettings::Method method, const Target &target, const VbasPlacement &density, const VbasComparedInputs &in, int number,
                           QgsProcessingFeedback *feedback )
{
  VbasCandidate c = named( method, target, density.sites.size(), number, feedback );
  QElapsedTimer timer;
  timer.start();
  const vbas::Criterion criterion = target.release.criterion();
  const bool adc = method == VbasCandidateSettings::Method::Adc;
  VbasBorderSteps steps;
  steps.search = method == VbasCandidateSettings::Method::Search;
  steps.timeLimit = settings.timeLimit;
  steps.maxMoves = settings.maxMoves > 0 ? settings.maxMoves : std::numeric_limits<std::uint64_t>::max();
  steps.seed = settings.seed;
  VbasAggregated a;
  if ( adc )
  {
    VbasPlacementSettings placement;
    placement.method = VbasPlacementSettings::Method::Adc;
    placement.adc.objective = vbas::AdcObjective::Suppression;
    placement.adc.criterion = criterion;
    placement.adc.maxMoves = settings.adcMoves;
    placement.seed = settings.seed;
    a = vbasAggregate( placement, VbasConstraintSettings(), steps, in.regions, in.records, density.sites.size(), criterion, feedback );
  }
  else
    a = vbasAggregatePlaced( density, VbasConstraintSettings(), steps, in.regions, in.records, criterion, feedback );
  const vbas::Release &release = a.bordered.release;
  c.values = measured( in.regions, in.records, a.bordered.sites, release, c.k, target.evaluationThreshold, timer.elapsed() / 1000.0, in.population );
  c.loss = vbasLossOutputs( vbasReleaseLoss( in.records, release ) );
  c.unitsInPieces = a.bordered.aggregatesInPieces;
  c.unitsReleasingNothing = vbas::releasingNothing( release.aggregation.ecs, release.suppression );
  c.anonymize.insert( { { QStringLiteral( "METHOD" ), adc ? 1 : 0 }, { QStringLiteral( "OBJECTIVE" ), adc ? 1 : 0 }, { QStringLiteral( "SEARCH" ), steps.search } } );
  if ( steps.search )
  {
    c.anonymize.insert( QStringLiteral( "TIME_LIMIT" ), settings.timeLimit );
    c.anonymize.insert( QStringLiteral( "SEARCH_MOVES" ), static_cast<qlonglong>( settings.maxMoves ) );
  }
  return c;
}

/**
 * A generalization of METHODS at target, as Anonymize with GENERALIZE makes it (docs/generalization.md);
 * nothing when no node keeps the suppression limit (a warning says so).
 */
std::optional<VbasCandidate> generalization( const VbasCandidateSettings &settings, VbasCandidateSettings::Method method, const Target &target, const VbasComparedInputs &in, int number,
                                             QgsProcessingFeedback *feedback )
{
  VbasCandidate c = named( method, target, 0, number, feedback );
  QElapsedTimer timer;
  timer.start();
  VbasGeneralizationSettings generalization = settings.generalization;
  generalization.localSuppression = method == VbasCandidateSettings::Method::GeneralizationLocalSuppression;
  VbasPlacementSettings placement;
  placement.seed = settings.seed;
  VbasGeneralized g;
  try
  {
    g = vbasGeneralize( generalization, settings.siteCount, placement, VbasConstraintSettings(), in.regions, in.records, target.release, in.population, settings.qiNames, feedback );
  }
  catch ( const QgsProcessingException &e )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    feedback->pushWarning( QObject::tr( "Candidate %1 left out: %2" ).arg( number ).arg( e.what() ) );
    return std::nullopt;
  }
  std::optional<VbasPopulation> written; // the residents of the classes as written, as Anonymize measures them
  if ( in.population )
  {
    written = *in.population;
    written->cells = g.writtenResidents;
  }
  QgsProcessingFeedback quiet;
  const QVariantMap units = vbasGeneralizedAggregateOutputs( g, in.regions, target.release.criterion(), &quiet );
  c.unitsAsked = g.siteCount.sites;
  c.values = measured( in.regions, g.writtenRecords, g.placement.sites, g.release, c.k, target.evaluationThreshold, timer.elapsed() / 1000.0, written ? &*written : nullptr );
  c.loss = vbasLossOutputs( { g.node().loss, g.metrics } );
  c.unitsInPieces = static_cast<std::size_t>( units.value( QStringLiteral( "UNITS_IN_PIECES" ) ).toLongLong() );
  c.unitsReleasingNothing = static_cast<std::size_t>( units.value( QStringLiteral( "UNITS_RELEASING_NOTHING" ) ).toLongLong() );
  c.levels = g.levels();
  c.anonymize.insert( { { QStringLiteral( "GENERALIZE" ), true }, { QStringLiteral( "LOCAL_SUPPRESSION" ), generalization.localSuppression } } );
  return c;
}

//! A baseline of BASELINES at target: its groups of regions released as they are.
VbasCandidate baselineCandidate( const VbasCandidateSettings &settings, VbasCandidateSettings::Baseline baseline, const Target &target, const VbasComparedInputs &in, QgsProcessingFeedback *feedback )
{
  VbasInterrupt::throwIfCanceled( feedback );
  QElapsedTimer timer;
  timer.start();
  const std::vector<std::size_t> regionAggregate = baselineAggregates( baseline, settings, in.regions, in.parentKeys );
  const vbas::Release release = vbas::release( regionAggregate, in.records.histograms, target.release.criterion() );
  VbasCandidate c = target.candidate( baselineName( baseline, settings ), kBaselineIds[static_cast<int>( baseline )], release.aggregation.aggregateId.size() );
  c.values = measured( in.regions, in.records, meanSites( regionAggregate, in.regions.points ), release, c.k, target.evaluationThreshold, timer.elapsed() / 1000.0, in.population );
  c.loss = vbasLossOutputs( vbasReleaseLoss( in.records, release ) );
  c.unitsReleasingNothing = vbas::releasingNothing( release.aggregation.ecs, release.suppression );
  return c;
}

/**
 * How many candidates to build at once: one per core QGIS lets its background work use, fewer when the
 * memory available would not hold them (said in the log). A candidate's working memory is taken as 250
 * bytes per (region, class) count read, twice what ADC, the largest, took in the benchmark (about 110
 * bytes at 1.6 M counts: docs/benchmarks.md, "Comparing candidate releases").
 */
int atOnce( int candidates, const VbasRecords &records, QgsProcessingFeedback *feedback )
{
  const int cores = std::min( QThreadPool::globalInstance()->maxThreadCount(), candidates );
  const int fitting = vbasJobsAtOnce( cores, vbasAvailableMemory(), 250 * static_cast<std::uint64_t>( records.histograms.classes.size() ) );
  if ( fitting < cores )
    feedback->pushInfo( QObject::tr( "Building %n candidate(s) at once, not %1: the memory available holds about that many.", nullptr, fitting ).arg( cores ) );
  return fitting;
}

//! A candidate of METHODS's rough cost, to start the longest first: the search runs its time limit and ADC's trials take longest, then local suppression's and generalization's nodes, then balanced density's release; each longer at a larger k.
double weight( VbasCandidateSettings::Method method, const Target &target )
{
  const double k = static_cast<double>( target.release.k );
  const double larger = k / ( k + 1 ); // below 1: k orders within a method only
  switch ( method )
  {
    case VbasCandidateSettings::Method::Search:
    case VbasCandidateSettings::Method::Adc:
      return 3 + larger;
    case VbasCandidateSettings::Method::GeneralizationLocalSuppression:
      return 2 + larger;
    case VbasCandidateSettings::Method::Generalization:
      return 1 + larger;
    case VbasCandidateSettings::Method::BalancedDensity:
      return larger;
  }
  return 0;
}

} // namespace

VbasCandidateSettings VbasCandidateSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed,
                                                   const QStringList &qiNames, QList<VbasLocation> &locations )
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
  settings.adcMoves = static_cast<std::uint64_t>( vbasWholeNumber( algorithm, parameters, QStringLiteral( "MAX_ITERATIONS" ), context ) );
  settings.riskThreshold = QgsProcessingParameters::parameterAsDouble( definition( "RISK_THRESHOLD" ), parameters, context );
  settings.seed = seed;
  settings.release = VbasReleaseSettings::read( algorithm, parameters, context );
  settings.thresholds = riskValues( QgsProcessingParameters::parameterAsString( definition( "RISK_VALUES" ), parameters, context ) );
  if ( settings.release.model != VbasReleaseSettings::Model::AverageRisk && !settings.thresholds.isEmpty() )
    throw QgsProcessingException( QObject::tr( "RISK_VALUES are the thresholds of the average risk model: choose RISK_MODEL average risk, or leave RISK_VALUES empty." ) );
  if ( settings.release.model == VbasReleaseSettings::Model::AverageRisk && settings.thresholds.isEmpty() )
    settings.thresholds << settings.release.averageThreshold;
  settings.siteCount = VbasSiteCountSettings::read( algorithm, parameters, context );
  settings.qiNames = qiNames;
  settings.generalization = VbasGeneralizationSettings::read( algorithm, parameters, context, qiNames, locations );
  if ( settings.methods.contains( Method::GeneralizationLocalSuppression ) )
    vbasRefuseLocalSuppression( static_cast<std::size_t>( qiNames.size() ) );
  return settings;
}

bool VbasCandidateSettings::generalizes() const
{
  return methods.contains( Method::Generalization ) || methods.contains( Method::GeneralizationLocalSuppression );
}

double VbasCandidate::measure( const QString &field ) const
{
  if ( field.startsWith( QLatin1String( "loss_" ) ) )
    return loss.value( field.toUpper() ).toDouble();
  return static_cast<double>( vbas::metricValue( values, field.toLatin1().constData() ).value_or( 0 ) );
}

QList<VbasCandidate> vbasCandidates( const VbasCandidateSettings &settings, std::size_t sites, const VbasComparedInputs &in, QgsProcessingFeedback *feedback )
{
  std::optional<VbasPlacement> density; // balanced density does not depend on k: placed once
  if ( !settings.methods.isEmpty() )
  {
    VbasPlacementSettings placement;
    placement.seed = settings.seed;
    density = vbasPlaceSites( placement, VbasConstraintSettings(), in.regions, in.records, sites, feedback );
  }
  QList<std::optional<double>> thresholds; // the average risk model's, or none
  for ( const double t : settings.thresholds )
    thresholds << t;
  if ( thresholds.isEmpty() )
    thresholds << std::nullopt;
  std::vector<Target> targets;
  for ( const std::int64_t k : settings.ks )
    for ( const std::optional<double> &threshold : thresholds )
      targets.emplace_back( settings, k, threshold );
  // Each candidate is a job of its own, into its own place: they share only what was read (and density's sites)
  std::vector<std::optional<VbasCandidate>> made( targets.size() * static_cast<std::size_t>( settings.methods.size() + settings.baselines.size() ) );
  std::vector<VbasJob> jobs;
  for ( const Target &target : targets )
  {
    const Target *t = &target; // the jobs capture places that outlive them: made's slot i, and t
    for ( const VbasCandidateSettings::Method method : settings.methods )
    {
      const std::size_t i = jobs.size();
      const int number = static_cast<int>( i ) + 1;
      if ( method == VbasCandidateSettings::Method::Generalization || method == VbasCandidateSettings::Method::GeneralizationLocalSuppression )
        jobs.push_back( { [&, t, i, method, number]( QgsProcessingFeedback *f ) { made[i] = generalization( settings, method, *t, in, number, f ); }, weight( method, target ) } );
      else
        jobs.push_back( { [&, t, i, method, number]( QgsProcessingFeedback *f ) { made[i] = aggregation( settings, method, *t, *density, in, number, f ); }, weight( method, target ) } );
    }
    for ( const VbasCandidateSettings::Baseline baseline : settings.baselines )
    {
      const std::size_t i = jobs.size();
      jobs.push_back( { [&, t, i, baseline]( QgsProcessingFeedback *f ) { made[i] = baselineCandidate( settings, baseline, *t, in, f ); } } );
    }
  }
  vbasRunJobs( jobs, feedback, atOnce( static_cast<int>( jobs.size() ), in.records, feedback ) );
  QList<VbasCandidate> candidates;
  for ( std::optional<VbasCandidate> &c : made )
    if ( c )
      candidates << std::move( *c );
  return candidates;
}
