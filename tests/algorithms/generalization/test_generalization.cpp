// Global recoding, local suppression, the information lost at a node and the lattice search
// (docs/method.md, Generalization): hand-worked tables, and on random instances the search against
// every node of the lattice, each release recounted from its records as written.
#include "algorithms/aggregation/aggregation.h"
#include "algorithms/generalization/generalization_metrics.h"
#include "algorithms/generalization/generalized_release.h"
#include "algorithms/generalization/lattice.h"
#include "algorithms/metrics/nue.h"
#include "algorithms/base/random.h"
#include "tests/algorithms/test_util.h"

#include <map>
#include <tuple>
#include <numeric>

using namespace vbas;

class TestGeneralization : public QObject
{
    Q_OBJECT

  private slots:
    void generalizeMergesClasses();
    void remapMergesEntries();
    void localSuppressionStarsFewestValues();
    void recordSuppressionDropsSmallClasses();
    void kMapCountsResidentsUnderLabels();
    void averageRiskCutsWrittenClasses();
    void starSetsFewestThenLeastInformation();
    void handLatticeNoSuppression();
    void handLatticeSuppressionLimit();
    void searchEqualsBruteForce();
    void sensitivePairsFollowWrittenClasses();
    void metricsOfWrittenRelease();
};

namespace
{
class NoProgress : public Progress
{
  public:
    bool canceled() const override { return false; }
    void report( double, const std::string & ) override {}
};

std::vector<HierarchyRow> rows( const std::vector<std::vector<std::string>> &fields )
{
  std::vector<HierarchyRow> out;
  for ( std::size_t i = 0; i < fields.size(); ++i )
    out.push_back( { i + 1, fields[i] } );
  return out;
}

//! age: a1, a2 -> A, a3 -> B, then "*"; sex: F, M -> "*". Codes are the values' hierarchy order.
std::vector<QiHierarchy> ageAndSex()
{
  return { { Hierarchy::fromRows( rows( { { "a1", "A", "*" }, { "a2", "A", "*" }, { "a3", "B", "*" } } ) ), { 0, 1, 2 } }, { Hierarchy::suppressionOnly( { "F", "M" } ), { 0, 1 } } };
}

//! Classes (a1, F), (a2, F), (a3, M), (a1, M).
const std::vector<std::uint32_t> kClassCodes { 0, 0, 1, 0, 2, 1, 0, 1 };

//! Every region in one aggregate whatever the node.
Geography oneAggregate( const SparseHistograms &regions )
{
  auto aggregation = std::make_shared<const Aggregation>( aggregate( std::vector<std::size_t>( regions.rows(), 0 ), regions ) );
  return [aggregation]( const LatticeNode &, const NodeClasses & ) { return aggregation; };
}

LatticeSearch search( const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &codes, const SparseHistograms &regions, const Geography &geography, const LatticeSettings &settings )
{
  NoProgress progress;
  return searchLattice( qis, codes, regions, geography, settings, progress );
}
} // namespace

void TestGeneralization::generalizeMergesClasses()
{
  // At (age 1, sex 0): (a1, F) and (a2, F) are both (A, F), class 0; (a3, M) is (B, M), 1; (a1, M) is (A, M), 2.
  const Generalization g = generalize( kClassCodes, ageAndSex(), { 1, 0 } );
  QCOMPARE( g.classCount, std::size_t( 3 ) );
  QCOMPARE( g.classOf, std::vector<std::uint32_t>( { 0, 0, 1, 2 } ) );
  QCOMPARE( g.labels, std::vector<std::uint32_t>( { 0, 0, 1, 1, 0, 1 } ) );
  QCOMPARE( generalize( kClassCodes, ageAndSex(), { 2, 1 } ).classCount, std::size_t( 1 ) );
}

void TestGeneralization::remapMergesEntries()
{
  const SparseHistograms h = vbastest::histograms( { { { 0, 2 }, { 1, 3 }, { 3, 1 } }, { { 2, 4 } } } );
  const SparseHistograms r = remap( h, { 0, 0, 1, 2 } );
  QCOMPARE( r.offsets, std::vector<std::size_t>( { 0, 2, 3 } ) );
  QCOMPARE( r.classes, std::vector<std::uint32_t>( { 0, 2, 1 } ) );
  QCOMPARE( r.counts, std::vector<std::int64_t>( { 5, 1, 4 } ) );
}

