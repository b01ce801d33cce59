// The full evaluation: every metric (docs/method.md) through vbas:evaluate on a hand-worked
// example, the per-aggregate and per-region layers, the HTML report and the command that repeats the
// run, and the sensitive field's bad inputs. Expected values are worked out by hand below.
#include "tests/plugin/qgis_test_util.h"

#include "algorithms/risk/population_uniqueness.h"

#include <QFile>
#include <QTemporaryDir>
#include <cmath>

using vbastest::grid;
using vbastest::layerValue;

namespace
{

/**
 * The 3 x 3 grid, sites (0.5, 1.5) and (2.5, 1.5): aggregate 1 = columns 0 and 1, aggregate 2 = column 2.
 *   r00: F a, F a, M b   r01: F a   r10: F b   r11: F a, F c        (aggregate 1: 7 records)
 *   r20: F a, F a        r21: F b   r22: M a                        (aggregate 2: 4 records)
 * k = 2: ECs 1.F = 6 (a 4, b 1, c 1), 1.M = 1 (suppressed), 2.F = 3 (a 2, b 1), 2.M = 1 (suppressed).
 * N = 11, released 9, suppressed 2; the released diagnoses: a 6/9, b 2/9, c 1/9.
 */
std::unique_ptr<QgsVectorLayer> diagnosed()
{
  const QList<QVariantList> rows { { "r00", "F", "a" }, { "r00", "F", "a" }, { "r00", "M", "b" }, { "r01", "F", "a" }, { "r10", "F", "b" }, { "r11", "F", "a" },
                                   { "r11", "F", "c" }, { "r20", "F", "a" }, { "r20", "F", "a" }, { "r21", "F", "b" }, { "r22", "M", "a" } };
  return vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=dx:string" ), rows );
}

std::unique_ptr<QgsVectorLayer> lookup()
{
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      rows << QVariantList { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), c < 2 ? 1 : 2, c < 2 ? 1 : 2 };
  return vbastest::table( QStringLiteral( "field=region_id:string&field=aggregate_id:integer&field=site_id:integer" ), rows );
}

QVariantMap features( QgsVectorLayer *layer, const QString &key )
{
  QVariantMap byKey;
  QgsFeature f;
  QgsFeatureIterator it = layer->getFeatures();
  while ( it.nextFeature( f ) )
  {
    QVariantMap attributes;
    for ( int i = 0; i < f.fields().count(); ++i )
      attributes.insert( f.fields().at( i ).name(), f.attribute( i ) );
    byKey.insert( f.attribute( key ).toString(), attributes );
  }
  return byKey;
}

void compareNear( const QVariant &actual, double expected, const char *what )
{
  QVERIFY2( !actual.isNull() && std::fabs( actual.toDouble() - expected ) < 1e-5, qPrintable( QStringLiteral( "%1: %2, expected %3" ).arg( what, actual.toString() ).arg( expected ) ) );
}

} // namespace

class TestEvaluation : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
    void cleanupTestCase() { QgsApplication::exitQgis(); }
    void everyMetricOnAWorkedExample();
    void riskAgainstThePopulationOnTheWorkedExample();
    void tooFewResidentsLeaveThePopulationOut();
    void populationTableCountsTheClasses();
    void populationTableWithoutAQiEstimates();
    void badPopulationTablesRefused_data();
    void badPopulationTablesRefused();
    void populationCellsRaisedWhenAsked();
    void anonymizeMeasuresAsEvaluateDoes();
    void perAggregateAndPerRegionLayers();
    void reportHasMapsHistogramAndCommand();
    void withoutSensitiveFieldTheyDoNotApply();
    void totalsAbove2To53AreExact();
    void sensitiveFieldBadInput();
    void reportDestinationChecked();
    void anonymizeReportRepeatsTheSeed();

  private:
    QVariantMap parameters();
    //! The parameters with a population table of (region, sex, n) rows: every cell of the grid 10 residents, but those given in changed.
    QVariantMap withPopulation( QgsVectorLayer *table );
    QVariantMap evaluate( QgsProcessingContext &context, const QVariantMap &extra = {} );

    std::unique_ptr<QgsVectorLayer> mRegions = grid();
    std::unique_ptr<QgsVectorLayer> mRecords = diagnosed();
    std::unique_ptr<QgsVectorLayer> mLookup = lookup();
    std::unique_ptr<QgsVectorLayer> mSites = vbastest::twoSites();
    QTemporaryDir mDir;
};

QVariantMap TestEvaluation::parameters()
{
  QVariantMap p = vbastest::gridParameters( mRegions.get(), mRecords.get() );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "dx" ) );
  p.insert( QStringLiteral( "SITES" ), layerValue( mSites.get() ) );
  p.insert( QStringLiteral( "LOOKUP" ), layerValue( mLookup.get() ) );
  p.insert( QStringLiteral( "K" ), 2 );
  p.insert( QStringLiteral( "RUN_SECONDS" ), 2.5 );
  p.insert( QStringLiteral( "AGGREGATE_METRICS" ), QgsProcessing::TEMPORARY_OUTPUT );
  p.insert( QStringLiteral( "REGION_RISK" ), QgsProcessing::TEMPORARY_OUTPUT );
  p.insert( QStringLiteral( "REPORT" ), mDir.filePath( QStringLiteral( "report.html" ) ) );
  return p;
}

