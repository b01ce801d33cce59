#include "plugin/support/vbasqgiscompat.h"
#include "plugin/pipeline/vbassteps.h"

#include "algorithms/aggregation/aggregation.h"
#include "plugin/support/vbasinterrupt.h"

#include <qgsexception.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>

#include <QRandomGenerator>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace
{

const QgsProcessingParameterDefinition *definition( const QgsProcessingAlgorithm &algorithm, const QString &name )
{
  return algorithm.parameterDefinition( name );
}

//! A number parameter's value as the user wrote it, for messages.
QString asGiven( const QVariant &value )
{
  return value.canConvert<QgsProperty>() ? value.value<QgsProperty>().valueAsString( QgsExpressionContext() ) : value.toString();
}

//! The largest seed: every whole number up to 2^53 is exact as a number output.
constexpr double kMaxSeed = 9007199254740991.0;

} // namespace

bool VbasCoreProgress::canceled() const
{
  return mFeedback->isCanceled() || VbasInterrupt::caught() != 0;
}

void VbasCoreProgress::report( double percent, const std::string &status )
{
  mFeedback->setProgress( percent );
  mFeedback->setProgressText( QString::fromStdString( status ) );
}

std::int64_t vbasWholeNumber( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context )
{
  const auto *number = dynamic_cast<const QgsProcessingParameterNumber *>( definition( algorithm, name ) );
  const double value = QgsProcessingParameters::parameterAsDouble( number, parameters, context );
  const QVariant given = parameters.value( name );
  bool numeric = true;
  if ( given.isValid() && !given.canConvert<QgsProperty>() )
    given.toString().toDouble( &numeric );
  if ( !numeric || !std::isfinite( value ) || value != std::floor( value ) || value < number->minimum() || value > number->maximum() )
    throw QgsProcessingException(
      QObject::tr( "%1 must be a whole number from %2 to %3 (%1 = %4)." )
        .arg( name, QString::number( number->minimum(), 'f', 0 ), QString::number( number->maximum(), 'f', 0 ), given.isValid() ? asGiven( given ) : QString::number( value ) ) );
  return static_cast<std::int64_t>( value );
}

VbasSiteCountSettings VbasSiteCountSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  VbasSiteCountSettings settings;
  settings.model = static_cast<Model>( QgsProcessingParameters::parameterAsEnum( definition( algorithm, QStringLiteral( "MODEL" ) ), parameters, context ) );
  const vbas::CutoffCoefficients presets[] = { vbas::kWesternCanada, vbas::kCentralCanada, vbas::kEasternCanada };
  const int preset = QgsProcessingParameters::parameterAsEnum( definition( algorithm, QStringLiteral( "COEFFICIENTS" ) ), parameters, context );
  settings.coefficients = preset < 3 ? presets[preset]
                                     : vbas::CutoffCoefficients { QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "EXP_B0" ) ), parameters, context ),
                                                                  QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "B1" ) ), parameters, context ) };
  settings.fixedCutoff = QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "FIXED_CUTOFF" ) ), parameters, context );
  if ( settings.model == Model::FixedCutoff && !( settings.fixedCutoff > 0 && std::isfinite( settings.fixedCutoff ) ) )
    throw QgsProcessingException( QObject::tr( "The fixed cutoff must be a positive number (FIXED_CUTOFF = %1)." ).arg( asGiven( parameters.value( QStringLiteral( "FIXED_CUTOFF" ) ) ) ) );
  if ( settings.model == Model::FixedSites )
    settings.fixedSites = vbasWholeNumber( algorithm, parameters, QStringLiteral( "FIXED_SITES" ), context );
  settings.entropyBase = QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "ENTROPY_BASE" ) ), parameters, context );
  return settings;
}

std::vector<double> vbasRegionPopulation( const VbasRegions &regions, const VbasRecords &records )
{
  if ( !regions.population.empty() )
    return regions.population;
  std::vector<double> population;
  for ( std::size_t r = 0; r < records.histograms.rows(); ++r )
    population.push_back( static_cast<double>( records.histograms.rowTotal( r ) ) );
  return population;
}