void TestGeneralization::localSuppressionStarsFewestValues()
{
  // One aggregate, k = 3, labels (age, sex): (x, F) 2, (x, M) 2, (y, F) 1, (z, M) 5. Starring sex
  // first (the set order given) joins (x, F) and (x, M) into (x, *) of 4; (y, F) reaches no group of 3
  // by starring age, nor both: dropped. (z, M) is released as it is.
  const SparseHistograms ecs = vbastest::histograms( { { { 0, 2 }, { 1, 2 }, { 2, 1 }, { 3, 5 } } } );
  const std::vector<std::uint32_t> labels { 0, 0, 0, 1, 1, 0, 2, 1 };
  const ValueSuppression s = suppressValues( ecs, labels, 2, { 0b10, 0b01, 0b11 }, 3 );
  QCOMPARE( s.starred, std::vector<std::uint32_t>( { 0b10, 0b10, 0b11, 0 } ) );
  QCOMPARE( s.dropped, std::vector<char>( { 0, 0, 1, 0 } ) );
  QCOMPARE( s.smallClassRecords, std::int64_t( 5 ) );
  QCOMPARE( s.starredRecords, std::int64_t( 4 ) );
  QCOMPARE( s.starredValues, std::int64_t( 4 ) );
  QCOMPARE( s.droppedRecords, std::int64_t( 1 ) );
  // Starring age first instead: (x, F) and (y, F) are (*, F) of 3; (x, M) alone stays below 3 with
  // age starred, reaches nothing with sex starred (the others are placed) nor both: dropped.
  const ValueSuppression t = suppressValues( ecs, labels, 2, { 0b01, 0b10, 0b11 }, 3 );
  QCOMPARE( t.starred, std::vector<std::uint32_t>( { 0b01, 0b11, 0b01, 0 } ) );
  QCOMPARE( t.droppedRecords, std::int64_t( 2 ) );
}

void TestGeneralization::recordSuppressionDropsSmallClasses()
{
  const SparseHistograms ecs = vbastest::histograms( { { { 0, 2 }, { 1, 2 }, { 2, 1 }, { 3, 5 } } } );
  const ValueSuppression s = suppressValues( ecs, { 0, 0, 0, 1, 1, 0, 2, 1 }, 2, {}, 3 );
  QCOMPARE( s.dropped, std::vector<char>( { 1, 1, 1, 0 } ) );
  QCOMPARE( s.droppedRecords, std::int64_t( 5 ) );
  QCOMPARE( s.starredRecords, std::int64_t( 0 ) );
}

void TestGeneralization::kMapCountsResidentsUnderLabels()
{
  // One region: records (a1, F) 3 and (a3, M) 1. Residents: (a1, F) 4, (a2, F) 5, (a3, M) 2, (a3, F) 3,
  // (a1, M) 1, and 10 men of an age the hierarchy does not hold. k = 5, k-map, at (age 1, sex 0):
  // (A, F) has 4 + 5 = 9 residents, released with its 3 records (k-anonymity would suppress them);
  // (B, M) has 2, below 5.
  const std::vector<QiHierarchy> qis = ageAndSex();
  const SparseHistograms regions = vbastest::histograms( { { { 0, 3 }, { 2, 1 } } } );
  PopulationCells population;
  population.qiCount = 2;
  for ( const auto &[age, sex, residents] :
        std::vector<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>> { { 0, 0, 4 }, { 1, 0, 5 }, { 2, 1, 2 }, { 2, 0, 3 }, { 0, 1, 1 }, { kValueOutsideHierarchy, 1, 10 } } )
    population.add( 0, { age, sex }, residents );
  LatticeSettings settings;
  settings.k = 5;
  settings.population = &population;
  const LossModel model( qis, kClassCodes, regions.classTotals( 4 ), { 4 } );
  const NodeRelease record = evaluateNode( { 1, 0 }, qis, kClassCodes, regions.classTotals( 4 ), model, oneAggregate( regions ), settings );
  QCOMPARE( record.suppression.dropped, std::vector<char>( { 0, 1 } ) );
  QCOMPARE( record.suppression.smallClassRecords, std::int64_t( 1 ) );
  // Local suppression, sex starred first: (B, *) has a3's 2 + 3 = 5 residents: released so.
  const StarredResidents residents = nodeResidents( population, qis, { 1, 0 }, { 0 } );
  const ValueSuppression sexFirst = suppressValues( record.ecs, record.generalization.labels, 2, { 0b10, 0b01 }, 5, &residents );
  QCOMPARE( sexFirst.starred, std::vector<std::uint32_t>( { 0, 0b10 } ) );
  QCOMPARE( sexFirst.dropped, std::vector<char>( { 0, 0 } ) );
  // Age starred first: (*, M) has 2 + 1 + the 10 men of no age in the hierarchy, whom "*" covers.
  QCOMPARE( residents.of( 0, &record.generalization.labels[2], 0b01 ), std::int64_t( 13 ) );
  QCOMPARE( suppressValues( record.ecs, record.generalization.labels, 2, { 0b01 }, 5, &residents ).starred, std::vector<std::uint32_t>( { 0, 0b01 } ) );
  // Without residents (k-anonymity), both classes are below 5 records.
  QCOMPARE( suppressValues( record.ecs, record.generalization.labels, 2, {}, 5 ).droppedRecords, std::int64_t( 4 ) );

  // The release as written with sex starred on (B, M): (A, F) 9 residents, (B, *) 5; nothing suppressed at k = 5, (B, *) at 6.
  NodeRelease starred = record;
  starred.suppression = sexFirst;
  const WrittenClasses w = writtenClasses( regions, starred );
  QCOMPARE( w.starred, std::vector<std::uint32_t>( { 0, 0b10 } ) );
  const SparseHistograms written = writtenResidents( population, qis, starred, w, nullptr, 1 );
  QCOMPARE( written.counts[written.find( 0, w.entryClass[0] )], std::int64_t( 9 ) );
  QCOMPARE( written.counts[written.find( 0, w.entryClass[1] )], std::int64_t( 5 ) );
  QCOMPARE( writtenRelease( w, starred, Criterion( 5, written ) ).suppression.suppressedRecords, std::int64_t( 0 ) );
  QCOMPARE( writtenRelease( w, starred, Criterion( 6, written ) ).suppression.suppressedRecords, std::int64_t( 1 ) );
}