//! A population table (region, sex, n): 10 residents in every (region, sex) cell of the grid, but the cells in changed.
std::unique_ptr<QgsVectorLayer> populationTable( const QMap<QString, QVariant> &changed = {}, const QString &sexType = QStringLiteral( "string" ) )
{
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      for ( const QString &sex : { QStringLiteral( "F" ), QStringLiteral( "M" ) } )
      {
        const QString cell = QStringLiteral( "r%1%2 %3" ).arg( c ).arg( r ).arg( sex );
        rows << QVariantList { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), sex, changed.value( cell, 10 ) };
      }
  return vbastest::table( QStringLiteral( "field=region:string&field=sex:%1&field=n:integer" ).arg( sexType ), rows );
}

QVariantMap TestEvaluation::withPopulation( QgsVectorLayer *table )
{
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "POPULATION_TABLE" ), layerValue( table ) );
  p.insert( QStringLiteral( "POPULATION_REGION" ), QStringLiteral( "region" ) );
  p.insert( QStringLiteral( "POPULATION_COUNT" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "RISK_THRESHOLD" ), 0.02 );
  return p;
}

QVariantMap TestEvaluation::evaluate( QgsProcessingContext &context, const QVariantMap &extra )
{
  QVariantMap p = parameters();
  for ( auto it = extra.constBegin(); it != extra.constEnd(); ++it )
    p.insert( it.key(), it.value() );
  return vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, true );
}

void TestEvaluation::everyMetricOnAWorkedExample()
{
  QgsProcessingContext context;
  const QVariantMap r = evaluate( context );
  const auto near = [&r]( const char *output, double expected ) { compareNear( r.value( QString::fromLatin1( output ) ), expected, output ); };
  near( "RECORDS", 11 );
  near( "RELEASED", 9 );
  near( "SUPPRESSED", 2 );
  near( "SUPPRESSED_PERCENT", 100.0 * 2 / 11 );
  // eq. 20: column 0 to (0.5, 1.5): 1 + 0 + 1; column 1: sqrt 2 + 1 + sqrt 2; column 2 to (2.5, 1.5): 2
  near( "COMPACTNESS", 5 + 2 * std::sqrt( 2.0 ) );
  near( "DISCERNIBILITY", 36 + 9 );
  near( "DM", 45 + 11 * 2 );                      // each suppressed record penalised by N = 11
  near( "DM_STAR", 36 + 1 + 9 + 1 );              // every EC before suppression
  near( "C_AVG", 9.0 / 2 / 2 );                   // (9 released / 2 ECs) / k
  near( "PREC", 1 - ( 9 * 0.5 + 2 * 1.0 ) / 11 ); // both aggregates hold several regions: h = 1 released, 2 suppressed
  // eq. 22-23, released: aggregate 1 r00 2, r01 1, r10 1, r11 2 of 6: 4 log2 3 + 2 log2 6 = 11.509775;
  // aggregate 2 r20 2, r21 1 of 3: 2 log2 1.5 + log2 3 = 2.754888
  near( "NUE", 14.264663 );
  // all records: 3 log2(7/3) + 2 log2 7 + 2 log2 3.5 = 12.896597; r20 2, r21 1, r22 1 of 4: 2 + 2 + 2
  near( "NUE_ALL", 18.896597 );
  // generic: the step to the aggregates over all records (18.896597), then the 2 suppressed (one per
  // aggregate) to the root: 2 * -log2(1/2) = 2
  near( "GENERIC_NUE", 20.896597 );
  // normalised by -sum_r n_r log2(n_r / 11) = 3 log2(11/3) + 4 log2 11 + 4 log2 5.5 = 29.298860
  near( "GENERIC_NUE_NORM", 20.896597 / 29.298860 );
  near( "MAX_RISK", 1.0 / 3 );
  near( "AVG_RISK", 2.0 / 9 );
  near( "RISK_ABOVE_PERCENT", 100.0 * 3 / 9 ); // the EC of 3 (risk 1/3 > 0.2); the EC of 6 is at 1/6
  // CM: minorities 6 - 4 (a) and 3 - 2 (a), plus the 2 suppressed
  near( "CM", 2 + 1 + 2 );
  near( "L_DIVERSITY", 2 ); // 1.F holds a, b, c; 2.F holds a, b
  // t: 1.F (4/6, 1/6, 1/6) vs (6/9, 2/9, 1/9): 0.5 (0 + 1/18 + 1/18) = 1/18; 2.F (2/3, 1/3, 0): 0.5 (0 + 1/9 + 1/9) = 1/9
  near( "T_CLOSENESS", 1.0 / 9 );
  near( "RELEASED_ECS", 2 );
  near( "SMALLEST_EC", 3 );
  near( "AGGREGATES", 2 );
  near( "RUNTIME", 2.5 );

  // The table holds the same values, one column per metric.
  QgsVectorLayer *table = vbastest::output( r, QStringLiteral( "EVALUATION" ), context );
  QCOMPARE( table->featureCount(), 1LL );
  QgsFeature row;
  table->getFeatures().nextFeature( row );
  for ( const char *field : { "dm", "cm", "t_closeness", "generic_nue", "prec" } )
    QVERIFY( !row.attribute( QString::fromLatin1( field ) ).isNull() );
  compareNear( row.attribute( QStringLiteral( "dm" ) ), 67, "dm" );
  compareNear( row.attribute( QStringLiteral( "t_closeness" ) ), 1.0 / 9, "t_closeness" );
  compareNear( row.attribute( QStringLiteral( "risk_threshold" ) ), 0.2, "risk_threshold" );
  QCOMPARE( row.attribute( QStringLiteral( "cm" ) ).toLongLong(), 5LL );
  // No population field: nothing against the population.
  QCOMPARE( r.value( QStringLiteral( "SAMPLE_UNIQUES" ) ).toLongLong(), 0LL );
  for ( const char *output :
        { "JOURNALIST_MAX_RISK", "JOURNALIST_AVG_RISK", "JOURNALIST_ABOVE_PERCENT", "MARKETER_RISK", "POPULATION_UNIQUES", "POPULATION_UNIQUES_PERCENT", "POPULATION_UNIQUES_INPUT" } )
    QVERIFY2( r.value( QString::fromLatin1( output ) ).isNull(), output );
}

