// Every file format QGIS writes, as the release and the other outputs (docs/outputs.md), each run
// through QgsProcessingAlgorithm::run: a format works, and the file read back holds the release
// whole and k-anonymous, or it is refused before anything is written for its true reason. Files are
// read back and recounted with GDAL's OGR C API here, not with the plugin's code.
#include "tests/plugin/qgis_test_util.h"

#include <algorithm>

#include <QTemporaryDir>

#include <gdal.h>
#include <ogr_api.h>

using vbastest::entries;
using vbastest::Feedback;

namespace
{

constexpr int kPerRegion = 20;
constexpr int kK = 3;
const QStringList kQis = { QStringLiteral( "sex" ), QStringLiteral( "age_group" ) };
//! The released fields, as the release holds them.
const QStringList kReleased = { QStringLiteral( "sex" ), QStringLiteral( "age_group" ), QStringLiteral( "diagnosis" ), QStringLiteral( "ward" ), QStringLiteral( "aggregate_id" ) };

/**
 * kPerRegion rows in each region of the grid: sex, age_group (five groups, and one row of a rare group
 * in r00: a class below k), diagnosis, ward, and fid (a plain column, no key: three values).
 */
std::unique_ptr<QgsVectorLayer> records()
{
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      for ( int i = 0; i < kPerRegion; ++i )
      {
        const QString age = c == 0 && r == 0 && i == 0 ? QStringLiteral( "a9" ) : QStringLiteral( "a%1" ).arg( i % 5 );
        rows << QVariantList {
          QStringLiteral( "r%1%2" ).arg( c ).arg( r ), i % 2 ? "M" : "F", age, i % 4 ? "flu" : "cold", QStringLiteral( "w%1" ).arg( i % 3 ), QStringLiteral( "f%1" ).arg( i % 3 )
        };
      }
  return vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=age_group:string&field=diagnosis:string&field=ward:string&field=fid:string" ), rows );
}

//! A layer of a file as GDAL reads it: its field names and its rows, each value as text, with the geometry's type.
struct Layer
{
    bool opened = false;
    QStringList fields;
    QList<QStringList> rows;
    QStringList geometries; //!< per row: the geometry's type name, empty when none

    //! The values of fields in every row, "|"-joined, sorted: the rows as a multiset.
    QStringList multiset( const QStringList &names ) const
    {
      QStringList result;
      for ( const QStringList &row : rows )
      {
        QStringList values;
        for ( const QString &name : names )
          values << row.value( fields.indexOf( name ), QStringLiteral( "<missing>" ) );
        result << values.join( '|' );
      }
      result.sort();
      return result;
    }
};

//! The only layer of a file, or the table named after it (GDAL lists no table without geometry of a SQLite file).
Layer read( const QString &path )
{
  Layer layer;
  GDALDatasetH ds = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  OGRLayerH l = !ds                                   ? nullptr
                : GDALDatasetGetLayerCount( ds ) == 1 ? GDALDatasetGetLayer( ds, 0 )
                : GDALDatasetGetLayerCount( ds ) == 0 ? GDALDatasetGetLayerByName( ds, QFileInfo( path ).completeBaseName().toUtf8().constData() )
                                                      : nullptr;
  if ( !l )
  {
    if ( ds )
      GDALClose( ds );
    return layer;
  }
  layer.opened = true;
  OGRFeatureDefnH defn = OGR_L_GetLayerDefn( l );
  for ( int i = 0; i < OGR_FD_GetFieldCount( defn ); ++i )
    layer.fields << QString::fromUtf8( OGR_Fld_GetNameRef( OGR_FD_GetFieldDefn( defn, i ) ) );
  OGR_L_ResetReading( l );
  while ( OGRFeatureH f = OGR_L_GetNextFeature( l ) )
  {
    QStringList row;
    for ( int i = 0; i < OGR_F_GetFieldCount( f ); ++i )
      row << QString::fromUtf8( OGR_F_GetFieldAsString( f, i ) );
    layer.rows << row;
    OGRGeometryH g = OGR_F_GetGeometryRef( f );
    layer.geometries << ( g ? QString::fromUtf8( OGR_G_GetGeometryName( g ) ) : QString() );
    OGR_F_Destroy( f );
  }
  GDALClose( ds );
  return layer;
}

//! Whether GDAL's FlatGeobuf driver keeps a row without geometry (written with OGR, read back).
bool flatGeobufKeepsTables( const QString &folder )
{
  const QString path = folder + QStringLiteral( "/probe.fgb" );
  GDALDatasetH ds = GDALCreate( GDALGetDriverByName( "FlatGeobuf" ), path.toUtf8().constData(), 0, 0, 0, GDT_Unknown, nullptr );
  OGRLayerH layer = GDALDatasetCreateLayer( ds, "probe", nullptr, wkbNone, nullptr );
  OGRFieldDefnH field = OGR_Fld_Create( "a", OFTString );
  OGR_L_CreateField( layer, field, TRUE );
  OGR_Fld_Destroy( field );
  OGRFeatureH f = OGR_F_Create( OGR_L_GetLayerDefn( layer ) );
  OGR_F_SetFieldString( f, 0, "x" );
  const OGRErr created = OGR_L_CreateFeature( layer, f );
  OGR_F_Destroy( f );
  GDALClose( ds );
  const bool kept = created == OGRERR_NONE && read( path ).rows.size() == 1;
  QFile::remove( path );
  return kept;
}

} // namespace

