// The release step (paper sec. 3.3) and the recount that checks the rows written against the counts
// (vbas::Recount), with the find-only lookups of the QI encoder.
#include "algorithms/base/qi_encoding.h"
#include "algorithms/aggregation/baseline.h"
#include "algorithms/aggregation/release.h"
#include "tests/algorithms/test_util.h"

#include <random>

using namespace vbas;

class TestRelease : public QObject
{
    Q_OBJECT

  private slots:
    void aggregatesMergeAndSuppress();
    void kMapSuppressesByResidents();
    void averageRiskSuppressesTheRiskiest();
    void averageCutFollowsChanges();
    void baselinesGroupRegions();
    void sizedHistogramsMergeCells();
    void aggregateIdsAnyOrder();
    void voronoiReleaseLocatesRegions();
    void suppressedEntriesPerRegion();
    void recountAgrees();
    void recountFindsChanges();
    void encoderFindsOnlyWhatItSaw();
};

namespace
{
//! r0: class 0 x2, class 1 x1; r1: class 0 x3; r2: class 1 x4.
SparseHistograms threeRegions()
{
  return vbastest::histograms( { { { 0, 2 }, { 1, 1 } }, { { 0, 3 } }, { { 1, 4 } } } );
}
} // namespace

void TestRelease::aggregatesMergeAndSuppress()
{
  // Regions 0 and 1 form aggregate 0: class 0 has 2 + 3 = 5 records, class 1 has 1 (< k = 3,
  // suppressed). Region 2 alone is aggregate 1: class 1 has 4 (released). Released 5 + 4 = 9, suppressed 1.
  const Release r = release( { 0, 0, 1 }, threeRegions(), 3 );
  QCOMPARE( r.regionAggregate, std::vector<std::size_t>( { 0, 0, 1 } ) );
  QCOMPARE( r.aggregation.regionAggregateIndex, std::vector<std::size_t>( { 0, 0, 1 } ) );
  QCOMPARE( r.aggregation.ecs.rows(), std::size_t( 2 ) );
  QCOMPARE( r.aggregation.ecs.counts, std::vector<std::int64_t>( { 5, 1, 4 } ) );
  QCOMPARE( r.suppression.suppressed, std::vector<char>( { 0, 1, 0 } ) );
  QCOMPARE( r.suppression.releasedRecords, std::int64_t( 9 ) );
  QCOMPARE( r.suppression.suppressedRecords, std::int64_t( 1 ) );
}

void TestRelease::kMapSuppressesByResidents()
{
  // k-map at k = 6 (docs/method.md, "A release at a stated risk"). Residents: r0 class 0: 4, class 1:
  // 2; r1 class 0: 3, class 1: 3 (no record of class 1 there); r2 class 1: 4. Aggregate 0 (r0, r1):
  // class 0 has 5 records and 4 + 3 = 7 residents (released), class 1 has 1 record and 2 + 3 = 5
  // residents (suppressed). Aggregate 1 (r2): class 1 has 4 records and 4 residents (suppressed).
  // k-anonymity at 6 suppresses all 10 records; k-map 5 of them.
  const SparseHistograms residents = vbastest::histograms( { { { 0, 4 }, { 1, 2 } }, { { 0, 3 }, { 1, 3 } }, { { 1, 4 } } } );
  const Release r = release( { 0, 0, 1 }, threeRegions(), Criterion( 6, residents ) );
  QCOMPARE( r.suppression.suppressed, std::vector<char>( { 0, 1, 1 } ) );
  QCOMPARE( r.suppression.releasedRecords, std::int64_t( 5 ) );
  QCOMPARE( r.suppression.suppressedRecords, std::int64_t( 5 ) );
  QCOMPARE( release( { 0, 0, 1 }, threeRegions(), 6 ).suppression.suppressedRecords, std::int64_t( 10 ) );
  // At k = 5 class 1 of aggregate 0 is released too: its residents are 5, its records 1.
  QCOMPARE( release( { 0, 0, 1 }, threeRegions(), Criterion( 5, residents ) ).suppression.suppressed, std::vector<char>( { 0, 0, 1 } ) );
}