void TestEvaluation::riskAgainstThePopulationOnTheWorkedExample()
{
  // 10 residents in every region: aggregate 1 holds 60 for its 7 records, aggregate 2 30 for 4.
  // F = |E| * residents / records: 1.F 6 * 60/7 = 51.43, 2.F 3 * 30/4 = 22.5. Journalist max 1/22.5;
  // average (6 / 51.43 + 3 / 22.5) / 9 = (7/60 + 4/30) / 9 = 1/36, the marketer risk too; above 0.04:
  // 2.F's 3 of 9 (1/22.5 = 0.044).
  auto regions = grid();
  QgsChangedAttributesMap tens;
  for ( QgsFeatureId id = 1; id <= 9; ++id )
    tens.insert( id, { { 1, 10 } } );
  QVERIFY( regions->dataProvider()->changeAttributeValues( tens ) );
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "REGIONS" ), layerValue( regions.get() ) );
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) );
  p.insert( QStringLiteral( "RISK_THRESHOLD" ), 0.04 );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, true, &feedback );
  const auto near = [&r]( const char *output, double expected ) { compareNear( r.value( QString::fromLatin1( output ) ), expected, output ); };
  near( "JOURNALIST_MAX_RISK", 1 / 22.5 );
  near( "JOURNALIST_AVG_RISK", 1.0 / 36 );
  near( "MARKETER_RISK", 1.0 / 36 );
  near( "JOURNALIST_ABOVE_PERCENT", 100.0 * 3 / 9 );
  near( "SAMPLE_UNIQUES", 0 );
  near( "POPULATION_UNIQUES", 0 ); // no released class of one
  near( "POPULATION_UNIQUES_PERCENT", 0 );
  // Before release, the (region, sex) classes: five of one record (r00 M, r01, r10, r21, r22) and three
  // of two (r00 F, r11, r20), n = 11 of N = 90 (pi > 0.1: the smaller of Zayatz's and SNB's). Zayatz by
  // hand: h_1 = 11/90, h_2 = 2 * 11 * 79 / (90 * 89); P = 5 h_1 / (5 h_1 + 3 h_2) = 0.484222; 5 P / pi = 19.8091.
  const vbas::UniquenessEstimate before = vbas::estimatePopulationUniques( { { 1, 5 }, { 2, 3 } }, 90 );
  QVERIFY( std::fabs( before.zayatz - 19.8091 ) < 1e-4 );
  near( "POPULATION_UNIQUES_INPUT", before.uniques );
  QVERIFY( before.uniques <= before.zayatz );
  QVERIFY2( feedback.saw( QStringLiteral( "Population uniques of 90 residents: before release " ) ), qPrintable( feedback.messages.join( '\n' ) ) );
}

void TestEvaluation::tooFewResidentsLeaveThePopulationOut()
{
  // One resident a region: aggregate 1 has 6 for its 7 records. The population field cannot be the
  // population the records were drawn from: no measure against it, and a warning naming the aggregate.
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, true, &feedback );
  QVERIFY( r.value( QStringLiteral( "JOURNALIST_MAX_RISK" ) ).isNull() );
  QVERIFY( r.value( QStringLiteral( "POPULATION_UNIQUES_INPUT" ) ).isNull() );
  QVERIFY2( feedback.warned( QStringLiteral( "Residents: aggregated region 1 has fewer residents in the population field (POPULATION_FIELD) than records" ) ),
            qPrintable( feedback.warnings.join( '\n' ) ) );
}