void TestGeneralization::averageRiskCutsWrittenClasses()
{
  // One aggregate, labels (age, sex): (x, F) 2, (x, M) 2, (y, F) 1, (z, M) 5; k = 2, record suppression
  // drops (y, F). The prosecutor's average, classes over records: 3 / 9. At 0.25 the riskiest (fewest
  // records, then the lower entry) go: (x, F) leaves 2 / 7 = 0.286, (x, M) 1 / 5 = 0.2.
  const SparseHistograms ecs = vbastest::histograms( { { { 0, 2 }, { 1, 2 }, { 2, 1 }, { 3, 5 } } } );
  const std::vector<std::uint32_t> labels { 0, 0, 0, 1, 1, 0, 2, 1 };
  ValueSuppression s = suppressValues( ecs, labels, 2, {}, 2 );
  meetAverageRisk( ecs, labels, 2, nullptr, 0.25, s );
  QCOMPARE( s.dropped, std::vector<char>( { 1, 1, 1, 0 } ) );
  QCOMPARE( s.droppedRecords, std::int64_t( 5 ) );
  QCOMPARE( s.smallClassRecords, std::int64_t( 5 ) );
  // Local suppression at k = 3 writes (x, F) and (x, M) as (x, *), one class of 4: with (z, M), 2 / 9 =
  // 0.222. At 0.2 the class (x, *) goes whole, its starred values with it: 1 / 5.
  ValueSuppression starred = suppressValues( ecs, labels, 2, { 0b10, 0b01, 0b11 }, 3 );
  QCOMPARE( starred.starredRecords, std::int64_t( 4 ) );
  meetAverageRisk( ecs, labels, 2, nullptr, 0.2, starred );
  QCOMPARE( starred.dropped, std::vector<char>( { 1, 1, 1, 0 } ) );
  QCOMPARE( starred.starredRecords, std::int64_t( 0 ) );
  QCOMPARE( starred.starredValues, std::int64_t( 0 ) );
  QCOMPARE( starred.smallClassRecords, std::int64_t( 5 ) );
  // At 0.25 nothing goes.
  ValueSuppression kept = suppressValues( ecs, labels, 2, { 0b10, 0b01, 0b11 }, 3 );
  meetAverageRisk( ecs, labels, 2, nullptr, 0.25, kept );
  QCOMPARE( kept.droppedRecords, std::int64_t( 1 ) );
}

void TestGeneralization::starSetsFewestThenLeastInformation()
{
  // QI 1 carries the least, then 0, then 2; QI 3 is already "*" (free): never in a set.
  const std::vector<std::uint32_t> sets = starSets( { 1.5, 0.5, 2.0, 0.1 }, 0b1000 );
  QCOMPARE( sets, std::vector<std::uint32_t>( { 0b010, 0b001, 0b100, 0b011, 0b110, 0b101, 0b111 } ) );
}

