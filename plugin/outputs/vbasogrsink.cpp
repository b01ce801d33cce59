#include "plugin/outputs/vbasogrsink.h"

#include <qgsexception.h>

#include <cpl_error.h>

bool VbasOgrSink::writes( const QString &driver, const QgsFields &fields, vbasqgis::WkbType wkbType )
{
  return driver == QLatin1String( "GPKG" ) && textAndNumbers( fields, wkbType );
}

VbasOgrSink::VbasOgrSink( const QString &path, const QString &layerName, const QgsFields &fields )
{
  const QList<QgsField> list = fields.toList();
  mFields.assign( list.begin(), list.end() );
  const char *const drivers[] = { "GPKG", nullptr };
  mDataset.reset( GDALOpenEx( path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_UPDATE, drivers, nullptr, nullptr ) );
  mLayer = mDataset ? GDALDatasetGetLayerByName( mDataset.get(), layerName.toUtf8().constData() ) : nullptr;
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
    return mError.isEmpty();
  mInTransaction = false;
  if ( GDALDatasetCommitTransaction( mDataset.get() ) != OGRERR_NONE )
    return fail( QString::fromUtf8( CPLGetLastErrorMsg() ) );
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
