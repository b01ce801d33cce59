#include "inputs/vbasstoredtable.h"
#include "support/vbasqgiscompat.h"

#include "support/vbassqlitecatalog.h"

#include <qgsexception.h>
#include <qgssqliteutils.h>
#include <qgsvectorlayer.h>

#include <cpl_error.h>
#include <gdal.h>
#include <ogr_api.h>

#include <memory>

namespace
{

//! Why a stored value would not read back as it is stored (VbasStoredTable::check).
enum StoredProblem
{
  Fine,
  WrongType,
  HoldsNul,
  StartsWithBom,
};

//! The SQLite condition under which a column's stored value reads back unchanged as a value of type.
QString storedTypeCondition( vbasqgis::FieldType type, const QString &column )
{
  switch ( type )
  {
    case vbasqgis::Field::Int:
    case vbasqgis::Field::UInt:
    case vbasqgis::Field::LongLong:
    case vbasqgis::Field::ULongLong:
      return QStringLiteral( "typeof(%1) = 'integer'" ).arg( column );
    case vbasqgis::Field::Bool:
      return QStringLiteral( "typeof(%1) = 'integer' AND %1 IN (0, 1)" ).arg( column );
    case vbasqgis::Field::Double:
      return QStringLiteral( "typeof(%1) IN ('integer', 'real')" ).arg( column );
    case vbasqgis::Field::ByteArray:
      return QStringLiteral( "typeof(%1) = 'blob'" ).arg( column );
    case vbasqgis::Field::Date: // QGIS reads a DATE that is not a valid YYYY-MM-DD as NULL
      return QStringLiteral( "typeof(%1) = 'text' AND date(%1) IS %1" ).arg( column );
    case vbasqgis::Field::DateTime: // and a DATETIME that is no date and time
      return QStringLiteral( "typeof(%1) = 'text' AND %1 GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]*' AND julianday(%1) IS NOT NULL" ).arg( column );
    default: // text
      return QStringLiteral( "typeof(%1) = 'text'" ).arg( column );
  }
}

//! The StoredProblem of a column's value, as SQLite computes it.
QString storedProblem( vbasqgis::FieldType type, const QString &column )
{
  return QStringLiteral( "CASE WHEN %1 IS NULL THEN %2 WHEN NOT (%3) THEN %4 WHEN typeof(%1) = 'text' AND instr(CAST(%1 AS BLOB), X'00') > 0 THEN %5 "
                         "WHEN typeof(%1) = 'text' AND substr(CAST(%1 AS BLOB), 1, 3) = X'EFBBBF' THEN %6 ELSE %2 END" )
    .arg( column, QString::number( Fine ), storedTypeCondition( type, column ), QString::number( WrongType ), QString::number( HoldsNul ), QString::number( StartsWithBom ) );
}

//! What a value that would not read back as stored is told.
QString storedMessage( StoredProblem problem, const QString &row, const QgsField &field, const QString &storage, const QString &quoted )
{
  switch ( problem )
  {
    case WrongType:
      return QObject::tr( "%1: the field '%2' is of type %3 but stores the %4 value %5, which QGIS would read as another value (0 or NULL, say). Correct the value, "
                          "or give the field a type that holds it (text, say)." )
        .arg( row, field.name(), vbasqgis::typeName( field ), storage, quoted.left( 40 ) );
    case HoldsNul:
      return QObject::tr( "%1: the field '%2' holds text with a NUL character (U+0000), after which QGIS drops the rest of the text. Remove the NUL from the value." )
        .arg( row, field.name() );
    default:
      return QObject::tr( "%1: the field '%2' holds text that begins with U+FEFF (a byte order mark), which QGIS drops. Remove it from the value." ).arg( row, field.name() );
  }
}

} // namespace

std::optional<VbasStoredTable> VbasStoredTable::of( const QgsVectorLayer *layer )
{
  const std::optional<VbasSqliteCatalog::Table> table = VbasSqliteCatalog::ogrTable( layer );
  if ( !table )
    return std::nullopt;
  VbasStoredTable stored;
  stored.mPath = table->path;
  stored.mTable = table->name;
  stored.mFid = table->fid;
  stored.mFilter = layer->subsetString();
  return stored;
}

void VbasStoredTable::check( const QgsFields &fields, const QgsAttributeList &checked, const QString &rowKind ) const
{
  QStringList columns, problems;
  for ( const int i : checked )
  {
    const QString column = QgsSqliteUtils::quotedIdentifier( fields.at( i ).name() );
    columns << QStringLiteral( "%1 AS vbas_problem%2, typeof(%3) AS vbas_type%2, quote(%3) AS vbas_value%2" ).arg( storedProblem( fields.at( i ).type(), column ) ).arg( problems.size() ).arg( column );
    problems << QStringLiteral( "vbas_problem%1 > 0" ).arg( problems.size() );
  }
  if ( columns.isEmpty() )
    return;
  const QString sql = QStringLiteral( "SELECT * FROM (SELECT %1 AS vbas_fid, %2 FROM %3%4) WHERE %5 LIMIT 1" )
                        .arg( mFid.isEmpty() ? QStringLiteral( "rowid" ) : QgsSqliteUtils::quotedIdentifier( mFid ), columns.join( QStringLiteral( ", " ) ), QgsSqliteUtils::quotedIdentifier( mTable ),
                              mFilter.isEmpty() ? QString() : QStringLiteral( " WHERE (%1)" ).arg( mFilter ), problems.join( QStringLiteral( " OR " ) ) );
  std::unique_ptr<void, decltype( &GDALClose )> dataset( GDALOpenEx( mPath.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, nullptr, nullptr ), &GDALClose );
  OGRLayerH result = dataset ? GDALDatasetExecuteSQL( dataset.get(), sql.toUtf8().constData(), nullptr, nullptr ) : nullptr;
  if ( !result )
    throw QgsProcessingException( QObject::tr( "The values of %1 as stored could not be checked: %2" ).arg( mTable, QString::fromUtf8( CPLGetLastErrorMsg() ) ) );
  OGRFeatureH row = OGR_L_GetNextFeature( result );
  // OGR may take the feature id column as the result's FID rather than as a field.
  const auto field = [row]( const QString &name ) { return OGR_F_GetFieldIndex( row, name.toUtf8().constData() ); };
  const GIntBig fid = row && field( QStringLiteral( "vbas_fid" ) ) >= 0 ? OGR_F_GetFieldAsInteger64( row, field( QStringLiteral( "vbas_fid" ) ) ) : row ? OGR_F_GetFID( row ) : 0;
  QString message;
  for ( int q = 0; row && q < checked.size() && message.isEmpty(); ++q )
  {
    const auto problem = static_cast<StoredProblem>( OGR_F_GetFieldAsInteger( row, field( QStringLiteral( "vbas_problem%1" ).arg( q ) ) ) );
    if ( problem != Fine )
      message = storedMessage( problem, QObject::tr( "%1 with feature id %2" ).arg( rowKind ).arg( fid ), fields.at( checked[q] ),
                               QString::fromUtf8( OGR_F_GetFieldAsString( row, field( QStringLiteral( "vbas_type%1" ).arg( q ) ) ) ),
                               QString::fromUtf8( OGR_F_GetFieldAsString( row, field( QStringLiteral( "vbas_value%1" ).arg( q ) ) ) ) );
  }
  if ( row )
    OGR_F_Destroy( row );
  GDALDatasetReleaseResultSet( dataset.get(), result );
  if ( !message.isEmpty() )
    throw QgsProcessingException( message );
}