void TestGeneralization::handLatticeNoSuppression()
{
  // One region: (a1, F) 3, (a2, F) 2, (a3, M) 4, (a1, M) 1; k = 3, no suppression allowed. Only
  // (age 2, sex 0) [(*, F) 5, (*, M) 5], (1, 1) [(A, *) 6, (B, *) 4] and (2, 1) have no EC below 3.
  // Generic NUE (the geography loses nothing: one region):
  //   (2, 0): age 0 -> 1 over all 10: 4 log2(6/4) + 2 log2(6/2); 1 -> 2: 6 log2(10/6) + 4 log2(10/4).
  //   (1, 1): age 0 -> 1 as above; sex 0 -> 1: 10 x log2(10/5).
  const SparseHistograms regions = vbastest::histograms( { { { 0, 3 }, { 1, 2 }, { 2, 4 }, { 3, 1 } } } );
  LatticeSettings settings;
  settings.k = 3;
  settings.suppressionLimit = 0;
  settings.fixedGeography = true;
  const double ageUp = 4 * std::log2( 1.5 ) + 2 * std::log2( 3.0 );
  const double ageTop = ageUp + 6 * std::log2( 10.0 / 6 ) + 4 * std::log2( 2.5 );
  const LatticeSearch s = search( ageAndSex(), kClassCodes, regions, oneAggregate( regions ), settings );
  QCOMPARE( s.latticeSize, std::size_t( 6 ) );
  QVERIFY( s.best );
  QCOMPARE( s.best->node, LatticeNode( { 2, 0 } ) );
  VBAS_COMPARE_NEAR( s.best->loss.genericNue, ageTop, 1e-12 );
  // (1, 1) loses ageUp + 10 bits > ageTop: evaluated or bounded, never chosen.
  QVERIFY( ageUp + 10 > ageTop );
  // Prec: (2, 0) has age at its top for all 10 records: 1 - 10 / 30. LM: each age is "*" (3 leaves of 3): 10 / 30. DM* 25 + 25.
  VBAS_COMPARE_NEAR( s.best->loss.prec, 2.0 / 3, 1e-12 );
  VBAS_COMPARE_NEAR( s.best->loss.lm, 1.0 / 3, 1e-12 );
  VBAS_COMPARE_NEAR( s.best->loss.dmStar, 50, 1e-12 );
  // Every objective picks (2, 0) here: Prec 1/3 < 1/2 of (1, 1), LM 10/30 < 13/30, DM* 50 < 52.
  for ( const Objective objective : { Objective::Prec, Objective::Lm, Objective::DmStar } )
  {
    settings.objective = objective;
    QCOMPARE( search( ageAndSex(), kClassCodes, regions, oneAggregate( regions ), settings ).best->node, LatticeNode( { 2, 0 } ) );
  }
}

void TestGeneralization::handLatticeSuppressionLimit()
{
  // With 10 % (one record) allowed, (1, 0) [(A, F) 5, (B, M) 4, (A, M) 1] drops (a1, M): the age
  // step 0 -> 1 of all records, and the dropped record alone from (A, M) to (*, *) loses nothing.
  const SparseHistograms regions = vbastest::histograms( { { { 0, 3 }, { 1, 2 }, { 2, 4 }, { 3, 1 } } } );
  LatticeSettings settings;
  settings.k = 3;
  settings.suppressionLimit = 0.1;
  settings.fixedGeography = true;
  const LatticeSearch s = search( ageAndSex(), kClassCodes, regions, oneAggregate( regions ), settings );
  QCOMPARE( s.best->node, LatticeNode( { 1, 0 } ) );
  VBAS_COMPARE_NEAR( s.best->loss.genericNue, 4 * std::log2( 1.5 ) + 2 * std::log2( 3.0 ), 1e-12 );
  QCOMPARE( s.best->suppression.droppedRecords, std::int64_t( 1 ) );
  // (0, 0) has 3 records below k: over the limit, and (0, 0) sits below (1, 0) and (0, 1).
  QVERIFY( s.leastSuppressed <= 1 );
}