void TestEvaluation::perAggregateAndPerRegionLayers()
{
  QgsProcessingContext context;
  const QVariantMap r = evaluate( context );
  QgsVectorLayer *perAggregate = vbastest::output( r, QStringLiteral( "AGGREGATE_METRICS" ), context );
  const QVariantMap aggregates = features( perAggregate, QStringLiteral( "aggregate_id" ) );
  QCOMPARE( aggregates.size(), 2 );
  const QVariantMap a1 = aggregates.value( QStringLiteral( "1" ) ).toMap(), a2 = aggregates.value( QStringLiteral( "2" ) ).toMap();
  QCOMPARE( a1.value( QStringLiteral( "regions" ) ).toInt(), 6 );
  QCOMPARE( a1.value( QStringLiteral( "records" ) ).toInt(), 7 );
  QCOMPARE( a1.value( QStringLiteral( "released" ) ).toInt(), 6 );
  QCOMPARE( a1.value( QStringLiteral( "suppressed" ) ).toInt(), 1 );
  QCOMPARE( a1.value( QStringLiteral( "smallest_ec" ) ).toInt(), 6 );
  QCOMPARE( a1.value( QStringLiteral( "l_diversity" ) ).toInt(), 3 );
  compareNear( a1.value( QStringLiteral( "t_closeness" ) ), 1.0 / 18, "t of aggregate 1" );
  QCOMPARE( a2.value( QStringLiteral( "regions" ) ).toInt(), 3 );
  QCOMPARE( a2.value( QStringLiteral( "released" ) ).toInt(), 3 );
  QCOMPARE( a2.value( QStringLiteral( "l_diversity" ) ).toInt(), 2 );
  compareNear( a2.value( QStringLiteral( "t_closeness" ) ), 1.0 / 9, "t of aggregate 2" );
  QVERIFY( a1.value( QStringLiteral( "journalist_max_risk" ) ).isNull() ); // no residents
  QgsFeature f;
  perAggregate->getFeatures( QgsFeatureRequest().setFilterExpression( QStringLiteral( "aggregate_id = 1" ) ) ).nextFeature( f );
  QCOMPARE( f.geometry().area(), 6.0 ); // the dissolved columns 0 and 1

  // Risk before release, k = 2: cells below 2 records: r00 M (1 of 3), r01 F, r10 F, r21 F, r22 M (all of their 1).
  const QVariantMap risk = features( vbastest::output( r, QStringLiteral( "REGION_RISK" ), context ), QStringLiteral( "region_id" ) );
  QCOMPARE( risk.size(), 9 );
  const auto share = [&risk]( const char *region ) { return risk.value( QString::fromLatin1( region ) ).toMap().value( QStringLiteral( "risk_share" ) ); };
  compareNear( share( "r00" ), 1.0 / 3, "r00" );
  compareNear( share( "r01" ), 1.0, "r01" );
  compareNear( share( "r11" ), 0.0, "r11" );
  compareNear( share( "r20" ), 0.0, "r20" );
  compareNear( share( "r22" ), 1.0, "r22" );
  QVERIFY( share( "r02" ).isNull() ); // no records
  QCOMPARE( risk.value( QStringLiteral( "r00" ) ).toMap().value( QStringLiteral( "at_risk" ) ).toInt(), 1 );
}

