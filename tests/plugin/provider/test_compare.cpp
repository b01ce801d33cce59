// vbas:compare on the sample layers: every aggregation's and generalization's row equals what
// vbas:anonymize makes with the row's parameters; the baselines' suppression recounted here from the
// records table; the frontier and the recommendation recomputed from the rows; under k-map every row
// equals Anonymize's too; a cancel leaves nothing; bad lists refused before anything is read.
#include "tests/plugin/qgis_test_util.h"

#include <QRandomGenerator>
#include <QTemporaryDir>

#include <map>
#include <tuple>

class TestCompare : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();
    void aggregationsEqualAnonymize();
    void baselinesRecountedByHand();
    void frontierAndRecommendation();
    void reportDrawsTheFrontier();
    void kMapRowsEqualAnonymize();
    void averageRiskThresholds();
    void safeHarborByHand();
    void randomInputsEqualAnonymize();
    void cancelLeavesNothing();
    void badListsRefused();

  private:
    //! vbas:compare on the sample at k = 5 and 10, every method (the search for 3,000 moves) and every baseline but Safe Harbor's, CANDIDATES in memory.
    QVariantMap parameters() const;
    //! The sample's regions, records and QIs.
    QVariantMap sampleInputs() const;
    //! Each row of a method equals what vbas:anonymize makes with inputs and the row's parameters, as its command gives them; returns the rows checked.
    static int checkAgainstAnonymize( const QList<QgsFeature> &rows, const QVariantMap &inputs );
    //! The CANDIDATES rows of one run, once (the sample's comparison is shared by the tests).
    const QList<QgsFeature> &rows();
    //! Records in classes of fewer than k records, the classes keyed by the region key and the QIs, counted here from the records table.
    qlonglong suppressedByHand( const std::function<QString( const QString &tract )> &key, qlonglong k ) const;

    QgsProcessingContext mContext;
    QTemporaryDir mDir;
    QString mReport; //!< the HTML of the shared run's REPORT
    std::unique_ptr<QgsVectorLayer> mTracts;
    std::unique_ptr<QgsVectorLayer> mPatients;
    QList<QgsFeature> mRows;
};

void TestCompare::initTestCase()
{
  vbastest::initQgisWithProvider();
  mTracts = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg|layername=ny8_tracts" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  mPatients = std::make_unique<QgsVectorLayer>( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg|layername=patients" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QVERIFY( mTracts->isValid() && mPatients->isValid() );
}

void TestCompare::cleanupTestCase()
{
  mTracts.reset();
  mPatients.reset();
  QgsApplication::exitQgis();
}

QVariantMap TestCompare::parameters() const
{
  QVariantMap p = vbastest::inputParameters( mTracts.get(), QStringLiteral( "AREAKEY" ), mPatients.get(), QStringLiteral( "tract_id" ),
                                             { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) } );
  p.insert( QStringLiteral( "K" ), 10 );
  p.insert( QStringLiteral( "K_VALUES" ), QStringLiteral( "10 5" ) );
  p.insert( QStringLiteral( "METHODS" ), QVariantList { 0, 1, 2, 3, 4 } );
  p.insert( QStringLiteral( "SEARCH_MOVES" ), 3000 );
  p.insert( QStringLiteral( "SEED" ), 11 );
  p.insert( QStringLiteral( "BASELINES" ), QVariantList { 0, 1, 2, 4 } );
  p.insert( QStringLiteral( "PARENT_FIELD" ), QStringLiteral( "AREAKEY" ) ); // each tract its own parent: the regions again
  p.insert( QStringLiteral( "CROP_LENGTH" ), 5 );                            // a tract's county
  p.insert( QStringLiteral( "CANDIDATES" ), QgsProcessing::TEMPORARY_OUTPUT );
  p.insert( QStringLiteral( "REPORT" ), mDir.filePath( QStringLiteral( "comparison.html" ) ) );
  return p;
}

