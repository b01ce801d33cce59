// Population uniques estimated from the sample (docs/method.md, "Population uniques estimated from the
// sample"): Zayatz's and Shlosser's formulas by hand; the Pitman and SNB estimates on populations drawn
// from their own models, sampled, and their true uniques counted; the SNB root put back into its
// equations summed term by term; the model Dankar's rule chooses on each side of a sampling fraction of 0.1.
#include "algorithms/risk/population_uniqueness.h"

#include <QtTest>

#include <cmath>
#include <random>
#include <stdexcept>

using namespace vbas;

namespace
{

//! A population's class sizes and a sample of it: each resident drawn with probability fraction.
struct Drawn
{
    double population = 0;
    double uniques = 0; //!< classes of one resident in the population
    ClassSizes sample;
};

Drawn sampled( const std::vector<std::int64_t> &populationClasses, double fraction, std::mt19937_64 &random )
{
  Drawn d;
  std::vector<std::int64_t> sample;
  for ( const std::int64_t residents : populationClasses )
  {
    d.population += static_cast<double>( residents );
    d.uniques += residents == 1 ? 1 : 0;
    const std::int64_t records = std::binomial_distribution<std::int64_t>( residents, fraction )( random );
    if ( records > 0 )
      sample.push_back( records );
  }
  d.sample = classSizes( sample );
  return d;
}

//! A population of people seated by the Chinese restaurant process of Pitman's formula (theta, alpha).
std::vector<std::int64_t> pitmanPopulation( int people, double theta, double alpha, std::mt19937_64 &random )
{
  std::vector<std::int64_t> classes;
  std::vector<int> seatOf; // the class of each person seated, to pick a class in proportion to its size
  std::uniform_real_distribution<double> uniform( 0, 1 );
  for ( int i = 0; i < people; ++i )
  {
    const double newClass = ( theta + alpha * static_cast<double>( classes.size() ) ) / ( theta + i );
    int chosen = -1;
    if ( i == 0 || uniform( random ) < newClass )
    {
      chosen = static_cast<int>( classes.size() );
      classes.push_back( 0 );
    }
    else // a class in proportion to (size - alpha): a person at random, kept with probability (size - alpha) / size
      do
        chosen = seatOf[std::uniform_int_distribution<int>( 0, i - 1 )( random )];
      while ( uniform( random ) >= ( static_cast<double>( classes[chosen] ) - alpha ) / static_cast<double>( classes[chosen] ) );
    ++classes[chosen];
    seatOf.push_back( chosen );
  }
  return classes;
}

//! K classes of 1 + m residents, m negative binomial (alpha, beta): Poisson of a gamma.
std::vector<std::int64_t> snbPopulation( int classes, double alpha, double beta, std::mt19937_64 &random )
{
  std::vector<std::int64_t> sizes;
  std::gamma_distribution<double> rate( alpha, ( 1 - beta ) / beta );
  for ( int j = 0; j < classes; ++j )
    sizes.push_back( 1 + std::poisson_distribution<std::int64_t>( rate( random ) )( random ) );
  return sizes;
}

bool near( double value, double expected, double relative )
{
  return std::abs( value - expected ) <= relative * std::abs( expected );
}

} // namespace

class TestPopulationUniqueness : public QObject
{
    Q_OBJECT

  private slots:
    void sizesOfClasses();
    void zayatzByHand();
    void shlosserByHand();
    void pitmanOnItsOwnPopulation();
    void pitmanScoresVanish();
    void snbOnItsOwnPopulation();
    void snbRootSolvesItsEquations();
    void dankarRuleSwitchesAtOneTenth();
    void noSampleUniques();
    void populationSmallerThanRecordsRefused();
};

void TestPopulationUniqueness::sizesOfClasses()
{
  QCOMPARE( classSizes( { 1, 2, 2, 5, 1 } ), ( ClassSizes { { 1, 2 }, { 2, 2 }, { 5, 1 } } ) );
  QVERIFY_EXCEPTION_THROWN( classSizes( { 3, 0 } ), std::invalid_argument );
}