VbasSiteCount vbasSiteCountOf( const VbasSiteCountSettings &settings, double entropy, double maxCombs, double records, std::size_t regionCount )
{
  using Model = VbasSiteCountSettings::Model;
  VbasSiteCount result;
  result.entropy = entropy;
  result.maxCombs = maxCombs;
  switch ( settings.model )
  {
    case Model::Entropy:
      result.cutoff = vbas::cutoff( settings.coefficients, entropy );
      break;
    case Model::MaxCombs:
      result.cutoff = vbas::cutoff( settings.coefficients, maxCombs );
      break;
    case Model::FixedCutoff:
      result.cutoff = settings.fixedCutoff;
      break;
    case Model::FixedSites:
      if ( settings.fixedSites > static_cast<std::int64_t>( regionCount ) )
        throw QgsProcessingException( QObject::tr( "The fixed number of sites (FIXED_SITES = %1) must be between 1 and the number of regions, %2." ).arg( settings.fixedSites ).arg( regionCount ) );
      result.sites = static_cast<std::size_t>( settings.fixedSites );
      result.cutoff = records / static_cast<double>( settings.fixedSites );
      return result;
  }
  result.sites = vbas::siteCount( records, result.cutoff, regionCount );
  return result;
}

VbasSiteCount vbasEstimateSiteCount( const VbasSiteCountSettings &settings, const VbasRegions &regions, const VbasRecords &records, QgsProcessingFeedback *feedback )
{
  const double n = static_cast<double>( records.histograms.total() ); // sites divide the records, whatever the population basis
  const std::size_t regionCount = static_cast<std::size_t>( regions.ids.size() );
  VbasSiteCount result = vbasSiteCountOf( settings, vbas::entropy( records.histograms.classTotals( records.encoder.classCount() ), settings.entropyBase ),
                                          vbas::maxCombs( records.encoder.categoryCounts() ), n, regionCount );
  const std::vector<double> population = vbasRegionPopulation( regions, records );
  result.population = std::accumulate( population.begin(), population.end(), 0.0 );
  if ( settings.model == VbasSiteCountSettings::Model::FixedSites )
    return result;
  feedback->pushInfo(
    QObject::tr( "Entropy %1, max combinations %2, cutoff %3: %4 sites for %5 records." ).arg( result.entropy ).arg( result.maxCombs ).arg( result.cutoff ).arg( result.sites ).arg( n, 0, 'f', 0 ) );
  const double uncapped = result.cutoff > 0 ? vbas::roundHalfUp( n / result.cutoff ) : std::numeric_limits<double>::infinity();
  if ( uncapped > static_cast<double>( regionCount ) )
    feedback->pushWarning( QObject::tr( "The site count R(%1 records / cutoff %2) = %3 is more than the %4 regions: it is capped at %4, so no regions are merged and "
                                        "suppression alone must make the release k-anonymous." )
                             .arg( n, 0, 'f', 0 )
                             .arg( result.cutoff )
                             .arg( uncapped, 0, 'f', 0 )
                             .arg( regionCount ) );
  return result;
}

QVariantMap vbasSiteCountOutputs( const VbasSiteCount &siteCount, const VbasRecords &records )
{
  return { { QStringLiteral( "SITES" ), static_cast<qlonglong>( siteCount.sites ) },
           { QStringLiteral( "CUTOFF" ), siteCount.cutoff },
           { QStringLiteral( "ENTROPY" ), siteCount.entropy },
           { QStringLiteral( "MAXCOMBS" ), siteCount.maxCombs },
           { QStringLiteral( "RECORDS" ), static_cast<qlonglong>( records.histograms.total() ) },
           { QStringLiteral( "POPULATION" ), siteCount.population } };
}

