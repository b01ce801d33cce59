#include "support/vbasqgiscompat.h"
#include "inputs/vbasgroupedcount.h"

#include <qgsdatasourceuri.h>
#include <qgsexception.h>
#include <qgsogrutils.h>
#include <qgsproviderregistry.h>
#include <qgssqliteutils.h>

#include <cpl_error.h>
#include <gdal.h>
#include <ogr_api.h>

namespace
{

const QString kRecords = QStringLiteral( "vbas_records" );
const QString kRows = QStringLiteral( "vbas_rows" );
const QString kBad = QStringLiteral( "vbas_bad" );
const QString kIds = QStringLiteral( "vbas_ids" );

//! The name of the layer an OGR source reads: its layerName, or the name of the layer at its layerId (default the first).
QString ogrLayerName( const QVariantMap &parts )
{
  const QString name = parts.value( QStringLiteral( "layerName" ) ).toString();
  if ( !name.isEmpty() )
    return name;
  GDALDatasetH dataset = GDALOpenEx( parts.value( QStringLiteral( "path" ) ).toString().toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr );
  if ( !dataset )
    return QString();
  OGRLayerH layer = GDALDatasetGetLayer( dataset, parts.value( QStringLiteral( "layerId" ), 0 ).toInt() );
  const QString found = layer ? QString::fromUtf8( OGR_L_GetName( layer ) ) : QString();
  GDALClose( dataset );
  return found;
}

//! The grouped fields in the records table's roles: region, QIs, sensitive field.
QgsAttributeList groupedFields( const VbasRecordFields &roles )
{
  QgsAttributeList fields { roles.region };
  fields += roles.qis;
  if ( roles.sensitive >= 0 )
    fields.append( roles.sensitive );
  return fields;
}

/**
 * SELECT region, QIs, CAST(SUM(count) AS TEXT) AS vbas_records, COUNT(*) AS vbas_rows, ... FROM table
 * GROUP BY region, QIs: SQL that SQLite and PostgreSQL both run. The sums are text, so that no driver
 * narrows or rounds them; vbas_bad counts the rows whose count the streaming pass would refuse.
 */
QString groupBy( const QgsFields &fields, const VbasRecordFields &roles, const QString &idField, const QString &from )
{
  QStringList columns;
  for ( const int i : groupedFields( roles ) )
    columns << QgsSqliteUtils::quotedIdentifier( fields.at( i ).name() );
  const QString count = roles.count >= 0 ? QgsSqliteUtils::quotedIdentifier( fields.at( roles.count ).name() ) : QString();
  const QString records = count.isEmpty() ? QStringLiteral( "COUNT(*)" ) : QStringLiteral( "SUM(%1)" ).arg( count );
  const QString bad = count.isEmpty() ? QStringLiteral( "0" ) : QStringLiteral( "SUM(CASE WHEN %1 >= 0 AND %1 <= 9007199254740992 AND %1 = ROUND(%1) THEN 0 ELSE 1 END)" ).arg( count );
  return QStringLiteral( "SELECT %1, CAST(%2 AS TEXT) AS %3, COUNT(*) AS %4, %5 AS %6, CAST(SUM(%7) AS TEXT) AS %8 FROM %9 GROUP BY %1" )
    .arg( columns.join( QStringLiteral( ", " ) ), records, kRecords, kRows, bad, kBad, QgsSqliteUtils::quotedIdentifier( idField ), kIds, from );
}

} // namespace