namespace
{
//! A random hierarchy of n values: pairs share a level-1 label, then "*", or value -> "*".
QiHierarchy randomQi( Random &random, std::size_t n )
{
  std::vector<std::vector<std::string>> fields;
  const bool twoLevels = random.below( 10 ) < 3;
  for ( std::size_t v = 0; v < n; ++v )
  {
    std::vector<std::string> row { "v" + std::to_string( v ) };
    if ( !twoLevels )
      row.push_back( "g" + std::to_string( v / 2 ) );
    row.push_back( "*" );
    fields.push_back( row );
  }
  QiHierarchy qi { Hierarchy::fromRows( rows( fields ) ), {} };
  for ( std::uint32_t v = 0; v < n; ++v )
    qi.valueOfCode.push_back( v );
  return qi;
}

/**
 * A population table over regions: each (region, class) of the records with at least its records, and
 * a few cells no record has, some of a value outside its QI's hierarchy.
 */
PopulationCells randomPopulation( Random &random, const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &codes, const SparseHistograms &regions )
{
  PopulationCells cells;
  cells.qiCount = qis.size();
  for ( std::uint32_t region = 0; region < regions.rows(); ++region )
  {
    for ( std::size_t e = regions.offsets[region]; e < regions.offsets[region + 1]; ++e )
    {
      std::vector<std::uint32_t> values;
      for ( std::size_t q = 0; q < qis.size(); ++q )
        values.push_back( qis[q].valueOfCode[codes[regions.classes[e] * qis.size() + q]] );
      cells.add( region, values, regions.counts[e] + static_cast<std::int64_t>( random.below( 3 ) ) );
    }
    for ( std::size_t n = random.below( 6 ); n > 0; --n )
    {
      std::vector<std::uint32_t> values;
      for ( const QiHierarchy &qi : qis )
        values.push_back( random.below( 10 ) == 0 ? kValueOutsideHierarchy : static_cast<std::uint32_t>( random.below( qi.hierarchy.valueCount() ) ) );
      cells.add( region, values, static_cast<std::int64_t>( random.below( 4 ) ) );
    }
  }
  return cells;
}

//! A value's label at a level as the release writes it; a value outside the hierarchy has none but "*" (its top).
std::string labelText( const QiHierarchy &qi, std::size_t level, std::uint32_t value )
{
  const Hierarchy &h = qi.hierarchy;
  if ( value == kValueOutsideHierarchy )
    return level + 1 == h.levels() && h.labelCount( level ) == 1 ? h.label( level, 0 ) : std::string( "(none)" );
  return h.label( level, h.labelId( level, value ) );
}

/**
 * The residents of a written class (aggregate, labels with "*") counted cell by cell by the labels' texts:
 * a cell of a region of the aggregate whose label is the class's on every QI not written "*".
 */
std::int64_t residentsOf( const std::vector<std::string> &tuple, const NodeRelease &r, const std::vector<QiHierarchy> &qis, const PopulationCells &population )
{
  std::int64_t residents = 0;
  for ( std::size_t cell = 0; cell < population.region.size(); ++cell )
  {
    bool matches = std::to_string( r.aggregation->regionAggregateIndex[population.region[cell]] ) == tuple[0];
    for ( std::size_t q = 0; q < qis.size() && matches; ++q )
      matches = tuple[q + 1] == "*" || labelText( qis[q], r.node[q], population.values[cell * qis.size() + q] ) == tuple[q + 1];
    residents += matches ? population.residents[cell] : 0;
  }
  return residents;
}

/**
 * Every record as written, (aggregate, labels with "*"), counted again from the region histograms: no
 * class below k records, or, with population (k-map), below k residents counted by residentsOf; under
 * the average risk model (settings.averageThreshold), the released records' average risk at most it.
 */
void recountWritten( const NodeRelease &r, const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &codes, const SparseHistograms &regions, std::int64_t records,
                     const LatticeSettings &settings )
{
  const std::int64_t k = settings.k;
  const PopulationCells *population = settings.population;
  std::map<std::pair<std::size_t, std::uint32_t>, std::size_t> entry; // (aggregate, generalized class) -> EC entry
  for ( std::size_t a = 0; a < r.ecs.rows(); ++a )
    for ( std::size_t e = r.ecs.offsets[a]; e < r.ecs.offsets[a + 1]; ++e )
      entry[{ a, r.ecs.classes[e] }] = e;
  std::map<std::vector<std::string>, std::int64_t> written;
  std::int64_t dropped = 0;
  for ( std::size_t region = 0; region < regions.rows(); ++region )
    for ( std::size_t i = regions.offsets[region]; i < regions.offsets[region + 1]; ++i )
    {
      const std::uint32_t c = regions.classes[i];
      const std::size_t a = r.aggregation->regionAggregateIndex[region];
      const std::size_t e = entry.at( { a, r.generalization.classOf[c] } );
      if ( r.suppression.dropped[e] )
      {
        dropped += regions.counts[i];
        continue;
      }
      std::vector<std::string> tuple { std::to_string( a ) };
      for ( std::size_t q = 0; q < qis.size(); ++q )
      {
        const Hierarchy &h = qis[q].hierarchy;
        const std::size_t value = qis[q].valueOfCode[codes[c * qis.size() + q]];
        tuple.push_back( ( r.suppression.starred[e] >> q & 1 ) ? std::string( "*" ) : h.label( r.node[q], h.labelId( r.node[q], value ) ) );
      }
      written[tuple] += regions.counts[i];
    }
  long double risk = 0, released = 0;
  for ( const auto &[tuple, n] : written )
  {
    const std::int64_t size = population ? residentsOf( tuple, r, qis, *population ) : n;
    QVERIFY2( size >= k, qPrintable( QStringLiteral( "a written class of %1 records and size %2, k = %3" ).arg( n ).arg( size ).arg( k ) ) );
    const std::int64_t residents = settings.averagePopulation ? residentsOf( tuple, r, qis, *settings.averagePopulation ) : n;
    risk += static_cast<long double>( n ) / static_cast<long double>( std::max<std::int64_t>( residents, 1 ) );
    released += static_cast<long double>( n );
  }
  QVERIFY2( risk <= settings.averageThreshold * released * ( 1 + 1e-12 ),
            qPrintable( QStringLiteral( "an average risk of %1 above %2" ).arg( static_cast<double>( risk / released ) ).arg( settings.averageThreshold ) ) );
  QCOMPARE( dropped, r.suppression.droppedRecords );
  QCOMPARE( dropped + r.suppression.starredRecords <= records, true );
}

//! The generic NUE of a release, record by record from the region histograms (nue.h), QIs and geography.
double genericNueByRecords( const NodeRelease &r, const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &codes, const SparseHistograms &regions )
{
  std::map<std::pair<std::size_t, std::uint32_t>, std::size_t> entry;
  for ( std::size_t a = 0; a < r.ecs.rows(); ++a )
    for ( std::size_t e = r.ecs.offsets[a]; e < r.ecs.offsets[a + 1]; ++e )
      entry[{ a, r.ecs.classes[e] }] = e;
  std::vector<std::vector<Generalised>> perQi( qis.size() );
  std::vector<Generalised> geography;
  for ( std::size_t region = 0; region < regions.rows(); ++region )
    for ( std::size_t i = regions.offsets[region]; i < regions.offsets[region + 1]; ++i )
    {
      const std::uint32_t c = regions.classes[i];
      const std::size_t a = r.aggregation->regionAggregateIndex[region];
      const std::size_t e = entry.at( { a, r.generalization.classOf[c] } );
      for ( std::size_t q = 0; q < qis.size(); ++q )
      {
        std::vector<std::uint32_t> path;
        for ( std::size_t level = 0; level <= qis[q].starLevel(); ++level )
          path.push_back( qis[q].label( level, codes[c * qis.size() + q] ) );
        perQi[q].push_back( { regions.counts[i], path, ( r.suppression.starred[e] >> q & 1 ) ? qis[q].starLevel() : r.node[q] } );
      }
      geography.push_back( { regions.counts[i], { std::uint32_t( region ), std::uint32_t( a ), 0 }, r.suppression.dropped[e] ? 2u : 1u } );
    }
  double bits = genericNonUniformEntropy( geography );
  for ( const std::vector<Generalised> &records : perQi )
    bits += genericNonUniformEntropy( records );
  return bits;
}
} // namespace

