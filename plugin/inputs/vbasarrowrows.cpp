#include "plugin/inputs/vbasarrowrows.h"

#include "plugin/support/vbasqgiscompat.h"

#include <qgsexception.h>
#include <qgsogrutils.h>
#include <qgsproviderregistry.h>
#include <qgsvectordataprovider.h>
#include <qgsvectorlayer.h>

#include <cpl_string.h>
#include <gdal.h>
#include <ogr_api.h>
#include <ogr_recordbatch.h>

#include <QDate>
#include <QHash>
#include <QSet>

#include <cstdlib>
#include <cstring>

namespace
{

//! How a column of the stream is decoded: the Arrow C data interface's formats GDAL gives.
enum class Decode
{
  Utf8,      //!< "u": text, 32-bit offsets
  LargeUtf8, //!< "U": text, 64-bit offsets
  Int16,     //!< "s"
  Int32,     //!< "i"
  Int64,     //!< "l"
  Float64,   //!< "g"
  Date32,    //!< "tdD": days since 1970-01-01
  Binary,    //!< "z": bytes, 32-bit offsets
  Boolean,   //!< "b": one bit a value
};

/**
 * Whether GDAL's stream gives booleans as stored. GDAL 3.6's does not (stored true, false, false, true,
 * false, false, true read back as true, false, false, false, false, false, false); 3.10 and 3.13, checked
 * (docs/preparing-data.md, "How the records are read"), do. The versions between were not checked.
 */
bool streamsBooleans()
{
  return std::atoi( GDALVersionInfo( "VERSION_NUM" ) ) >= GDAL_COMPUTE_VERSION( 3, 10, 0 );
}

/**
 * How a column GDAL gives in format is decoded into the type QGIS reads its field as, when the two
 * agree exactly. Left to QGIS: a float32 column ("f"), whose stored real the stream rounds to a float
 * where QGIS reads the double GDAL holds, and booleans where GDAL's stream gives them wrongly.
 */
std::optional<Decode> decoding( const std::string &format, vbasqgis::FieldType type )
{
  if ( type == vbasqgis::Field::String && ( format == "u" || format == "U" ) )
    return format == "u" ? Decode::Utf8 : Decode::LargeUtf8;
  if ( type == vbasqgis::Field::Int && ( format == "i" || format == "s" ) )
    return format == "i" ? Decode::Int32 : Decode::Int16;
  if ( type == vbasqgis::Field::LongLong && format == "l" )
    return Decode::Int64;
  if ( type == vbasqgis::Field::Double && format == "g" )
    return Decode::Float64;
  if ( type == vbasqgis::Field::Date && format == "tdD" )
    return Decode::Date32;
  if ( type == vbasqgis::Field::ByteArray && format == "z" )
    return Decode::Binary;
  if ( type == vbasqgis::Field::Bool && format == "b" && streamsBooleans() )
    return Decode::Boolean;
  return std::nullopt;
}

//! A read field: where the stream holds it and how it is decoded.
struct Column
{
    int field = -1;
    std::int64_t child = -1;
    Decode decode = Decode::Utf8;
    QVariant null; //!< the field's NULL, of its type, as QGIS's provider gives it
};

//! A text as QGIS reads it through OGR: a C string, which a NUL byte ends (the stored-value check refuses such a value).
QString text( const char *bytes, std::int64_t size )
{
  const void *nul = std::memchr( bytes, 0, static_cast<std::size_t>( size ) );
  return QString::fromUtf8( bytes, static_cast<int>( nul ? static_cast<const char *>( nul ) - bytes : size ) );
}

template<typename T>
T at( const ArrowArray *array, int buffer, std::int64_t i )
{
  return static_cast<const T *>( array->buffers[buffer] )[i];
}

//! Whether element i of array (its offset added) is NULL: its validity bit clear.
bool isNull( const ArrowArray *array, std::int64_t i )
{
  const auto *valid = static_cast<const std::uint8_t *>( array->buffers[0] );
  return array->null_count != 0 && valid && !( ( valid[i >> 3] >> ( i & 7 ) ) & 1 );
}

//! Element i of array (its own offset added): NULL when its validity bit is clear.
QVariant value( const ArrowArray *array, std::int64_t i, const Column &column )
{
  i += array->offset;
  if ( isNull( array, i ) )
    return column.null;
  const char *data = static_cast<const char *>( array->buffers[2] );
  switch ( column.decode )
  {
    case Decode::Utf8:
      return text( data + at<std::int32_t>( array, 1, i ), at<std::int32_t>( array, 1, i + 1 ) - at<std::int32_t>( array, 1, i ) );
    case Decode::Binary:
      return QByteArray( data + at<std::int32_t>( array, 1, i ), at<std::int32_t>( array, 1, i + 1 ) - at<std::int32_t>( array, 1, i ) );
    case Decode::Date32:
      return QDate( 1970, 1, 1 ).addDays( at<std::int32_t>( array, 1, i ) );
    case Decode::LargeUtf8:
      return text( data + at<std::int64_t>( array, 1, i ), at<std::int64_t>( array, 1, i + 1 ) - at<std::int64_t>( array, 1, i ) );
    case Decode::Int16:
      return static_cast<int>( at<std::int16_t>( array, 1, i ) );
    case Decode::Int32:
      return at<std::int32_t>( array, 1, i );
    case Decode::Int64:
      return static_cast<qlonglong>( at<std::int64_t>( array, 1, i ) );
    case Decode::Float64:
      return at<double>( array, 1, i );
    case Decode::Boolean:
      return static_cast<bool>( ( static_cast<const std::uint8_t *>( array->buffers[1] )[i >> 3] >> ( i & 7 ) ) & 1 );
  }
  return column.null;
}

//! The fields of an OGR layer by their exact names (GDAL's own lookup ignores letter case).
QHash<QString, int> ogrFields( OGRLayerH layer )
{
  QHash<QString, int> fields;
  OGRFeatureDefnH definition = OGR_L_GetLayerDefn( layer );
  for ( int i = 0; i < OGR_FD_GetFieldCount( definition ); ++i )
    fields.insert( QString::fromUtf8( OGR_Fld_GetNameRef( OGR_FD_GetFieldDefn( definition, i ) ) ), i );
  return fields;
}

/**
 * Why the layer of a source decoded into parts is not the whole layer GDAL opens at its path, or
 * nothing: QGIS may read the features of one geometry type of a file of several (a sublayer), or a
 * file inside an archive, and any other part of a source is not given to GDAL here.
 */
QString partOfFile( const QVariantMap &parts )
{
  static const QSet<QString> given { QStringLiteral( "path" ), QStringLiteral( "layerName" ), QStringLiteral( "layerId" ), QStringLiteral( "openOptions" ), QStringLiteral( "subset" ) };
  if ( !parts.value( QStringLiteral( "geometryType" ) ).toString().isEmpty() )
    return QObject::tr( "the layer is the features of one geometry type of its file" );
  if ( !parts.value( QStringLiteral( "vsiPrefix" ) ).toString().isEmpty() )
    return QObject::tr( "the file is inside an archive" );
  for ( auto part = parts.constBegin(); part != parts.constEnd(); ++part )
    if ( !given.contains( part.key() ) && !part.value().toString().isEmpty() )
      return QObject::tr( "its source has a part GDAL is not given here (%1)" ).arg( part.key() );
  return QString();
}

} // namespace

