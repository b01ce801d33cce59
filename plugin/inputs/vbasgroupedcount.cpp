#include "plugin/support/vbasqgiscompat.h"
#include "plugin/inputs/vbasgroupedcount.h"

#include "plugin/support/vbassecrets.h"
#include "plugin/support/vbassqlitecatalog.h"

#include <qgsdatasourceuri.h>
#include <qgsexception.h>
#include <qgsexpression.h>
#include <qgsfeatureiterator.h>
#include <qgsfeaturerequest.h>
#include <qgsproviderregistry.h>
#include <qgssqliteutils.h>

#include <cpl_error.h>
#include <gdal.h>
#include <ogr_api.h>

#include <QHash>

#include <deque>
#include <unordered_map>

namespace
{

const QString kFirst = QStringLiteral( "vbas_first" );
const QString kRecords = QStringLiteral( "vbas_records" );
const QString kRows = QStringLiteral( "vbas_rows" );
const QString kBad = QStringLiteral( "vbas_bad" );
//! The query's own columns after vbas_first: vbas_records, vbas_rows, vbas_bad (then the keys).
constexpr int kOwnColumns = 3;
//! Groups whose first rows are read back through the provider at a time.
constexpr int kBatchGroups = 2048;

//! The grouped fields in the records table's roles: region, QIs, sensitive field.
QgsAttributeList groupedFields( const VbasRecordFields &roles )
{
  QgsAttributeList fields { roles.region };
  fields += roles.qis;
  if ( roles.sensitive >= 0 )
    fields.append( roles.sensitive );
  return fields;
}

//! How the query groups a column, and the text key of its value that tells the value apart from every other (empty: none).
struct Exact
{
    QString groupBy;
    QString key;
};

/**
 * SQLite groups a column by its value under the binary collation, so that the column's collation (NOCASE,
 * RTRIM) joins no values the provider reads apart. Numbers of two storage classes still compare equal
 * (1 = 1.0), which only a column QGIS reads as reals may hold: the stored-value check (VbasStoredTable) has
 * refused any other mix before the records are counted. The key is the storage class and the hex of the
 * value's bytes, taken from a row of the group; reals have none (SQLite prints them to 15 digits).
 */
Exact sqliteExact( const QgsField &field )
{
  const QString column = QgsSqliteUtils::quotedIdentifier( field.name() );
  return { QStringLiteral( "%1 COLLATE BINARY" ).arg( column ), QStringLiteral( "CASE typeof(%1) WHEN 'real' THEN NULL ELSE typeof(%1) || ':' || hex(%1) END" ).arg( column ) };
}

/**
 * PostgreSQL groups a column by the text QGIS's provider reads (the column cast to text) under the "C"
 * collation, byte by byte, so that neither a collation nor a type's own equality (citext, numeric
 * 1.0 = 1.00, timestamps to the microsecond) joins values; reals by their binary form (-0 and 0 apart).
 * The key is that form as text (an expression of the grouped form, as the server requires).
 */
Exact postgresExact( const QgsField &field )
{
  const QString column = QgsSqliteUtils::quotedIdentifier( field.name() );
  const QString type = field.typeName().toLower();
  const QString exact
    = type == QLatin1String( "float4" ) || type == QLatin1String( "float8" ) ? QStringLiteral( "%1send(%2)" ).arg( type, column ) : QStringLiteral( "(%1)::text COLLATE \"C\"" ).arg( column );
  const QString text = exact.startsWith( '(' ) ? exact : QStringLiteral( "encode(%1, 'hex')" ).arg( exact );
  return { exact, QStringLiteral( "CASE WHEN %1 IS NULL THEN 'null' ELSE 'value:' || %2 END" ).arg( exact, text ) };
}

/**
 * SELECT MIN(id) AS vbas_first, CAST(SUM(count) AS TEXT) AS vbas_records, COUNT(*) AS vbas_rows, ...,
 * the keys of the grouped values FROM table GROUP BY the exact forms of the QIs, then the region (in that order): SQL that SQLite and
 * PostgreSQL both run. The sums are text, so that no driver narrows or rounds them; vbas_bad counts the
 * rows whose count the streaming pass would refuse.
 */
QString groupBy( const QgsFields &fields, const VbasRecordFields &roles, const QString &idField, const QString &from, const std::function<Exact( const QgsField & )> &exact )
{
  QStringList grouped, keys;
  for ( const int i : groupedFields( roles ) )
  {
    const Exact form = exact( fields.at( i ) );
    grouped << form.groupBy;
    keys << form.key;
  }
  // The region last: the groups come by class, regions varying fastest, so that nearly every region id is
  // met, and read back, within the first batches rather than a few in every batch.
  grouped.append( grouped.takeFirst() );
  const QString id = QgsSqliteUtils::quotedIdentifier( idField );
  const QString count = roles.count >= 0 ? QgsSqliteUtils::quotedIdentifier( fields.at( roles.count ).name() ) : QString();
  const QString records = count.isEmpty() ? QStringLiteral( "COUNT(*)" ) : QStringLiteral( "SUM(%1)" ).arg( count );
  const QString bad = count.isEmpty() ? QStringLiteral( "0" ) : QStringLiteral( "SUM(CASE WHEN %1 >= 0 AND %1 <= 9007199254740992 AND %1 = ROUND(%1) THEN 0 ELSE 1 END)" ).arg( count );
  return QStringLiteral( "SELECT MIN(%1) AS %2, CAST(%3 AS TEXT) AS %4, COUNT(*) AS %5, %6 AS %7, %8 FROM %9 GROUP BY %10 ORDER BY %10" )
    .arg( id, kFirst, records, kRecords, kRows, bad, kBad, keys.join( QStringLiteral( ", " ) ), from, grouped.join( QStringLiteral( ", " ) ) );
}

/**
 * The groups of the query's result, each with its values as the records layer's provider reads them
 * (the row-by-row pass reads them so): a value seen before (by its key) as then, any other from the
 * group's first row, read back through the provider kBatchGroups groups at a time.
 */
class FirstRows
{
  public:
    FirstRows( std::shared_ptr<void> result, std::shared_ptr<QgsVectorLayerFeatureSource> records, const QgsAttributeList &grouped, int id, const QgsFields &fields )
      : mResult( std::move( result ) )
      , mRecords( std::move( records ) )
      , mGrouped( grouped )
      , mId( id )
      , mFields( fields )
      , mSeen( static_cast<std::size_t>( grouped.size() ) )
    {
    }