void TestGeneralization::searchEqualsBruteForce()
{
  // Random lattices of 2-3 QIs over 4-8 regions, fixed or node-dependent geography, every objective,
  // record or local suppression, k-anonymity, k-map or the average risk model over a random population
  // table: the search's choice loses exactly as little as the best node found by evaluating every node,
  // and every node's release meets its criterion as written (residents counted by the labels' texts).
  Random random( 20261126 );
  const Objective objectives[] = { Objective::GenericNue, Objective::Prec, Objective::Lm, Objective::DmStar };
  for ( int round = 0; round < 300; ++round )
  {
    std::vector<QiHierarchy> qis;
    const std::size_t qiCount = 2 + random.below( 2 );
    for ( std::size_t q = 0; q < qiCount; ++q )
      qis.push_back( randomQi( random, 2 + random.below( 3 ) ) );
    std::vector<std::uint32_t> codes;
    std::map<std::vector<std::uint32_t>, std::uint32_t> classIds;
    std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> rowsOfRegions( 4 + random.below( 5 ) );
    std::int64_t records = 0;
    for ( auto &row : rowsOfRegions )
    {
      std::map<std::uint32_t, std::int64_t> counts;
      for ( std::size_t n = random.below( 12 ); n > 0; --n )
      {
        std::vector<std::uint32_t> tuple;
        for ( const QiHierarchy &qi : qis )
          tuple.push_back( static_cast<std::uint32_t>( random.below( qi.valueOfCode.size() ) ) );
        const auto [it, added] = classIds.emplace( tuple, static_cast<std::uint32_t>( classIds.size() ) );
        if ( added )
          codes.insert( codes.end(), tuple.begin(), tuple.end() );
        ++counts[it->second];
        ++records;
      }
      row.assign( counts.begin(), counts.end() );
    }
    const SparseHistograms regions = vbastest::histograms( rowsOfRegions );
    LatticeSettings settings;
    settings.k = 2 + static_cast<std::int64_t>( random.below( 3 ) );
    settings.suppressionLimit = std::vector<double>( { 0.0, 0.1, 0.3 } )[random.below( 3 )];
    settings.localSuppression = random.below( 2 ) == 1;
    settings.objective = objectives[random.below( 4 )];
    settings.fixedGeography = random.below( 2 ) == 1;
    const PopulationCells population = randomPopulation( random, qis, codes, regions );
    const std::uint64_t risk = random.below( 4 ); // k-anonymity, k-map, the average risk model (prosecutor's, journalist's)
    settings.population = risk == 1 ? &population : nullptr;
    settings.averageThreshold = risk >= 2 ? 0.05 + 0.4 * static_cast<double>( random.below( 100 ) ) / 100 : 1;
    settings.averagePopulation = risk == 3 ? &population : nullptr;
    // A fixed geography: regions in threes; otherwise the grouping follows the node's category counts.
    const Geography geography = [&]( const LatticeNode &, const NodeClasses &classes ) {
      std::size_t modulus = 3;
      if ( !settings.fixedGeography )
        modulus = 1 + std::accumulate( classes.categoryCounts.begin(), classes.categoryCounts.end(), std::size_t( 0 ) ) % 3;
      std::vector<std::size_t> groups;
      for ( std::size_t r = 0; r < regions.rows(); ++r )
        groups.push_back( r / modulus );
      return std::make_shared<const Aggregation>( aggregate( groups, regions ) );
    };
    if ( records == 0 )
      continue;
    const LatticeSearch found = search( qis, codes, regions, geography, settings );

    std::vector<std::int64_t> regionRecords;
    for ( std::size_t r = 0; r < regions.rows(); ++r )
      regionRecords.push_back( regions.rowTotal( r ) );
    const std::vector<std::int64_t> classRecords = regions.classTotals( codes.size() / qiCount );
    const LossModel model( qis, codes, classRecords, regionRecords );
    std::optional<double> bestLoss;
    std::vector<LatticeNode> nodes { LatticeNode() };
    for ( const QiHierarchy &qi : qis )
    {
      std::vector<LatticeNode> longer;
      for ( const LatticeNode &node : nodes )
        for ( std::size_t level = 0; level < qi.hierarchy.levels(); ++level )
        {
          LatticeNode next = node;
          next.push_back( level );
          longer.push_back( next );
        }
      nodes = longer;
    }
    for ( const LatticeNode &node : nodes )
    {
      const NodeRelease r = evaluateNode( node, qis, codes, classRecords, model, geography, settings );
      recountWritten( r, qis, codes, regions, records, settings );
      // The written classes' release suppresses exactly the dropped records and releases no EC below k (records, or residents).
      const WrittenClasses w = writtenClasses( regions, r );
      const SparseHistograms residents = settings.population ? writtenResidents( population, qis, r, w, nullptr, regions.rows() ) : SparseHistograms();
      const Release written = writtenRelease( w, r, settings.population ? Criterion( settings.k, residents ) : Criterion::averageRisk( settings.k, settings.averageThreshold, nullptr ) );
      QCOMPARE( written.suppression.suppressedRecords, r.suppression.droppedRecords );
      for ( std::size_t e = 0; e < written.aggregation.ecs.counts.size(); ++e )
        QVERIFY( written.suppression.suppressed[e] || settings.population || written.aggregation.ecs.counts[e] >= settings.k );
      VBAS_COMPARE_NEAR( r.loss.genericNue, genericNueByRecords( r, qis, codes, regions ), 1e-9 );
      QVERIFY( model.bound( settings.objective, node ) <= r.loss.objective( settings.objective ) + 1e-9 );
      if ( static_cast<double>( r.suppression.smallClassRecords ) <= settings.suppressionLimit * static_cast<double>( records ) )
        bestLoss = std::min( bestLoss.value_or( r.loss.objective( settings.objective ) ), r.loss.objective( settings.objective ) );
    }
    QCOMPARE( found.best.has_value(), bestLoss.has_value() );
    if ( bestLoss )
      VBAS_COMPARE_NEAR( found.best->loss.objective( settings.objective ), *bestLoss, 1e-9 );
    QCOMPARE( found.latticeSize, nodes.size() );
    QVERIFY( found.evaluated + found.prunedBelow + found.prunedByBound <= nodes.size() );
  }
}

