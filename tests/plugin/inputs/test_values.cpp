// Values and numbers in the inputs (docs/preparing-data.md): values taken as stored or refused naming
// the row, counts given as plain digits, finite number parameters, a population in every region,
// polygon regions, and record points without a CRS. Every refusal is checked with its message.
#include "tests/plugin/qgis_test_util.h"
#include "plugin/support/vbasqgiscompat.h"

#include <QTemporaryDir>
#include <QUrl>

#include <cpl_error.h>
#include <gdal.h>
#include <gdal_utils.h>
#include <shapefil.h>

using vbastest::Feedback;
using vbastest::layerValue;

namespace
{

//! Runs SQL statements on a GeoPackage through GDAL (which has the functions its triggers call), as a user's own tool would store values QGIS does not write.
void execute( const QString &path, const QString &sql )
{
  GDALDatasetH dataset = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_UPDATE, nullptr, nullptr, nullptr );
  QVERIFY( dataset );
  CPLErrorReset();
  for ( const QString &statement : sql.split( ';', Qt::SkipEmptyParts ) )
    if ( !statement.trimmed().isEmpty() )
      GDALDatasetExecuteSQL( dataset, statement.toUtf8().constData(), nullptr, nullptr );
  const QString error = QString::fromUtf8( CPLGetLastErrorMsg() );
  GDALClose( dataset );
  QVERIFY2( error.isEmpty(), qPrintable( error ) );
}

//! Two records in each region of the grid: sex F, age 30, n 1.
QList<QVariantList> twoPerRegion()
{
  QList<QVariantList> rows;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
      for ( int i = 0; i < 2; ++i )
        rows << QVariantList { QStringLiteral( "r%1%2" ).arg( c ).arg( r ), QStringLiteral( "F" ), 30, 1 };
  return rows;
}

const QString kFields = QStringLiteral( "field=region:string&field=sex:string&field=age:integer&field=n:integer" );

//! Writes a CSV file and its .csvt (column types, as GDAL reads them) in dir; the layer QGIS reads.
std::unique_ptr<QgsVectorLayer> csv( const QTemporaryDir &dir, const QString &name, const QStringList &lines, const QString &types )
{
  const QString path = dir.filePath( name + QStringLiteral( ".csv" ) );
  QFile file( path );
  file.open( QIODevice::WriteOnly );
  file.write( lines.join( '\n' ).toUtf8() + '\n' );
  file.close();
  QFile csvt( dir.filePath( name + QStringLiteral( ".csvt" ) ) );
  csvt.open( QIODevice::WriteOnly );
  csvt.write( types.toUtf8() + '\n' );
  csvt.close();
  return std::make_unique<QgsVectorLayer>( path, name, QStringLiteral( "ogr" ) );
}

//! The grid's records as CSV lines with a header (region, sex, age, n, w, visit); the value of column at data row row (from 1) replaced by value.
QStringList csvLines( int column = -1, int row = 0, const QString &value = QString() )
{
  QStringList lines { QStringLiteral( "region,sex,age,n,w,visit" ) };
  for ( const QVariantList &record : twoPerRegion() )
  {
    QStringList fields { record[0].toString(), record[1].toString(), QStringLiteral( "1" ), QStringLiteral( "1" ), QStringLiteral( "1.5" ), QStringLiteral( "2020/01/02" ) };
    if ( lines.size() == row )
      fields[column] = value;
    lines << fields.join( ',' );
  }
  return lines;
}

//! Writes text over the .dbf value of field at record (from 0), as another program would store it.
void writeDbf( const QString &path, int record, const char *field, const char *text )
{
  DBFHandle dbf = DBFOpen( QFile::encodeName( path ).constData(), "rb+" );
  QVERIFY( dbf );
  const int column = DBFGetFieldIndex( dbf, field );
  QVERIFY( DBFWriteAttributeDirectly( dbf, record, column, const_cast<char *>( text ) ) );
  DBFClose( dbf );
}

} // namespace

class TestValues : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void nanParametersRefused();
    void nullPopulationRefused();
    void textCountsArePlainDigits();
    void storedTypeMismatchRefused();
    void nulAndBomRefused();
    void csvTypedValuesReadBack();
    void delimitedTextValuesReadBack();
    void shapefileValuesReadBack();
    void sampleAsShapefileAndCsv();
    void eachFormatReadAsQgisReadsIt_data();
    void eachFormatReadAsQgisReadsIt();
    void oneGeometryTypeOfAFileReadAsQgisReadsIt();
    void booleansReadAsQgisReadsThem();
    void lineRegionsRefused();
    void pointsWithoutSrsTakenInRegionsCrs();
    void overlappingRegionsRefused();

  private:
    QString runError( const QString &id, const QVariantMap &parameters, Feedback *feedback = nullptr );
    //! The records saved as a GeoPackage table "records", edited by sql.
    std::unique_ptr<QgsVectorLayer> geoPackage( const QString &name, const QString &sql );

    QgsProcessingContext mContext;
    QTemporaryDir mDir;
};