std::optional<VbasGroupedCount> VbasGroupedCount::plan( const QgsVectorLayer &records, const VbasRecordFields &roles, const QgsAttributeList &identity, QString &why )
{
  const QgsFields fields = records.fields();
  if ( roles.region < 0 )
  {
    why = QObject::tr( "the records are located by their points" );
    return std::nullopt;
  }
  if ( identity.size() != 1 || ( fields.at( identity.first() ).type() != vbasqgis::Field::Int && fields.at( identity.first() ).type() != vbasqgis::Field::LongLong ) )
  {
    why = QObject::tr( "the table has no single whole-number feature id column" );
    return std::nullopt;
  }
  for ( const QString &name : { kRecords, kRows, kBad, kIds } )
    if ( fields.lookupField( name ) >= 0 )
    {
      why = QObject::tr( "the table has a field named %1" ).arg( name );
      return std::nullopt;
    }
  VbasGroupedCount plan;
  const QString provider = records.providerType();
  plan.mFields = fields;
  plan.mRoles = roles;
  const QString idField = fields.at( identity.first() ).name();
  if ( provider == QLatin1String( "ogr" ) && ( records.storageType() == QLatin1String( "GPKG" ) || records.storageType() == QLatin1String( "SQLite" ) ) )
  {
    QVariantMap parts = QgsProviderRegistry::instance()->decodeUri( provider, records.source() );
    const QString subset = parts.value( QStringLiteral( "subset" ) ).toString();
    const QString layerName = ogrLayerName( parts );
    if ( !subset.isEmpty() || layerName.isEmpty() )
    {
      why = QObject::tr( "the layer is filtered" );
      return std::nullopt;
    }
    plan.mPath = parts.value( QStringLiteral( "path" ) ).toString();
    plan.mSql = groupBy( fields, roles, idField, QgsSqliteUtils::quotedIdentifier( layerName ) );
    plan.mSourceName = records.storageType() == QLatin1String( "GPKG" ) ? QStringLiteral( "GeoPackage" ) : QStringLiteral( "SQLite" );
    return plan;
  }
  if ( provider == QLatin1String( "postgres" ) )
  {
    const QgsDataSourceUri uri( records.source() );
    if ( !uri.sql().isEmpty() || uri.table().startsWith( '(' ) )
    {
      why = QObject::tr( "the layer is filtered or is a query" );
      return std::nullopt;
    }
    if ( !uri.authConfigId().isEmpty() )
    {
      why = QObject::tr( "its connection uses a QGIS authentication configuration" );
      return std::nullopt;
    }
    // GDAL's PostgreSQL driver passes the query to the server and reads its groups through one cursor.
    plan.mPath = QStringLiteral( "PG:" ) + uri.connectionInfo( false );
    plan.mSql = groupBy( fields, roles, idField, ( uri.schema().isEmpty() ? QString() : QgsSqliteUtils::quotedIdentifier( uri.schema() ) + '.' ) + QgsSqliteUtils::quotedIdentifier( uri.table() ) );
    plan.mSourceName = QStringLiteral( "PostgreSQL" );
    return plan;
  }
  why = QObject::tr( "its provider (%1) does not run SQL" ).arg( records.providerType() );
  return std::nullopt;
}

VbasCountedRows VbasGroupedCount::groups() const
{
  // GDAL directly, not a QGIS layer of the query: QGIS's providers run a query layer's whole GROUP BY
  // again to count its rows (OGR) or to probe its fields and key (PostgreSQL: three more times).
  // QgsOgrUtils converts each value by the table's own field, as the OGR provider does.
  std::shared_ptr<void> dataset( GDALOpenEx( mPath.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr ), []( void *d ) {
    if ( d )
      GDALClose( d );
  } );
  OGRLayerH layer = dataset ? GDALDatasetExecuteSQL( dataset.get(), mSql.toUtf8().constData(), nullptr, nullptr ) : nullptr;
  if ( !layer )
    throw QgsProcessingException( QObject::tr( "the source could not run the grouped query: %1" ).arg( QString::fromUtf8( CPLGetLastErrorMsg() ) ) );
  std::shared_ptr<void> result( layer, [dataset]( void *l ) { GDALDatasetReleaseResultSet( dataset.get(), static_cast<OGRLayerH>( l ) ); } );
  VbasCountedRows grouped = resultFields();
  grouped.next = [result, fields = grouped.fields, queryColumns = grouped.roles.count]( QgsFeature &feature ) {
    const std::unique_ptr<void, void ( * )( OGRFeatureH )> f( OGR_L_GetNextFeature( static_cast<OGRLayerH>( result.get() ) ), OGR_F_Destroy );
    if ( !f )
      return false;
    QgsAttributes attributes( fields.count() );
    for ( int i = 0; i < fields.count(); ++i )
    {
      bool ok = true;
      if ( i < queryColumns )
        attributes[i] = QgsOgrUtils::getOgrFeatureAttribute( f.get(), fields.at( i ), i, nullptr, &ok );
      else if ( OGR_F_IsFieldSetAndNotNull( f.get(), i ) )
        attributes[i] = QString::fromUtf8( OGR_F_GetFieldAsString( f.get(), i ) );
      if ( !ok )
        throw QgsProcessingException( QObject::tr( "the source returned a value of '%1' that does not convert" ).arg( fields.at( i ).name() ) );
    }
    feature = QgsFeature( fields );
    feature.setAttributes( attributes );
    return true;
  };
  return grouped;
}

VbasCountedRows VbasGroupedCount::resultFields() const
{
  VbasCountedRows result;
  for ( const int i : groupedFields( mRoles ) )
    result.fields.append( mFields.at( i ) );
  for ( const QString &name : { kRecords, kRows, kBad, kIds } )
    result.fields.append( QgsField( name, vbasqgis::Field::String ) );
  int next = 0;
  result.roles.region = next++;
  for ( int q = 0; q < mRoles.qis.size(); ++q )
    result.roles.qis.append( next++ );
  if ( mRoles.sensitive >= 0 )
    result.roles.sensitive = next++;
  result.roles.count = next++;
  result.rows = next++;
  result.bad = next++;
  result.ids = next++;
  return result;
}