const QList<QgsFeature> &TestCompare::rows()
{
  if ( mRows.isEmpty() )
  {
    const QVariantMap results = vbastest::run( QStringLiteral( "vbas:compare" ), parameters(), mContext, true );
    vbastest::forEachFeature( results, QStringLiteral( "CANDIDATES" ), mContext, [&]( const QgsFeature &f ) { mRows << f; } );
    QFile report( mDir.filePath( QStringLiteral( "comparison.html" ) ) );
    if ( report.open( QIODevice::ReadOnly ) )
      mReport = QString::fromUtf8( report.readAll() );
    [&] { QCOMPARE( results.value( QStringLiteral( "CANDIDATES_MADE" ) ).toLongLong(), 18LL ); }();
  }
  return mRows;
}

qlonglong TestCompare::suppressedByHand( const std::function<QString( const QString &tract )> &key, qlonglong k ) const
{
  std::map<std::tuple<QString, QString, QString, QString>, qlonglong> classes;
  QgsFeature f;
  QgsFeatureIterator it = mPatients->getFeatures();
  while ( it.nextFeature( f ) )
    ++classes[{ key( f.attribute( QStringLiteral( "tract_id" ) ).toString() ), f.attribute( QStringLiteral( "age_group" ) ).toString(), f.attribute( QStringLiteral( "sex" ) ).toString(),
                f.attribute( QStringLiteral( "race" ) ).toString() }];
  qlonglong suppressed = 0;
  for ( const auto &[cls, n] : classes )
    suppressed += n < k ? n : 0;
  return suppressed;
}

QVariantMap TestCompare::sampleInputs() const
{
  return vbastest::inputParameters( mTracts.get(), QStringLiteral( "AREAKEY" ), mPatients.get(), QStringLiteral( "tract_id" ),
                                    { QStringLiteral( "age_group" ), QStringLiteral( "sex" ), QStringLiteral( "race" ) } );
}

namespace
{

//! vbas:anonymize with inputs and a row's parameters, as the row's command gives them (the search for 3,000 moves, seed 11).
QVariantMap anonymizeParameters( const QgsFeature &row, const QVariantMap &inputs )
{
  const QString kind = row.attribute( QStringLiteral( "kind" ) ).toString();
  QVariantMap p = inputs;
  p.insert( QStringLiteral( "K" ), row.attribute( QStringLiteral( "k" ) ).toLongLong() );
  p.insert( QStringLiteral( "METHOD" ), kind == QLatin1String( "adc" ) ? 1 : 0 );
  p.insert( QStringLiteral( "OBJECTIVE" ), kind == QLatin1String( "adc" ) ? 1 : 0 );
  p.insert( QStringLiteral( "SEARCH" ), kind == QLatin1String( "search" ) );
  p.insert( QStringLiteral( "SEARCH_MOVES" ), 3000 );
  p.insert( QStringLiteral( "GENERALIZE" ), kind.startsWith( QLatin1String( "generalization" ) ) );
  p.insert( QStringLiteral( "LOCAL_SUPPRESSION" ), kind == QLatin1String( "generalization_local" ) );
  p.insert( QStringLiteral( "SEED" ), 11 );
  p.insert( QStringLiteral( "RISK_THRESHOLD" ), row.attribute( QStringLiteral( "risk_threshold" ) ) ); // the candidate's, under the average risk model
  return p;
}

} // namespace