class TestFormats : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();

    void releaseInEveryFormat_data();
    void releaseInEveryFormat();
    void layersInEveryFormat_data();
    void layersInEveryFormat();
    void failedRunKeepsThePreviousFile();
    void fidFieldNamesReleaseFields_data();
    void fidFieldNamesReleaseFields();

  private:
    //! vbas:anonymize on the grid, two sites: QIs sex and age_group, k = 3, diagnosis sensitive, ward named in RELEASE_FIELDS; every output temporary.
    QVariantMap parameters() const;

    QgsProcessingContext mContext;
    std::unique_ptr<QgsVectorLayer> mGrid;
    std::unique_ptr<QgsVectorLayer> mRecords;
    QVariantMap mReference; //!< the run with every output temporary
    QStringList mRelease;   //!< its release as a multiset of kReleased
    QStringList mLookup;    //!< its lookup as a multiset of region_id|aggregate_id|site_id
};

void TestFormats::initTestCase()
{
  vbastest::initQgisWithProvider();
  mGrid = vbastest::grid();
  mRecords = records();
  mReference = vbastest::run( QStringLiteral( "vbas:anonymize" ), parameters(), mContext, true );
  QgsVectorLayer *release = vbastest::output( mReference, QStringLiteral( "ANONYMIZED" ), mContext );
  QVERIFY( release );
  QgsFeature f;
  for ( QgsFeatureIterator it = release->getFeatures(); it.nextFeature( f ); )
  {
    QStringList values;
    for ( const QString &name : kReleased )
      values << f.attribute( name ).toString();
    mRelease << values.join( '|' );
  }
  mRelease.sort();
  for ( QgsFeatureIterator it = vbastest::output( mReference, QStringLiteral( "LOOKUP" ), mContext )->getFeatures(); it.nextFeature( f ); )
    mLookup << QStringLiteral( "%1|%2|%3" ).arg( f.attribute( 0 ).toString(), f.attribute( 1 ).toString(), f.attribute( 2 ).toString() );
  mLookup.sort();
  const qlonglong suppressed = mReference.value( QStringLiteral( "SUPPRESSED" ) ).toLongLong();
  QVERIFY2( suppressed > 0 && suppressed < 9 * kPerRegion / 2, "the reference release should suppress a few records" );
  QCOMPARE( mRelease.size(), 9 * kPerRegion - suppressed );
}