void TestValues::initTestCase()
{
  vbastest::initQgisWithProvider();
}

void TestValues::cleanupTestCase()
{
  QgsApplication::exitQgis();
}

QString TestValues::runError( const QString &id, const QVariantMap &parameters, Feedback *feedback )
{
  Feedback own;
  Feedback *f = feedback ? feedback : &own;
  vbastest::run( id, parameters, mContext, false, f );
  return f->error();
}

std::unique_ptr<QgsVectorLayer> TestValues::geoPackage( const QString &name, const QString &sql )
{
  auto memory = vbastest::table( kFields, twoPerRegion() );
  const QString path = mDir.filePath( name + QStringLiteral( ".gpkg" ) );
  vbastest::save( memory.get(), path, QStringLiteral( "records" ) );
  execute( path, sql );
  return std::make_unique<QgsVectorLayer>( path + QStringLiteral( "|layername=records" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
}

void TestValues::nanParametersRefused()
{
  // NaN and infinite numbers pass QGIS's own range checks; every one is refused, by the dialog's
  // check and when the algorithm runs.
  auto regions = vbastest::grid();
  auto recs = vbastest::table( kFields, twoPerRegion() );
  const QgsProcessingAlgorithm *anonymize = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "vbas:anonymize" ) );
  for ( const auto &[name, value] : { std::pair<QString, QString> { "ENTROPY_BASE", "nan" }, { "EXP_B0", "nan" }, { "RISK_THRESHOLD", "nan" }, { "B1", "inf" }, { "FIXED_CUTOFF", "-inf" } } )
  {
    QVariantMap p = vbastest::gridParameters( regions.get(), recs.get() );
    p.insert( QStringLiteral( "COEFFICIENTS" ), 3 );
    p.insert( name, value );
    QString message;
    QVERIFY2( !anonymize->checkParameterValues( p, mContext, &message ), qPrintable( name ) );
    QCOMPARE( message, QStringLiteral( "%1 must be a finite number (%1 = %2)." ).arg( name, value ) );
    QVERIFY2( runError( QStringLiteral( "vbas:anonymize" ), p ).contains( message ), qPrintable( name ) );
  }
}

void TestValues::nullPopulationRefused()
{
  auto regions = vbastest::grid();
  QgsFeature f;
  QgsFeatureIterator it = regions->getFeatures();
  it.nextFeature( f );
  it.nextFeature( f ); // r01
  regions->dataProvider()->changeAttributeValues( { { f.id(), { { 1, QVariant() } } } } );
  auto recs = vbastest::table( kFields, twoPerRegion() );
  QVariantMap p = vbastest::gridParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) );
  const QString error = runError( QStringLiteral( "vbas:estimatesitecount" ), p );
  QVERIFY2( error.contains( QStringLiteral( "Region 'r01': the population field 'pop' is NULL" ) ), qPrintable( error ) );
}

void TestValues::textCountsArePlainDigits()
{
  // A count given as text is read only as plain digits: ' 5', '5.0', '1e1', '+5' are refused with the row and value.
  auto regions = vbastest::grid();
  const QString fields = QStringLiteral( "field=region:string&field=sex:string&field=age:integer&field=n:string" );
  for ( const QString &count : { QStringLiteral( " 5" ), QStringLiteral( "5.0" ), QStringLiteral( "1e1" ), QStringLiteral( "+5" ), QStringLiteral( "5 " ), QString() } )
  {
    QList<QVariantList> rows = twoPerRegion();
    for ( QVariantList &row : rows )
      row[3] = QStringLiteral( "1" );
    rows[3][3] = count.isEmpty() ? QStringLiteral( "\u0665" ) : count; // ARABIC-INDIC DIGIT FIVE, which toLongLong would not take either
    auto recs = vbastest::table( fields, rows );
    QVariantMap p = vbastest::gridParameters( regions.get(), recs.get() );
    p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
    const QString error = runError( QStringLiteral( "vbas:estimatesitecount" ), p );
    QVERIFY2( error.contains( QStringLiteral( "Record row 4 (feature id 4): the count field 'n' holds '%1', not a whole number" ).arg( rows[3][3].toString() ) ), qPrintable( error ) );
  }
  // Plain digits are counts.
  QList<QVariantList> rows = twoPerRegion();
  for ( QVariantList &row : rows )
    row[3] = QStringLiteral( "1" );
  rows[3][3] = QStringLiteral( "05" );
  auto recs = vbastest::table( fields, rows );
  QVariantMap p = vbastest::gridParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), p, mContext, true );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 22LL );
}