int TestCompare::checkAgainstAnonymize( const QList<QgsFeature> &rows, const QVariantMap &inputs )
{
  int checked = 0;
  for ( const QgsFeature &row : rows )
  {
    if ( row.attribute( QStringLiteral( "command" ) ).isNull() )
      continue;
    const QVariantMap p = anonymizeParameters( row, inputs );
    QgsProcessingContext context;
    const QVariantMap made = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, context, true );
    const QString what = row.attribute( QStringLiteral( "candidate" ) ).toString();
    for ( const auto &[column, output] : { std::make_pair( "suppressed", "SUPPRESSED" ), std::make_pair( "aggregates", "AGGREGATES" ), std::make_pair( "released_ecs", "RELEASED_ECS" ),
                                           std::make_pair( "smallest_ec", "SMALLEST_EC" ), std::make_pair( "units_asked", "SITES" ), std::make_pair( "units_in_pieces", "UNITS_IN_PIECES" ),
                                           std::make_pair( "units_releasing_nothing", "UNITS_RELEASING_NOTHING" ), std::make_pair( "records_generalized", "RECORDS_GENERALIZED" ) } )
      [&] { QVERIFY2( row.attribute( QString::fromLatin1( column ) ).toLongLong() == made.value( QString::fromLatin1( output ) ).toLongLong(), qPrintable( what + ' ' + column ) ); }();
    for ( const auto &[column, output] :
          { std::make_pair( "generic_nue", "GENERIC_NUE" ), std::make_pair( "nue", "NUE" ), std::make_pair( "max_risk", "MAX_RISK" ), std::make_pair( "avg_risk", "AVG_RISK" ),
            std::make_pair( "loss_generic_nue", "LOSS_GENERIC_NUE" ), std::make_pair( "loss_gc", "LOSS_GC" ), std::make_pair( "loss_are", "LOSS_ARE" ) } )
      [&] { QVERIFY2( qFuzzyCompare( row.attribute( QString::fromLatin1( column ) ).toDouble(), made.value( QString::fromLatin1( output ) ).toDouble() ), qPrintable( what + ' ' + column ) ); }();
    if ( row.attribute( QStringLiteral( "kind" ) ).toString().startsWith( QLatin1String( "generalization" ) ) )
      [&] { QCOMPARE( row.attribute( QStringLiteral( "levels" ) ).toString(), made.value( QStringLiteral( "LEVELS" ) ).toString() ); }();
    const QString command = row.attribute( QStringLiteral( "command" ) ).toString();
    [&] {
      QVERIFY2(
        command.contains( QStringLiteral( " run vbas:anonymize -- " ) ) && command.contains( QStringLiteral( "'K=%1'" ).arg( p.value( QStringLiteral( "K" ) ).toLongLong() ) )
          && command.contains( QStringLiteral( "'SEED=11'" ) )
          && ( !p.contains( QStringLiteral( "MAX_ITERATIONS" ) ) || command.contains( QStringLiteral( "'MAX_ITERATIONS=%1'" ).arg( p.value( QStringLiteral( "MAX_ITERATIONS" ) ).toLongLong() ) ) )
          && command.contains( QStringLiteral( "GENERALIZE=true" ) ) == p.value( QStringLiteral( "GENERALIZE" ) ).toBool(),
        qPrintable( command ) );
    }();
    ++checked;
  }
  return checked;
}

void TestCompare::aggregationsEqualAnonymize()
{
  // Every row of METHODS (3 aggregations and 2 generalizations at each k) against Anonymize's outputs.
  QCOMPARE( checkAgainstAnonymize( rows(), sampleInputs() ), 10 );
}

