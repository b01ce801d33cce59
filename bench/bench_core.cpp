// Throughput and memory of the VBAS core stages on synthetic in-memory data (not a test).
//
//   build/bench/bench_core REGIONS [--qis 4|5] [--k K] [--seed S] [--sorted 1]
//
// N regions (clustered random points in a 200 km x 150 km rectangle), 400-700 records per region
// (uniform, mean 550), records in random region order (--sorted 1: grouped by region), 4 QIs by default (age_group 9 values, sex 2,
// race 5, insurance 4; --qis 5 adds marital 5), skewed category frequencies like make_inputs.py.
// Records are fed one by one through QiEncoder::valueCode / classId and HistogramBuilder::add as the
// plugin does: every value a short string passed as its UTF-16 bytes (the plugin hands QString::utf16()
// to valueCode). Records are generated in chunks outside the timed sections, so only core calls are
// timed and the record data never sits in memory whole.
//
// Then times site count (entropy over the EC sizes + MaxCombs, Central Canada coefficients),
// balanced density, Voronoi diagram + locateRegions, the release step (aggregate + suppress, k = 5),
// evaluate. The records are read once, as the plugin reads them (docs/method.md, "One read"): the
// encoding pass also keeps each record for the release (its region, class and count, then its values,
// in vbas::ExternalShuffle with a 64 MB budget, spill files in $TMPDIR or /tmp), and the release is
// drained from there, each kept record counted again against the histograms (vbas::Recount) and the
// suppressed ones left out.
// Prints records/second per stage, peak RSS (getrusage ru_maxrss) and bytes per record, and one
// machine-readable line starting with "BENCH_CORE" for bench/run_bench.sh.

