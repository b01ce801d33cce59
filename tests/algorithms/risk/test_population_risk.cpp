// Risk against the population by hand (docs/method.md, Risk against the population): four released
// classes (records f, residents F) = (2, 10), (3, 3), (1, 4), (5, 50); n = 11.
#include "algorithms/risk/population_risk.h"

#include <QtTest>

#include <stdexcept>

using namespace vbas;

namespace
{
const std::vector<ClassPopulation> kClasses { { 2, 10 }, { 3, 3 }, { 1, 4 }, { 5, 50 } };
} // namespace

class TestPopulationRisk : public QObject
{
    Q_OBJECT

  private slots:
    void measuresByHand();
    void atTheThresholdIsNotAbove();
    void populationUniques();
    void theReleaseAsItsOwnPopulation();
    void kMap();
    void noClasses();
    void impossiblePopulationsRefused();
};

void TestPopulationRisk::measuresByHand()
{
  const PopulationRisk r = populationRisk( kClasses, 0.2 );
  QCOMPARE( r.records, 11 );
  QCOMPARE( r.smallestResidents, 3.0 );
  QCOMPARE( r.journalistMax, 1.0 / 3 );
  // (2/10 + 3/3 + 1/4 + 5/50) / 11 = 1.55 / 11
  QVERIFY( qAbs( r.journalistAverage - 1.55 / 11 ) < 1e-15 );
  QCOMPARE( r.marketer, r.journalistAverage );
  QCOMPARE( r.sampleUniques, 1 );     // the class (1, 4)
  QCOMPARE( r.populationUniques, 0 ); // no class has one resident
  // 1/F above 0.2: 1/3 (3 records) and 1/4 (1 record); 1/10 and 1/50 are not.
  QCOMPARE( r.aboveThreshold, 4.0 / 11 );
}

void TestPopulationRisk::atTheThresholdIsNotAbove()
{
  // 1/F = 0.2 exactly is at the threshold, not above it; 1/4 is above.
  const PopulationRisk r = populationRisk( { { 2, 5 }, { 1, 4 } }, 0.2 );
  QCOMPARE( r.aboveThreshold, 1.0 / 3 );
}

void TestPopulationRisk::populationUniques()
{
  // (1, 1) is unique in the population and in the sample; (1, 7) only in the sample.
  const PopulationRisk r = populationRisk( { { 1, 1 }, { 1, 7 }, { 4, 8 } }, 0.13 );
  QCOMPARE( r.populationUniques, 1 );
  QCOMPARE( r.sampleUniques, 2 );
  QCOMPARE( r.journalistMax, 1.0 );
  QVERIFY( qAbs( r.journalistAverage - ( 1.0 + 1.0 / 7 + 0.5 ) / 6 ) < 1e-15 );
  QCOMPARE( r.aboveThreshold, 2.0 / 6 ); // 1 and 1/7 exceed 0.13; 1/8 = 0.125, the third class's 4 records, does not
}

void TestPopulationRisk::theReleaseAsItsOwnPopulation()
{
  // F = f: the journalist measures are the prosecutor's (max 1 / min f; marketer classes / n).
  const PopulationRisk r = populationRisk( { { 2, 2 }, { 3, 3 }, { 5, 5 } }, 0.5 );
  QCOMPARE( r.journalistMax, 0.5 );
  QVERIFY( qAbs( r.marketer - 3.0 / 10 ) < 1e-15 );
  QCOMPARE( r.aboveThreshold, 0.0 ); // 1/2 is at 0.5, not above
}

void TestPopulationRisk::kMap()
{
  QCOMPARE( firstBelowKMap( kClasses, 3 ), -1 );
  QCOMPARE( firstBelowKMap( kClasses, 4 ), 1 ); // (3, 3)
  QCOMPARE( firstBelowKMap( kClasses, 11 ), 0 );
  QCOMPARE( firstBelowKMap( {}, 11 ), -1 );
}

void TestPopulationRisk::noClasses()
{
  const PopulationRisk r = populationRisk( {}, 0.09 );
  QCOMPARE( r.records, 0 );
  QCOMPARE( r.smallestResidents, 0.0 );
  QCOMPARE( r.journalistMax, 0.0 );
  QCOMPARE( r.aboveThreshold, 0.0 );
}

void TestPopulationRisk::impossiblePopulationsRefused()
{
  // Fewer residents than records: the table is not the population the records were drawn from.
  try
  {
    populationRisk( { { 2, 10 }, { 3, 2 } }, 0.09 );
    QFAIL( "fewer residents than records was accepted" );
  }
  catch ( const std::invalid_argument &e )
  {
    QCOMPARE( QString::fromStdString( e.what() ), QStringLiteral( "released class 1 has 2 residents for 3 records: fewer residents than records" ) );
  }
  QVERIFY_EXCEPTION_THROWN( populationRisk( { { 0, 10 } }, 0.09 ), std::invalid_argument );
}

QTEST_APPLESS_MAIN( TestPopulationRisk )
#include "test_population_risk.moc"