void TestCompare::kMapRowsEqualAnonymize()
{
  // Under k-map with a population table, each candidate meets k residents and measures as Anonymize's.
  QVariantMap p = parameters();
  const QVariantMap census { { QStringLiteral( "RISK_MODEL" ), 1 },
                             { QStringLiteral( "POPULATION_TABLE" ), ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_census.csv" ) },
                             { QStringLiteral( "POPULATION_REGION" ), QStringLiteral( "tract" ) },
                             { QStringLiteral( "POPULATION_COUNT" ), QStringLiteral( "residents" ) } };
  p.insert( census );
  p.insert( QStringLiteral( "METHODS" ), QVariantList { 0, 3 } );
  p.insert( QStringLiteral( "BASELINES" ), QVariantList() );
  QgsProcessingContext context;
  const QVariantMap results = vbastest::run( QStringLiteral( "vbas:compare" ), p, context, true );
  QList<QgsFeature> kMap;
  vbastest::forEachFeature( results, QStringLiteral( "CANDIDATES" ), context, [&]( const QgsFeature &f ) { kMap << f; } );
  QVariantMap inputs = sampleInputs();
  inputs.insert( census );
  QCOMPARE( checkAgainstAnonymize( kMap, inputs ), 4 );
  const int sameUnderKAnonymity[] = { 0, 3, 9, 12 }; // rows(): at each k 5 methods and 4 baselines
  for ( int i = 0; i < kMap.size(); ++i )            // fewer suppressed than under k-anonymity at the same k
    QVERIFY( kMap.at( i ).attribute( QStringLiteral( "suppressed" ) ).toLongLong() < rows().at( sameUnderKAnonymity[i] ).attribute( QStringLiteral( "suppressed" ) ).toLongLong() );
}

void TestCompare::averageRiskThresholds()
{
  // Under the average risk model, every k with every threshold of RISK_VALUES: each row equals
  // Anonymize's release at its threshold and meets it; the same aggregation suppresses no fewer at the
  // stricter threshold; the
  // recommendation is among the rows within the stated RISK_THRESHOLD.
  QVariantMap inputs = sampleInputs();
  inputs.insert( QStringLiteral( "RISK_MODEL" ), 2 );
  QVariantMap p = parameters();
  p.insert( inputs );
  p.insert( QStringLiteral( "K" ), 5 );
  p.insert( QStringLiteral( "K_VALUES" ), QStringLiteral( "5" ) );
  p.insert( QStringLiteral( "RISK_VALUES" ), QStringLiteral( "0.05, 0.02" ) );
  p.insert( QStringLiteral( "RISK_THRESHOLD" ), 0.02 );
  p.insert( QStringLiteral( "METHODS" ), QVariantList { 0, 3 } );
  p.insert( QStringLiteral( "BASELINES" ), QVariantList { 4 } );
  QgsProcessingContext context;
  const QVariantMap results = vbastest::run( QStringLiteral( "vbas:compare" ), p, context, true );
  QList<QgsFeature> rows;
  vbastest::forEachFeature( results, QStringLiteral( "CANDIDATES" ), context, [&]( const QgsFeature &f ) { rows << f; } );
  QCOMPARE( rows.size(), 6 ); // 0.02 first: balanced density, generalization, no geography; then 0.05
  QCOMPARE( checkAgainstAnonymize( rows, inputs ), 4 );
  for ( int i = 0; i < rows.size(); ++i )
  {
    const double threshold = rows.at( i ).attribute( QStringLiteral( "risk_threshold" ) ).toDouble();
    QCOMPARE( threshold, i < 3 ? 0.02 : 0.05 );
    QVERIFY( rows.at( i ).attribute( QStringLiteral( "avg_risk" ) ).toDouble() <= threshold * ( 1 + 1e-12 ) );
    // The same aggregation at the stricter threshold cuts no fewer (a generalization may choose coarser levels there instead).
    if ( i < 3 && !rows.at( i ).attribute( QStringLiteral( "kind" ) ).toString().startsWith( QLatin1String( "generalization" ) ) )
      QVERIFY2( rows.at( i ).attribute( QStringLiteral( "suppressed" ) ).toLongLong() >= rows.at( i + 3 ).attribute( QStringLiteral( "suppressed" ) ).toLongLong(),
                qPrintable( rows.at( i ).attribute( QStringLiteral( "candidate" ) ).toString() ) );
    if ( rows.at( i ).attribute( QStringLiteral( "recommended" ) ).toLongLong() )
      QVERIFY( i < 3 );
  }
  QVERIFY( results.value( QStringLiteral( "RECOMMENDED" ) ).toString().startsWith( QStringLiteral( "k = 5, average risk at most 0.02, " ) ) );
}

void TestCompare::safeHarborByHand()
{
  // Four ZIP codes: 100 holds 25,000 residents and stays; 200 (5,000) and 300 (8,000) hold 20,000 or
  // fewer and merge into 000. At k = 3: Safe Harbor releases (100, F) 5 and (000, M) 5 and suppresses
  // (000, F) 1; cropping alone keeps 200 and 300 apart and suppresses (200, M) 2 and (200, F) 1.
  QgsVectorLayer zips( QStringLiteral( "Point?crs=EPSG:32618&field=zip:string&field=residents:integer" ), QStringLiteral( "zips" ), QStringLiteral( "memory" ) );
  QgsVectorLayer records( QStringLiteral( "None?field=zip:string&field=sex:string" ), QStringLiteral( "records" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  const QList<QPair<QString, int>> residents { { QStringLiteral( "10001" ), 15000 }, { QStringLiteral( "10002" ), 10000 }, { QStringLiteral( "20001" ), 5000 }, { QStringLiteral( "30001" ), 8000 } };
  for ( int i = 0; i < residents.size(); ++i )
  {
    QgsFeature f( zips.fields() );
    f.setAttributes( QgsAttributes() << residents[i].first << residents[i].second );
    f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( 1000.0 * i, 0 ) ) );
    features << f;
  }
  QVERIFY( zips.dataProvider()->addFeatures( features ) );
  features.clear();
  for ( const auto &[zip, sex, n] :
        { std::make_tuple( "10001", "F", 3 ), std::make_tuple( "10002", "F", 2 ), std::make_tuple( "20001", "M", 2 ), std::make_tuple( "30001", "M", 3 ), std::make_tuple( "20001", "F", 1 ) } )
    for ( int i = 0; i < n; ++i )
    {
      QgsFeature f( records.fields() );
      f.setAttributes( QgsAttributes() << QString::fromLatin1( zip ) << QString::fromLatin1( sex ) );
      features << f;
    }
  QVERIFY( records.dataProvider()->addFeatures( features ) );
  QVariantMap p = vbastest::inputParameters( &zips, QStringLiteral( "zip" ), &records, QStringLiteral( "zip" ), { QStringLiteral( "sex" ) } );
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "residents" ) );
  p.insert( QStringLiteral( "K" ), 3 );
  p.insert( QStringLiteral( "K_VALUES" ), QStringLiteral( "3" ) );
  p.insert( QStringLiteral( "METHODS" ), QVariantList() );
  p.insert( QStringLiteral( "BASELINES" ), QVariantList { 2, 3 } );
  p.insert( QStringLiteral( "CANDIDATES" ), QgsProcessing::TEMPORARY_OUTPUT );
  QgsProcessingContext context;
  const QVariantMap results = vbastest::run( QStringLiteral( "vbas:compare" ), p, context, true );
  QMap<QString, QPair<qlonglong, qlonglong>> made; // kind -> units, suppressed
  vbastest::forEachFeature( results, QStringLiteral( "CANDIDATES" ), context, [&]( const QgsFeature &f ) {
    made.insert( f.attribute( QStringLiteral( "kind" ) ).toString(), { f.attribute( QStringLiteral( "units_asked" ) ).toLongLong(), f.attribute( QStringLiteral( "suppressed" ) ).toLongLong() } );
  } );
  QCOMPARE( made.value( QStringLiteral( "safe_harbor" ) ), qMakePair( 2LL, 1LL ) );
  QCOMPARE( made.value( QStringLiteral( "cropped" ) ), qMakePair( 3LL, 3LL ) );
}