void TestValues::storedTypeMismatchRefused()
{
  // Text in an INTEGER column reads as 0 in QGIS: it would be released as 0 and merged into class 0.
  auto regions = vbastest::grid();
  auto recs = geoPackage( QStringLiteral( "text_in_integer" ), QStringLiteral( "UPDATE records SET age = 'x' WHERE fid = 3; UPDATE records SET age = 'y' WHERE fid = 4;" ) );
  QVERIFY( recs->isValid() );
  QVariantMap p = vbastest::gridParameters( regions.get(), recs.get() );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ), QStringLiteral( "age" ) } );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 2 );
  QString error = runError( QStringLiteral( "vbas:anonymize" ), p );
  QVERIFY2( error.contains( QStringLiteral( "Record with feature id 3: the field 'age' is of type int but stores the text value 'x'" ) ), qPrintable( error ) );

  // Text that is no date in a DATE column, and no date and time in a DATETIME one, reads as NULL.
  auto dates = geoPackage( QStringLiteral( "text_in_date" ),
                           QStringLiteral( "ALTER TABLE records ADD COLUMN visit DATE; ALTER TABLE records ADD COLUMN seen DATETIME; "
                                           "UPDATE records SET visit = '2020-01-01', seen = '2020-01-01T10:00:00Z'; UPDATE records SET seen = '2020-01-01 10:00:00.5' WHERE fid = 2;" ) );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( dates.get() ) );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "visit" ), QStringLiteral( "seen" ) } );
  const QVariantMap fine = vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QVERIFY( !fine.isEmpty() );
  int tried = 0;
  for ( const QString &bad : { QStringLiteral( "UPDATE records SET visit = 'F' WHERE fid = 6;" ), QStringLiteral( "UPDATE records SET visit = '2459000' WHERE fid = 6;" ),
                               QStringLiteral( "UPDATE records SET seen = 'G' WHERE fid = 6;" ) } )
  {
    auto odd = geoPackage( QStringLiteral( "odd_date%1" ).arg( ++tried ), QStringLiteral( "ALTER TABLE records ADD COLUMN visit DATE; ALTER TABLE records ADD COLUMN seen DATETIME; "
                                                                                          "UPDATE records SET visit = '2020-01-01', seen = '2020-01-01T10:00:00Z'; " )
                                                                            + bad );
    p.insert( QStringLiteral( "RECORDS" ), layerValue( odd.get() ) );
    error = runError( QStringLiteral( "vbas:anonymize" ), p );
    QVERIFY2( error.contains( QStringLiteral( "Record with feature id 6: the field '" ) ), qPrintable( bad + error ) );
  }
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ), QStringLiteral( "age" ) } );

  // A count column likewise (read as 0 records), and a region id column of the regions.
  auto counts = geoPackage( QStringLiteral( "text_in_count" ), QStringLiteral( "UPDATE records SET n = '2x' WHERE fid = 5;" ) );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( counts.get() ) );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ) } );
  p.insert( QStringLiteral( "COUNT_FIELD" ), QStringLiteral( "n" ) );
  error = runError( QStringLiteral( "vbas:estimatesitecount" ), p );
  QVERIFY2( error.contains( QStringLiteral( "Record with feature id 5: the field 'n' is of type int but stores the text value '2x'" ) ), qPrintable( error ) );

  auto memoryRegions = vbastest::grid();
  const QString regionsPath = mDir.filePath( QStringLiteral( "regions.gpkg" ) );
  vbastest::save( memoryRegions.get(), regionsPath, QStringLiteral( "regions" ) );
  execute( regionsPath, QStringLiteral( "UPDATE regions SET pop = 1.5 WHERE fid = 2;" ) );
  QgsVectorLayer storedRegions( regionsPath + QStringLiteral( "|layername=regions" ), QStringLiteral( "regions" ), QStringLiteral( "ogr" ) );
  p = vbastest::gridParameters( &storedRegions, recs.get() );
  p.insert( QStringLiteral( "POPULATION_FIELD" ), QStringLiteral( "pop" ) );
  error = runError( QStringLiteral( "vbas:estimatesitecount" ), p );
  QVERIFY2( error.contains( QStringLiteral( "Region with feature id 2: the field 'pop' is of type int but stores the real value 1.5" ) ), qPrintable( error ) );
}