//! GDAL's dataset, its Arrow stream, the stream's schema and the batch being read, released in that order's reverse.
class VbasArrowRows::Stream
{
  public:
    Stream( GDALDatasetH dataset, const Source &source )
      : mDataset( dataset )
      , mSource( source )
    {
      mStream.release = nullptr;
      mSchema.release = nullptr;
      mBatch.release = nullptr;
    }
    ~Stream()
    {
      release( mBatch );
      release( mSchema );
      release( mStream );
      GDALClose( mDataset );
    }
    Stream( const Stream & ) = delete;
    Stream &operator=( const Stream & ) = delete;

    /**
     * Streams layer's read fields (the others ignored), its feature ids and, if the source asks, its
     * geometries. False, with why set, when the stream gives a field as another type than QGIS reads it as.
     */
    bool start( OGRLayerH layer, QString &why );
    bool next( QgsFeature &feature );

  private:
    template<typename T>
    static void release( T &arrow )
    {
      if ( arrow.release )
        arrow.release( &arrow );
    }
    //! Has GDAL skip the layer's fields that are not read, and its geometry unless it is read.
    bool ignoreUnread( OGRLayerH layer, QString &why );
    //! Finds the stream's column of each read field, of the feature ids and of the geometries; false, with why set, when one is missing or of another type.
    bool findColumns( const QString &fidColumn, const QString &geometryColumn, QString &why );
    bool fetch();
    //! The geometry of row (its batch's offset added), as QGIS reads the geometry GDAL holds.
    QgsGeometry geometry( std::int64_t row ) const;