void TestEvaluation::reportHasMapsHistogramAndCommand()
{
  QgsProcessingContext context;
  const QVariantMap r = evaluate( context );
  QCOMPARE( r.value( QStringLiteral( "REPORT" ) ).toString(), mDir.filePath( QStringLiteral( "report.html" ) ) );
  QFile file( r.value( QStringLiteral( "REPORT" ) ).toString() );
  QVERIFY( file.open( QIODevice::ReadOnly ) );
  const QString html = QString::fromUtf8( file.readAll() );
  for ( const char *id : { "id=\"metrics\"", "id=\"released-map\"", "id=\"risk-map\"", "id=\"ec-histogram\"", "id=\"parameters\"", "id=\"command\"" } )
    QVERIFY2( html.contains( QString::fromLatin1( id ) ), id );
  QVERIFY( !QString( html ).remove( QStringLiteral( "http://www.w3.org/2000/svg" ) ).contains( QStringLiteral( "://" ) ) ); // no network
  QVERIFY( !html.contains( QStringLiteral( "<script" ) ) && !html.contains( QStringLiteral( "src=" ) ) );                   // self-contained
  // Aggregates: 2 paths in the released map; regions: 9 paths in the risk map; a scale bar in each; one suppressed mark per aggregate.
  QCOMPARE( html.count( QStringLiteral( "<path " ) ), 2 + 9 + 2 );
  QCOMPARE( html.count( QStringLiteral( "<circle " ) ), 2 );
  // The aggregates' ids on the released map; a scale bar of a round length (the grid's 3 m across: 0.5 m) under each map.
  QCOMPARE( html.count( QStringLiteral( "<text class=\"id\"" ) ), 2 );
  QVERIFY( html.contains( QStringLiteral( "paint-order=\"stroke\">1</text>" ) ) && html.contains( QStringLiteral( "paint-order=\"stroke\">2</text>" ) ) );
  QVERIFY( html.contains( QStringLiteral( "numbers: aggregate_id" ) ) );
  QCOMPARE( html.count( QStringLiteral( "<g class=\"scale-bar\">" ) ), 2 );
  QCOMPARE( html.count( QStringLiteral( ">0.5 m</text></g>" ) ), 2 );
  QVERIFY( html.contains( QStringLiteral( "k = 2" ) ) );
  QVERIFY( html.contains( QStringLiteral( "k-anonymous: every released" ) ) );
  // Five lines first; a verdict that speaks of every criterion the metrics list; the histogram's axes named.
  QCOMPARE( html.section( QStringLiteral( "<ul id=\"summary\">" ), 1 ).section( QStringLiteral( "</ul>" ), 0, 0 ).count( QStringLiteral( "<li>" ) ), 5 );
  QVERIFY( html.contains( QStringLiteral( "<li>Records read: 11.</li><li>Released: 9; suppressed: 2 (18.1818 %).</li>" ) ) );
  QVERIFY( html.contains( QStringLiteral( "l-diversity and t-closeness" ) ) );
  QVERIFY( html.contains( QStringLiteral( ">Equivalence class size (records)</text>" ) ) && html.contains( QStringLiteral( ">Equivalence classes</text>" ) ) );
  // A parameter by its label and id; a choice by its option's label too, not its number alone.
  QVERIFY( html.contains( QStringLiteral( "<td>Region point</td><td><code>REGION_POINT</code></td><td>0 (Centroid)</td>" ) ) );
  QVERIFY( html.contains( QStringLiteral( "<td>k (smallest released equivalence class)</td><td><code>K</code></td><td>2</td>" ) ) );
  // Every metric's label is in the table.
  QVERIFY( html.contains( QStringLiteral( "Classification metric (CM)" ) ) && html.contains( QStringLiteral( "t-closeness (EMD)" ) ) );
  // The command repeats the run: the algorithm, every parameter given, the defaults too.
  QVERIFY( html.contains( QStringLiteral( "/bin/qgis_process.bin' run vbas:evaluate --" ) ) );
  for ( const char *argument : { "'K=2'", "'SENSITIVE_FIELD=dx'", "'QI_FIELDS=sex'", "'RISK_THRESHOLD=0.2'", "'REGION_POINT=0'", "'RUN_SECONDS=2.5'" } )
    QVERIFY2( html.contains( QString::fromLatin1( argument ) ), argument );
  // Counts only: no diagnosis reaches the page (a, b, c are letters everywhere; the records' dx are not named).
  QVERIFY( !html.contains( QStringLiteral( ">a<" ) ) );
}

void TestEvaluation::withoutSensitiveFieldTheyDoNotApply()
{
  QgsProcessingContext context;
  const QVariantMap r = evaluate( context, { { QStringLiteral( "SENSITIVE_FIELD" ), QVariant() } } );
  for ( const char *output : { "CM", "L_DIVERSITY", "T_CLOSENESS" } )
    QVERIFY2( r.contains( QString::fromLatin1( output ) ) && r.value( QString::fromLatin1( output ) ).isNull(), output );
  compareNear( r.value( QStringLiteral( "DM" ) ), 67, "DM" ); // the rest stays
  const QVariantMap aggregates = features( vbastest::output( r, QStringLiteral( "AGGREGATE_METRICS" ), context ), QStringLiteral( "aggregate_id" ) );
  QVERIFY( aggregates.value( QStringLiteral( "1" ) ).toMap().value( QStringLiteral( "l_diversity" ) ).isNull() );
}

void TestEvaluation::totalsAbove2To53AreExact()
{
  // Rows of 2^53, 2^53 and 1 records (F in r00) and 1 (M in r22): 2^54 + 2 records, 2^54 + 1 released,
  // which a double cannot hold (it rounds to 2^54). The number outputs, the EVALUATION table and the log are exact.
  const qlonglong big = qlonglong( 1 ) << 53;
  auto records
    = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=n:long" ), QList<QVariantList> { { "r00", "F", big }, { "r00", "F", big }, { "r00", "F", 1 }, { "r22", "M", 1 } } );
  QgsProcessingContext context;
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "RECORDS" ), layerValue( records.get() ) );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QVariant() );
  p.insert( QStringLiteral( "REPORT" ), QVariant() );
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, true, &feedback );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 2 * big + 2 );
  QCOMPARE( r.value( QStringLiteral( "RELEASED" ) ).toLongLong(), 2 * big + 1 );
  QCOMPARE( r.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong(), 1LL );
  QCOMPARE( r.value( QStringLiteral( "SMALLEST_EC" ) ).toLongLong(), 2 * big + 1 );
  QgsFeature row;
  QVERIFY( vbastest::output( r, QStringLiteral( "EVALUATION" ), context )->getFeatures().nextFeature( row ) );
  QCOMPARE( row.attribute( QStringLiteral( "records" ) ).toLongLong(), 2 * big + 2 );
  QCOMPARE( row.attribute( QStringLiteral( "released" ) ).toLongLong(), 2 * big + 1 );
  QVERIFY2( feedback.saw( QStringLiteral( "Summary: %1 records read; %2 released, 1 suppressed" ).arg( 2 * big + 2 ).arg( 2 * big + 1 ) ), qPrintable( feedback.messages.join( '\n' ) ) );
}