void TestValues::nulAndBomRefused()
{
  // QGIS drops the text after a NUL and a leading U+FEFF: 'F' + NUL + 'x' would be released as 'F'.
  auto regions = vbastest::grid();
  auto nul = geoPackage( QStringLiteral( "nul" ), QStringLiteral( "UPDATE records SET sex = 'F' || char(0) || 'x' WHERE fid = 7;" ) );
  QVariantMap p = vbastest::gridParameters( regions.get(), nul.get() );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 2 );
  QString error = runError( QStringLiteral( "vbas:anonymize" ), p );
  QVERIFY2( error.contains( QStringLiteral( "Record with feature id 7: the field 'sex' holds text with a NUL character (U+0000)" ) ), qPrintable( error ) );

  auto bom = geoPackage( QStringLiteral( "bom" ), QStringLiteral( "UPDATE records SET sex = char(65279) || 'F' WHERE fid = 8;" ) );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( bom.get() ) );
  error = runError( QStringLiteral( "vbas:anonymize" ), p );
  QVERIFY2( error.contains( QStringLiteral( "Record with feature id 8: the field 'sex' holds text that begins with U+FEFF" ) ), qPrintable( error ) );

  // A U+FEFF inside the text is kept, and the run goes on.
  auto inside = geoPackage( QStringLiteral( "inside" ), QStringLiteral( "UPDATE records SET sex = 'F' || char(65279) WHERE fid = 8;" ) );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( inside.get() ) );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
}

void TestValues::csvTypedValuesReadBack()
{
  // A .csvt types the columns: text QGIS would read as another value (x as NULL, 01 as 1) is refused.
  auto regions = vbastest::grid();
  const QString types = QStringLiteral( "String,String,Integer,Integer,Real,Date" );
  auto tidy = csv( mDir, QStringLiteral( "tidy" ), csvLines(), types );
  QVERIFY( tidy->isValid() );
  QVariantMap p = vbastest::gridParameters( regions.get(), tidy.get() );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ), QStringLiteral( "age" ), QStringLiteral( "w" ), QStringLiteral( "visit" ) } );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 2 );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  // A Real column with decimals, as GDAL writes it: 1.50 in Real(10.2).
  auto decimals = csv( mDir, QStringLiteral( "decimals" ), csvLines().replaceInStrings( QStringLiteral( ",1.5," ), QStringLiteral( ",1.50," ) ),
                       QStringLiteral( "String,String,Integer,Integer,Real(10.2),Date" ) );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( decimals.get() ) );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );

  const QList<std::tuple<int, int, QString, QString>> cases {
    { 2, 3, QStringLiteral( "x" ), QStringLiteral( "Record with feature id 3: the field 'age' is of type int but stores the text value 'x'" ) },
    { 2, 4, QStringLiteral( "01" ), QStringLiteral( "Record with feature id 4: the field 'age' is of type int but stores the text value '01'" ) },
    { 2, 4, QStringLiteral( "1.0" ), QStringLiteral( "Record with feature id 4: the field 'age' is of type int but stores the text value '1.0'" ) },
    { 4, 5, QStringLiteral( "1.50" ), QStringLiteral( "Record with feature id 5: the field 'w' is of type double but stores the text value '1.50'" ) },
    { 5, 6, QStringLiteral( "2020-01-02" ),
      QStringLiteral( "Record with feature id 6: the field 'visit' is of type QDate and stores '2020-01-02', written another way than the earlier value '2020/01/02'" ) },
    { 5, 6, QStringLiteral( "2020/02/30" ), QStringLiteral( "Record with feature id 6: the field 'visit' is of type QDate but stores the text value '2020/02/30'" ) },
    { 1, 7, QStringLiteral( "\uFEFFF" ), QStringLiteral( "Record with feature id 7: the field 'sex' holds text that begins with U+FEFF" ) },
  };
  int tried = 0;
  for ( const auto &[column, row, value, message] : cases )
  {
    auto odd = csv( mDir, QStringLiteral( "odd%1" ).arg( ++tried ), csvLines( column, row, value ), types );
    p.insert( QStringLiteral( "RECORDS" ), layerValue( odd.get() ) );
    const QString error = runError( QStringLiteral( "vbas:anonymize" ), p );
    QVERIFY2( error.contains( message ), qPrintable( value + QStringLiteral( ": " ) + error ) );
  }
}