QVariantMap TestFormats::parameters() const
{
  QVariantMap p = vbastest::inputParameters( mGrid.get(), QStringLiteral( "id" ), mRecords.get(), QStringLiteral( "region" ), kQis );
  p.insert( QStringLiteral( "SENSITIVE_FIELD" ), QStringLiteral( "diagnosis" ) );
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "ward" ) } );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), kK );
  p.insert( QStringLiteral( "SEED" ), 1 );
  return p;
}

void TestFormats::releaseInEveryFormat_data()
{
  QTest::addColumn<QString>( "extension" );
  QTest::addColumn<QString>( "refusal" ); // empty: the format works
  QTemporaryDir dir;
  for ( const char *extension : { "gpkg", "sqlite", "csv", "geojson", "json", "geojsonl", "xlsx", "ods" } )
    QTest::newRow( extension ) << extension << QString();
  QTest::newRow( "shp" ) << "shp"
                         << "(a shapefile without geometry is its .dbf file alone). Choose a GeoPackage (.gpkg) or CSV (.csv) file.";
  QTest::newRow( "dbf" ) << "dbf"
                         << "the ESRI Shapefile format would rename or drop the field(s) suppressed_pct, compactness"; // 10 characters
  QTest::newRow( "fgb" ) << "fgb"
                         << ( flatGeobufKeepsTables( dir.path() )
                                ? QString()
                                : QStringLiteral(
                                  "the FlatGeobuf format does not give the rows of this output back as written (it keeps no row without geometry): a test row written to it reads back as 0 rows"
                                  "|the FlatGeobuf format cannot hold this output: Feature creation error (OGR error: ICreateFeature: NULL geometry not supported" ) ); // GDAL 3.6 | 3.10
}

void TestFormats::releaseInEveryFormat()
{
  // The release, the lookup and the evaluation (the tables) in one format.
  QFETCH( QString, extension );
  QFETCH( QString, refusal );
  QTemporaryDir dir;
  QVariantMap p = parameters();
  for ( const char *table : { "ANONYMIZED", "LOOKUP", "EVALUATION" } )
    p.insert( table, dir.filePath( QStringLiteral( "%1.%2" ).arg( QString( table ).toLower(), extension ) ) );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, refusal.isEmpty(), &feedback );
  if ( !refusal.isEmpty() )
  {
    const QStringList refusals = refusal.split( '|' ); // one of them, by GDAL version
    QVERIFY2( std::any_of( refusals.cbegin(), refusals.cend(), [&]( const QString &one ) { return feedback.error().contains( one ); } ), qPrintable( feedback.error() ) );
    QCOMPARE( entries( dir.path() ), QStringList() ); // refused before anything was written
    return;
  }
  QCOMPARE( r.value( QStringLiteral( "ANONYMIZED" ) ).toString(), dir.filePath( "anonymized." + extension ) );

  // The release under the name asked for, every field kept, the same rows as the reference run's.
  const Layer release = read( dir.filePath( "anonymized." + extension ) );
  QVERIFY2( release.opened, "the release cannot be read back" );
  for ( const QString &name : kReleased )
    QVERIFY2( release.fields.contains( name ), qPrintable( QStringLiteral( "no field %1 in %2" ).arg( name, release.fields.join( ',' ) ) ) );
  QCOMPARE( release.rows.size(), r.value( QStringLiteral( "RELEASED" ) ).toInt() );
  QCOMPARE( release.multiset( kReleased ), mRelease );
  // Recounted: every class (aggregate, sex, age group) holds k records or more.
  QMap<QString, int> classes;
  for ( const QString &row : release.multiset( { QStringLiteral( "aggregate_id" ), QStringLiteral( "sex" ), QStringLiteral( "age_group" ) } ) )
    ++classes[row];
  QVERIFY( !classes.isEmpty() );
  for ( auto it = classes.cbegin(); it != classes.cend(); ++it )
    QVERIFY2( it.value() >= kK, qPrintable( QStringLiteral( "class %1 holds %2" ).arg( it.key() ).arg( it.value() ) ) );

  const Layer lookup = read( dir.filePath( "lookup." + extension ) );
  QCOMPARE( lookup.multiset( { QStringLiteral( "region_id" ), QStringLiteral( "aggregate_id" ), QStringLiteral( "site_id" ) } ), mLookup );
  const Layer evaluation = read( dir.filePath( "evaluation." + extension ) );
  QCOMPARE( evaluation.rows.size(), 1 );
  QCOMPARE( evaluation.fields.size(), vbastest::output( mReference, QStringLiteral( "EVALUATION" ), mContext )->fields().count() );
  // Nothing but the outputs (and a shapefile's or CSV's sidecars) is left.
  for ( const QString &entry : entries( dir.path() ) )
    QVERIFY2( !entry.startsWith( '.' ), qPrintable( entry ) );
}