    bool next( QgsFeature &feature )
    {
      if ( mQueue.empty() && !fill() )
        return false;
      feature = std::move( mQueue.front() );
      mQueue.pop_front();
      return true;
    }

  private:
    //! A group of the result: its first row, the query's own columns (as text), and its values' keys.
    struct Group
    {
        qlonglong first = 0;
        QStringList own;
        QStringList keys;
    };

    static QString text( OGRFeatureH f, int i ) { return OGR_F_IsFieldSetAndNotNull( f, i ) ? QString::fromUtf8( OGR_F_GetFieldAsString( f, i ) ) : QString(); }

    //! The next batch of groups, false after the last.
    bool fill()
    {
      std::vector<Group> groups;
      QStringList unseen; // the first rows of groups with a value not seen before
      while ( groups.size() < kBatchGroups )
      {
        const std::unique_ptr<void, void ( * )( OGRFeatureH )> f( OGR_L_GetNextFeature( static_cast<OGRLayerH>( mResult.get() ) ), OGR_F_Destroy );
        if ( !f )
          break;
        Group group { OGR_F_GetFieldAsInteger64( f.get(), 0 ), {}, {} };
        for ( int i = 1; i <= kOwnColumns; ++i )
          group.own << text( f.get(), i );
        for ( std::size_t c = 0; c < mSeen.size(); ++c )
          group.keys << text( f.get(), 1 + kOwnColumns + static_cast<int>( c ) );
        if ( !known( group ) )
          unseen << QString::number( group.first );
        groups.push_back( std::move( group ) );
      }
      if ( groups.empty() )
        return false;
      const std::unordered_map<qlonglong, QgsAttributes> rows = readBack( unseen );
      for ( const Group &group : groups )
      {
        const auto row = rows.find( group.first );
        QgsAttributes attributes;
        for ( std::size_t c = 0; c < mSeen.size(); ++c )
          attributes << value( c, group, row == rows.end() ? nullptr : &row->second );
        for ( const QString &own : group.own )
          attributes << ( own.isNull() ? QVariant() : QVariant( own ) );
        mQueue.emplace_back( mFields );
        mQueue.back().setAttributes( attributes );
      }
      return true;
    }

    //! Whether every value of group was seen before.
    bool known( const Group &group ) const
    {
      for ( std::size_t c = 0; c < mSeen.size(); ++c )
        if ( group.keys[static_cast<int>( c )].isNull() || !mSeen[c].contains( group.keys[static_cast<int>( c )] ) )
          return false;
      return true;
    }

    //! The grouped value c of group: as seen before, else from its first row (and remembered).
    QVariant value( std::size_t c, const Group &group, const QgsAttributes *row )
    {
      const QString &key = group.keys[static_cast<int>( c )];
      const auto seen = key.isNull() ? mSeen[c].constEnd() : mSeen[c].constFind( key );
      if ( seen != mSeen[c].constEnd() )
        return seen.value();
      if ( !row )
        throw QgsProcessingException( QObject::tr( "the row of feature id %1 that the source counted could not be read back" ).arg( group.first ) );
      const QVariant v = row->at( mGrouped[static_cast<int>( c )] );
      if ( !key.isNull() )
        mSeen[c].insert( key, v );
      return v;
    }