std::uint64_t vbasSeed( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  const QVariant seed = parameters.value( QStringLiteral( "SEED" ) );
  return seed.isValid() && !seed.isNull() && !asGiven( seed ).isEmpty() ? static_cast<std::uint64_t>( vbasWholeNumber( algorithm, parameters, QStringLiteral( "SEED" ), context ) )
                                                                        : QRandomGenerator::system()->generate64() % static_cast<std::uint64_t>( kMaxSeed + 1 );
}

VbasPlacementSettings VbasPlacementSettings::readBalancedDensityOnly( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  VbasPlacementSettings settings;
  settings.position
    = QgsProcessingParameters::parameterAsEnum( definition( algorithm, QStringLiteral( "SITE_POSITION" ) ), parameters, context ) == 1 ? vbas::SitePosition::Median : vbas::SitePosition::Mean;
  return settings;
}

VbasPlacementSettings VbasPlacementSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, std::uint64_t seed )
{
  VbasPlacementSettings settings = readBalancedDensityOnly( algorithm, parameters, context );
  const auto enumValue = [&]( const char *name ) { return QgsProcessingParameters::parameterAsEnum( definition( algorithm, QLatin1String( name ) ), parameters, context ); };
  settings.method = enumValue( "METHOD" ) == 1 ? Method::Adc : Method::BalancedDensity;
  settings.seeding = enumValue( "SEEDING" ) == 1 ? Seeding::Random : Seeding::BalancedDensity;
  settings.adc.objective = enumValue( "OBJECTIVE" ) == 1 ? vbas::AdcObjective::Suppression : vbas::AdcObjective::Anonymity;
  settings.adc.maxMoves = static_cast<std::uint64_t>( vbasWholeNumber( algorithm, parameters, QStringLiteral( "MAX_ITERATIONS" ), context ) );
  settings.adc.criterion.k = vbasWholeNumber( algorithm, parameters, QStringLiteral( "K" ), context );
  settings.seed = seed;
  if ( settings.method == Method::Adc && vbasqgis::parameterAsFields( definition( algorithm, QStringLiteral( "QI_FIELDS" ) ), parameters, context ).isEmpty() )
    throw QgsProcessingException( QObject::tr( "Anonymity-driven clustering needs the quasi-identifier fields (QI_FIELDS): it moves the sites to raise the smallest equivalence class over them." ) );
  return settings;
}