#include "algorithms/aggregation/aggregation.h"
#include "algorithms/aggregation/adc.h"
#include "algorithms/aggregation/balanced_density.h"
#include "algorithms/base/histograms.h"
#include "algorithms/metrics/metrics.h"
#include "algorithms/base/qi_encoding.h"
#include "algorithms/aggregation/release.h"
#include "algorithms/base/shuffle.h"
#include "algorithms/aggregation/site_count.h"
#include "algorithms/aggregation/voronoi.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace
{

using Clock = std::chrono::steady_clock;

double seconds( Clock::time_point a, Clock::time_point b )
{
  return std::chrono::duration<double>( b - a ).count();
}

//! Peak resident set size in bytes (Linux reports ru_maxrss in KiB).
double peakRssBytes()
{
  rusage usage {};
  getrusage( RUSAGE_SELF, &usage );
  return static_cast<double>( usage.ru_maxrss ) * 1024.0;
}

//! Current resident set size in bytes (/proc/self/statm).
double currentRssBytes()
{
  long pages = 0, resident = 0;
  if ( FILE *f = std::fopen( "/proc/self/statm", "r" ) )
  {
    if ( std::fscanf( f, "%ld %ld", &pages, &resident ) != 2 )
      resident = 0;
    std::fclose( f );
  }
  return static_cast<double>( resident ) * 4096.0;
}

//! splitmix64: small, fast, deterministic.
struct Rng
{
    std::uint64_t state;
    std::uint64_t next()
    {
      std::uint64_t z = ( state += 0x9e3779b97f4a7c15ULL );
      z = ( z ^ ( z >> 30 ) ) * 0xbf58476d1ce4e5b9ULL;
      z = ( z ^ ( z >> 27 ) ) * 0x94d049bb133111ebULL;
      return z ^ ( z >> 31 );
    }
    double uniform() { return static_cast<double>( next() >> 11 ) * 0x1.0p-53; }
    std::uint64_t below( std::uint64_t n ) { return next() % n; }
    double normal()
    {
      const double u = std::max( uniform(), 1e-300 );
      return std::sqrt( -2.0 * std::log( u ) ) * std::cos( 2.0 * M_PI * uniform() );
    }
};

struct Qi
{
    const char *name;
    std::vector<std::string> values; //!< UTF-16 bytes of each value, as the plugin passes them
    std::vector<double> cumulative;  //!< cumulative frequencies
};

std::string utf16Bytes( const char *ascii )
{
  std::string out;
  for ( const char *c = ascii; *c; ++c )
  {
    out.push_back( *c );
    out.push_back( '\0' );
  }
  return out;
}

Qi makeQi( const char *name, std::vector<const char *> values, std::vector<double> weights )
{
  Qi qi { name, {}, {} };
  double sum = 0;
  for ( const double w : weights )
    sum += w;
  double acc = 0;
  for ( std::size_t i = 0; i < values.size(); ++i )
  {
    qi.values.push_back( utf16Bytes( values[i] ) );
    acc += weights[i] / sum;
    qi.cumulative.push_back( acc );
  }
  qi.cumulative.back() = 1.0;
  return qi;
}

std::uint32_t draw( const Qi &qi, Rng &rng )
{
  const double u = rng.uniform();
  std::uint32_t i = 0;
  while ( i + 1 < qi.cumulative.size() && u >= qi.cumulative[i] )
    ++i;
  return i;
}

//! Clustered random region points, as make_inputs.py: 80% in Gaussian clusters, 20% uniform.
std::vector<vbas::Point> regionPoints( std::size_t n, Rng &rng )
{
  const double xMin = -8550000, yMin = 5600000, width = 200000, height = 150000;
  const std::size_t clusters = std::max<std::size_t>( 1, static_cast<std::size_t>( std::lround( std::sqrt( static_cast<double>( n ) ) / 3 ) ) );
  std::vector<vbas::Point> centres;
  std::vector<double> spread;
  for ( std::size_t c = 0; c < clusters; ++c )
  {
    centres.push_back( { xMin + rng.uniform() * width, yMin + rng.uniform() * height } );
    spread.push_back( ( 0.01 + 0.05 * rng.uniform() ) * width );
  }
  std::vector<vbas::Point> points;
  while ( points.size() < n )
  {
    vbas::Point p;
    if ( rng.uniform() < 0.8 )
    {
      const std::size_t c = rng.below( clusters );
      p = { centres[c].x + rng.normal() * spread[c], centres[c].y + rng.normal() * spread[c] };
    }
    else
      p = { xMin + rng.uniform() * width, yMin + rng.uniform() * height };
    if ( p.x > xMin && p.x < xMin + width && p.y > yMin && p.y < yMin + height )
      points.push_back( p );
  }
  return points;
}

/**
 * The records, generated chunk by chunk in the same order for the same seed: a pass over them can be
 * repeated (the plugin reads the records twice) without keeping them in memory.
 */
class RecordStream
{
  public:
    RecordStream( std::uint64_t seed, const std::vector<Qi> &qis, std::size_t regionCount, bool sorted )
      : mRng { seed }
      , mQis( qis )
      , mSorted( sorted )
      , mRemaining( regionCount )
      , mAlive( regionCount )
    {
      for ( auto &r : mRemaining )
      {
        r = static_cast<std::uint32_t>( 400 + mRng.below( 301 ) );
        mTotal += r;
      }
      for ( std::size_t r = 0; r < regionCount; ++r )
        mAlive[r] = static_cast<std::uint32_t>( r );
    }

    std::int64_t total() const { return mTotal; }

    //! The next records (at most the chunk size), their regions and their values; 0 at the end.
    std::size_t next( std::vector<std::uint32_t> &regions, std::vector<const std::string *> &values )
    {
      const std::size_t qiCount = mQis.size();
      std::size_t n = 0;
      // A record picks a region that still has records to emit at random (records in random order).
      while ( n < regions.size() && !mAlive.empty() )
      {
        const std::size_t pick = mSorted ? mAlive.size() - 1 : mRng.below( mAlive.size() );
        const std::uint32_t r = mAlive[pick];
        regions[n] = r;
        if ( --mRemaining[r] == 0 )
        {
          mAlive[pick] = mAlive.back();
          mAlive.pop_back();
        }
        for ( std::size_t q = 0; q < qiCount; ++q )
          values[n * qiCount + q] = &mQis[q].values[draw( mQis[q], mRng )];
        ++n;
      }
      return n;
    }

  private:
    Rng mRng;
    const std::vector<Qi> &mQis;
    bool mSorted;
    std::vector<std::uint32_t> mRemaining;
    std::vector<std::uint32_t> mAlive;
    std::int64_t mTotal = 0;
};

struct Stage
{
    const char *name;
    const char *key;
    double seconds = 0;
};

} // namespace