void TestFormats::layersInEveryFormat_data()
{
  QTest::addColumn<QString>( "extension" );
  QTest::addColumn<QString>( "refusal" );
  QTest::addColumn<bool>( "geometries" ); // the format keeps them
  for ( const char *extension : { "gpkg", "geojson", "json", "geojsonl", "fgb" } )
    QTest::newRow( extension ) << extension << QString() << true;
  for ( const char *extension : { "csv", "xlsx", "ods" } )
    QTest::newRow( extension ) << extension << QString() << false;
  QTest::newRow( "shp" ) << "shp"
                         << "the ESRI Shapefile format would rename or drop the field(s) aggregate_id, smallest_ec" << true;
}

void TestFormats::layersInEveryFormat()
{
  // The layers with geometry: the sites (points), the aggregates and the Voronoi cells (polygons);
  // a format without geometry keeps their attributes, with a warning.
  QFETCH( QString, extension );
  QFETCH( QString, refusal );
  QFETCH( bool, geometries );
  QTemporaryDir dir;
  QVariantMap p = parameters();
  for ( const char *layer : { "SITE_POINTS", "AGGREGATED", "VORONOI" } )
    p.insert( layer, dir.filePath( QStringLiteral( "%1.%2" ).arg( QString( layer ).toLower(), extension ) ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, refusal.isEmpty(), &feedback );
  if ( !refusal.isEmpty() )
  {
    QVERIFY2( feedback.error().contains( refusal ), qPrintable( feedback.error() ) );
    QCOMPARE( entries( dir.path() ), QStringList() );
    return;
  }
  for ( const auto &[name, geometry] : { std::pair<QString, QString> { "SITE_POINTS", "POINT" }, { "AGGREGATED", "MULTIPOLYGON" }, { "VORONOI", "POLYGON" } } )
  {
    const Layer layer = read( dir.filePath( QStringLiteral( "%1.%2" ).arg( name.toLower(), extension ) ) );
    QgsVectorLayer *reference = vbastest::output( mReference, name, mContext );
    QCOMPARE( layer.rows.size(), static_cast<int>( reference->featureCount() ) );
    QCOMPARE( layer.fields, reference->fields().names() );
    for ( const QString &type : layer.geometries ) // a format may store a polygon of one part as a polygon
      QVERIFY2( !geometries ? type.isEmpty() : type == geometry || ( geometry == QLatin1String( "MULTIPOLYGON" ) && type == QLatin1String( "POLYGON" ) ), qPrintable( name + ": " + type ) );
    QCOMPARE( feedback.warned( QStringLiteral( "%1 (%2): the " ).arg( name, dir.filePath( QStringLiteral( "%1.%2" ).arg( name.toLower(), extension ) ) ) ), !geometries );
  }
  QCOMPARE( feedback.warned( QStringLiteral( "format keeps no geometry: the file holds the attributes only" ) ), !geometries );
}

void TestFormats::failedRunKeepsThePreviousFile()
{
  // A format written under another name (QGIS writes out.json as out.json.geojson) is moved into
  // place under the name asked for only when the run succeeds: a run that fails while writing the
  // release (a named field unique per row) keeps the previous file and leaves no temporary.
  QTemporaryDir dir;
  const QString path = dir.filePath( QStringLiteral( "release.json" ) );
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "ANONYMIZED" ), path );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QFile file( path );
  QVERIFY( file.open( QIODevice::ReadOnly ) );
  const QByteArray previous = file.readAll();
  file.close();
  QCOMPARE( read( path ).multiset( kReleased ), mRelease );

  auto unique = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=age_group:string&field=diagnosis:string&field=ward:string&field=patient:integer" ), [] {
    QList<QVariantList> rows;
    for ( int i = 0; i < 9 * kPerRegion; ++i )
      rows << QVariantList { QStringLiteral( "r%1%2" ).arg( i / kPerRegion / 3 ).arg( i / kPerRegion % 3 ), i % 2 ? "M" : "F", "a1", "flu", "w1", i };
    return rows;
  }() );
  p.insert( QStringLiteral( "RECORDS" ), vbastest::layerValue( unique.get() ) );
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "patient" ) } );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, false, &feedback );
  QVERIFY2( feedback.error().contains( QStringLiteral( "'patient' is (nearly) unique per record" ) ), qPrintable( feedback.error() ) );
  QVERIFY( file.open( QIODevice::ReadOnly ) );
  QVERIFY2( file.readAll() == previous, "the previous release.json changed" );
  QCOMPARE( entries( dir.path() ), QStringList { QStringLiteral( "release.json" ) } );
}