    GDALDatasetH mDataset;
    Source mSource;
    ArrowArrayStream mStream;
    ArrowSchema mSchema;
    ArrowArray mBatch;
    std::int64_t mRow = 0; //!< the next row of mBatch
    std::int64_t mFid = -1;
    std::int64_t mGeometry = -1; //!< the column of geometries, if read
    QVector<Column> mColumns;
};

bool VbasArrowRows::Stream::start( OGRLayerH layer, QString &why )
{
  if ( mSource.geometry && OGR_FD_GetGeomFieldCount( OGR_L_GetLayerDefn( layer ) ) != 1 )
  {
    why = QObject::tr( "GDAL gives it another number of geometries than one" );
    return false;
  }
  if ( !ignoreUnread( layer, why ) )
    return false;
  CPLStringList options;
  options.SetNameValue( "INCLUDE_FID", "YES" );
  if ( !OGR_L_GetArrowStream( layer, &mStream, options.List() ) || mStream.get_schema( &mStream, &mSchema ) != 0 )
  {
    why = QObject::tr( "GDAL could not stream it: %1" ).arg( QString::fromUtf8( CPLGetLastErrorMsg() ) );
    return false;
  }
  // GDAL names the column of feature ids after the layer's FID column, OGC_FID when it has none, and
  // the column of geometries after the layer's geometry column, wkb_geometry when it has none.
  const QString fidColumn = QString::fromUtf8( OGR_L_GetFIDColumn( layer ) );
  const QString geometryColumn = QString::fromUtf8( OGR_L_GetGeometryColumn( layer ) );
  return findColumns( fidColumn.isEmpty() ? QStringLiteral( "OGC_FID" ) : fidColumn, geometryColumn.isEmpty() ? QStringLiteral( "wkb_geometry" ) : geometryColumn, why );
}

bool VbasArrowRows::Stream::ignoreUnread( OGRLayerH layer, QString &why )
{
  const QHash<QString, int> ogr = ogrFields( layer );
  const QString fidColumn = QString::fromUtf8( OGR_L_GetFIDColumn( layer ) );
  QSet<int> kept;
  for ( const int i : std::as_const( mSource.read ) )
  {
    const QString name = mSource.fields.at( i ).name();
    const auto found = ogr.constFind( name );
    if ( found == ogr.constEnd() && name != fidColumn )
    {
      why = QObject::tr( "GDAL does not give its field '%1'" ).arg( name );
      return false;
    }
    if ( found != ogr.constEnd() )
      kept.insert( *found );
  }
  CPLStringList ignored;
  for ( auto field = ogr.constBegin(); field != ogr.constEnd(); ++field )
    if ( !kept.contains( *field ) )
      ignored.AddString( field.key().toUtf8().constData() );
  if ( !mSource.geometry )
    ignored.AddString( "OGR_GEOMETRY" );
  ignored.AddString( "OGR_STYLE" );
  if ( OGR_L_SetIgnoredFields( layer, const_cast<const char **>( ignored.List() ) ) == OGRERR_NONE )
    return true;
  why = QObject::tr( "GDAL could not stream it: %1" ).arg( QString::fromUtf8( CPLGetLastErrorMsg() ) );
  return false;
}