void TestCompare::randomInputsEqualAnonymize()
{
  // Property, on random grids of regions and records (two QIs): every candidate of every method
  // equals Anonymize's release with its command; a generalization left out is one Anonymize refuses
  // (no levels within SUPPRESSION_LIMIT); every baseline's suppression recounted here from the records
  // (the parent geography: a column of the grid, by a field).
  int methods = 0, leftOut = 0;
  for ( quint64 seed = 1; seed <= 8; ++seed )
  {
    QRandomGenerator64 random( seed );
    const int side = 3 + static_cast<int>( random.bounded( 4 ) );
    QgsVectorLayer grid( QStringLiteral( "Polygon?crs=EPSG:32618&field=id:string&field=column:string" ), QStringLiteral( "grid" ), QStringLiteral( "memory" ) );
    QgsFeatureList cells;
    QList<QVariantList> recordRows;
    std::map<std::tuple<QString, QString, QString>, qlonglong> classes; // (region, sex, age) -> records
    for ( int c = 0; c < side; ++c )
      for ( int r = 0; r < side; ++r )
      {
        const QString id = QStringLiteral( "c%1r%2" ).arg( c ).arg( r );
        QgsFeature f( grid.fields() );
        f.setAttributes( QgsAttributes() << id << ( c == 0 ? QVariant() : QVariant( id.left( 2 ) ) ) ); // column 0's parent NULL
        f.setGeometry( QgsGeometry::fromRect( QgsRectangle( c, r, c + 1, r + 1 ) ) );
        cells << f;
        for ( int n = static_cast<int>( random.bounded( 40 ) ); n > 0; --n )
        {
          const QString sex = random.bounded( 2 ) ? QStringLiteral( "F" ) : QStringLiteral( "M" );
          const QString age = QStringLiteral( "a%1" ).arg( random.bounded( 1 + static_cast<int>( seed % 4 ) ) );
          recordRows << QVariantList { id, sex, age };
          ++classes[{ id, sex, age }];
        }
      }
    QVERIFY( grid.dataProvider()->addFeatures( cells ) );
    const auto records = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=age:string" ), recordRows );
    QVariantMap inputs = vbastest::inputParameters( &grid, QStringLiteral( "id" ), records.get(), QStringLiteral( "region" ), { QStringLiteral( "sex" ), QStringLiteral( "age" ) } );
    if ( seed % 3 == 0 ) // ADC stopped early, in both runs
      inputs.insert( QStringLiteral( "MAX_ITERATIONS" ), 20 );
    if ( seed % 2 ) // a site per region and none below k: some generalizations have no levels
    {
      inputs.insert( QStringLiteral( "SUPPRESSION_LIMIT" ), 0.0 );
      inputs.insert( QStringLiteral( "MODEL" ), 3 );
      inputs.insert( QStringLiteral( "FIXED_SITES" ), side * side );
    }
    const qlonglong k1 = 2 + static_cast<qlonglong>( random.bounded( 3 ) ), k2 = k1 + 1 + static_cast<qlonglong>( random.bounded( 3 ) );
    QVariantMap p = inputs;
    p.insert( QStringLiteral( "K" ), k1 );
    p.insert( QStringLiteral( "K_VALUES" ), QStringLiteral( "%1, %2" ).arg( k2 ).arg( k1 ) );
    p.insert( QStringLiteral( "METHODS" ), QVariantList { 0, 1, 2, 3, 4 } );
    p.insert( QStringLiteral( "SEARCH_MOVES" ), 3000 );
    p.insert( QStringLiteral( "SEED" ), 11 );
    p.insert( QStringLiteral( "BASELINES" ), QVariantList { 0, 1, 2, 4 } );
    p.insert( QStringLiteral( "PARENT_FIELD" ), QStringLiteral( "column" ) );
    p.insert( QStringLiteral( "CROP_LENGTH" ), 2 ); // a grid column
    p.insert( QStringLiteral( "CANDIDATES" ), QgsProcessing::TEMPORARY_OUTPUT );
    QgsProcessingContext context;
    const QVariantMap results = vbastest::run( QStringLiteral( "vbas:compare" ), p, context, true );
    QList<QgsFeature> rows;
    vbastest::forEachFeature( results, QStringLiteral( "CANDIDATES" ), context, [&]( const QgsFeature &f ) { rows << f; } );
    methods += checkAgainstAnonymize( rows, inputs );
    for ( const qlonglong k : { k1, k2 } )
    {
      QMap<QString, qlonglong> suppressed; // kind -> suppressed, at k
      for ( const QgsFeature &row : rows )
        if ( row.attribute( QStringLiteral( "k" ) ).toLongLong() == k )
          suppressed.insert( row.attribute( QStringLiteral( "kind" ) ).toString(), row.attribute( QStringLiteral( "suppressed" ) ).toLongLong() );
      for ( const QString &generalization : { QStringLiteral( "generalization" ), QStringLiteral( "generalization_local" ) } )
        if ( !suppressed.contains( generalization ) )
        {
          QgsFeature absent( rows.first().fields() );
          absent.setAttribute( QStringLiteral( "kind" ), generalization );
          absent.setAttribute( QStringLiteral( "k" ), k );
          QVERIFY( vbastest::refusal( QStringLiteral( "vbas:anonymize" ), anonymizeParameters( absent, inputs ) ).contains( QStringLiteral( "SUPPRESSION_LIMIT" ) ) );
          ++leftOut;
        }
      // The parent of column 0 is NULL, a parent of its own: the column alike.
      for ( const auto &[kind, key] : { std::make_pair( "regions", 4 ), std::make_pair( "parent", 2 ), std::make_pair( "cropped", 2 ), std::make_pair( "no_geography", 0 ) } )
      {
        std::map<std::tuple<QString, QString, QString>, qlonglong> grouped;
        for ( const auto &[cls, n] : classes )
          grouped[{ std::get<0>( cls ).left( key ), std::get<1>( cls ), std::get<2>( cls ) }] += n;
        qlonglong byHand = 0;
        for ( const auto &[cls, n] : grouped )
          byHand += n < k ? n : 0;
        QVERIFY2( suppressed.value( QString::fromLatin1( kind ) ) == byHand, qPrintable( QStringLiteral( "seed %1, k = %2, %3" ).arg( seed ).arg( k ).arg( kind ) ) );
      }
    }
  }
  qInfo( "%d candidates of the methods recounted, %d generalizations left out", methods, leftOut );
  QVERIFY( methods >= 60 );
}