    //! The rows of feature ids firsts, through the provider, by feature id.
    std::unordered_map<qlonglong, QgsAttributes> readBack( const QStringList &firsts ) const
    {
      std::unordered_map<qlonglong, QgsAttributes> rows;
      if ( firsts.isEmpty() )
        return rows;
      QgsFeatureRequest request( QgsExpression( QStringLiteral( "%1 IN (%2)" ).arg( QgsExpression::quotedColumnRef( mRecords->fields().at( mId ).name() ), firsts.join( ',' ) ) ) );
      request.setFlags( vbasqgis::NoGeometry ).setSubsetOfAttributes( QgsAttributeList( mGrouped ) << mId );
      QgsFeatureIterator it = mRecords->getFeatures( request );
      QgsFeature row;
      while ( it.nextFeature( row ) )
        rows.emplace( row.attribute( mId ).toLongLong(), row.attributes() );
      return rows;
    }

    std::shared_ptr<void> mResult;
    std::shared_ptr<QgsVectorLayerFeatureSource> mRecords;
    QgsAttributeList mGrouped;
    int mId;
    QgsFields mFields;
    std::vector<QHash<QString, QVariant>> mSeen; //!< per grouped field: the values read so far, by key
    std::deque<QgsFeature> mQueue;
};

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
  for ( const QString &name : { kFirst, kRecords, kRows, kBad } )
    if ( fields.lookupField( name ) >= 0 )
    {
      why = QObject::tr( "the table has a field named %1" ).arg( name );
      return std::nullopt;
    }
  if ( records.isEditable() )
  {
    why = QObject::tr( "the layer is being edited" );
    return std::nullopt;
  }
  VbasGroupedCount plan;
  const QString provider = records.providerType();
  plan.mFields = fields;
  plan.mRoles = roles;
  plan.mId = identity.first();
  plan.mRecords = std::make_shared<QgsVectorLayerFeatureSource>( &records );
  const QString idField = fields.at( identity.first() ).name();
  if ( provider == QLatin1String( "ogr" ) && ( records.storageType() == QLatin1String( "GPKG" ) || records.storageType() == QLatin1String( "SQLite" ) ) )
  {
    const QString subset = QgsProviderRegistry::instance()->decodeUri( provider, records.source() ).value( QStringLiteral( "subset" ) ).toString();
    const std::optional<VbasSqliteCatalog::Table> table = VbasSqliteCatalog::ogrTable( &records );
    if ( !subset.isEmpty() || !table )
    {
      why = QObject::tr( "the layer is filtered" );
      return std::nullopt;
    }
    plan.mPath = table->path;
    plan.mSql = groupBy( fields, roles, idField, QgsSqliteUtils::quotedIdentifier( table->name ), sqliteExact );
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
    plan.mSql = groupBy( fields, roles, idField, ( uri.schema().isEmpty() ? QString() : QgsSqliteUtils::quotedIdentifier( uri.schema() ) + '.' ) + QgsSqliteUtils::quotedIdentifier( uri.table() ),
                         postgresExact );
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
  std::shared_ptr<void> dataset( GDALOpenEx( mPath.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr ), []( void *d ) {
    if ( d )
      GDALClose( d );
  } );
  OGRLayerH layer = dataset ? GDALDatasetExecuteSQL( dataset.get(), mSql.toUtf8().constData(), nullptr, nullptr ) : nullptr;
  if ( !layer )
    throw QgsProcessingException( QObject::tr( "the source could not run the grouped query: %1" )
                                    .arg( VbasSecrets::withoutPasswords( QString::fromUtf8( CPLGetLastErrorMsg() ) ) ) ); // GDAL may name the dataset: its PG: connection
  std::shared_ptr<void> result( layer, [dataset]( void *l ) { GDALDatasetReleaseResultSet( dataset.get(), static_cast<OGRLayerH>( l ) ); } );
  VbasCountedRows grouped = resultFields();
  grouped.next = [rows = std::make_shared<FirstRows>( result, mRecords, groupedFields( mRoles ), mId, grouped.fields )]( QgsFeature &feature ) { return rows->next( feature ); };
  return grouped;
}

VbasCountedRows VbasGroupedCount::resultFields() const
{
  VbasCountedRows result;
  for ( const int i : groupedFields( mRoles ) )
    result.fields.append( mFields.at( i ) );
  for ( const QString &name : { kRecords, kRows, kBad } )
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
  return result;
}