void TestEvaluation::sensitiveFieldBadInput()
{
  const QString report = mDir.filePath( QStringLiteral( "bad.html" ) );
  for ( const auto &[field, message] : { std::pair<QString, QString> { QStringLiteral( "sex" ), QStringLiteral( "one role" ) },
                                         { QStringLiteral( "region" ), QStringLiteral( "one role" ) },
                                         { QStringLiteral( "nosuch" ), QStringLiteral( "SENSITIVE_FIELD" ) } } )
  {
    QgsProcessingContext context;
    vbastest::Feedback feedback;
    QVariantMap p = parameters();
    p.insert( QStringLiteral( "SENSITIVE_FIELD" ), field );
    p.insert( QStringLiteral( "REPORT" ), report );
    vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, false, &feedback );
    QVERIFY2( feedback.errors.join( ' ' ).contains( message ), qPrintable( feedback.errors.join( ' ' ) ) );
    QVERIFY( !QFile::exists( report ) );
  }
}

void TestEvaluation::reportDestinationChecked()
{
  // The report may not overwrite an input, nor go to a folder that does not exist; nothing is written.
  const QString input = mDir.filePath( QStringLiteral( "records.csv" ) );
  QFile csv( input );
  QVERIFY( csv.open( QIODevice::WriteOnly ) );
  csv.write( "region,sex,dx\nr00,F,a\nr00,F,a\n" );
  csv.close();
  auto records = std::make_unique<QgsVectorLayer>( input, QStringLiteral( "csv" ), QStringLiteral( "ogr" ) );
  QVERIFY( records->isValid() );
  const QString metrics = mDir.filePath( QStringLiteral( "metrics.gpkg" ) );
  for ( const QString &destination : { input, mDir.filePath( QStringLiteral( "no/such/folder/report.html" ) ) } )
  {
    QgsProcessingContext context;
    vbastest::Feedback feedback;
    QVariantMap p = parameters();
    p.insert( QStringLiteral( "RECORDS" ), layerValue( records.get() ) );
    p.insert( QStringLiteral( "REPORT" ), destination );
    p.insert( QStringLiteral( "AGGREGATE_METRICS" ), metrics );
    vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, false, &feedback );
    QVERIFY2( feedback.errors.join( ' ' ).contains( QStringLiteral( "REPORT" ) ), qPrintable( feedback.errors.join( ' ' ) ) );
    QVERIFY( !QFile::exists( metrics ) );
  }
  QVERIFY( csv.open( QIODevice::ReadOnly ) );
  QCOMPARE( csv.readAll(), QByteArray( "region,sex,dx\nr00,F,a\nr00,F,a\n" ) ); // the input is untouched
}

void TestEvaluation::anonymizeReportRepeatsTheSeed()
{
  // Without SEED the run draws one: the report's command gives it, so the command repeats the run.
  QgsProcessingContext context;
  QVariantMap p = vbastest::gridParameters( mRegions.get(), mRecords.get() );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 2 );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "dx" ) );
  p.insert( QStringLiteral( "REPORT" ), mDir.filePath( QStringLiteral( "anonymize.html" ) ) );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, context, true );
  // SEED is a number output (a double, exact up to 2^53); QVariant's toLongLong rounds through qRound64, whose + 0.5 is inexact above 2^52.
  const qlonglong seed = static_cast<qlonglong>( r.value( QStringLiteral( "SEED" ) ).toDouble() );
  QVERIFY( seed > 0 );
  QFile file( mDir.filePath( QStringLiteral( "anonymize.html" ) ) );
  QVERIFY( file.open( QIODevice::ReadOnly ) );
  const QString html = QString::fromUtf8( file.readAll() );
  QVERIFY( html.contains( QStringLiteral( "/bin/qgis_process.bin' run vbas:anonymize --" ) ) );
  const int at = html.indexOf( QStringLiteral( "'SEED=" ) );
  QVERIFY2( html.contains( QStringLiteral( "'SEED=%1'" ).arg( seed ) ), qPrintable( QString::number( seed ) + " " + html.mid( at, 30 ) ) );
  QVERIFY( !r.value( QStringLiteral( "L_DIVERSITY" ) ).isNull() );
  QVERIFY( !r.value( QStringLiteral( "GENERIC_NUE" ) ).isNull() );
}