void TestCompare::cancelLeavesNothing()
{
  // A cancel at the second candidate: the run ends as canceled, and neither CANDIDATES nor REPORT exists.
  QTemporaryDir dir;
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "CANDIDATES" ), dir.filePath( QStringLiteral( "candidates.gpkg" ) ) );
  p.insert( QStringLiteral( "REPORT" ), dir.filePath( QStringLiteral( "comparison.html" ) ) );
  vbastest::Feedback feedback;
  feedback.onInfo = [&]( const QString &info ) {
    if ( info.startsWith( QLatin1String( "Candidate 2:" ) ) )
      feedback.cancel();
  };
  QgsProcessingContext context;
  vbastest::run( QStringLiteral( "vbas:compare" ), p, context, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "Canceled" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( vbastest::entries( dir.path() ), QStringList() );
}

void TestCompare::baselinesRecountedByHand()
{
  int checked = 0;
  for ( const QgsFeature &row : rows() )
  {
    const QString kind = row.attribute( QStringLiteral( "kind" ) ).toString();
    const qlonglong k = row.attribute( QStringLiteral( "k" ) ).toLongLong();
    std::function<QString( const QString & )> key;
    qlonglong units = 0;
    if ( kind == QLatin1String( "regions" ) || kind == QLatin1String( "parent" ) )
    {
      key = []( const QString &tract ) { return tract; };
      units = 281;
    }
    else if ( kind == QLatin1String( "cropped" ) )
    {
      key = []( const QString &tract ) { return tract.left( 5 ); };
      units = 8;
    }
    else if ( kind == QLatin1String( "no_geography" ) )
    {
      key = []( const QString & ) { return QString(); };
      units = 1;
    }
    else
      continue;
    QCOMPARE( row.attribute( QStringLiteral( "suppressed" ) ).toLongLong(), suppressedByHand( key, k ) );
    QCOMPARE( row.attribute( QStringLiteral( "units_asked" ) ).toLongLong(), units );
    QVERIFY( row.attribute( QStringLiteral( "units_in_pieces" ) ).isNull() );
    ++checked;
  }
  QCOMPARE( checked, 8 );
}