namespace
{

//! The feedback of a run as the core's progress interface: a cancel or a signal stops a core loop.
QString adcStop( vbas::AdcStop stop )
{
  switch ( stop )
  {
    case vbas::AdcStop::ReachedK:
      return QStringLiteral( "reached k" );
    case vbas::AdcStop::NoImprovement:
      return QStringLiteral( "no improvement" );
    case vbas::AdcStop::MaxMoves:
      return QStringLiteral( "max iterations" );
    case vbas::AdcStop::Canceled:
      break;
  }
  return QStringLiteral( "canceled" );
}

//! vbas::balancedDensity (eq. 7-13), its refusal of bad arguments as a QgsProcessingException.
vbas::Placement placeByBalancedDensity( vbas::SitePosition position, const VbasRegions &regions, const std::vector<double> &population, std::size_t sites )
{
  try
  {
    return vbas::balancedDensity( regions.points, population, sites, position );
  }
  catch ( const std::invalid_argument &e )
  {
    throw QgsProcessingException( QObject::tr( "Balanced density: %1." ).arg( e.what() ) );
  }
}

void logAdc( const vbas::AdcResult &adc, const VbasPlacementSettings &settings, const VbasConstraints &constraints, double budget, QgsProcessingFeedback *feedback )
{
  const vbas::AdcStatus &a = adc.before, &b = adc.after;
  feedback->pushInfo( QObject::tr( "Anonymity-driven clustering (%1): alpha %2 -> %3 (k = %4), f %5 -> %6, records in classes below k %7 -> %8, compactness (eq. 20) %9 -> %10; "
                                   "%11 trial moves (%12 scored: %13 refused by a limit, %14 counted anew), %15 kept, %16 passes; stopped: %17." )
                        .arg( settings.adc.objective == vbas::AdcObjective::Anonymity ? QObject::tr( "largest smallest EC" ) : QObject::tr( "fewest suppressed records" ) )
                        .arg( a.alpha )
                        .arg( b.alpha )
                        .arg( settings.adc.criterion.k )
                        .arg( a.objective )
                        .arg( b.objective )
                        .arg( a.suppressed )
                        .arg( b.suppressed )
                        .arg( a.compactness, 0, 'f', 1 )
                        .arg( b.compactness, 0, 'f', 1 )
                        .arg( b.tried )
                        .arg( b.evaluated )
                        .arg( b.limited )
                        .arg( b.counted )
                        .arg( b.committed )
                        .arg( b.passes )
                        .arg( adcStop( adc.stop ) ) );
  feedback->pushInfo(
    QObject::tr( "ADC's constraints, none made worse by a kept move: clusters holding regions %1 -> %2 (none emptied), clusters releasing nothing %3 -> %4 (never more), "
                 "mean-point compactness %5 -> %6, at most %7 (COMPACTNESS_BUDGET %8 x %9, the balanced-density start), records per changed cluster at least %10 (RECORD_FLOOR) and at most "
                 "%11 (RECORD_CEILING; 0: none)." )
      .arg( a.clusters )
      .arg( b.clusters )
      .arg( a.releasingNothing )
      .arg( b.releasingNothing )
      .arg( a.meanPointCompactness, 0, 'f', 1 )
      .arg( b.meanPointCompactness, 0, 'f', 1 )
      .arg( constraints.meanPointCompactnessCap, 0, 'f', 1 )
      .arg( budget )
      .arg( constraints.referenceMeanPointCompactness, 0, 'f', 1 )
      .arg( constraints.recordFloor )
      .arg( constraints.recordCeiling == std::numeric_limits<std::int64_t>::max() ? 0 : constraints.recordCeiling ) );
  if ( adc.stop == vbas::AdcStop::MaxMoves )
    feedback->pushWarning( QObject::tr( "ADC stopped after MAX_ITERATIONS = %1 trial moves, with the best sites so far." ).arg( settings.adc.maxMoves ) );
}

//! The constraints for as many aggregates as the balanced-density sites reference: eq. 20 and the mean-point compactness of their Voronoi clusters.
VbasConstraints constraintsFor( const VbasConstraintSettings &settings, const VbasRegions &regions, const VbasRecords &records, const std::vector<vbas::Point> &reference )
{
  VbasConstraints constraints;
  const std::vector<std::size_t> clusters = vbas::locateRegions( regions.points, vbas::VoronoiDiagram( reference ) );
  std::vector<vbas::Point> regionSites;
  for ( const std::size_t s : clusters )
    regionSites.push_back( reference[s] );
  constraints.referenceCompactness = vbas::compactness( regions.points, regionSites );
  constraints.referenceMeanPointCompactness = vbas::meanPointCompactness( regions.points, clusters, vbasRegionPopulation( regions, records ) );
  constraints.meanPointCompactnessCap = settings.compactnessBudget * constraints.referenceMeanPointCompactness;
  std::tie( constraints.recordFloor, constraints.recordCeiling ) = vbasRecordBounds( settings, records.histograms.total(), reference.size() );
  return constraints;
}

} // namespace

std::pair<std::int64_t, std::int64_t> vbasRecordBounds( const VbasConstraintSettings &settings, std::int64_t records, std::size_t aggregates )
{
  const double mean = static_cast<double>( records ) / static_cast<double>( aggregates );
  return { static_cast<std::int64_t>( std::ceil( settings.recordFloor * mean ) ),
           settings.recordCeiling > 0 ? static_cast<std::int64_t>( std::floor( settings.recordCeiling * mean ) ) : std::numeric_limits<std::int64_t>::max() };
}

