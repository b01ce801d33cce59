// PROBE (temporary)
#include "qgis_test_util.h"
#include <QTemporaryDir>
#include <cmath>
#include <qgsvectorfilewriter.h>

class TestProperty : public QObject
{
    Q_OBJECT
  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
    void probe();
};

static QString show( const QVariant &v )
{
  QString s = QStringLiteral( "%1/%2 null=%3 " ).arg( v.typeName() ).arg( v.userType() ).arg( v.isNull() );
  if ( v.userType() == QMetaType::Double ) s += QString::number( v.toDouble(), 'g', 17 ) + ( std::signbit( v.toDouble() ) ? "(neg)" : "" );
  else if ( v.userType() == QMetaType::QByteArray ) s += v.toByteArray().toHex();
  else if ( v.userType() == QMetaType::QDateTime ) s += v.toDateTime().toString( Qt::ISODateWithMs ) + QStringLiteral( " spec=%1" ).arg( v.toDateTime().timeSpec() );
  else if ( v.userType() == QMetaType::QTime ) s += v.toTime().toString( "HH:mm:ss.zzz" );
  else if ( v.userType() == QMetaType::QVariantList ) { s += "["; for ( auto &e : v.toList() ) s += show( e ) + ","; s += "]"; }
  else s += v.toString();
  return s;
}

void TestProperty::probe()
{
  const QString uri = "field=pid:integer&field=region:string&field=s:string&field=i:integer&field=l:long&field=d:double&field=b:boolean&field=dt:date&field=t:time&field=ts:datetime&field=bin:binary&field=sl:stringlist&field=il:integerlist&field=dl:doublelist&field=n:integer";
  QList<QgsAttributes> rows;
  const QDateTime t0( QDate( 2020, 3, 1 ), QTime( 10, 0, 30, 9 ) );
  for ( int i = 0; i < 6; ++i )
  {
    QgsAttributes a;
    a << i + 1 << "r00" << QString::fromUtf8( "日本" ) << 2147483647 << ( ( qlonglong( 1 ) << 62 ) + 1 ) << ( i % 2 ? -0.0 : 0.1 + 0.2 ) << ( i % 2 == 0 ) << QDate( 2020, 1, 1 ) << QTime( 1, 2, 3, 9 ) << t0.addMSecs( i % 2 )
      << QByteArray( "a\0b", 3 ) << QStringList { "x", "", "日" } << QVariantList { 1, -2 } << QVariantList { -0.0, 1e300 } << 1;
    rows << a;
  }
  auto recs = vbastest::table( uri, QList<QgsAttributes>() );
  for ( const QgsAttributes &row : rows ) { QgsFeature ff( recs->fields() ); ff.setAttributes( row ); QgsFeatureList fl { ff }; bool ok = recs->dataProvider()->addFeatures( fl ); if ( !ok ) qDebug() << "add failed" << recs->dataProvider()->lastError(); }
  for ( const QgsField &f : recs->fields() )
    qDebug() << f.name() << f.type() << f.subType() << f.typeName() << f.length();
  QgsFeature f;
  auto it = recs->getFeatures();
  while ( it.nextFeature( f ) )
  {
    if ( f.id() > 2 ) break;
    QStringList s;
    for ( const QVariant &v : f.attributes() ) s << show( v );
    qDebug() << f.id() << s;
  }
  {
    QTemporaryDir rt; 
    QgsVectorFileWriter::SaveVectorOptions o; o.driverName = "GPKG"; o.layerName = "rt";
    QString err, newFile, newLayer;
    auto res = QgsVectorFileWriter::writeAsVectorFormatV3( recs.get(), rt.filePath( "rt.gpkg" ), QgsCoordinateTransformContext(), o, &err, &newFile, &newLayer );
    qDebug() << "RT" << res << err << newFile << newLayer;
    QgsVectorLayer back( newFile + "|layername=" + newLayer, "b", "ogr" );
    auto it2 = back.getFeatures(); QgsFeature g;
    while ( it2.nextFeature( g ) ) { if ( g.id() > 2 ) break; QStringList s; for ( const QVariant &v : g.attributes() ) s << show( v ); qDebug() << "RT" << g.id() << s; }
  }
  auto regions = vbastest::grid();
  QgsProcessingContext context;
  QTemporaryDir dir; dir.setAutoRemove( false ); qDebug() << "DIR" << dir.path();
  for ( int gpkg = 0; gpkg < 2; ++gpkg )
  {
    QVariantMap p;
    p.insert( "REGIONS", vbastest::layerValue( regions.get() ) );
    p.insert( "REGION_ID", "id" );
    p.insert( "RECORDS", vbastest::layerValue( recs.get() ) );
    p.insert( "RECORD_REGION", "region" );
    p.insert( "QI_FIELDS", QStringList { "s", "b" } );
    p.insert( "MODEL", 3 );
    p.insert( "FIXED_SITES", 1 );
    p.insert( "K", 2 );
    p.insert( "SEED", 5 );
    for ( const char *sink : { "SITE_POINTS", "AGGREGATED", "LOOKUP", "ANONYMIZED", "VORONOI", "EVALUATION" } )
      p.insert( sink, gpkg ? dir.filePath( QString( sink ).toLower() + ".gpkg" ) : QgsProcessing::TEMPORARY_OUTPUT );
    vbastest::Feedback fb;
    const QVariantMap r = vbastest::run( "vbas:anonymize", p, context, true, &fb );
    qDebug() << r;
    qDebug() << fb.warnings;
    QgsVectorLayer *anon = vbastest::output( r, "ANONYMIZED", context );
    if ( !anon ) return;
    for ( const QgsField &f : anon->fields() )
      qDebug() << f.name() << f.type() << f.subType() << f.typeName();
    it = anon->getFeatures();
    while ( it.nextFeature( f ) )
    {
      QStringList s;
      for ( const QVariant &v : f.attributes() ) s << show( v );
      qDebug() << f.id() << s;
    }
    QgsVectorLayer *lookup = vbastest::output( r, "LOOKUP", context );
    for ( const QgsField &f : lookup->fields() ) qDebug() << f.name() << f.type();
    qDebug() << QDir( dir.path() ).entryList( QDir::Files | QDir::Hidden );
  }
}

QTEST_MAIN( TestProperty )
#include "test_property.moc"