void TestRelease::averageRiskSuppressesTheRiskiest()
{
  // The ECs of threeRegions() in aggregates {0, 0, 1}: 0.c0 5 records, 0.c1 1, 1.c1 4 (docs/method.md,
  // "A release at a stated risk"). Prosecutor, floor 1: 3 classes over 10 records, average 0.3. At most
  // 0.25: 0.c1 (the smallest) goes, 2 / 9 = 0.222. At most 0.2: 1.c1 goes too, 1 / 5 = 0.2 (equal
  // meets it). At most 0.1: everything goes.
  const auto suppressed = [&]( const Criterion &c ) { return release( { 0, 0, 1 }, threeRegions(), c ).suppression; };
  QCOMPARE( suppressed( Criterion::averageRisk( 1, 0.3, nullptr ) ).suppressedRecords, std::int64_t( 0 ) );
  QCOMPARE( suppressed( Criterion::averageRisk( 1, 0.25, nullptr ) ).suppressed, std::vector<char>( { 0, 1, 0 } ) );
  QCOMPARE( suppressed( Criterion::averageRisk( 1, 0.2, nullptr ) ).suppressed, std::vector<char>( { 0, 1, 1 } ) );
  QCOMPARE( suppressed( Criterion::averageRisk( 1, 0.1, nullptr ) ).suppressedRecords, std::int64_t( 10 ) );
  // Journalist, the residents of kMapSuppressesByResidents: F = 7, 5, 4; (5/7 + 1/5 + 4/4) / 10 = 0.191.
  // At most 0.15: 1.c1 (F = 4) goes, (5/7 + 1/5) / 6 = 0.152; then 0.c1 (F = 5), (5/7) / 5 = 0.143.
  const SparseHistograms residents = vbastest::histograms( { { { 0, 4 }, { 1, 2 } }, { { 0, 3 }, { 1, 3 } }, { { 1, 4 } } } );
  QCOMPARE( suppressed( Criterion::averageRisk( 1, 0.2, &residents ) ).suppressedRecords, std::int64_t( 0 ) );
  QCOMPARE( suppressed( Criterion::averageRisk( 1, 0.15, &residents ) ).suppressed, std::vector<char>( { 0, 1, 1 } ) );
  QCOMPARE( suppressed( Criterion::averageRisk( 1, 0.16, &residents ) ).suppressed, std::vector<char>( { 0, 0, 1 } ) );
  // A floor of 2 records suppresses 0.c1 first; (5/7 + 1) / 9 = 0.19 is above 0.15, so 1.c1 goes.
  QCOMPARE( suppressed( Criterion::averageRisk( 2, 0.15, &residents ) ).suppressed, std::vector<char>( { 0, 1, 1 } ) );
  QCOMPARE( suppressed( Criterion::averageRisk( 2, 0.2, &residents ) ).suppressed, std::vector<char>( { 0, 1, 0 } ) );
}

void TestRelease::averageCutFollowsChanges()
{
  // The cut kept up to date (AverageCut) takes as many records as the cut over the whole list
  // (averageRiskCut) after every change of a random set of classes; a rolled-back change leaves it as
  // it was. Classes of 1 to 8 records and that to 4 times as many residents, thresholds from 0.02 to 0.1.
  for ( unsigned seed = 1; seed <= 40; ++seed )
  {
    std::mt19937 random( seed );
    const double threshold = 0.02 + 0.005 * static_cast<double>( random() % 17 );
    const bool prosecutor = seed % 2 == 0;
    AverageCut cut( threshold );
    std::vector<std::int64_t> records, residents;
    const auto wholeCut = [&]() {
      const std::vector<char> cutOnce = averageRiskCut( records, residents, threshold );
      std::int64_t n = 0;
      for ( std::size_t i = 0; i < records.size(); ++i )
        n += cutOnce[i] ? records[i] : 0;
      return n;
    };
    std::int64_t cutSomething = 0;
    for ( int step = 0; step < 300; ++step )
    {
      if ( !records.empty() && random() % 3 == 0 )
      {
        const std::size_t i = random() % records.size();
        cut.change( records[i], residents[i], -1 );
        records.erase( records.begin() + static_cast<std::ptrdiff_t>( i ) );
        residents.erase( residents.begin() + static_cast<std::ptrdiff_t>( i ) );
      }
      else
      {
        records.push_back( 1 + random() % 8 );
        residents.push_back( prosecutor ? records.back() : records.back() * static_cast<std::int64_t>( 1 + random() % 4 ) );
        cut.change( records.back(), residents.back(), 1 );
      }
      const std::int64_t before = cut.records();
      QCOMPARE( before, wholeCut() );
      cutSomething += before > 0;
      cut.mark();
      cut.change( 1, 1, 1 );
      cut.change( records.front(), residents.front(), -1 );
      cut.rollback();
      QCOMPARE( cut.records(), before );
    }
    QVERIFY2( cutSomething > 0, qPrintable( QStringLiteral( "seed %1 at %2" ).arg( seed ).arg( threshold ) ) );
  }
}