VbasConstraintSettings VbasConstraintSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  VbasConstraintSettings settings;
  settings.compactnessBudget = QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "COMPACTNESS_BUDGET" ) ), parameters, context );
  if ( !( settings.compactnessBudget > 0 && std::isfinite( settings.compactnessBudget ) ) )
    throw QgsProcessingException(
      QObject::tr( "The compactness budget must be a positive number (COMPACTNESS_BUDGET = %1)." ).arg( asGiven( parameters.value( QStringLiteral( "COMPACTNESS_BUDGET" ) ) ) ) );
  settings.recordFloor = QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "RECORD_FLOOR" ) ), parameters, context );
  if ( !( settings.recordFloor >= 0 && settings.recordFloor <= 1 ) )
    throw QgsProcessingException( QObject::tr( "The record floor must be a share from 0 to 1 (RECORD_FLOOR = %1)." ).arg( asGiven( parameters.value( QStringLiteral( "RECORD_FLOOR" ) ) ) ) );
  settings.recordCeiling = QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "RECORD_CEILING" ) ), parameters, context );
  if ( !( settings.recordCeiling == 0 || ( settings.recordCeiling >= 1 && std::isfinite( settings.recordCeiling ) ) ) )
    throw QgsProcessingException( QObject::tr( "The record ceiling must be 0 (none) or at least 1, a multiple of the mean aggregate's records (RECORD_CEILING = %1)." )
                                    .arg( asGiven( parameters.value( QStringLiteral( "RECORD_CEILING" ) ) ) ) );
  return settings;
}

VbasConstraints vbasConstraints( const VbasConstraintSettings &settings, const VbasRegions &regions, const VbasRecords &records, std::size_t sites, vbas::SitePosition position )
{
  return constraintsFor( settings, regions, records, placeByBalancedDensity( position, regions, vbasRegionPopulation( regions, records ), sites ).sites );
}

VbasPlacement vbasPlaceSites( const VbasPlacementSettings &settings, const VbasConstraintSettings &constraints, const VbasRegions &regions, const VbasRecords &records, std::size_t sites,
                              QgsProcessingFeedback *feedback )
{
  if ( sites < 1 || sites > static_cast<std::size_t>( regions.ids.size() ) )
    throw QgsProcessingException( QObject::tr( "The number of sites (%1) must be between 1 and the number of regions, %2." ).arg( sites ).arg( regions.ids.size() ) );
  const vbas::Placement density = placeByBalancedDensity( settings.position, regions, vbasRegionPopulation( regions, records ), sites );
  VbasPlacement result;
  result.sites = density.sites;
  result.siteRow = density.cellRow;
  if ( settings.method == VbasPlacementSettings::Method::Adc )
  {
    const bool random = settings.seeding == VbasPlacementSettings::Seeding::Random;
    if ( random )
    {
      feedback->pushInfo( QObject::tr( "ADC's random seeding is drawn from seed %1 (SEED=%1 repeats it)." ).arg( settings.seed ) );
      result.siteRow.clear();
    }
    result.constraints = constraintsFor( constraints, regions, records, density.sites );
    vbas::AdcSettings adc = settings.adc;
    adc.maxMeanPointCompactness = result.constraints->meanPointCompactnessCap;
    adc.regionWeights = vbasRegionPopulation( regions, records );
    adc.minClusterRecords = result.constraints->recordFloor;
    adc.maxClusterRecords = result.constraints->recordCeiling;
    VbasCoreProgress progress( feedback );
    result.adc = vbas::anonymityDrivenClustering( random ? vbas::randomSites( regions.points, sites, settings.seed ) : density.sites, regions.points, records.histograms, adc, &progress );
    VbasInterrupt::throwIfCanceled( feedback );
    logAdc( *result.adc, settings, *result.constraints, constraints.compactnessBudget, feedback );
    result.sites = result.adc->sites;
  }
  result.regionAggregate = result.adc ? result.adc->regionAggregate : vbas::locateRegions( regions.points, vbas::VoronoiDiagram( result.sites ) );
  return result;
}