void TestPopulationUniqueness::zayatzByHand()
{
  // N = 10, n = 5: one class of 1, two of 2 (u = 3). h_1 = C(9,4) / C(10,5) = 126/252 = 1/2;
  // h_2 = 2 C(8,4) / C(10,5) = 140/252 = 5/9. Unique share (1 * 1/2) / (1/2 + 2 * 5/9) = 9/29;
  // population uniques 1 * 9/29 / (5/10) = 18/29.
  QVERIFY( near( zayatzUniques( { { 1, 1 }, { 2, 2 } }, 10 ), 18.0 / 29, 1e-12 ) );
  // A census: every resident sampled, the sample uniques are the population's.
  QVERIFY( near( zayatzUniques( { { 1, 3 }, { 4, 2 } }, 11 ), 3, 1e-12 ) );
}

void TestPopulationUniqueness::shlosserByHand()
{
  // Two classes of 1 and one of 2 at pi = 1/2: sum c_j (1 - pi)^j = 2/2 + 1/4 = 5/4;
  // sum c_j j pi (1 - pi)^(j - 1) = 2 * 1/2 + 1 * 2 * 1/2 * 1/2 = 3/2; K = 3 + 2 * (5/4) / (3/2) = 14/3.
  QVERIFY( near( shlosserClasses( { { 1, 2 }, { 2, 1 } }, 0.5 ), 14.0 / 3, 1e-12 ) );
}

void TestPopulationUniqueness::pitmanOnItsOwnPopulation()
{
  // A sample of a Pitman population is a Pitman partition with the same parameters: the estimate from
  // a 5 % sample must find them, and the population's uniques.
  std::mt19937_64 random( 33 );
  const Drawn d = sampled( pitmanPopulation( 400000, 300, 0.6, random ), 0.05, random );
  const PitmanParameters p = pitmanParameters( d.sample );
  QVERIFY( p.found );
  QVERIFY2( std::abs( p.alpha - 0.6 ) < 0.05, qPrintable( QString::number( p.alpha ) ) );
  QVERIFY2( near( p.theta, 300, 0.5 ), qPrintable( QString::number( p.theta ) ) );
  const double estimate = pitmanUniques( d.sample, d.population );
  QVERIFY2( near( estimate, d.uniques, 0.25 ), qPrintable( QStringLiteral( "%1 estimated, %2 true" ).arg( estimate ).arg( d.uniques ) ) );
}

void TestPopulationUniqueness::pitmanScoresVanish()
{
  // At the maximum of the likelihood its two derivatives are zero; summed here term by term
  // (Hoshino 2001), not by the gamma functions the estimate uses.
  const ClassSizes sizes { { 1, 40 }, { 2, 12 }, { 3, 6 }, { 5, 3 }, { 9, 1 } };
  const PitmanParameters p = pitmanParameters( sizes );
  QVERIFY( p.found );
  double u = 0, n = 0;
  for ( const auto &[size, count] : sizes )
  {
    u += static_cast<double>( count );
    n += static_cast<double>( size * count );
  }
  double dTheta = 0, dAlpha = 0;
  for ( int i = 1; i < u; ++i )
  {
    dTheta += 1 / ( p.theta + i * p.alpha );
    dAlpha += i / ( p.theta + i * p.alpha );
  }
  for ( int i = 1; i < n; ++i )
    dTheta -= 1 / ( p.theta + i );
  for ( const auto &[size, count] : sizes )
    for ( int k = 1; k < size; ++k )
      dAlpha -= static_cast<double>( count ) / ( k - p.alpha );
  QVERIFY2( std::abs( dTheta ) < 1e-5 && std::abs( dAlpha ) < 1e-5, qPrintable( QStringLiteral( "%1 %2" ).arg( dTheta ).arg( dAlpha ) ) );
}

void TestPopulationUniqueness::snbOnItsOwnPopulation()
{
  std::mt19937_64 random( 34 );
  const Drawn d = sampled( snbPopulation( 200000, 0.7, 0.2, random ), 0.3, random );
  const SnbParameters p = snbParameters( d.sample, 0.3 );
  QVERIFY( p.found );
  const double estimate = snbUniques( d.sample, d.population );
  QVERIFY2( near( estimate, d.uniques, 0.25 ), qPrintable( QStringLiteral( "%1 estimated, %2 true" ).arg( estimate ).arg( d.uniques ) ) );
}