bool VbasArrowRows::Stream::findColumns( const QString &fidColumn, const QString &geometryColumn, QString &why )
{
  QHash<QString, std::int64_t> children;
  for ( std::int64_t c = 0; c < mSchema.n_children; ++c )
    children.insert( QString::fromUtf8( mSchema.children[c]->name ), c );
  mFid = children.value( fidColumn, -1 );
  if ( children.size() != mSchema.n_children || mFid < 0 || std::strcmp( mSchema.children[mFid]->format, "l" ) != 0 )
  {
    why = QObject::tr( "GDAL's stream of it has no single column of feature ids" );
    return false;
  }
  mGeometry = mSource.geometry ? children.value( geometryColumn, -1 ) : -1;
  if ( mSource.geometry && ( mGeometry < 0 || std::strcmp( mSchema.children[mGeometry]->format, "z" ) != 0 ) )
  {
    why = QObject::tr( "GDAL's stream of it has no column of geometries" );
    return false;
  }
  for ( const int i : std::as_const( mSource.read ) )
  {
    const QgsField field = mSource.fields.at( i );
    const std::int64_t child = children.value( field.name(), -1 );
    const std::optional<Decode> decode = child < 0 ? std::nullopt : decoding( mSchema.children[child]->format, field.type() );
    if ( !decode && field.type() == vbasqgis::Field::Bool && !streamsBooleans() )
      why = QObject::tr( "its field '%1' holds booleans, which the stream of GDAL %2 gives wrongly" ).arg( field.name(), QString::fromUtf8( GDALVersionInfo( "RELEASE_NAME" ) ) );
    else if ( !decode )
      why = QObject::tr( "GDAL gives its field '%1' as another type than QGIS's %2" ).arg( field.name(), vbasqgis::typeName( field ) );
    if ( !decode )
      return false;
    mColumns.append( { i, child, *decode, vbasqgis::nullOf( field.type() ) } );
  }
  return true;
}

bool VbasArrowRows::Stream::fetch()
{
  release( mBatch );
  mRow = 0;
  if ( mStream.get_next( &mStream, &mBatch ) != 0 )
  {
    const char *error = mStream.get_last_error( &mStream );
    throw QgsProcessingException( QObject::tr( "GDAL could not read the records: %1" ).arg( QString::fromUtf8( error ? error : CPLGetLastErrorMsg() ) ) );
  }
  if ( mBatch.release && mBatch.length == 0 ) // GDAL 3.6 gives a FlatGeobuf file of no rows as empty batches without end
    throw QgsProcessingException( QObject::tr( "GDAL's stream of the records gave an empty batch: nothing was written. Save the records as a GeoPackage and run again." ) );
  return mBatch.release != nullptr; // a released batch: the end of the stream
}

bool VbasArrowRows::Stream::next( QgsFeature &feature )
{
  while ( !mBatch.release || mRow >= mBatch.length )
    if ( !fetch() )
      return false;
  const std::int64_t row = mBatch.offset + mRow++;
  QgsAttributes attributes( mSource.fields.count() );
  for ( const Column &column : std::as_const( mColumns ) )
    attributes[column.field] = value( mBatch.children[column.child], row, column );
  const ArrowArray *fids = mBatch.children[mFid];
  feature.setId( at<std::int64_t>( fids, 1, fids->offset + row ) );
  feature.setAttributes( attributes );
  feature.setGeometry( mGeometry < 0 ? QgsGeometry() : geometry( row ) );
  feature.setValid( true );
  return true;
}

QgsGeometry VbasArrowRows::Stream::geometry( std::int64_t row ) const
{
  const ArrowArray *array = mBatch.children[mGeometry];
  const std::int64_t i = array->offset + row;
  if ( isNull( array, i ) )
    return QgsGeometry();
  const std::int32_t begin = at<std::int32_t>( array, 1, i );
  const std::int32_t end = at<std::int32_t>( array, 1, i + 1 );
  OGRGeometryH ogr = nullptr;
  if ( begin < 0 || end < begin || OGR_G_CreateFromWkbEx( static_cast<const char *>( array->buffers[2] ) + begin, nullptr, &ogr, end - begin ) != OGRERR_NONE )
    throw QgsProcessingException(
      QObject::tr( "GDAL's stream of the records gave a geometry it cannot read back (feature id %1)." ).arg( at<std::int64_t>( mBatch.children[mFid], 1, mBatch.children[mFid]->offset + row ) ) );
  // Through an OGR geometry, as QGIS's provider reads each feature's (QgsOgrFeatureIterator): the same
  // conversion, and a geometry of one part made multipart where the layer's type is.
  QgsGeometry geometry = QgsOgrUtils::ogrGeometryToQgsGeometry( ogr );
  OGR_G_DestroyGeometry( ogr );
  if ( QgsWkbTypes::isMultiType( mSource.wkbType ) && !geometry.isMultipart() )
    geometry.convertToMultiType();
  return geometry;
}