void TestGeneralization::sensitivePairsFollowWrittenClasses()
{
  // One region, k = 3 at (age 1, sex 0): (A, F) 5 released, (B, M) 4 released, (A, M) 1 dropped.
  // Sensitive pairs: (a1, F) flu 3; (a2, F) flu 1, cold 1; (a3, M) cold 4; (a1, M) flu 1. Written:
  // (A, F) flu 4 + cold 1; (B, M) cold 4; the dropped (A, M) flu 1 apart.
  const SparseHistograms regions = vbastest::histograms( { { { 0, 3 }, { 1, 2 }, { 2, 4 }, { 3, 1 } } } );
  SensitivePairs pairs;
  std::vector<std::pair<std::uint32_t, std::int64_t>> row;
  for ( const auto &[cls, value, n] : std::vector<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>> { { 0, 0, 3 }, { 1, 0, 1 }, { 1, 1, 1 }, { 2, 1, 4 }, { 3, 0, 1 } } )
    row.emplace_back( pairs.id( cls, value ), n );
  const SensitiveHistograms sensitive = pairs.finish( vbastest::histograms( { row } ), 2 );
  LatticeSettings settings;
  settings.k = 3;
  const std::vector<QiHierarchy> qis = ageAndSex();
  const LossModel model( qis, kClassCodes, regions.classTotals( 4 ), { 10 } );
  const NodeRelease r = evaluateNode( { 1, 0 }, qis, kClassCodes, regions.classTotals( 4 ), model, oneAggregate( regions ), settings );
  const WrittenClasses w = writtenClasses( regions, r );
  QCOMPARE( w.generalized.size(), std::size_t( 3 ) );
  const SensitiveHistograms written = writtenSensitive( sensitive, regions, w );
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> counts; // (written class, value) -> records
  for ( std::size_t e = 0; e < written.pairs.classes.size(); ++e )
    counts[{ written.pairClass[written.pairs.classes[e]], written.pairValue[written.pairs.classes[e]] }] += written.pairs.counts[e];
  const std::uint32_t af = w.entryClass[0], bm = w.entryClass[2], am = w.entryClass[3];
  QCOMPARE( w.entryClass[1], af );
  QVERIFY( w.dropped[am] && !w.dropped[af] && !w.dropped[bm] );
  const std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> expected { { { af, 0 }, 4 }, { { af, 1 }, 1 }, { { bm, 1 }, 4 }, { { am, 0 }, 1 } };
  QCOMPARE( counts, expected );
}