void TestRelease::baselinesGroupRegions()
{
  using Groups = std::vector<std::size_t>;
  QCOMPARE( eachRegionAlone( 3 ), Groups( { 0, 1, 2 } ) );
  QCOMPARE( oneAggregate( 3 ), Groups( { 0, 0, 0 } ) );
  // ZIP codes cropped to 3 digits: 100, 112, 100, 104 -> aggregates in the order first met.
  QCOMPARE( groupByKey( { "100", "112", "100", "104" } ), Groups( { 0, 1, 0, 2 } ) );
  // Safe Harbor: zone 100 holds 15,000 + 6,000 = 21,000 residents (kept), 112 holds 20,000 (20,000 or
  // fewer: merged), 104 holds 300 (merged): the merged "000" is first met at the second region.
  QCOMPARE( mergeSparse( { 0, 1, 0, 2 }, { 15000, 20000, 6000, 300 }, 20000 ), Groups( { 0, 1, 0, 1 } ) );
  // The release of a baseline suppresses under the criterion as any: threeRegions() as one aggregate,
  // class 0 holds 5 records and class 1 holds 5: at k = 6 both go, at k = 5 none.
  QCOMPARE( release( oneAggregate( 3 ), threeRegions(), 6 ).suppression.suppressedRecords, std::int64_t( 10 ) );
  QCOMPARE( release( oneAggregate( 3 ), threeRegions(), 5 ).suppression.suppressedRecords, std::int64_t( 0 ) );
  QVERIFY_EXCEPTION_THROWN( mergeSparse( { 0, 1 }, { 1 }, 5 ), std::invalid_argument );
}

void TestRelease::sizedHistogramsMergeCells()
{
  // The records' entries and the residents' cells merged region by region: r1's class 1 cell has
  // residents and no records (an entry of 0 records); r0's class 2 record has no cell (size 0); a cell
  // of 0 residents and no records is left out.
  const SparseHistograms records = vbastest::histograms( { { { 0, 2 }, { 2, 1 } }, { { 0, 3 } } } );
  const SparseHistograms residents = vbastest::histograms( { { { 0, 4 }, { 1, 0 } }, { { 0, 3 }, { 1, 7 } } } );
  const SizedHistograms sized( records, Criterion( 9, residents ) );
  QCOMPARE( sized.entries().offsets, std::vector<std::size_t>( { 0, 2, 4 } ) );
  QCOMPARE( sized.entries().classes, std::vector<std::uint32_t>( { 0, 2, 0, 1 } ) );
  QCOMPARE( sized.entries().counts, std::vector<std::int64_t>( { 2, 1, 3, 0 } ) );
  QCOMPARE( std::vector<std::int64_t>( { sized.size( 0 ), sized.size( 1 ), sized.size( 2 ), sized.size( 3 ) } ), std::vector<std::int64_t>( { 4, 0, 3, 7 } ) );
  QCOMPARE( sized.k(), std::int64_t( 9 ) );
  // Under k-anonymity the entries are the records' and each size is its records.
  const SizedHistograms plain( records, 9 );
  QCOMPARE( &plain.entries(), &records );
  QCOMPARE( plain.size( 1 ), std::int64_t( 1 ) );
}

void TestRelease::aggregateIdsAnyOrder()
{
  // Aggregate ids 7, 3, 7: aggregate indexes go by increasing id, so id 3 (region 1) is index 0
  // and id 7 (regions 0 and 2) is index 1, holding class 0 x2 and class 1 x1 + 4 = 5.
  const Release r = release( { 7, 3, 7 }, threeRegions(), 2 );
  QCOMPARE( r.aggregation.regionAggregateIndex, std::vector<std::size_t>( { 1, 0, 1 } ) );
  QCOMPARE( r.aggregation.aggregateId, std::vector<std::size_t>( { 3, 7 } ) );
  QCOMPARE( r.aggregation.ecs.counts, std::vector<std::int64_t>( { 3, 2, 5 } ) );
  QCOMPARE( r.suppression.suppressedRecords, std::int64_t( 0 ) );
}