int main( int argc, char **argv )
{
  if ( argc < 2 )
  {
    std::fprintf( stderr, "usage: %s REGIONS [--qis 4|5] [--k K] [--seed S] [--sorted 1] [--adc 1]\n", argv[0] );
    return 2;
  }
  const std::size_t regionCount = std::strtoull( argv[1], nullptr, 10 );
  std::size_t qiCount = 4;
  std::int64_t k = 5;
  std::uint64_t seed = 20261121;
  bool sorted = false;
  bool adc = false;
  for ( int i = 2; i + 1 < argc; i += 2 )
  {
    if ( !std::strcmp( argv[i], "--qis" ) )
      qiCount = std::strtoull( argv[i + 1], nullptr, 10 );
    else if ( !std::strcmp( argv[i], "--k" ) )
      k = std::strtoll( argv[i + 1], nullptr, 10 );
    else if ( !std::strcmp( argv[i], "--sorted" ) )
      sorted = std::strtoll( argv[i + 1], nullptr, 10 ) != 0;
    else if ( !std::strcmp( argv[i], "--adc" ) )
      adc = std::strtoll( argv[i + 1], nullptr, 10 ) != 0;
    else if ( !std::strcmp( argv[i], "--seed" ) )
      seed = std::strtoull( argv[i + 1], nullptr, 10 );
    else
    {
      std::fprintf( stderr, "unknown option %s\n", argv[i] );
      return 2;
    }
  }
  if ( regionCount < 2 || qiCount < 1 || qiCount > 5 || k < 2 )
  {
    std::fprintf( stderr, "need REGIONS >= 2, 1 <= --qis <= 5, --k >= 2\n" );
    return 2;
  }

  std::vector<Qi> qis = {
    makeQi( "age_group", { "0-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80+" }, { 11, 12, 13, 14, 14, 13, 11, 8, 4 } ),
    makeQi( "sex", { "F", "M" }, { 51, 49 } ),
    makeQi( "race", { "white", "asian", "black", "indigenous", "other" }, { 62, 18, 8, 5, 7 } ),
    makeQi( "insurance", { "public", "private", "mixed", "none" }, { 55, 30, 10, 5 } ),
    makeQi( "marital", { "single", "married", "common-law", "divorced", "widowed" }, { 38, 40, 10, 7, 5 } ),
  };
  qis.resize( qiCount );

  Rng rng { seed };
  const double baselineRss = currentRssBytes();
  const std::vector<vbas::Point> points = regionPoints( regionCount, rng );
  const std::uint64_t recordSeed = rng.next();
  const std::int64_t recordCount = RecordStream( recordSeed, qis, regionCount, sorted ).total();

  std::vector<Stage> stages = {
    { "QI encoding + histograms", "encode" },         { "site count (entropy, MaxCombs)", "sitecount" }, { "balanced density", "density" },
    { "Voronoi diagram + locateRegions", "voronoi" }, { "release (aggregate + suppress)", "release" },   { "evaluate", "evaluate" },
    { "keeping the rows for the release", "keep" },   { "release: drain + recount", "drain" },
  };

  // 1. QI encoding + histogram building, one record at a time.
  vbas::QiEncoder encoder( qiCount );
  vbas::HistogramBuilder builder( regionCount );
  constexpr std::size_t kChunk = 1 << 16;
  std::vector<std::uint32_t> chunkRegion( kChunk );
  std::vector<const std::string *> chunkValues( kChunk * qiCount );
  std::vector<std::uint32_t> codes( qiCount );
  std::vector<std::uint32_t> chunkClass( kChunk );
  double encodeSeconds = 0;
  const char *tmp = std::getenv( "TMPDIR" );
  vbas::ExternalShuffle kept( seed, std::size_t( 64 ) << 20, std::string( tmp ? tmp : "/tmp" ) + "/.bench-core-shuffle-" + std::to_string( ::getpid() ) + "-" );
  std::string row;
  RecordStream first( recordSeed, qis, regionCount, sorted );
  while ( const std::size_t n = first.next( chunkRegion, chunkValues ) )
  {
    const Clock::time_point t0 = Clock::now();
    for ( std::size_t i = 0; i < n; ++i )
    {
      for ( std::size_t q = 0; q < qiCount; ++q )
      {
        const std::string &value = *chunkValues[i * qiCount + q];
        codes[q] = encoder.valueCode( q, std::string_view( value ) );
      }
      builder.add( chunkRegion[i], chunkClass[i] = encoder.classId( codes.data() ), 1 );
    }
    const Clock::time_point t1 = Clock::now();
    encodeSeconds += seconds( t0, t1 );
    // Each record kept as VbasReleaseSpool keeps it: region, class and count, then its values.
    for ( std::size_t i = 0; i < n; ++i )
    {
      const std::int64_t count = 1;
      row.assign( reinterpret_cast<const char *>( &chunkRegion[i] ), sizeof( std::uint32_t ) );
      row.append( reinterpret_cast<const char *>( &chunkClass[i] ), sizeof( std::uint32_t ) );
      row.append( reinterpret_cast<const char *>( &count ), sizeof count );
      for ( std::size_t q = 0; q < qiCount; ++q )
        row += *chunkValues[i * qiCount + q];
      kept.add( row );
    }
    stages[6].seconds += seconds( t1, Clock::now() );
  }
  Clock::time_point t0 = Clock::now();
  const vbas::SparseHistograms histograms = builder.build();
  const double buildSeconds = seconds( t0, Clock::now() );
  builder = vbas::HistogramBuilder( regionCount ); // the plugin drops the builder once readRecords returns
  stages[0].seconds = encodeSeconds + buildSeconds;

  // 2. Site count.
  t0 = Clock::now();
  std::vector<double> population( regionCount );
  double totalPopulation = 0;
  for ( std::size_t r = 0; r < regionCount; ++r )
    totalPopulation += population[r] = static_cast<double>( histograms.rowTotal( r ) );
  const double entropy = vbas::entropy( histograms.classTotals( encoder.classCount() ), std::exp( 1.0 ) );
  const double maxCombs = vbas::maxCombs( encoder.categoryCounts() );
  const double cutoff = vbas::cutoff( vbas::kCentralCanada, entropy );
  const std::size_t sites = vbas::siteCount( totalPopulation, cutoff, regionCount );
  stages[1].seconds = seconds( t0, Clock::now() );

  // 3. Balanced density.
  t0 = Clock::now();
  const vbas::Placement placement = vbas::balancedDensity( points, population, sites, vbas::SitePosition::Mean );
  stages[2].seconds = seconds( t0, Clock::now() );

  // ADC from the balanced-density sites, both objectives: timed apart from the record stages,
  // per trial move and in all.
  for ( const vbas::AdcObjective objective : { vbas::AdcObjective::Anonymity, vbas::AdcObjective::Suppression } )
  {
    if ( !adc )
      break;
    vbas::AdcSettings settings;
    settings.criterion.k = k;
    settings.objective = objective;
    t0 = Clock::now();
    const vbas::AdcResult r = vbas::anonymityDrivenClustering( placement.sites, points, histograms, settings );
    const double s = seconds( t0, Clock::now() );
    const char *name = objective == vbas::AdcObjective::Anonymity ? "paper" : "suppression";
    const auto count = []( std::uint64_t n ) { return static_cast<unsigned long long>( n ); };
    std::printf( "  ADC %-11s %9.3f s: %llu trial moves (%llu scored, %llu kept, %llu passes), %.1f us per trial, %.1f us per scored trial; "
                 "alpha %lld -> %lld, suppressed %lld -> %lld\n",
                 name, s, count( r.after.tried ), count( r.after.evaluated ), count( r.after.committed ), count( r.after.passes ), 1e6 * s / std::max<double>( 1, r.after.tried ),
                 1e6 * s / std::max<double>( 1, r.after.evaluated ), static_cast<long long>( r.before.alpha ), static_cast<long long>( r.after.alpha ), static_cast<long long>( r.before.suppressed ),
                 static_cast<long long>( r.after.suppressed ) );
    std::printf( "BENCH_ADC objective=%s seconds=%.6f tried=%llu evaluated=%llu committed=%llu suppressed_before=%lld suppressed_after=%lld\n", name, s, count( r.after.tried ),
                 count( r.after.evaluated ), count( r.after.committed ), static_cast<long long>( r.before.suppressed ), static_cast<long long>( r.after.suppressed ) );
  }

  // 4. Voronoi diagram + locateRegions.
  t0 = Clock::now();
  const vbas::VoronoiDiagram diagram( placement.sites );
  const std::vector<std::size_t> regionAggregate = vbas::locateRegions( points, diagram );
  stages[3].seconds = seconds( t0, Clock::now() );

  // 5. The release step: aggregate + suppress.
  t0 = Clock::now();
  const vbas::Release release = vbas::release( regionAggregate, histograms, k );
  stages[4].seconds = seconds( t0, Clock::now() );

  // 6. Evaluate.
  t0 = Clock::now();
  std::vector<vbas::Point> regionSites;
  regionSites.reserve( regionCount );
  for ( const std::size_t s : regionAggregate )
    regionSites.push_back( placement.sites[s] );
  const vbas::MetricValues ev = vbas::measure( { points, regionSites, histograms, release.aggregation, release.suppression, k } );
  stages[5].seconds = seconds( t0, Clock::now() );

  // 8. The release drained from the kept records: each counted again against the histograms, the
  // suppressed ones left out.
  t0 = Clock::now();
  vbas::Recount recount( histograms );
  const std::vector<char> suppressed = vbas::suppressedEntries( histograms, release.aggregation, release.suppression );
  std::size_t drained = 0;
  kept.drain( [&]( std::string_view bytes ) {
    std::uint32_t region = 0, cls = 0;
    std::memcpy( &region, bytes.data(), sizeof region );
    std::memcpy( &cls, bytes.data() + sizeof region, sizeof cls );
    const std::size_t entry = recount.add( region, cls, 1 );
    if ( !suppressed[entry] )
      ++drained;
  } );
  stages[7].seconds = seconds( t0, Clock::now() );
  if ( recount.firstDifference() != vbas::SparseHistograms::npos )
  {
    std::fprintf( stderr, "the records kept are not those counted\n" );
    return 1;
  }

  const double peak = peakRssBytes();
  const double records = static_cast<double>( recordCount );
  double totalSeconds = 0;
  for ( const Stage &s : stages )
    totalSeconds += s.seconds;

  std::printf( "bench_core: %zu regions, %lld records (%s), %zu QIs, k = %lld\n", regionCount, static_cast<long long>( recordCount ), sorted ? "grouped by region" : "random region order", qiCount,
               static_cast<long long>( k ) );
  std::printf( "  classes %zu, region histogram entries %zu, entropy %.4f, MaxCombs %.0f, cutoff %.1f, sites %zu, aggregates %zu\n", encoder.classCount(), histograms.classes.size(), entropy, maxCombs,
               cutoff, sites, release.aggregation.ecs.rows() );
  std::printf( "  kept %zu records, released %zu of them%s\n", kept.size(), drained, kept.spilled() ? ", through spill files" : ", in memory" );
  const auto metric = [&ev]( const char *field ) { return static_cast<double>( *vbas::metricValue( ev, field ) ); };
  std::printf( "  released %.0f, suppressed %.0f (%.2f%%), released ECs %.0f, smallest %.0f\n", metric( "released" ), metric( "suppressed" ), metric( "suppressed_pct" ), metric( "released_ecs" ),
               metric( "smallest_ec" ) );
  std::printf( "  %-34s %12s %16s\n", "stage", "seconds", "records/s" );
  for ( const Stage &s : stages )
    std::printf( "  %-34s %12.6f %16.4g\n", s.name, s.seconds, s.seconds > 0 ? records / s.seconds : INFINITY );
  std::printf( "  %-34s %12.6f\n", "  of which HistogramBuilder::build", buildSeconds );
  std::printf( "  %-34s %12.6f %16.4g\n", "all stages", totalSeconds, records / totalSeconds );
  std::printf( "  peak RSS %.1f MB (%.1f bytes/record); above the %.1f MB start: %.1f MB (%.1f bytes/record)\n", peak / 1e6, peak / records, baselineRss / 1e6, ( peak - baselineRss ) / 1e6,
               ( peak - baselineRss ) / records );

  std::printf( "BENCH_CORE regions=%zu records=%lld", regionCount, static_cast<long long>( recordCount ) );
  for ( const Stage &s : stages )
    std::printf( " %s_s=%.6f %s_rps=%.4g", s.key, s.seconds, s.key, s.seconds > 0 ? records / s.seconds : INFINITY );
  std::printf( " total_s=%.6f total_rps=%.4g peak_rss_mb=%.1f bytes_per_record=%.1f\n", totalSeconds, records / totalSeconds, peak / 1e6, peak / records );
  return 0;
}