void TestEvaluation::populationTableCountsTheClasses()
{
  // 10 residents in each (region, sex) cell but r01 F and r22 M, 1 each: N = 18 * 10 - 18 = 162.
  // The released classes: 1.F (6 records) over r00, r01, r02, r10, r11, r12: 5 * 10 + 1 = 51 residents;
  // 2.F (3 records) over r20, r21, r22: 30. Journalist max 1/30; average (6/51 + 3/30) / 9; above 0.02:
  // 2.F's 3 of 9 (1/51 = 0.0196 is not). No released class has one resident; before release the
  // records of r01 F and r22 M are alone in their cells: 2, counted.
  auto table = populationTable( { { QStringLiteral( "r01 F" ), 1 }, { QStringLiteral( "r22 M" ), 1 } } );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), withPopulation( table.get() ), context, true, &feedback );
  const auto near = [&r]( const char *output, double expected ) { compareNear( r.value( QString::fromLatin1( output ) ), expected, output ); };
  near( "JOURNALIST_MAX_RISK", 1.0 / 30 );
  near( "JOURNALIST_AVG_RISK", ( 6.0 / 51 + 3.0 / 30 ) / 9 );
  near( "MARKETER_RISK", ( 6.0 / 51 + 3.0 / 30 ) / 9 );
  near( "JOURNALIST_ABOVE_PERCENT", 100.0 * 3 / 9 );
  near( "POPULATION_UNIQUES", 0 );
  near( "POPULATION_UNIQUES_INPUT", 2 );
  // Each aggregate's largest journalist risk: 1/51 (1.F) and 1/30 (2.F).
  const QVariantMap aggregates = features( vbastest::output( r, QStringLiteral( "AGGREGATE_METRICS" ), context ), QStringLiteral( "aggregate_id" ) );
  compareNear( aggregates.value( QStringLiteral( "1" ) ).toMap().value( QStringLiteral( "journalist_max_risk" ) ), 1.0 / 51, "aggregate 1" );
  compareNear( aggregates.value( QStringLiteral( "2" ) ).toMap().value( QStringLiteral( "journalist_max_risk" ) ), 1.0 / 30, "aggregate 2" );
  QVERIFY2( feedback.saw( QStringLiteral( "Population uniques of 162 residents: before release 2, counted in the population table; in the release 0, counted in the population table." ) ),
            qPrintable( feedback.messages.join( '\n' ) ) );
  // The report says it by attacker, with where the residents come from.
  QFile report( mDir.filePath( QStringLiteral( "report.html" ) ) );
  QVERIFY( report.open( QIODevice::ReadOnly ) );
  const QString html = QString::fromUtf8( report.readAll() );
  QVERIFY( html.contains( QStringLiteral( "<table id=\"population\">" ) ) );
  QVERIFY( html.contains( QStringLiteral( "162 in all, from the population table (POPULATION_TABLE); each class's residents counted" ) ) );
  QVERIFY( html.contains( QStringLiteral( "Journalist (starts from the population, a list of its residents)</td><td>largest chance 0.0333" ) ) );
  QVERIFY( html.contains( QStringLiteral( "Marketer (matches every resident with a released record)" ) ) );
}

void TestEvaluation::populationTableWithoutAQiEstimates()
{
  // A table by region alone (no sex field): its rows are the regions' residents, and a class's are estimated.
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      rows << QVariantList { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), 10 };
  auto table = vbastest::table( QStringLiteral( "field=region:string&field=n:integer" ), rows );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), withPopulation( table.get() ), context, true, &feedback );
  QVERIFY2( feedback.saw( QStringLiteral( "The population table has no field for the QIs sex" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  compareNear( r.value( QStringLiteral( "JOURNALIST_MAX_RISK" ) ), 1 / 22.5, "JOURNALIST_MAX_RISK" ); // as with 10 residents a region in the population field
}

void TestEvaluation::badPopulationTablesRefused_data()
{
  QTest::addColumn<QString>( "fields" );
  QTest::addColumn<QVariantList>( "extra" ); // one more row, or none
  QTest::addColumn<QString>( "change" );     // "cell=value" of populationTable(), or none
  QTest::addColumn<QString>( "message" );
  const QString fields = QStringLiteral( "string" );
  QTest::newRow( "negative count" ) << fields << QVariantList { "r00", "X", -1 } << QString() << "Population table row 19 (feature id 19): the count field 'n' holds -1";
  QTest::newRow( "unknown region" ) << fields << QVariantList { "zz", "F", 3 } << QString() << "Population table row 19 (feature id 19): the region 'zz' is not in the regions layer.";
  QTest::newRow( "a cell twice" ) << fields << QVariantList { "r11", "F", 3 } << QString() << "region 'r11' with these QI values was given before, in row 9";
  QTest::newRow( "fewer residents than records" ) << fields << QVariantList() << "r00 F=1"
                                                  << "Region 'r00': 2 records share QI values for which row 1 gives 1";
  QTest::newRow( "a QI of another type" ) << QStringLiteral( "integer" ) << QVariantList() << QString() << "The population table's field 'sex' is of type";
}

void TestEvaluation::badPopulationTablesRefused()
{
  QFETCH( QString, fields );
  QFETCH( QVariantList, extra );
  QFETCH( QString, change );
  QFETCH( QString, message );
  QMap<QString, QVariant> changed;
  if ( !change.isEmpty() )
    changed.insert( change.section( '=', 0, 0 ), change.section( '=', 1 ).toInt() );
  auto table = populationTable( changed, fields );
  if ( !extra.isEmpty() )
  {
    QgsFeature f( table->fields() );
    f.setAttributes( QgsAttributes( extra.toVector() ) );
    QVERIFY( table->dataProvider()->addFeature( f ) );
  }
  QVariantMap p = withPopulation( table.get() );
  const QString report = mDir.filePath( QStringLiteral( "refused-%1.html" ).arg( QTest::currentDataTag() ).replace( ' ', '-' ) );
  p.insert( QStringLiteral( "REPORT" ), report );
  const QString errors = vbastest::refusal( QStringLiteral( "vbas:evaluate" ), p );
  QVERIFY2( errors.contains( message ), qPrintable( errors ) );
  QVERIFY( !QFile::exists( report ) );
}

void TestEvaluation::populationCellsRaisedWhenAsked()
{
  // r00 F holds 2 records but 1 resident: raised to 2. Then 1.F has 5 * 10 + 2 = 52 residents.
  auto table = populationTable( { { QStringLiteral( "r00 F" ), 1 } } );
  QVariantMap p = withPopulation( table.get() );
  p.insert( QStringLiteral( "POPULATION_RAISE" ), true );
  QgsProcessingContext context;
  vbastest::Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, true, &feedback );
  QVERIFY2( feedback.warned( QStringLiteral( "1 cell(s) of the population table held fewer residents than records and were raised to them" ) ), qPrintable( feedback.warnings.join( '\n' ) ) );
  compareNear( r.value( QStringLiteral( "JOURNALIST_AVG_RISK" ) ), ( 6.0 / 52 + 3.0 / 30 ) / 9, "JOURNALIST_AVG_RISK" );
  // Both the table and the population field: refused.
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) );
  vbastest::run( QStringLiteral( "vbas:evaluate" ), p, context, false, &feedback );
  QVERIFY( feedback.errors.join( '\n' ).contains( QStringLiteral( "POPULATION_TABLE and POPULATION_FIELD both give the residents" ) ) );
}