void TestGeneralization::metricsOfWrittenRelease()
{
  // Two regions in one aggregate at (age 1, sex 0): a1, a2 -> A (2 values), a3 -> B (1 value). Region 0:
  // (a1, F) 3 and (a2, F) 2 written (A, F); (a1, M) 2 written (A, *). Region 1: (a3, M) 4 written (B, M);
  // (a1, M) 1 dropped.
  const SparseHistograms regions = vbastest::histograms( { { { 0, 3 }, { 1, 2 }, { 3, 2 } }, { { 2, 4 }, { 3, 1 } } } );
  WrittenClasses w;
  w.entryClass = { 0, 0, 1, 2, 3 };
  w.entryStarred = { 0, 0, 0b10, 0, 0 };
  w.dropped = { 0, 0, 0, 1 };
  const GeneralizationMetrics m = generalizationMetrics( ageAndSex(), { 1, 0 }, kClassCodes, regions, w, { 0, 0 } );
  // Generalized: the 7 records of region 0 (age A); (B, M) is as it was (B holds a3 alone).
  QCOMPARE( m.recordsGeneralized, std::int64_t( 7 ) );
  // GC: ages of region 0 (7), sexes starred (2), both values of the dropped record (2), of 12 x 2.
  VBAS_COMPARE_NEAR( m.gc, 11.0 / 24, 1e-12 );
  // ARE. Spread over the aggregate: age A 3/2 + 2/2 + 2/2 = 3.5 per value, B 4; sex F 5, M 4, "*" 2/2
  // = 1 per value. Halved per region: a1, a2 1.75, a3 2; F 3, M 2.5. Queries (records, estimate):
  // region 0 a1 (5, 1.75), a2 (2, 1.75), F (5, 3), M (2, 2.5); region 1 a3 (4, 2), a1 (1, 1.75), M (5, 2.5).
  QCOMPARE( m.queries, std::size_t( 7 ) );
  VBAS_COMPARE_NEAR( m.are, ( 0.65 + 0.125 + 0.4 + 0.25 + 0.5 + 0.75 + 0.5 ) / 7, 1e-12 );
  // Nothing coarsened, each region alone: no loss, every count exact.
  WrittenClasses exact;
  exact.entryClass = { 0, 1, 2, 3, 4 };
  exact.entryStarred.assign( 5, 0 );
  exact.dropped.assign( 5, 0 );
  const GeneralizationMetrics none = generalizationMetrics( ageAndSex(), { 0, 0 }, kClassCodes, regions, exact, { 0, 1 } );
  QCOMPARE( none.recordsGeneralized, std::int64_t( 0 ) );
  QCOMPARE( none.gc, 0.0 );
  QCOMPARE( none.are, 0.0 );
}

QTEST_APPLESS_MAIN( TestGeneralization )
#include "test_generalization.moc"