void TestFormats::fidFieldNamesReleaseFields_data()
{
  QTest::addColumn<QString>( "destination" ); // %1: the folder
  QTest::addColumn<QString>( "refusal" );
  const QString refusal = QStringLiteral( "keeps each feature's own id in a column named fid, so the field fid (named in RELEASE_FIELDS) cannot be written beside it. "
                                          "Leave it out of RELEASE_FIELDS" );
  QTest::newRow( "GeoPackage file" ) << "%1/release.gpkg" << refusal;
  QTest::newRow( "GeoPackage table" ) << "ogr:dbname='%1/out.gpkg' table=\"release\"" << refusal;
  QTest::newRow( "CSV" ) << "%1/release.csv" << QString();
}

void TestFormats::fidFieldNamesReleaseFields()
{
  // A column fid that is no key of the records, named in RELEASE_FIELDS: GeoPackage keeps its
  // feature ids in a column of that name, so the message names RELEASE_FIELDS and suggests no
  // GeoPackage; a CSV keeps the column.
  QFETCH( QString, destination );
  QFETCH( QString, refusal );
  QTemporaryDir dir;
  QVariantMap p = parameters();
  p.insert( QStringLiteral( "RELEASE_FIELDS" ), QStringList { QStringLiteral( "fid" ) } );
  p.insert( QStringLiteral( "ANONYMIZED" ), destination.arg( dir.path() ) );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, refusal.isEmpty(), &feedback );
  if ( refusal.isEmpty() )
  {
    const QStringList values = read( dir.filePath( QStringLiteral( "release.csv" ) ) ).multiset( { QStringLiteral( "fid" ) } );
    QCOMPARE( values.size(), mRelease.size() );
    QCOMPARE( QSet<QString>( values.begin(), values.end() ), ( QSet<QString> { "f0", "f1", "f2" } ) );
    return;
  }
  QVERIFY2( feedback.error().contains( refusal ), qPrintable( feedback.error() ) );
  QVERIFY2( !feedback.error().contains( QStringLiteral( "GeoPackage (.gpkg)" ) ), qPrintable( feedback.error() ) );
  QCOMPARE( entries( dir.path() ), QStringList() );
}

QTEST_GUILESS_MAIN( TestFormats )
#include "test_formats.moc"