void TestEvaluation::anonymizeMeasuresAsEvaluateDoes()
{
  // vbas:anonymize with the population table gives the risk against the population that vbas:evaluate
  // recounts from its lookup and sites; with a table that refuses, it writes nothing.
  auto table = populationTable( { { QStringLiteral( "r01 F" ), 1 }, { QStringLiteral( "r22 M" ), 1 } } );
  QVariantMap p = vbastest::gridParameters( mRegions.get(), mRecords.get() );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 2 );
  p.insert( QStringLiteral( "POPULATION_TABLE" ), layerValue( table.get() ) );
  p.insert( QStringLiteral( "POPULATION_REGION" ), QStringLiteral( "region" ) );
  p.insert( QStringLiteral( "POPULATION_COUNT" ), QStringLiteral( "n" ) );
  p.insert( QStringLiteral( "SITE_POINTS" ), mDir.filePath( QStringLiteral( "table-sites.gpkg" ) ) );
  p.insert( QStringLiteral( "LOOKUP" ), mDir.filePath( QStringLiteral( "table-lookup.gpkg" ) ) );
  QgsProcessingContext context;
  const QVariantMap released = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, context, true );
  QVERIFY( !released.value( QStringLiteral( "JOURNALIST_MAX_RISK" ) ).isNull() );
  QVariantMap e = withPopulation( table.get() );
  e.insert( QStringLiteral( "SITES" ), mDir.filePath( QStringLiteral( "table-sites.gpkg" ) ) );
  e.insert( QStringLiteral( "LOOKUP" ), mDir.filePath( QStringLiteral( "table-lookup.gpkg" ) ) );
  e.insert( QStringLiteral( "RISK_THRESHOLD" ), 0.2 );
  const QVariantMap evaluated = vbastest::run( QStringLiteral( "vbas:evaluate" ), e, context, true );
  for ( const char *output : { "JOURNALIST_MAX_RISK", "JOURNALIST_AVG_RISK", "JOURNALIST_ABOVE_PERCENT", "MARKETER_RISK", "POPULATION_UNIQUES", "POPULATION_UNIQUES_INPUT" } )
    compareNear( released.value( QString::fromLatin1( output ) ), evaluated.value( QString::fromLatin1( output ) ).toDouble(), output );
  compareNear( released.value( QStringLiteral( "POPULATION_UNIQUES_INPUT" ) ), 2, "POPULATION_UNIQUES_INPUT" );

  auto short_ = populationTable( { { QStringLiteral( "r00 F" ), 1 } } );
  p.insert( QStringLiteral( "POPULATION_TABLE" ), layerValue( short_.get() ) );
  p.insert( QStringLiteral( "ANONYMIZED" ), mDir.filePath( QStringLiteral( "never.gpkg" ) ) );
  QVERIFY( vbastest::refusal( QStringLiteral( "vbas:anonymize" ), p ).contains( QStringLiteral( "Region 'r00': 2 records share QI values" ) ) );
  QVERIFY( !QFile::exists( mDir.filePath( QStringLiteral( "never.gpkg" ) ) ) );
}

QTEST_MAIN( TestEvaluation )
#include "test_evaluation.moc"
