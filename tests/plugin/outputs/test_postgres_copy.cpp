// A PostgreSQL release written with COPY stores what QGIS's postgres provider stores (docs/outputs.md,
// "How outputs are written"): the same rows written by the provider and by VbasPgCopySink into two
// tables that QGIS's exporter made, on a server of the test's own (tests/shared/pg_server.h), are
// compared as the server prints every stored value with its type. Each value of each field's own type
// and of the other types a field may be handed, alone in a field, is accepted or refused alike; then
// many random rows in one batch; a sink closed before its commit, or refused a value, keeps no row.
// The values are made up; no record is printed.
#include "tests/plugin/qgis_test_util.h"
#include "tests/shared/pg_server.h"
#include "plugin/outputs/vbaspgcopysink.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgssqliteutils.h>
#include <qgsvectordataprovider.h>
#include <qgsvectorlayerexporter.h>

#include <QRandomGenerator>

#include <cmath>
#include <cstring>
#include <limits>

namespace
{

//! The fields of both tables: text, whole numbers, reals, and the limited text and fixed decimals QGIS makes for fields with a length.
QgsFields testFields()
{
  QgsFields fields;
  fields.append( QgsField( QStringLiteral( "text" ), vbasqgis::Field::String ) );
  fields.append( QgsField( QStringLiteral( "whole" ), vbasqgis::Field::Int ) );
  fields.append( QgsField( QStringLiteral( "big" ), vbasqgis::Field::LongLong ) );
  fields.append( QgsField( QStringLiteral( "real" ), vbasqgis::Field::Double ) );
  fields.append( QgsField( QStringLiteral( "short" ), vbasqgis::Field::String, QString(), 5 ) );
  fields.append( QgsField( QStringLiteral( "fixed" ), vbasqgis::Field::Double, QString(), 10, 2 ) );
  return fields;
}

//! A row holding value in field field alone.
QgsFeature row( const QgsFields &fields, int field, const QVariant &value )
{
  QgsFeature feature( fields );
  QgsAttributes attributes( fields.count() );
  attributes[field] = value;
  feature.setAttributes( attributes );
  return feature;
}

//! A double of random bits, finite.
double randomDouble( QRandomGenerator &random )
{
  double value = 0;
  do
  {
    const quint64 bits = random.generate64();
    std::memcpy( &value, &bits, sizeof value );
  } while ( !std::isfinite( value ) );
  return value;
}

//! Random text of up to 40 characters, with COPY's special characters, quotes and non-ASCII ones.
QString randomText( QRandomGenerator &random )
{
  static const QString kAlphabet = QStringLiteral( "aZ09 \t\n\r\\.N'\"é中🙂" );
  QString text;
  for ( int n = random.bounded( 41 ); n > 0; --n )
    text += kAlphabet.mid( random.bounded( kAlphabet.size() ), 1 );
  return text;
}

} // namespace

class TestPostgresCopy : public QObject
{
    Q_OBJECT

  private slots:
    void initTestCase();
    void cleanupTestCase();

    void copyStoresWhatQgisStores();
    void randomRowsStoredAlike();
    void uncommittedRowsAreNotKept();

  private:
    //! The data source of table in the test database.
    QString uri( const QString &table ) const;
    //! Makes table with the test fields through QGIS's exporter, as a release's staging table is made.
    void makeTable( const QString &table );
    //! Every row of table in key order: each value as the server prints it (JSON-quoted, or NULL) with its type.
    QStringList stored( const QString &table ) const;
    //! A layer on table, whose provider QGIS's exporter writes through.
    std::unique_ptr<QgsVectorLayer> layer( const QString &table ) const;
    //! Writes rows into table through the provider of qgis (as QGIS's exporter does) or, without it, a VbasPgCopySink, in one batch; whether they were taken.
    bool write( const QString &table, QgsVectorLayer *qgis, QgsFeatureList rows );

    PgServer mServer;
    QgsFields mFields = testFields();
};

