#include "plugin/outputs/vbasogrsink.h"

#include <qgsexception.h>
#include <qgsvectorfilewriter.h>

#include <cpl_error.h>

#include <algorithm>

namespace
{

/**
 * Whether driver's layer of fields reads back, without rows, as QGIS's writer made it, so that the same
 * setter on the same field stores the same (docs/outputs.md, "How outputs are written"). GeoJSON,
 * GeoJSONSeq, XLSX and ODS files without rows read back with no fields (or no layer), and a dBASE file
 * reads its 64-bit whole-number fields back as reals (losing digits past 2^53): those stay with QGIS's
 * writer, as does every other format.
 */
bool storesAsQgis( const QString &driver, const QgsFields &fields )
{
  if ( driver == QLatin1String( "ESRI Shapefile" ) )
  {
    const QList<QgsField> list = fields.toList();
    return std::none_of( list.cbegin(), list.cend(), []( const QgsField &field ) { return field.type() == vbasqgis::Field::LongLong; } );
  }
  return driver == QLatin1String( "GPKG" ) || driver == QLatin1String( "SQLite" ) || driver == QLatin1String( "CSV" );
}

/**
 * Whether QGIS's writer stores the text of driver in UTF-8, as the sink sends it: the format's own
 * encoding, else fileEncoding (the codec of QGIS's writer; for a shapefile also its ENCODING option,
 * from which GDAL recodes UTF-8). Any other encoding stays with QGIS's writer, "System" too: QGIS
 * finds no codec of that name and falls back to its settings and the locale.
 */
bool textInUtf8( const QString &driver, const QString &fileEncoding )
{
  QgsVectorFileWriter::MetaData metadata;
  const QString encoding = QgsVectorFileWriter::driverMetadata( driver, metadata ) && !metadata.compulsoryEncoding.isEmpty() ? metadata.compulsoryEncoding : fileEncoding;
  return encoding.compare( QLatin1String( "UTF-8" ), Qt::CaseInsensitive ) == 0;
}

} // namespace

bool VbasOgrSink::writes( const QString &driver, const QgsFields &fields, vbasqgis::WkbType wkbType, const QString &fileEncoding )
{
  return storesAsQgis( driver, fields ) && textAndNumbers( fields, wkbType ) && textInUtf8( driver, fileEncoding );
}

VbasOgrSink::VbasOgrSink( const QString &driver, const QString &path, const QString &layerName, const QgsFields &fields )
{
  const QList<QgsField> list = fields.toList();
  mFields.assign( list.begin(), list.end() );
  const QByteArray driverName = driver.toUtf8();
  const char *const drivers[] = { driverName.constData(), nullptr };
  mDataset.reset( GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_UPDATE, drivers, nullptr, nullptr ) );
  mLayer = mDataset ? GDALDatasetGetLayerByName( mDataset.get(), layerName.toUtf8().constData() ) : nullptr;
  if ( !mLayer && mDataset && GDALDatasetGetLayerCount( mDataset.get() ) == 1 ) // a CSV or dBASE file's layer is named after the file
    mLayer = GDALDatasetGetLayer( mDataset.get(), 0 );
  if ( !mLayer )
    throw QgsProcessingException( QObject::tr( "GDAL could not open the layer %1 of %2 to write it: %3" ).arg( layerName, path, QString::fromUtf8( CPLGetLastErrorMsg() ) ) );
  OGRFeatureDefnH definition = OGR_L_GetLayerDefn( mLayer );
  for ( const QgsField &field : fields )
  {
    mOgrField.push_back( OGR_FD_GetFieldIndex( definition, field.name().toUtf8().constData() ) );
    if ( mOgrField.back() < 0 )
      throw QgsProcessingException( QObject::tr( "The layer %1 of %2 lacks the field '%3' it was made with." ).arg( layerName, path, field.name() ) );
  }
  mFeature.reset( OGR_F_Create( definition ) );
  if ( !GDALDatasetTestCapability( mDataset.get(), ODsCTransactions ) )
    return; // CSV, dBASE: no transaction; a failed run's file is discarded (docs/outputs.md)
  if ( GDALDatasetStartTransaction( mDataset.get(), FALSE ) != OGRERR_NONE )
    throw QgsProcessingException( QObject::tr( "GDAL could not begin writing %1: %2" ).arg( path, QString::fromUtf8( CPLGetLastErrorMsg() ) ) );
  mInTransaction = true;
}

VbasOgrSink::~VbasOgrSink()
{
  if ( mInTransaction )
    GDALDatasetRollbackTransaction( mDataset.get() ); // never committed: none of its rows is kept
}

bool VbasOgrSink::addFeature( QgsFeature &feature, QgsFeatureSink::Flags )
{
  const QgsAttributes attributes = feature.attributes();
  for ( std::size_t i = 0; i < mFields.size(); ++i )
  {
    // Each value converted to its field's type by QGIS's own rule, as QGIS's writer does first.
    QVariant value = static_cast<int>( i ) < attributes.size() ? attributes.at( static_cast<int>( i ) ) : QVariant();
    QString error;
    if ( !mFields[i].convertCompatible( value, &error ) )
      return fail( QObject::tr( "Error converting value for attribute field %1: %2" ).arg( mFields[i].name(), error ) );
    set( mOgrField[i], mFields[i].type(), value );
  }
  OGR_F_SetFID( mFeature.get(), OGRNullFID ); // the table numbers its rows
  if ( OGR_L_CreateFeature( mLayer, mFeature.get() ) != OGRERR_NONE )
    return fail( QString::fromUtf8( CPLGetLastErrorMsg() ) );
  return true;
}

bool VbasOgrSink::flushBuffer()
{
  if ( !mInTransaction )
    return true; // committed, or a format without transactions: each row was written as it came
  if ( GDALDatasetCommitTransaction( mDataset.get() ) != OGRERR_NONE )
    return fail( QString::fromUtf8( CPLGetLastErrorMsg() ) ); // rolled back when the sink is destroyed
  mInTransaction = false;
  return true;
}

void VbasOgrSink::set( int field, vbasqgis::FieldType type, const QVariant &value )
{
  if ( value.isNull() )
    OGR_F_SetFieldNull( mFeature.get(), field );
  else if ( type == vbasqgis::Field::String )
    OGR_F_SetFieldString( mFeature.get(), field, value.toString().toUtf8().constData() );
  else if ( type == vbasqgis::Field::Int )
    OGR_F_SetFieldInteger( mFeature.get(), field, value.toInt() );
  else if ( type == vbasqgis::Field::LongLong )
    OGR_F_SetFieldInteger64( mFeature.get(), field, value.toLongLong() );
  else
    OGR_F_SetFieldDouble( mFeature.get(), field, value.toDouble() );
}

bool VbasOgrSink::fail( const QString &error )
{
  mError = error;
  return false;
}