std::size_t vbasNonEmptyAggregates( const std::vector<std::size_t> &regionAggregate, std::size_t sites, QgsProcessingFeedback *feedback )
{
  std::vector<std::size_t> used = regionAggregate;
  std::sort( used.begin(), used.end() );
  used.erase( std::unique( used.begin(), used.end() ), used.end() );
  const std::size_t asked = std::min( sites, regionAggregate.size() );
  if ( used.size() < asked )
    feedback->pushWarning( QObject::tr( "%1 sites were asked for (%2 regions), but only %3 aggregates hold regions. A site with no nearest region (every region point is "
                                        "nearer another site, or as near one with a lower site id) makes no aggregate: %4 here, so there are fewer aggregates than asked for." )
                             .arg( sites )
                             .arg( regionAggregate.size() )
                             .arg( used.size() )
                             .arg( sites - used.size() ) );
  return used.size();
}

QVariantMap vbasPlacementOutputs( const VbasPlacement &placement )
{
  if ( !placement.adc )
    return { { QStringLiteral( "ADC_MOVES_TRIED" ), 0 }, { QStringLiteral( "ADC_MOVES_COMMITTED" ), 0 }, { QStringLiteral( "ADC_STOP" ), QStringLiteral( "not run" ) } };
  const vbas::AdcResult &adc = *placement.adc;
  return { { QStringLiteral( "ADC_MOVES_TRIED" ), static_cast<qlonglong>( adc.after.tried ) },
           { QStringLiteral( "ADC_MOVES_COMMITTED" ), static_cast<qlonglong>( adc.after.committed ) },
           { QStringLiteral( "ADC_ALPHA" ), static_cast<qlonglong>( adc.after.alpha ) },
           { QStringLiteral( "ADC_SUPPRESSED" ), static_cast<qlonglong>( adc.after.suppressed ) },
           { QStringLiteral( "ADC_STOP" ), adcStop( adc.stop ) } };
}

VbasReleaseSettings VbasReleaseSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  VbasReleaseSettings settings;
  settings.k = vbasWholeNumber( algorithm, parameters, QStringLiteral( "K" ), context );
  if ( algorithm.parameterDefinition( QStringLiteral( "RISK_MODEL" ) ) )
    settings.model = static_cast<Model>( QgsProcessingParameters::parameterAsEnum( definition( algorithm, QStringLiteral( "RISK_MODEL" ) ), parameters, context ) );
  if ( settings.model == Model::AverageRisk )
    settings.averageThreshold = QgsProcessingParameters::parameterAsDouble( definition( algorithm, QStringLiteral( "RISK_THRESHOLD" ) ), parameters, context );
  if ( algorithm.parameterDefinition( QStringLiteral( "SHUFFLE_MEMORY_MB" ) ) )
    settings.memoryBudget = static_cast<std::size_t>( vbasWholeNumber( algorithm, parameters, QStringLiteral( "SHUFFLE_MEMORY_MB" ), context ) ) << 20;
  return settings;
}

void VbasReleaseSettings::refuseUnmetModel( const VbasPopulationTable *table ) const
{
  if ( model == Model::KAnonymity )
    return;
  const QString name = model == Model::KMap ? QStringLiteral( "k-map" ) : QObject::tr( "average risk" );
  if ( model == Model::KMap && !table )
    throw QgsProcessingException( QObject::tr( "RISK_MODEL k-map counts the residents of each released class in a population table: give POPULATION_TABLE (in the dialog, among the advanced "
                                               "parameters, with POPULATION_REGION and POPULATION_COUNT), or choose k-anonymity." ) );
  if ( table && !table->missingQis().isEmpty() )
    throw QgsProcessingException( QObject::tr( "RISK_MODEL %1 counts the residents of each released class, which needs a population table with a field for every QI; "
                                               "POPULATION_TABLE has none for %2. A count over fewer QIs would overstate the residents and understate the risk." )
                                    .arg( name, table->missingQis().join( QStringLiteral( ", " ) ) ) );
}