void TestPopulationUniqueness::snbRootSolvesItsEquations()
{
  // The expected sample classes of one and two records at the root, summed over the population's
  // class sizes F = 1 + m with the negative binomial's P(m) = P(m - 1) (m - 1 + alpha) / m (1 - beta),
  // equal c1 and c2.
  const ClassSizes sizes { { 1, 500 }, { 2, 140 }, { 3, 60 }, { 4, 30 }, { 7, 10 } };
  const double pi = 0.2;
  const SnbParameters p = snbParameters( sizes, pi );
  QVERIFY( p.found );
  double pm = std::pow( p.beta, p.alpha ), ones = 0, twos = 0;
  for ( int m = 0; m < 20000; ++m )
  {
    if ( m > 0 )
      pm *= ( m - 1 + p.alpha ) / m * ( 1 - p.beta );
    const double f = m + 1;
    ones += pm * f * pi * std::pow( 1 - pi, f - 1 );
    twos += pm * f * ( f - 1 ) / 2 * pi * pi * std::pow( 1 - pi, f - 2 );
  }
  QVERIFY2( near( p.classes * ones, 500, 1e-7 ), qPrintable( QString::number( p.classes * ones ) ) );
  QVERIFY2( near( p.classes * twos, 140, 1e-7 ), qPrintable( QString::number( p.classes * twos ) ) );
}

void TestPopulationUniqueness::dankarRuleSwitchesAtOneTenth()
{
  // A sample with a Pitman estimate: 20,000 records of a Pitman partition.
  std::mt19937_64 random( 35 );
  const ClassSizes sizes = classSizes( pitmanPopulation( 20000, 100, 0.5, random ) );
  const UniquenessEstimate at = estimatePopulationUniques( sizes, 200000 ); // pi = 0.1
  QCOMPARE( at.fraction, 0.1 );
  QVERIFY( std::isfinite( at.pitman ) );
  QCOMPARE( at.model, UniquenessModel::Pitman );
  QCOMPARE( at.uniques, at.pitman );
  const UniquenessEstimate above = estimatePopulationUniques( sizes, 199999 ); // pi just above 0.1
  QVERIFY( above.fraction > 0.1 );
  QVERIFY( std::isfinite( above.snb ) && std::isfinite( above.zayatz ) );
  QCOMPARE( above.model, above.snb < above.zayatz ? UniquenessModel::Snb : UniquenessModel::Zayatz );
  QCOMPARE( above.uniques, std::min( above.snb, above.zayatz ) );
  // No Pitman maximum inside 0 < alpha < 1 (this sample's likelihood is highest as alpha goes to 0):
  // Zayatz instead.
  const UniquenessEstimate ewens = estimatePopulationUniques( { { 1, 500 }, { 2, 140 }, { 3, 60 }, { 4, 30 }, { 7, 10 } }, 50000 );
  QVERIFY( std::isnan( ewens.pitman ) );
  QCOMPARE( ewens.model, UniquenessModel::Zayatz );
  QCOMPARE( ewens.uniques, ewens.zayatz );
}

void TestPopulationUniqueness::noSampleUniques()
{
  const UniquenessEstimate e = estimatePopulationUniques( { { 2, 5 }, { 3, 1 } }, 1000 );
  QCOMPARE( e.model, UniquenessModel::None );
  QCOMPARE( e.uniques, 0.0 );
  QCOMPARE( e.fraction, 0.013 );
}

void TestPopulationUniqueness::populationSmallerThanRecordsRefused()
{
  QVERIFY_EXCEPTION_THROWN( estimatePopulationUniques( { { 1, 5 }, { 2, 3 } }, 10 ), std::invalid_argument );
}

QTEST_APPLESS_MAIN( TestPopulationUniqueness )
#include "test_population_uniqueness.moc"