void TestValues::delimitedTextValuesReadBack()
{
  // QGIS's delimited text layer guesses the types: age, all digits, is read as integers, so 01 and 1
  // would be one value. Refused naming the row by its line, as QGIS numbers it; the tidy file runs.
  auto regions = vbastest::grid();
  const auto layer = [&]( const QString &name, const QStringList &lines ) {
    const QString path = mDir.filePath( name + QStringLiteral( ".txt" ) );
    QFile file( path );
    file.open( QIODevice::WriteOnly );
    file.write( lines.join( '\n' ).toUtf8() + '\n' );
    file.close();
    return std::make_unique<QgsVectorLayer>( QUrl::fromLocalFile( path ).toString() + QStringLiteral( "?type=csv&delimiter=;&detectTypes=yes&geomType=none" ), name,
                                             QStringLiteral( "delimitedtext" ) );
  };
  // Ages 1 and 2 in turn, sexes spelled out (QGIS 3.40 guesses a column of 1s, or of F and M, as booleans), separated by ';'.
  const auto lines = [] {
    QStringList lines = csvLines();
    for ( int i = 1; i < lines.size(); ++i )
    {
      QStringList fields = lines[i].split( ',' );
      fields[1] = fields[1] == QLatin1String( "F" ) ? QStringLiteral( "female" ) : QStringLiteral( "male" );
      fields[2] = QString::number( 1 + i % 2 );
      lines[i] = fields.join( ';' );
    }
    lines[0].replace( ',', ';' );
    return lines;
  };
  auto tidy = layer( QStringLiteral( "tidy-text" ), lines() );
  QVERIFY( tidy->isValid() );
  const auto wholeNumbers = []( const QgsVectorLayer &l ) { // QGIS 3.22 guesses int, later releases may guess 64-bit integers
    const vbasqgis::FieldType type = l.fields().field( QStringLiteral( "age" ) ).type();
    return type == vbasqgis::Field::Int || type == vbasqgis::Field::LongLong;
  };
  QVERIFY( wholeNumbers( *tidy ) );
  QVariantMap p = vbastest::gridParameters( regions.get(), tidy.get() );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ), QStringLiteral( "age" ) } );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 2 );
  vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );
  QStringList oddLines = lines();
  oddLines[4].replace( QStringLiteral( ";1;" ), QStringLiteral( ";01;" ) ); // row 4 (line 5) has age 1
  auto odd = layer( QStringLiteral( "odd-text" ), oddLines );
  QVERIFY( wholeNumbers( *odd ) );
  p.insert( QStringLiteral( "RECORDS" ), layerValue( odd.get() ) );
  const QString error = runError( QStringLiteral( "vbas:anonymize" ), p );
  QVERIFY2( error.contains(
              QStringLiteral( "Record with feature id 5: the field 'age' is of type %1 but stores the text value '01'" ).arg( vbasqgis::typeName( odd->fields().field( QStringLiteral( "age" ) ) ) ) ),
            qPrintable( error ) );
}