void TestRelease::voronoiReleaseLocatesRegions()
{
  // Sites (0, 0) and (10, 0); region points at x = 1, 9 and 4 are nearest to sites 0, 1 and 0.
  const Release r = voronoiRelease( { { 0, 0 }, { 10, 0 } }, { { 1, 0 }, { 9, 0 }, { 4, 0 } }, threeRegions(), 3 );
  QCOMPARE( r.regionAggregate, std::vector<std::size_t>( { 0, 1, 0 } ) );
  // Aggregate 0 = regions 0 and 2: class 0 x2 (suppressed), class 1 x1 + 4 = 5; aggregate 1 = region 1: class 0 x3.
  QCOMPARE( r.aggregation.ecs.counts, std::vector<std::int64_t>( { 2, 5, 3 } ) );
  QCOMPARE( r.suppression.suppressedRecords, std::int64_t( 2 ) );
}

void TestRelease::suppressedEntriesPerRegion()
{
  // As in aggregatesMergeAndSuppress: class 1 is suppressed in aggregate 0 (regions 0 and 1) but not in
  // aggregate 1 (region 2). Entries: r0 class 0, r0 class 1, r1 class 0, r2 class 1.
  const SparseHistograms histograms = threeRegions();
  const Release r = release( { 0, 0, 1 }, histograms, 3 );
  QCOMPARE( suppressedEntries( histograms, r.aggregation, r.suppression ), std::vector<char>( { 0, 1, 0, 0 } ) );
}

void TestRelease::recountAgrees()
{
  const SparseHistograms counted = threeRegions();
  Recount recount( counted );
  QCOMPARE( recount.add( 0, 0, 2 ), std::size_t( 0 ) );
  QCOMPARE( recount.add( 2, 1, 1 ), std::size_t( 3 ) ); // rows may come in any order and split counts
  QCOMPARE( recount.add( 1, 0, 3 ), std::size_t( 2 ) );
  QCOMPARE( recount.add( 0, 1, 1 ), std::size_t( 1 ) );
  QCOMPARE( recount.firstDifference(), std::size_t( 3 ) ); // 3 of region 2's 4 records still to come
  QCOMPARE( recount.add( 2, 1, 3 ), std::size_t( 3 ) );
  QCOMPARE( recount.firstDifference(), SparseHistograms::npos );
}

void TestRelease::recountFindsChanges()
{
  const SparseHistograms counted = threeRegions();
  Recount changedClass( counted );
  QCOMPARE( changedClass.add( 1, 1, 1 ), SparseHistograms::npos ); // region 1 never had class 1
  QCOMPARE( changedClass.add( 9, 0, 1 ), SparseHistograms::npos ); // no region 9
  Recount missing( counted );
  missing.add( 0, 0, 2 );
  missing.add( 1, 0, 3 );
  missing.add( 2, 1, 4 );
  QCOMPARE( missing.firstDifference(), std::size_t( 1 ) ); // (region 0, class 1) lost its record
  Recount extra( counted );
  extra.add( 0, 0, 3 );
  extra.add( 0, 1, 1 );
  extra.add( 1, 0, 3 );
  extra.add( 2, 1, 4 );
  QCOMPARE( extra.firstDifference(), std::size_t( 0 ) ); // (region 0, class 0) has 3, not 2
}

void TestRelease::encoderFindsOnlyWhatItSaw()
{
  // One QI. F gets code 0, NULL code 1, M code 2 (codes are dense in order of appearance).
  QiEncoder encoder( 1 );
  QCOMPARE( encoder.valueCode( 0, std::string_view( "F" ) ), 0u );
  QCOMPARE( encoder.valueCode( 0, std::nullopt ), 1u );
  QCOMPARE( encoder.valueCode( 0, std::string_view( "M" ) ), 2u );
  QCOMPARE( encoder.findValueCode( 0, std::string_view( "M" ) ), std::optional<std::uint32_t>( 2 ) );
  QCOMPARE( encoder.findValueCode( 0, std::nullopt ), std::optional<std::uint32_t>( 1 ) );
  QVERIFY( !encoder.findValueCode( 0, std::string_view( "X" ) ) );
  const std::uint32_t f = 0, m = 2, null = 1;
  QCOMPARE( encoder.classId( &m ), 0u );
  QCOMPARE( encoder.classId( &f ), 1u );
  QCOMPARE( encoder.findClass( &f ), std::optional<std::uint32_t>( 1 ) );
  QVERIFY( !encoder.findClass( &null ) ); // NULL is a known value but no record had it as a class
  QCOMPARE( encoder.classCount(), std::size_t( 2 ) );

  QiEncoder unseenNull( 1 );
  unseenNull.valueCode( 0, std::string_view( "F" ) );
  QVERIFY( !unseenNull.findValueCode( 0, std::nullopt ) );
}

QTEST_APPLESS_MAIN( TestRelease )
#include "test_release.moc"
