#include "vbassteps.h"

#include <qgsexception.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>

#include <QRandomGenerator>

#include <cmath>
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

std::int64_t vbasWholeNumber( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context )
{
  const auto *number = dynamic_cast<const QgsProcessingParameterNumber *>( definition( algorithm, name ) );
  const double value = QgsProcessingParameters::parameterAsDouble( number, parameters, context );
  const QVariant given = parameters.value( name );
  bool numeric = true;
  if ( given.isValid() && !given.canConvert<QgsProperty>() )
    given.toString().toDouble( &numeric );
  if ( !numeric || !std::isfinite( value ) || value != std::floor( value ) || value < number->minimum() || value > number->maximum() )
    throw QgsProcessingException( QObject::tr( "%1 must be a whole number from %2 to %3 (%1 = %4)." )
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

VbasSiteCount vbasEstimateSiteCount( const VbasSiteCountSettings &settings, const VbasRegions &regions, const VbasRecords &records, QgsProcessingFeedback *feedback )
{
  using Model = VbasSiteCountSettings::Model;
  VbasSiteCount result;
  const std::vector<double> population = vbasRegionPopulation( regions, records );
  result.population = std::accumulate( population.begin(), population.end(), 0.0 );
  result.entropy = vbas::entropy( records.histograms.classTotals( records.encoder.classCount() ), settings.entropyBase );
  result.maxCombs = vbas::maxCombs( records.encoder.categoryCounts() );
  const double n = static_cast<double>( records.histograms.total() ); // SPEC 3.6 item 3: sites divide the records
  const std::size_t regionCount = static_cast<std::size_t>( regions.ids.size() );
  switch ( settings.model )
  {
    case Model::Entropy:
      result.cutoff = vbas::cutoff( settings.coefficients, result.entropy );
      break;
    case Model::MaxCombs:
      result.cutoff = vbas::cutoff( settings.coefficients, result.maxCombs );
      break;
    case Model::FixedCutoff:
      result.cutoff = settings.fixedCutoff;
      break;
    case Model::FixedSites:
      if ( settings.fixedSites > static_cast<std::int64_t>( regionCount ) )
        throw QgsProcessingException( QObject::tr( "The fixed number of sites (FIXED_SITES = %1) must be between 1 and the number of regions, %2." ).arg( settings.fixedSites ).arg( regionCount ) );
      result.sites = static_cast<std::size_t>( settings.fixedSites );
      result.cutoff = n / static_cast<double>( settings.fixedSites );
      return result;
  }
  result.sites = vbas::siteCount( n, result.cutoff, regionCount );
  feedback->pushInfo( QObject::tr( "Entropy %1, max combinations %2, cutoff %3: %4 sites for %5 records." )
                        .arg( result.entropy ).arg( result.maxCombs ).arg( result.cutoff ).arg( result.sites ).arg( n, 0, 'f', 0 ) );
  const double uncapped = result.cutoff > 0 ? vbas::roundHalfUp( n / result.cutoff ) : std::numeric_limits<double>::infinity();
  if ( uncapped > static_cast<double>( regionCount ) )
    feedback->pushWarning( QObject::tr( "The site count R(%1 records / cutoff %2) = %3 is more than the %4 regions: it is capped at %4, so no regions are merged and "
                                        "suppression alone must make the release k-anonymous." )
                             .arg( n, 0, 'f', 0 ).arg( result.cutoff ).arg( uncapped, 0, 'f', 0 ).arg( regionCount ) );
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

vbas::Placement vbasPlaceSites( vbas::SitePosition position, const VbasRegions &regions, const std::vector<double> &population, std::size_t sites )
{
  if ( sites < 1 || sites > static_cast<std::size_t>( regions.ids.size() ) )
    throw QgsProcessingException( QObject::tr( "The number of sites (%1) must be between 1 and the number of regions, %2." ).arg( sites ).arg( regions.ids.size() ) );
  try
  {
    return vbas::balancedDensity( regions.points, population, sites, position );
  }
  catch ( const std::invalid_argument &e )
  {
    throw QgsProcessingException( QObject::tr( "Balanced density: %1." ).arg( e.what() ) );
  }
}

VbasReleaseSettings VbasReleaseSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  VbasReleaseSettings settings;
  settings.k = vbasWholeNumber( algorithm, parameters, QStringLiteral( "K" ), context );
  if ( !definition( algorithm, QStringLiteral( "SEED" ) ) )
    return settings;
  const QVariant seed = parameters.value( QStringLiteral( "SEED" ) );
  settings.seed = seed.isValid() && !seed.isNull() && !asGiven( seed ).isEmpty()
                    ? static_cast<std::uint64_t>( vbasWholeNumber( algorithm, parameters, QStringLiteral( "SEED" ), context ) )
                    : QRandomGenerator::system()->generate64() % static_cast<std::uint64_t>( kMaxSeed + 1 );
  settings.memoryBudget = static_cast<std::size_t>( vbasWholeNumber( algorithm, parameters, QStringLiteral( "SHUFFLE_MEMORY_MB" ), context ) ) << 20;
  return settings;
}

void vbasLogRelease( const vbas::Release &release, std::size_t sites, std::int64_t k, QgsProcessingFeedback *feedback )
{
  const vbas::Suppression &s = release.suppression;
  feedback->pushInfo( QObject::tr( "%1 sites, %2 aggregated regions; %3 records released, %4 suppressed (k = %5)." )
                        .arg( sites )
                        .arg( release.aggregation.aggregateGroup.size() )
                        .arg( s.releasedRecords )
                        .arg( s.suppressedRecords )
                        .arg( k ) );
  if ( s.releasedRecords == 0 )
    feedback->pushWarning( QObject::tr( "The release is empty: every equivalence class has fewer than k = %1 records." ).arg( k ) );
  else if ( s.suppressedRecords > s.releasedRecords )
    feedback->pushWarning( QObject::tr( "The release suppresses more than half of the records (%1 of %2): consider fewer QIs, a smaller k or fewer sites." )
                             .arg( s.suppressedRecords )
                             .arg( s.suppressedRecords + s.releasedRecords ) );
}