void TestPostgresCopy::initTestCase()
{
  vbastest::initQgisWithProvider();
  QVERIFY2( QFileInfo::exists( PgServer::bin() + "/initdb" ), "PostgreSQL's server programs are missing: run .ci/setup" );
  CHECKED( mServer.start() );
  QVERIFY( VbasPgCopySink::writes( mFields, vbasqgis::WkbType::NoGeometry ) );
  QVERIFY( !VbasPgCopySink::writes( mFields, vbasqgis::WkbType::Point ) );
  QgsFields withDate = mFields;
  withDate.append( QgsField( QStringLiteral( "day" ), vbasqgis::Field::Date ) );
  QVERIFY( !VbasPgCopySink::writes( withDate, vbasqgis::WkbType::NoGeometry ) );
}

void TestPostgresCopy::cleanupTestCase()
{
  mServer.stop();
}

QString TestPostgresCopy::uri( const QString &table ) const
{
  return mServer.connection() + QStringLiteral( " table=\"public\".\"%1\"" ).arg( table );
}

void TestPostgresCopy::makeTable( const QString &table )
{
  const QVariantMap options { { QStringLiteral( "fileEncoding" ), QStringLiteral( "UTF-8" ) } };
  QgsVectorLayerExporter exporter( uri( table ), QStringLiteral( "postgres" ), mFields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem(), true, options );
  QVERIFY2( exporter.errorCode() == Qgis::VectorExportResult::Success, qPrintable( exporter.errorMessage() ) );
}

QStringList TestPostgresCopy::stored( const QString &table ) const
{
  QStringList columns;
  for ( const QgsField &field : mFields )
    columns << QStringLiteral( "coalesce(to_json(%1::text)::text, 'NULL') || ' ' || pg_typeof(%1)" ).arg( QgsSqliteUtils::quotedIdentifier( field.name() ) );
  QString out;
  mServer.sql( QStringLiteral( "SELECT %1 FROM %2 ORDER BY id" ).arg( columns.join( QStringLiteral( " || ' | ' || " ) ), table ), out );
  return out.isEmpty() ? QStringList() : out.split( '\n' );
}

std::unique_ptr<QgsVectorLayer> TestPostgresCopy::layer( const QString &table ) const
{
  auto layer = std::make_unique<QgsVectorLayer>( uri( table ), table, QStringLiteral( "postgres" ) );
  return layer->isValid() ? std::move( layer ) : nullptr;
}

bool TestPostgresCopy::write( const QString &table, QgsVectorLayer *qgis, QgsFeatureList rows )
{
  if ( qgis )
  {
    // What QGIS's exporter hands its provider: the rows it buffered, each field moved to the table's
    // column of its name (the table's key comes first).
    const QgsFields columns = qgis->dataProvider()->fields();
    for ( QgsFeature &feature : rows )
    {
      QgsAttributes attributes( columns.count() );
      for ( int i = 0; i < mFields.count(); ++i )
        attributes[columns.indexOf( mFields.at( i ).name() )] = feature.attribute( i );
      feature.setAttributes( attributes );
    }
    return qgis->dataProvider()->addFeatures( rows, QgsFeatureSink::FastInsert );
  }
  VbasPgCopySink sink( uri( table ), mFields );
  return sink.addFeatures( rows ) && sink.flushBuffer();
}

void TestPostgresCopy::copyStoresWhatQgisStores()
{
  const QList<QVariant> values = vbastest::writerValues();
  QStringList written[2];
  for ( const bool qgis : { true, false } )
  {
    const QString table = qgis ? QStringLiteral( "by_qgis" ) : QStringLiteral( "by_copy" );
    CHECKED( makeTable( table ) );
    const std::unique_ptr<QgsVectorLayer> provider = qgis ? layer( table ) : nullptr;
    QVERIFY( provider || !qgis );
    // Each value alone in each field, with a row of NULLs that keeps it a parameter of QGIS's INSERT
    // (a value shared by a whole batch goes into its SQL instead).
    QStringList &accepted = written[qgis ? 0 : 1];
    for ( const QVariant &value : values )
      for ( int field = 0; field < mFields.count(); ++field )
      {
        const bool taken = write( table, provider.get(), { row( mFields, field, value ), row( mFields, field, QVariant() ) } );
        accepted << QStringLiteral( "%1 %2 in %3: %4" ).arg( accepted.size() ).arg( value.typeName(), mFields.at( field ).name() ).arg( taken );
      }
    CHECKED( accepted += stored( table ) );
  }
  for ( int i = 0; i < written[0].size(); ++i )
    QVERIFY2( i < written[1].size() && written[0][i] == written[1][i],
              qPrintable( QStringLiteral( "line %1: QGIS's provider gave %2, COPY %3" ).arg( i ).arg( written[0][i].left( 300 ), written[1].value( i ).left( 300 ) ) ) );
  QCOMPARE( written[1].size(), written[0].size() );
  QVERIFY( written[0].filter( QStringLiteral( ": 0" ) ).size() > 10 ); // values are refused
}