void VbasReleaseSettings::useResidents( const std::optional<VbasPopulation> &population )
{
  if ( model != Model::KAnonymity && population )
    residents = &population->cells;
}

vbas::Criterion VbasReleaseSettings::criterion() const
{
  if ( model == Model::AverageRisk )
    return vbas::Criterion::averageRisk( k, averageThreshold, residents );
  if ( model == Model::KAnonymity )
    return vbas::Criterion( k );
  if ( !residents ) // refuseUnmetModel and useResidents come first: a k-map without residents would be a fault
    throw QgsProcessingException( QObject::tr( "k-map without the residents of a population table: this is a fault of VBAS, please report it with the run's log." ) );
  return vbas::Criterion( k, *residents );
}

VbasMeasured vbasMeasure( const VbasRegions &regions, const VbasRecords &records, const std::vector<vbas::Point> &regionSites, const vbas::Release &release, std::int64_t k, double riskThreshold,
                          double runSeconds, QgsProcessingFeedback *feedback, const VbasPopulation *population )
{
  if ( records.sensitive )
    feedback->pushInfo( QObject::tr( "The sensitive field holds %n distinct value(s).", nullptr, static_cast<int>( records.sensitive->values ) ) );
  vbas::MetricInputs inputs {
    regions.points, regionSites, records.histograms, release.aggregation, release.suppression, k, riskThreshold, records.sensitive ? &*records.sensitive : nullptr, runSeconds
  };
  inputs.regionResidents = population ? &population->regionResidents : regions.population.empty() ? nullptr : &regions.population;
  inputs.populationCells = population && population->missingQis.isEmpty() ? &population->cells : nullptr;
  const QString origin = population ? QObject::tr( "the population table (POPULATION_TABLE)" ) : QObject::tr( "the population field (POPULATION_FIELD)" );
  const QString method
    = inputs.populationCells ? QObject::tr( "each class's residents counted" )
      : population
        ? QObject::tr( "it has no field for %1, so each class's residents are estimated from its aggregated region's share of records" ).arg( population->missingQis.join( QStringLiteral( ", " ) ) )
        : QObject::tr( "each class's residents estimated from its aggregated region's share of records" );
  std::optional<vbas::PopulationMeasures> measures = vbas::populationMeasures( inputs );
  QList<QPair<QString, QString>> facts = vbasLogPopulation( measures, origin, method, feedback );
  vbas::MetricValues values = vbas::measure( inputs, measures );
  if ( measures && measures->released.shortAggregate >= 0 )
    measures.reset();
  return { std::move( values ), std::move( facts ), std::move( measures ) };
}

QList<QPair<QString, QString>> vbasLogPopulation( const std::optional<vbas::PopulationMeasures> &measures, const QString &origin, const QString &method, QgsProcessingFeedback *feedback )
{
  const QString residents = QObject::tr( "Residents" );
  const vbas::ReleasedPopulation *population = measures ? &measures->released : nullptr;
  if ( !population )
  {
    const QString none = QObject::tr( "not known: no population field (POPULATION_FIELD) or population table (POPULATION_TABLE), so the risk against the population (journalist, "
                                      "marketer, population uniques) is not measured" );
    feedback->pushInfo( QObject::tr( "Residents %1." ).arg( none ) );
    return { { residents, none } };
  }
  if ( population->shortAggregate >= 0 )
  {
    const QString shortOf = QObject::tr( "aggregated region %1 has fewer residents in %2 than records: they cannot be the population these records were drawn from, so the risk "
                                         "against the population (journalist, marketer, population uniques) is not measured" )
                              .arg( population->shortAggregate + 1 )
                              .arg( origin );
    feedback->pushWarning( QObject::tr( "Residents: %1." ).arg( shortOf ) );
    return { { residents, shortOf } };
  }
  const auto estimate = []( const vbas::UniquenessEstimate &e ) {
    if ( e.model == vbas::UniquenessModel::None )
      return QObject::tr( "none (no record alone in its class)" );
    if ( e.model == vbas::UniquenessModel::Counted )
      return QObject::tr( "%1, counted in the population table" ).arg( e.uniques, 0, 'f', 0 );
    return QObject::tr( "%1, estimated by the %2 model (Dankar et al.'s rule at a sampling fraction of %3)" )
      .arg( QString::number( e.uniques, 'f', 1 ), vbas::modelName( e.model ), QString::number( e.fraction, 'g', 4 ) );
  };
  const QString uniques = QObject::tr( "before release %1; in the release %2" ).arg( estimate( measures->before ), estimate( measures->after ) );
  const QString counted = QObject::tr( "%1 in all, from %2; %3" ).arg( QString::number( population->residents, 'g', 15 ), origin, method );
  feedback->pushInfo( QObject::tr( "Population uniques of %1 residents: %2." ).arg( QString::number( population->residents, 'g', 15 ), uniques ) );
  return { { residents, counted }, { QObject::tr( "Population uniques" ), uniques } };
}