void TestValues::shapefileValuesReadBack()
{
  // Text in a numeric .dbf column reads as 0 in QGIS, 01 as 1: refused naming the record.
  auto regions = vbastest::grid();
  auto memory = vbastest::table( kFields + QStringLiteral( "&field=w:double(10,2)" ), twoPerRegion() );
  QVariantMap p = vbastest::gridParameters( regions.get(), memory.get() );
  p.insert( QStringLiteral( "QI_FIELDS" ), QStringList { QStringLiteral( "sex" ), QStringLiteral( "age" ), QStringLiteral( "w" ) } );
  p.insert( QStringLiteral( "MODEL" ), 3 );
  p.insert( QStringLiteral( "FIXED_SITES" ), 2 );
  p.insert( QStringLiteral( "K" ), 2 );
  const QList<std::tuple<const char *, const char *, QString>> cases {
    { "age", "x", QStringLiteral( "stores the text value 'x'" ) },
    { "age", "01", QStringLiteral( "stores the text value '01'" ) },
    { "w", "1.5", QStringLiteral( "stores the text value '1.5'" ) },
    { "w", "1e1", QStringLiteral( "stores the text value '1e1'" ) },
  };
  int tried = 0;
  for ( const auto &[field, text, message] : cases )
  {
    const QString path = mDir.filePath( QStringLiteral( "records%1.dbf" ).arg( ++tried ) );
    vbastest::save( memory.get(), QString( path ).replace( QLatin1String( ".dbf" ), QLatin1String( ".shp" ) ), QStringLiteral( "records" ) ); // a table without geometry is a .dbf alone
    QgsVectorLayer tidy( path, QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
    p.insert( QStringLiteral( "RECORDS" ), layerValue( &tidy ) );
    vbastest::run( QStringLiteral( "vbas:anonymize" ), p, mContext, true );

    writeDbf( path, 2, field, text );
    QgsVectorLayer records( path, QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
    p.insert( QStringLiteral( "RECORDS" ), layerValue( &records ) );
    const QString error = runError( QStringLiteral( "vbas:anonymize" ), p );
    QVERIFY2( error.contains( QStringLiteral( "Record with feature id 2: the field '%1' is of type " ).arg( field ) ) && error.contains( message ), qPrintable( error ) );
  }
}

void TestValues::sampleAsShapefileAndCsv()
{
  // The sample records copied by GDAL to a shapefile and to a typed CSV give the GeoPackage's release.
  QgsVectorLayer tracts( ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/ny8_tracts.gpkg" ), QStringLiteral( "tracts" ), QStringLiteral( "ogr" ) );
  QList<long long> released;
  for ( const QString &copy : { QString(), QStringLiteral( "patients.dbf" ), QStringLiteral( "patients.csv" ) } )
  {
    QString path = ctestPath( "VBAS_SAMPLE_DIR" ) + QStringLiteral( "/patients.gpkg" );
    if ( !copy.isEmpty() )
    {
      GDALDatasetH source = GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR, nullptr, nullptr, nullptr );
      const char *arguments[] = { "-lco", "CREATE_CSVT=YES", nullptr };
      GDALVectorTranslateOptions *options = GDALVectorTranslateOptionsNew( const_cast<char **>( copy.endsWith( QLatin1String( ".csv" ) ) ? arguments : nullptr ), nullptr );
      path = mDir.filePath( copy );
      GDALClose( GDALVectorTranslate( path.toUtf8().constData(), nullptr, 1, &source, options, nullptr ) );
      GDALVectorTranslateOptionsFree( options );
      GDALClose( source );
    }
    QgsVectorLayer patients( path, QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
    QVERIFY( patients.isValid() );
    const QVariantMap r = vbastest::run( QStringLiteral( "vbas:anonymize" ), vbastest::sampleParameters( &tracts, &patients ), mContext, true );
    released << vbastest::output( r, QStringLiteral( "ANONYMIZED" ), mContext )->featureCount();
  }
  QCOMPARE( released[1], released[0] );
  QCOMPARE( released[2], released[0] );
}

void TestValues::eachFormatReadAsQgisReadsIt_data()
{
  QTest::addColumn<QString>( "file" );
  QTest::addColumn<QString>( "source" );  // appended to the file's path
  QTest::addColumn<QString>( "reader" );  // the log's line that says how the records are read
  QTest::addColumn<QString>( "outcome" ); // the start of the counting pass's line, or of the refusal
  const QString stream = QStringLiteral( "The records are read through GDAL's column stream." );
  const QString all = QStringLiteral( "Read 36 record rows" );
  QTest::newRow( "GeoPackage" ) << "a.gpkg"
                                << "|layername=records" << stream << all;
  QTest::newRow( "SQLite" ) << "a.sqlite"
                            << "|layername=records" << stream << all;
  QTest::newRow( "FlatGeobuf" ) << "a.fgb"
                                << "" << stream << all;
  QTest::newRow( "GeoJSON" ) << "a.geojson"
                             << "" << stream << all;
  QTest::newRow( "CSV, all text" ) << "a.csv"
                                   << "" << stream << all;
  // QGIS's CSV writer stores 0.3 as 0.30000, which QGIS would read as another text than stored.
  QTest::newRow( "CSV, types detected" ) << "b.csv"
                                         << "|option:AUTODETECT_TYPE=YES" << stream << "Record with feature id 1: the field 'w' is of type double but stores the text value '0.30000'";
  QTest::newRow( "shapefile" ) << "a.shp"
                               << ""
                               << "The records are read through QGIS: QGIS may decode a shapefile's text itself, by the layer's encoding setting." << all;
  QTest::newRow( "GeoPackage, subset" ) << "b.gpkg"
                                        << "|layername=records|subset=\"age\" IS NOT NULL"
                                        << "The records are read through QGIS: the layer has a subset string."
                                        << "Read 28 record rows";
}

void TestValues::eachFormatReadAsQgisReadsIt()
{
  // The same records in each format that GDAL reads for QGIS: read through GDAL's column stream where
  // it gives them exactly as QGIS reads them, through QGIS otherwise, and counted (or refused) alike
  // both ways, the run through QGIS forced by a feature limit. Texts that differ only by composition,
  // NULLs, a 64-bit number, reals that differ in the last bit: each a class of its own where the
  // format keeps it.
  QFETCH( QString, file );
  QFETCH( QString, source );
  QFETCH( QString, reader );
  QFETCH( QString, outcome );
  auto regions = vbastest::grid();
  // Points, which a FlatGeobuf file needs; the records are read by their region field.
  QgsVectorLayer memory( QStringLiteral( "Point?crs=EPSG:4326&field=region:string&field=name:string&field=age:integer&field=big:long&field=w:double" ), QStringLiteral( "records" ),
                         QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( int i = 0; i < 36; ++i )
  {
    QgsFeature f( memory.fields() );
    f.setAttributes( QgsAttributes() << QStringLiteral( "r%1%2" ).arg( i % 3 ).arg( ( i / 3 ) % 3 )
                                     << ( i % 4 == 0  ? QVariant()
                                          : i % 8 < 4 ? QStringLiteral( "Zoë" )
                                                      : QStringLiteral( "Zoe\u0308" ) )
                                     << ( i % 5 == 0 ? QVariant() : QVariant( i % 3 ) ) << ( i % 2 ? 5000000000LL : 7LL ) << ( i % 3 ? 0.1 + 0.2 : 0.3 ) );
    f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( 1, 2 ) ) );
    features << f;
  }
  memory.dataProvider()->addFeatures( features );
  const QString path = mDir.filePath( file );
  vbastest::save( &memory, path, QStringLiteral( "records" ) );
  QgsVectorLayer records( path + source, QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QVERIFY( records.isValid() );
  QStringList outcomes;
  CHECKED( vbastest::readBothWays( regions.get(), &records, QStringLiteral( "region" ), { QStringLiteral( "name" ), QStringLiteral( "age" ), QStringLiteral( "big" ), QStringLiteral( "w" ) }, reader,
                                   outcome.startsWith( QStringLiteral( "Read " ) ), outcomes ) );
  QCOMPARE( outcomes[0], outcomes[1] );
  QVERIFY2( outcomes[0].startsWith( outcome ), qPrintable( outcomes[0] ) );
}

void TestValues::booleansReadAsQgisReadsThem()
{
  // Booleans of a GeoPackage: through GDAL's column stream where it reads them as stored (GDAL 3.10 and
  // later), through QGIS before. GDAL 3.6's stream reads these as true only in rows 1, 10: the class
  // (true, M) of rows 4 and 7 would be lost, 4 classes read as 3.
  auto regions = vbastest::grid();
  const QList<bool> ok { true, false, false, true, false, false, true, false, false, true, true, true, false, true };
  QList<QVariantList> rows;
  for ( int i = 0; i < ok.size(); ++i )
    rows << QVariantList { QStringLiteral( "r%1%2" ).arg( i % 3 ).arg( ( i / 3 ) % 3 ), i == 1 || i == 3 || i == 6 ? QStringLiteral( "M" ) : QStringLiteral( "F" ), ok[i] };
  auto memory = vbastest::table( QStringLiteral( "field=region:string&field=sex:string&field=ok:boolean" ), rows );
  const QString path = mDir.filePath( QStringLiteral( "booleans.gpkg" ) );
  vbastest::save( memory.get(), path, QStringLiteral( "records" ) );
  QgsVectorLayer records( path + QStringLiteral( "|layername=records" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QCOMPARE( records.fields().field( QStringLiteral( "ok" ) ).type(), vbasqgis::Field::Bool );
  const QString reader = std::atoi( GDALVersionInfo( "VERSION_NUM" ) ) >= GDAL_COMPUTE_VERSION( 3, 10, 0 )
                           ? QStringLiteral( "The records are read through GDAL's column stream." )
                           : QStringLiteral( "The records are read through QGIS: its field 'ok' holds booleans, which the stream of GDAL %1 gives wrongly." ).arg( GDALVersionInfo( "RELEASE_NAME" ) );
  QStringList outcomes;
  CHECKED( vbastest::readBothWays( regions.get(), &records, QStringLiteral( "region" ), { QStringLiteral( "sex" ), QStringLiteral( "ok" ) }, reader, true, outcomes ) );
  QCOMPARE( outcomes[0], outcomes[1] );
  QVERIFY2( outcomes[0].contains( QStringLiteral( " 4 equivalence classes" ) ), qPrintable( outcomes[0] ) );
}

void TestValues::oneGeometryTypeOfAFileReadAsQgisReadsIt()
{
  // QGIS opens a GeoJSON file of points and lines as one layer per geometry type: the points' layer
  // reads the points' rows only, never the lines' of the same file.
  auto regions = vbastest::grid();
  const QString path = mDir.filePath( QStringLiteral( "mixed.geojson" ) );
  QFile file( path );
  QVERIFY( file.open( QIODevice::WriteOnly ) );
  QStringList features;
  for ( int i = 0; i < 9; ++i )
    features << QStringLiteral( R"({"type":"Feature","properties":{"region":"r%1%2","q":1},"geometry":{"type":"%3","coordinates":%4}})" )
                  .arg( i % 3 )
                  .arg( i / 3 )
                  .arg( i % 2 ? QStringLiteral( "LineString" ) : QStringLiteral( "Point" ), i % 2 ? QStringLiteral( "[[0,0],[1,1]]" ) : QStringLiteral( "[0,0]" ) );
  file.write( QStringLiteral( R"({"type":"FeatureCollection","features":[%1]})" ).arg( features.join( ',' ) ).toUtf8() );
  file.close();
  QgsVectorLayer points( path + QStringLiteral( "|geometrytype=Point" ), QStringLiteral( "records" ), QStringLiteral( "ogr" ) );
  QCOMPARE( points.featureCount(), 5LL );
  Feedback feedback;
  vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), vbastest::inputParameters( regions.get(), QStringLiteral( "id" ), &points, QStringLiteral( "region" ), { QStringLiteral( "q" ) } ),
                 mContext, true, &feedback );
  QVERIFY2( feedback.saw( QStringLiteral( "The records are read through QGIS: the layer is the features of one geometry type of its file." ) ), qPrintable( feedback.messages.join( '\n' ) ) );
  QVERIFY2( feedback.saw( QStringLiteral( "Read 5 record rows" ) ), qPrintable( feedback.messages.join( '\n' ) ) );
}

void TestValues::lineRegionsRefused()
{
  QgsVectorLayer lines( QStringLiteral( "LineString?crs=EPSG:32618&field=id:string" ), QStringLiteral( "lines" ), QStringLiteral( "memory" ) );
  QgsFeature f( lines.fields() );
  f.setAttributes( QgsAttributes() << QStringLiteral( "r00" ) );
  f.setGeometry( QgsGeometry::fromWkt( QStringLiteral( "LINESTRING(0 0, 1 1)" ) ) );
  lines.dataProvider()->addFeatures( QgsFeatureList() << f );
  auto recs = vbastest::table( kFields, twoPerRegion() );
  const QString error = runError( QStringLiteral( "vbas:estimatesitecount" ), vbastest::gridParameters( &lines, recs.get() ) );
  QVERIFY2( error.contains( QStringLiteral( "The regions layer has LineString geometry: regions must be polygons" ) ), qPrintable( error ) );
}

void TestValues::pointsWithoutSrsTakenInRegionsCrs()
{
  // A GeoPackage of points with no SRS (srs_id 0, "Undefined geographic SRS") is located in the
  // regions' CRS with a warning, as a shapefile without .prj is.
  auto regions = vbastest::grid();
  QgsVectorLayer memory( QStringLiteral( "Point?crs=EPSG:32618&field=sex:string" ), QStringLiteral( "patients" ), QStringLiteral( "memory" ) );
  QgsFeatureList features;
  for ( int c = 0; c < 3; ++c )
    for ( int r = 0; r < 3; ++r )
    {
      QgsFeature f( memory.fields() );
      f.setAttributes( QgsAttributes() << QStringLiteral( "F" ) );
      f.setGeometry( QgsGeometry::fromPointXY( QgsPointXY( c + 0.5, r + 0.5 ) ) );
      features << f;
    }
  memory.dataProvider()->addFeatures( features );
  const QString path = mDir.filePath( QStringLiteral( "nosrs.gpkg" ) );
  vbastest::save( &memory, path, QStringLiteral( "patients" ) );
  execute( path, QStringLiteral( "UPDATE gpkg_geometry_columns SET srs_id = 0; UPDATE gpkg_contents SET srs_id = 0;" ) );
  QgsVectorLayer points( path + QStringLiteral( "|layername=patients" ), QStringLiteral( "patients" ), QStringLiteral( "ogr" ) );
  QVERIFY( points.isValid() );
  QVariantMap p = vbastest::inputParameters( regions.get(), QStringLiteral( "id" ), &points, QString(), { QStringLiteral( "sex" ) } );
  Feedback feedback;
  const QVariantMap r = vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), p, mContext, true, &feedback );
  QCOMPARE( r.value( QStringLiteral( "RECORDS" ) ).toLongLong(), 9LL );
  QVERIFY2( feedback.warned( QStringLiteral( "The records layer has no CRS: its points are taken in the regions' CRS (EPSG:32618)." ) ), qPrintable( feedback.warnings.join( '\n' ) ) );
}

void TestValues::overlappingRegionsRefused()
{
  // A tenth region inside r00: the aggregates would overlap. Refused naming the pair.
  auto regions = vbastest::grid();
  QgsFeature inner( regions->fields() );
  inner.setAttributes( QgsAttributes() << QStringLiteral( "inner" ) << 1 );
  inner.setGeometry( QgsGeometry::fromRect( QgsRectangle( 0.2, 0.2, 0.8, 0.8 ) ) );
  regions->dataProvider()->addFeatures( QgsFeatureList() << inner );
  auto recs = vbastest::table( kFields, twoPerRegion() );
  const QString error = runError( QStringLiteral( "vbas:estimatesitecount" ), vbastest::gridParameters( regions.get(), recs.get() ) );
  QVERIFY2( error.contains( QStringLiteral( "Regions 'r00' and 'inner' overlap (the overlap is 100% of the smaller one's area)" ) ), qPrintable( error ) );

  // Digitising noise along a shared border passes: r00 reaching 1e-4 into r10.
  auto noisy = vbastest::grid();
  QgsFeature r00;
  noisy->getFeatures().nextFeature( r00 );
  noisy->dataProvider()->changeGeometryValues( { { r00.id(), QgsGeometry::fromRect( QgsRectangle( 0, 0, 1.0001, 1 ) ) } } );
  vbastest::run( QStringLiteral( "vbas:estimatesitecount" ), vbastest::gridParameters( noisy.get(), recs.get() ), mContext, true );
}

QTEST_MAIN( TestValues )
#include "test_values.moc"