std::optional<VbasArrowRows::Source> VbasArrowRows::plan( const QgsVectorLayer *layer, const QgsAttributeList &read, bool geometry, QString &why )
{
  if ( !layer || !layer->dataProvider() || layer->providerType() != QLatin1String( "ogr" ) )
  {
    why = QObject::tr( "its provider is not GDAL's (ogr)" );
    return std::nullopt;
  }
  if ( !layer->subsetString().isEmpty() )
    why = QObject::tr( "the layer has a subset string" );
  else if ( layer->isModified() )
    why = QObject::tr( "the layer has unsaved edits" );
  else if ( layer->storageType() == QLatin1String( "ESRI Shapefile" ) )
    why = QObject::tr( "QGIS may decode a shapefile's text itself, by the layer's encoding setting" );
  else if ( layer->dataProvider()->encoding() != QLatin1String( "UTF-8" ) )
    why = QObject::tr( "QGIS decodes its text as %1" ).arg( layer->dataProvider()->encoding() );
  else if ( geometry && layer->storageType() != QLatin1String( "GPKG" ) && layer->storageType() != QLatin1String( "GeoJSON" ) )
    why = QObject::tr( "GDAL's stream of points is used for GeoPackage and GeoJSON files only, where it was checked (GDAL 3.10's of a FlatGeobuf file "
                       "garbles a feature without a point)" );
  const QgsFields fields = layer->fields();
  for ( const int i : read )
    if ( why.isEmpty() && fields.fieldOrigin( i ) != vbasqgis::OriginProvider )
      why = QObject::tr( "its field '%1' is not the file's own (an expression or a join)" ).arg( fields.at( i ).name() );
  const QVariantMap parts = QgsProviderRegistry::instance()->decodeUri( layer->providerType(), layer->source() );
  if ( why.isEmpty() )
    why = partOfFile( parts );
  if ( !why.isEmpty() )
    return std::nullopt;
  return Source { parts.value( QStringLiteral( "path" ) ).toString(),
                  parts.value( QStringLiteral( "layerName" ) ).toString(),
                  parts.value( QStringLiteral( "layerId" ), 0 ).toInt(),
                  parts.value( QStringLiteral( "openOptions" ) ).toStringList(),
                  fields,
                  read,
                  geometry,
                  layer->dataProvider()->wkbType() };
}

std::unique_ptr<VbasArrowRows> VbasArrowRows::open( const Source &source, QString &why )
{
  CPLStringList options;
  for ( const QString &option : source.openOptions )
    options.AddString( option.toUtf8().constData() );
  GDALDatasetH dataset = GDALOpenEx( source.path.toUtf8().constData(), GDAL_OF_VECTOR | GDAL_OF_READONLY, nullptr, options.List(), nullptr );
  if ( !dataset )
  {
    why = QObject::tr( "GDAL could not open it: %1" ).arg( QString::fromUtf8( CPLGetLastErrorMsg() ) );
    return nullptr;
  }
  auto stream = std::make_unique<Stream>( dataset, source ); // closes the dataset on every path
  OGRLayerH layer = source.layerName.isEmpty() ? GDALDatasetGetLayer( dataset, source.layerId ) : GDALDatasetGetLayerByName( dataset, source.layerName.toUtf8().constData() );
  if ( !layer )
    why = QObject::tr( "GDAL does not find its layer" );
  else if ( OGR_L_GetFeatureCount( layer, FALSE ) == 0 )
    why = QObject::tr( "it has no rows" );
  if ( !why.isEmpty() || !stream->start( layer, why ) )
    return nullptr;
  return std::unique_ptr<VbasArrowRows>( new VbasArrowRows( std::move( stream ) ) );
}

VbasArrowRows::VbasArrowRows( std::unique_ptr<Stream> stream )
  : mStream( std::move( stream ) )
{
}

VbasArrowRows::~VbasArrowRows() = default;

bool VbasArrowRows::next( QgsFeature &feature )
{
  return mStream->next( feature );
}