void TestPostgresCopy::randomRowsStoredAlike()
{
  QRandomGenerator random( 35 );
  QgsFeatureList rows;
  for ( int n = 0; n < 20000; ++n )
  {
    QgsFeature feature( mFields );
    const bool null = random.bounded( 10 ) == 0;
    feature.setAttributes( QgsAttributes() << ( null ? QVariant() : randomText( random ) ) << static_cast<int>( random.generate() ) << static_cast<qlonglong>( random.generate64() )
                                           << randomDouble( random ) << randomText( random ).left( 5 ) << random.bounded( 2000000 ) / 16.0 - 50000 );
    rows << feature;
  }
  QStringList written[2];
  for ( const bool qgis : { true, false } )
  {
    const QString table = qgis ? QStringLiteral( "random_by_qgis" ) : QStringLiteral( "random_by_copy" );
    CHECKED( makeTable( table ) );
    const std::unique_ptr<QgsVectorLayer> provider = qgis ? layer( table ) : nullptr;
    QVERIFY( provider || !qgis );
    QVERIFY( write( table, provider.get(), rows ) );
    CHECKED( written[qgis ? 0 : 1] = stored( table ) );
  }
  QCOMPARE( written[0].size(), rows.size() );
  for ( int i = 0; i < written[0].size(); ++i )
    QVERIFY2( i < written[1].size() && written[0][i] == written[1][i], qPrintable( QStringLiteral( "row %1 differs" ).arg( i ) ) );
  QCOMPARE( written[1].size(), written[0].size() );
}

void TestPostgresCopy::uncommittedRowsAreNotKept()
{
  CHECKED( makeTable( QStringLiteral( "uncommitted" ) ) );
  {
    VbasPgCopySink sink( uri( QStringLiteral( "uncommitted" ) ), mFields );
    QgsFeature feature = row( mFields, 0, QStringLiteral( "x" ) );
    QVERIFY( sink.addFeature( feature ) );
  }
  {
    // A refused value fails the whole COPY, its good rows too.
    VbasPgCopySink sink( uri( QStringLiteral( "uncommitted" ) ), mFields );
    QgsFeatureList rows { row( mFields, 0, QStringLiteral( "x" ) ), row( mFields, 1, QStringLiteral( "x" ) ) };
    QVERIFY( !( sink.addFeatures( rows ) && sink.flushBuffer() ) );
    QVERIFY( sink.lastError().contains( QStringLiteral( "integer" ) ) );
  }
  {
    // A list is refused: QGIS's provider writes lists in a form of its own, which COPY does not copy.
    VbasPgCopySink sink( uri( QStringLiteral( "uncommitted" ) ), mFields );
    QgsFeature feature = row( mFields, 0, QStringList { QStringLiteral( "x" ) } );
    QVERIFY( !sink.addFeature( feature ) );
    QVERIFY( !sink.flushBuffer() );
  }
  QCOMPARE( mServer.number( QStringLiteral( "SELECT count(*) FROM uncommitted" ) ), 0 );
  QString out;
  CHECKED( mServer.sql( QStringLiteral( "DROP TABLE uncommitted" ), out ) ); // no lock of the sinks is left
}

QTEST_MAIN( TestPostgresCopy )
#include "test_postgres_copy.moc"