void TestCompare::frontierAndRecommendation()
{
  // on_front recomputed from the rows: no other row suppresses at most as many and loses at most as
  // much (generic NUE of the QIs and the geography), one strictly; the recommendation: the least loss at k >= K = 10.
  const QList<QgsFeature> &all = rows();
  const auto suppressed = [&]( int i ) { return all.at( i ).attribute( QStringLiteral( "suppressed" ) ).toLongLong(); };
  const auto loss = [&]( int i ) { return all.at( i ).attribute( QStringLiteral( "loss_generic_nue" ) ).toDouble(); };
  int best = -1, fronts = 0;
  for ( int i = 0; i < all.size(); ++i )
  {
    bool beaten = false;
    for ( int j = 0; j < all.size(); ++j )
      beaten = beaten || ( suppressed( j ) <= suppressed( i ) && loss( j ) <= loss( i ) && ( suppressed( j ) < suppressed( i ) || loss( j ) < loss( i ) ) );
    QCOMPARE( all.at( i ).attribute( QStringLiteral( "on_front" ) ).toLongLong(), beaten ? 0LL : 1LL );
    fronts += !beaten;
    if ( all.at( i ).attribute( QStringLiteral( "k" ) ).toLongLong() >= 10 && ( best < 0 || loss( i ) < loss( best ) ) )
      best = i;
  }
  QVERIFY( fronts >= 2 );
  for ( int i = 0; i < all.size(); ++i )
    QCOMPARE( all.at( i ).attribute( QStringLiteral( "recommended" ) ).toLongLong(), i == best ? 1LL : 0LL );
}