namespace
{

//! The criterion in the log's words (docs/method.md, "A release at a stated risk").
QString criterionText( const vbas::Criterion &criterion )
{
  if ( criterion.residents )
    return QObject::tr( "k-map: every released class has at least k = %1 residents" ).arg( criterion.k );
  if ( criterion.averageThreshold < 1 )
    return QObject::tr( "average risk: k = %1, and the released records' average %2 risk at most %3" )
      .arg( criterion.k )
      .arg( criterion.averagePopulation ? QObject::tr( "journalist" ) : QObject::tr( "prosecutor" ) )
      .arg( criterion.averageThreshold );
  return QObject::tr( "k = %1" ).arg( criterion.k );
}

} // namespace

void vbasLogRelease( const vbas::Release &release, std::size_t sites, const vbas::Criterion &criterion, QgsProcessingFeedback *feedback )
{
  const vbas::Suppression &s = release.suppression;
  feedback->pushInfo( QObject::tr( "%1 sites, %2 aggregated regions; %3 records released, %4 suppressed (%5)." )
                        .arg( sites )
                        .arg( release.aggregation.aggregateId.size() )
                        .arg( s.releasedRecords )
                        .arg( s.suppressedRecords )
                        .arg( criterionText( criterion ) ) );
  vbasNonEmptyAggregates( release.regionAggregate, sites, feedback );
  if ( s.releasedRecords == 0 )
    feedback->pushWarning( criterion.residents ? QObject::tr( "The release is empty: every equivalence class has fewer than k = %1 residents." ).arg( criterion.k )
                                               : QObject::tr( "The release is empty: every equivalence class has fewer than k = %1 records." ).arg( criterion.k ) );
  else if ( s.suppressedRecords > s.releasedRecords )
    feedback->pushWarning( QObject::tr( "The release suppresses more than half of the records (%1 of %2): consider fewer QIs, a smaller k or fewer sites." )
                             .arg( s.suppressedRecords )
                             .arg( s.suppressedRecords + s.releasedRecords ) );
}

void vbasLogSummary( const vbas::MetricValues &values, QgsProcessingFeedback *feedback )
{
  const auto value = [&values]( const char *field ) {
    const std::optional<vbas::MetricNumber> v = vbas::metricValue( values, field );
    const bool whole = std::any_of( vbas::metrics().begin(), vbas::metrics().end(), [field]( const vbas::Metric &m ) { return m.whole && std::strcmp( m.field, field ) == 0; } );
    return !v ? QObject::tr( "n/a" ) : whole ? QString::number( static_cast<qlonglong>( *v ) ) : QString::number( static_cast<double>( *v ), 'g', 15 );
  };
  feedback->pushInfo( QObject::tr( "Summary: %1 records read; %2 released, %3 suppressed (%4%); %5 aggregated regions; smallest released class %6 (k = %7)." )
                        .arg( value( "records" ), value( "released" ), value( "suppressed" ), value( "suppressed_pct" ), value( "aggregates" ), value( "smallest_ec" ), value( "k" ) ) );
}