void TestCompare::reportDrawsTheFrontier()
{
  // A point per candidate (the baselines as squares), the frontier line through as many points as
  // rows on it, the recommendation ringed and named, each aggregation's command once, for the custodian only.
  const QList<QgsFeature> &all = rows();
  QVERIFY( !mReport.isEmpty() );
  QVERIFY( mReport.contains( QStringLiteral( "For the data custodian only" ) ) );
  QCOMPARE( mReport.count( QStringLiteral( "class=\"candidate aggregation\"" ) ), 10 );
  QCOMPARE( mReport.count( QStringLiteral( "class=\"candidate baseline\"" ) ), 8 );
  int onFront = 0;
  QString recommended;
  for ( const QgsFeature &row : all )
  {
    onFront += row.attribute( QStringLiteral( "on_front" ) ).toLongLong();
    if ( row.attribute( QStringLiteral( "recommended" ) ).toLongLong() )
      recommended = row.attribute( QStringLiteral( "candidate" ) ).toString();
    if ( !row.attribute( QStringLiteral( "command" ) ).isNull() )
      QCOMPARE( mReport.count( row.attribute( QStringLiteral( "command" ) ).toString().toHtmlEscaped() ), 1 );
  }
  const int at = mReport.indexOf( QStringLiteral( "<polyline id=\"front\" points=\"" ) );
  QVERIFY( at >= 0 );
  const QString points = mReport.mid( at ).section( '"', 3, 3 );
  QCOMPARE( points.split( ' ', Qt::SkipEmptyParts ).size(), onFront );
  QCOMPARE( mReport.count( QStringLiteral( "id=\"recommended\"" ) ), 1 );
  QVERIFY( mReport.contains( QStringLiteral( "Recommended: %1," ).arg( recommended ).toHtmlEscaped() ) );
}

void TestCompare::badListsRefused()
{
  const auto refused = [&]( const QVariantMap &changes ) {
    QVariantMap p = parameters();
    for ( auto it = changes.constBegin(); it != changes.constEnd(); ++it )
      p.insert( it.key(), it.value() );
    return vbastest::refusal( QStringLiteral( "vbas:compare" ), p );
  };
  QVERIFY( refused( { { QStringLiteral( "K_VALUES" ), QStringLiteral( "5, five" ) } } ).contains( QStringLiteral( "'five'" ) ) );
  QVERIFY( refused( { { QStringLiteral( "K_VALUES" ), QStringLiteral( "5, 1" ) } } ).contains( QStringLiteral( "'1'" ) ) );
  QVERIFY( refused( { { QStringLiteral( "METHODS" ), QVariantList() }, { QStringLiteral( "BASELINES" ), QVariantList() } } ).contains( QStringLiteral( "Nothing to compare" ) ) );
  QVERIFY( refused( { { QStringLiteral( "PARENT_FIELD" ), QString() } } ).contains( QStringLiteral( "PARENT_FIELD" ) ) );
  QVERIFY( refused( { { QStringLiteral( "BASELINES" ), QVariantList { 3 } } } ).contains( QStringLiteral( "POPULATION_FIELD" ) ) );
  QVERIFY( refused( { { QStringLiteral( "RISK_VALUES" ), QStringLiteral( "0.1" ) } } ).contains( QStringLiteral( "average risk model" ) ) );
  const QVariantMap average { { QStringLiteral( "RISK_MODEL" ), 2 } };
  for ( const char *bad : { "0", "1.5", "a" } )
  {
    QVariantMap p = average;
    p.insert( QStringLiteral( "RISK_VALUES" ), QStringLiteral( "0.1, %1" ).arg( QLatin1String( bad ) ) );
    QVERIFY( refused( p ).contains( QStringLiteral( "'%1'" ).arg( QLatin1String( bad ) ) ) );
  }
}

QTEST_MAIN( TestCompare )
#include "test_compare.moc"
