#include "plugin/inputs/vbasinputs.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/inputs/vbasarrowrows.h"
#include "plugin/inputs/vbasoverlaps.h"
#include "plugin/inputs/vbaspgrows.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbassecrets.h"
#include "plugin/support/vbasvaluecodec.h"

#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>
#include <qgsvectordataprovider.h>
#include <qgsvectorlayer.h>

#include <QDataStream>

#include <cmath>
#include <exception>
#include <future>
#include <map>
#include <utility>

namespace
{

constexpr int kMaxShown = 5; // unknown region ids shown in an error

//! The bytes of a QString's UTF-16 text, valid while the string lives.
std::string_view utf16( const QString &text )
{
  return std::string_view( reinterpret_cast<const char *>( text.utf16() ), static_cast<std::size_t>( text.size() ) * sizeof( QChar ) );
}

//! A projected CRS for distances: the layer's own, or the WGS 84 UTM zone of its centre.
QgsCoordinateReferenceSystem workingCrs( const QgsCoordinateReferenceSystem &crs, const QgsRectangle &extent, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  if ( !vbasHasSrs( crs ) )
  {
    feedback->pushWarning( QObject::tr( "The regions layer has no CRS: its coordinates are taken as planar." ) );
    return crs;
  }
  if ( !crs.isGeographic() )
    return crs;
  const QgsCoordinateReferenceSystem wgs84( QStringLiteral( "EPSG:4326" ) );
  const QgsPointXY centre = QgsCoordinateTransform( crs, wgs84, context.transformContext() ).transform( extent.center() );
  const int zone = std::clamp( static_cast<int>( std::floor( ( centre.x() + 180.0 ) / 6.0 ) ) + 1, 1, 60 );
  const QgsCoordinateReferenceSystem utm( QStringLiteral( "EPSG:%1" ).arg( ( centre.y() >= 0 ? 32600 : 32700 ) + zone ) );
  feedback->pushInfo( QObject::tr( "The regions layer has a geographic CRS (%1): distances are computed in %2 (%3)." ).arg( crs.authid(), utm.authid(), utm.description() ) );
  return utm;
}

//! The layer behind a source parameter, to tell where it lives and which fields are its identity.
QgsVectorLayer *layerOf( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context )
{
  QVariant value = parameters.value( name );
  if ( value.canConvert<QgsProcessingFeatureSourceDefinition>() )
    value = QVariant::fromValue( value.value<QgsProcessingFeatureSourceDefinition>().source );
  if ( value.canConvert<QgsProperty>() )
    value = value.value<QgsProperty>().valueAsString( context.expressionContext() );
  return QgsProcessingParameters::parameterAsVectorLayer( algorithm.parameterDefinition( name ), value, context );
}

//! Records without a region field must be points, and the regions polygons to locate them in.
void checkLocatable( const QgsFeatureSource &records, const QgsFeatureSource &regions )
{
  if ( !VbasPointLocator::locatable( records.wkbType() ) )
    throw QgsProcessingException( QObject::tr( "RECORD_REGION is empty, so the records are located by their points, but the records table has %1 geometry: give the region id field "
                                               "of the records (RECORD_REGION), or a point layer of records." )
                                    .arg( QgsWkbTypes::displayString( records.wkbType() ) ) );
  if ( QgsWkbTypes::geometryType( regions.wkbType() ) != vbasqgis::PolygonGeometry )
    throw QgsProcessingException( QObject::tr( "RECORD_REGION is empty, so the records are located by their points: the regions layer must have polygons to locate them in." ) );
}

//! Record rows that have no region: counted, the first few named for the message.
struct Unplaced
{
    std::int64_t rows = 0;
    QStringList shown;
    //! The region ids of the examples shown, as text (records read by region id).
    QStringList ids;

    void add( const QString &name, std::int64_t count = 1, const QVariant &id = QVariant() )
    {
      rows += count;
      if ( shown.size() < kMaxShown && !shown.contains( name ) )
      {
        shown.append( name );
        if ( !id.isNull() )
          ids.append( id.toString() );
      }
    }
    QString examples() const { return shown.join( QStringLiteral( ", " ) ); }
};

//! The rows of a group the source counted; throws when one of them has a count the streaming pass would refuse.
std::int64_t groupRows( const QgsAttributes &attributes, const VbasCountedRows &grouped )
{
  bool ok = false;
  const std::int64_t rows = attributes.at( grouped.rows ).toLongLong( &ok );
  if ( !ok || rows < 1 || attributes.at( grouped.bad ).toLongLong() != 0 )
    throw QgsProcessingException( QObject::tr( "a count that is not a whole number from 0 to %1" ).arg( kVbasMaxCount ) );
  return rows;
}

/**
 * The records of a group the source counted: its summed count as text, exact. Whole numbers are
 * read as they are; a sum of reals ("3.0") only up to 2^53, where a double is exact.
 */
std::int64_t groupRecords( const QgsAttributes &attributes, const VbasCountedRows &grouped )
{
  const QString text = attributes.at( grouped.roles.count ).toString();
  bool ok = false;
  const qlonglong whole = text.toLongLong( &ok );
  if ( ok && whole >= 0 )
    return whole;
  const double real = text.toDouble( &ok );
  if ( !ok || !( real >= 0 && real <= static_cast<double>( kVbasMaxCount ) ) || real != std::floor( real ) )
    throw QgsProcessingException( QObject::tr( "a sum of counts, %1, that is not exact" ).arg( text ) );
  return static_cast<std::int64_t>( real );
}

/**
 * A region lookup field that holds one value for the whole release (qi_levels, hierarchies): its
 * value on row f, refused when empty or not first, the first row's (empty before the first row).
 */
QString sameOnEveryRow( const QgsFeature &f, int index, const QString &region, const QString &first )
{
  const QString value = f.attribute( index ).toString();
  if ( value.isEmpty() || ( !first.isEmpty() && value != first ) )
    throw QgsProcessingException( QObject::tr( "The region lookup row of region '%1' has %2 '%3', not the first row's ('%4'): every row of one release has the same." )
                                    .arg( region, f.fields().at( index ).name(), value, first.isEmpty() ? value : first ) );
  return value;
}

//! A region id as a message shows it.
QString shown( const QVariant &value )
{
  return value.isNull() ? QStringLiteral( "NULL" ) : QStringLiteral( "'%1'" ).arg( value.toString() );
}

//! sum += count, refused when the sum passes what a 64-bit count holds.
void addCount( std::int64_t &sum, std::int64_t count, std::int64_t row, QgsFeatureId id )
{
  if ( __builtin_add_overflow( sum, count, &sum ) )
    throw QgsProcessingException(
      QObject::tr( "%1: the counts add up to more than %2 records, the most a 64-bit count holds." ).arg( VbasRecordReader::rowName( row, id ) ).arg( std::numeric_limits<std::int64_t>::max() ) );
}

//! Why the processing input value reads part of its layer (a selection, a feature limit, a filter), or nothing.
QString partOfLayer( const QVariant &value )
{
  if ( !value.canConvert<QgsProcessingFeatureSourceDefinition>() )
    return QString();
  const QgsProcessingFeatureSourceDefinition definition = value.value<QgsProcessingFeatureSourceDefinition>();
  if ( definition.selectedFeaturesOnly )
    return QObject::tr( "the input is the layer's selected features" );
  if ( definition.featureLimit >= 0 )
    return QObject::tr( "the input has a feature limit" );
#if _QGIS_VERSION_INT >= 33200
  if ( !definition.filterExpression.isEmpty() )
    return QObject::tr( "the input has a filter" );
#endif
  return QString();
}

//! The count of the records by their source, or why not: the whole table only (no selection, limit or filter).
std::optional<VbasGroupedCount> planGrouped( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const VbasRecordFields &roles,
                                             const QgsAttributeList &identity, QString &why )
{
  why = partOfLayer( parameters.value( QStringLiteral( "RECORDS" ) ) );
  if ( !why.isEmpty() )
    return std::nullopt;
  const QgsVectorLayer *layer = layerOf( algorithm, parameters, QStringLiteral( "RECORDS" ), context );
  if ( !layer )
  {
    why = QObject::tr( "the records are no layer" );
    return std::nullopt;
  }
  return VbasGroupedCount::plan( *layer, roles, identity, why );
}

//! A value as the class keys take it: its type and bytes (QVariant's == takes alike doubles as equal).
QByteArray exactly( const QVariant &value )
{
  QByteArray bytes;
  QDataStream out( &bytes, QIODevice::WriteOnly );
  out << value;
  return bytes;
}

/**
 * The test suites' check of the stream (VBAS_COMPARE_READERS, docs/development.md): each row it gives
 * is compared with QGIS's reading of it, by feature id, by the type and bytes of each read field and by its geometry's WKB.
 */
VbasRows sameAsQgis( const VbasRows &streamed, const QString &reader, QgsFeatureIterator qgis, const QgsAttributeList &read )
{
  return [streamed, reader, qgis, read, row = std::int64_t( 0 )]( QgsFeature &f ) mutable {
    QgsFeature expected;
    const bool more = streamed( f );
    if ( more != qgis.nextFeature( expected ) )
      throw QgsProcessingException( QObject::tr( "%1 and QGIS give different numbers of records rows (%2 and more)." ).arg( reader ).arg( row ) );
    ++row;
    for ( const int i : read )
      if ( more && ( f.id() != expected.id() || exactly( f.attribute( i ) ) != exactly( expected.attribute( i ) ) ) )
        throw QgsProcessingException( QObject::tr( "%1 and QGIS read record row %2 apart (field %3)." ).arg( reader ).arg( row ).arg( i ) );
    if ( more && ( f.hasGeometry() != expected.hasGeometry() || f.geometry().asWkb() != expected.geometry().asWkb() ) )
      throw QgsProcessingException( QObject::tr( "%1 and QGIS read record row %2 apart (its geometry)." ).arg( reader ).arg( row ) );
    return more;
  };
}

/**
 * How the records of layer are read without QGIS: PostgreSQL's COPY for a PostgreSQL table (not its
 * geometry: located records are read through QGIS), GDAL's column stream for a file; or nothing and why not.
 */
std::optional<VbasStreamedRows> streamedRows( const QgsVectorLayer *layer, const QgsAttributeList &read, bool located, QString &why )
{
  if ( layer && layer->providerType() == QLatin1String( "postgres" ) )
  {
    if ( !located )
      return VbasPgRows::plan( layer, read, why );
    why = QObject::tr( "the records are located by their points" );
    return std::nullopt;
  }
  const std::optional<VbasArrowRows::Source> source = VbasArrowRows::plan( layer, read, located, why );
  if ( !source )
    return std::nullopt;
  return VbasStreamedRows { QObject::tr( "GDAL's column stream" ), read, [source = *source]( QString &why ) {
                             const std::shared_ptr<VbasArrowRows> rows = VbasArrowRows::open( source, why );
                             return rows ? VbasRows( [rows]( QgsFeature &f ) { return rows->next( f ); } ) : VbasRows();
                           } };
}

bool isTextOrNumber( vbasqgis::FieldType type )
{
  return type == vbasqgis::Field::String || type == vbasqgis::Field::Int || type == vbasqgis::Field::UInt || type == vbasqgis::Field::LongLong || type == vbasqgis::Field::ULongLong
         || type == vbasqgis::Field::Double;
}

} // namespace

void vbasCheckFiniteNumbers( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  for ( const QgsProcessingParameterDefinition *definition : algorithm.parameterDefinitions() )
  {
    const QVariant value = parameters.value( definition->name() );
    if ( !dynamic_cast<const QgsProcessingParameterNumber *>( definition ) || !value.isValid() || value.isNull() || value.toString().isEmpty() )
      continue;
    const double number = QgsProcessingParameters::parameterAsDouble( definition, parameters, context );
    if ( !std::isfinite( number ) )
      throw QgsProcessingException( QObject::tr( "%1 must be a finite number (%1 = %2)." ).arg( definition->name(), value.toString() ) );
  }
}

std::optional<std::uint32_t> VbasRegions::find( const QVariant &id ) const
{
  QString key;
  if ( id.isNull() || !VbasValueCodec::regionKey( id, key ).isEmpty() )
    return std::nullopt;
  return index.find( utf16( key ) );
}

const QgsVectorLayer *vbasSourceLayer( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context )
{
  return layerOf( algorithm, parameters, name, context );
}

QgsAttributeList vbasIdentityFields( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context )
{
  const QgsVectorLayer *layer = layerOf( algorithm, parameters, name, context );
  return layer && layer->dataProvider() ? layer->dataProvider()->pkAttributeIndexes() : QgsAttributeList();
}

std::unique_ptr<QgsProcessingFeatureSource> vbasSource( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context,
                                                        QList<VbasLocation> &locations )
{
  std::unique_ptr<QgsProcessingFeatureSource> source( QgsProcessingParameters::parameterAsSource( algorithm.parameterDefinition( name ), parameters, context ) );
  if ( !source )
    throw QgsProcessingException( QObject::tr( "Could not load the layer of %1 (%2)." ).arg( name, VbasSecrets::withoutPasswords( parameters.value( name ).toString() ) ) );
  locations << VbasLocation::of( name, layerOf( algorithm, parameters, name, context ) );
  return source;
}

void VbasInputs::prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  const auto has = [&]( const QString &name ) { return algorithm.parameterDefinition( name ) != nullptr; };
  const auto text = [&]( const QString &name ) { return has( name ) ? QgsProcessingParameters::parameterAsString( algorithm.parameterDefinition( name ), parameters, context ) : QString(); };
  const auto fields = [&]( const QString &name ) { return has( name ) ? vbasqgis::parameterAsFields( algorithm.parameterDefinition( name ), parameters, context ) : QStringList(); };

  vbasCheckFiniteNumbers( algorithm, parameters, context );
  mRegions = vbasSource( algorithm, parameters, QStringLiteral( "REGIONS" ), context, mLocations );
  mStoredRegions = VbasStoredTable::of( layerOf( algorithm, parameters, QStringLiteral( "REGIONS" ), context ) );
  mRegionIdField = text( QStringLiteral( "REGION_ID" ) );
  const int idIndex = mRegions->fields().lookupField( mRegionIdField );
  if ( idIndex < 0 )
    throw QgsProcessingException( QObject::tr( "The regions layer has no field '%1' (region id field, REGION_ID)." ).arg( mRegionIdField ) );
  if ( !isTextOrNumber( mRegions->fields().at( idIndex ).type() ) )
    throw QgsProcessingException( QObject::tr( "The region id field '%1' is of type %2: region ids must be text or numbers." ).arg( mRegionIdField, mRegions->fields().at( idIndex ).typeName() ) );
  mPopulationField = text( QStringLiteral( "POPULATION_FIELD" ) );
  if ( !mPopulationField.isEmpty() && mRegions->fields().lookupField( mPopulationField ) < 0 )
    throw QgsProcessingException( QObject::tr( "The regions layer has no population field '%1'." ).arg( mPopulationField ) );
  if ( !mPopulationField.isEmpty() && mRegions->fields().lookupField( mPopulationField ) == idIndex )
    throw QgsProcessingException( QObject::tr( "The population field '%1' is also the region id field: a field has one role." ).arg( mPopulationField ) );
  const vbasqgis::GeometryType regionType = QgsWkbTypes::geometryType( mRegions->wkbType() );
  if ( regionType != vbasqgis::PolygonGeometry && regionType != vbasqgis::PointGeometry )
    throw QgsProcessingException( QObject::tr( "The regions layer has %1 geometry: regions must be polygons (or points, one per region)." ).arg( QgsWkbTypes::displayString( mRegions->wkbType() ) ) );
  if ( has( QStringLiteral( "REGION_POINT" ) ) )
    mRegionPoint = QgsProcessingParameters::parameterAsEnum( algorithm.parameterDefinition( QStringLiteral( "REGION_POINT" ) ), parameters, context );

  mRecords = vbasSource( algorithm, parameters, QStringLiteral( "RECORDS" ), context, mLocations );
  mStoredRecords = VbasStoredTable::of( layerOf( algorithm, parameters, QStringLiteral( "RECORDS" ), context ) );
  mRecordFiles = VbasUnchangedFiles::of( layerOf( algorithm, parameters, QStringLiteral( "RECORDS" ), context ) );
  mQiNames = fields( QStringLiteral( "QI_FIELDS" ) );
  const QgsProcessingParameterDefinition *qis = algorithm.parameterDefinition( QStringLiteral( "QI_FIELDS" ) );
  if ( qis && !( qis->flags() & vbasqgis::ParameterOptional ) && mQiNames.isEmpty() )
    throw QgsProcessingException( QObject::tr( "Choose at least one quasi-identifier field (QI_FIELDS)." ) );
  const QStringList released = fields( QStringLiteral( "RELEASE_FIELDS" ) );
  const QgsAttributeList identity = vbasIdentityFields( algorithm, parameters, QStringLiteral( "RECORDS" ), context );
  const QString recordRegion = text( QStringLiteral( "RECORD_REGION" ) );
  if ( recordRegion.isEmpty() )
    checkLocatable( *mRecords, *mRegions );
  mDropOutside = has( QStringLiteral( "OUTSIDE_POINTS" ) ) && QgsProcessingParameters::parameterAsEnum( algorithm.parameterDefinition( QStringLiteral( "OUTSIDE_POINTS" ) ), parameters, context ) == 1;
  mTransformContext = context.transformContext();
  mRelease = has( QStringLiteral( "RELEASE_FIELDS" ) );
  mRecordFields = VbasRecordReader::resolve( mRecords->fields(), recordRegion, mQiNames, text( QStringLiteral( "COUNT_FIELD" ) ), released, identity, text( QStringLiteral( "SENSITIVE_FIELD" ) ) );
  for ( int q = 0; q < mQiNames.size(); ++q )
    mQiNames[q] = mRecords->fields().at( mRecordFields.qis[q] ).name(); // the field's own name, however QI_FIELDS spelled it (any letter case)
  if ( ( mNotStreamed = partOfLayer( parameters.value( QStringLiteral( "RECORDS" ) ) ) ).isEmpty() )
    mStreamed = streamedRows( layerOf( algorithm, parameters, QStringLiteral( "RECORDS" ), context ), mRelease ? mRecordFields.read() : mRecordFields.counted(), recordRegion.isEmpty(), mNotStreamed );
  // Counting row by row is said only to a user who asked the source to count (GROUP_IN_SOURCE), with why.
  if ( !has( QStringLiteral( "GROUP_IN_SOURCE" ) ) || !QgsProcessingParameters::parameterAsBoolean( algorithm.parameterDefinition( QStringLiteral( "GROUP_IN_SOURCE" ) ), parameters, context ) )
    mNotGrouped.clear();
  else if ( mRelease )
    mNotGrouped = QObject::tr( "the release is written from the rows read, which a count by the source does not give" );
  else if ( mRecordFields.count >= 0 && mRecords->fields().at( mRecordFields.count ).type() == vbasqgis::Field::String )
    mNotGrouped = QObject::tr( "the count field is text, whose every value must be plain digits" );
  else
    mGrouped = planGrouped( algorithm, parameters, context, mRecordFields, identity, mNotGrouped );
  // SITES and LOOKUP are inputs of some algorithms, a number or an output of others.
  const auto isSource = [&]( const QString &name ) { return has( name ) && algorithm.parameterDefinition( name )->type() == QgsProcessingParameterFeatureSource::typeName(); };
  if ( isSource( QStringLiteral( "SITES" ) ) )
    mSites = vbasSource( algorithm, parameters, QStringLiteral( "SITES" ), context, mLocations );
  if ( isSource( QStringLiteral( "LOOKUP" ) ) )
    mLookup = vbasSource( algorithm, parameters, QStringLiteral( "LOOKUP" ), context, mLocations );
}

QgsFields VbasInputs::regionFields() const
{
  return mRegions->fields();
}

std::vector<std::string> VbasInputs::regionValues( const VbasRegions &regions, const QString &field ) const
{
  const int index = mRegions->fields().lookupField( field );
  if ( index < 0 )
    throw QgsProcessingException( QObject::tr( "The regions have no field %1." ).arg( field ) );
  std::vector<std::string> values( regions.points.size() );
  QgsFeatureRequest request;
  request.setFlags( vbasqgis::NoGeometry ).setSubsetOfAttributes( QgsAttributeList { mRegions->fields().lookupField( mRegionIdField ), index } );
  QgsFeatureIterator features = mRegions->getFeatures( request );
  for ( QgsFeature feature; features.nextFeature( feature ); )
    if ( const std::optional<std::uint32_t> r = regions.find( feature.attribute( mRegionIdField ) ) )
    {
      const QVariant value = feature.attribute( index );
      values[*r] = value.isNull() ? std::string( 1, '\0' ) : value.toString().toStdString(); // a NULL: a zero byte, which no text of the layer holds
    }
  return values;
}

vbasqgis::WkbType VbasInputs::regionsWkbType() const
{
  return mRegions->wkbType();
}

QgsCoordinateReferenceSystem VbasInputs::regionsCrs() const
{
  return mRegions->sourceCrs();
}

VbasRegions VbasInputs::readRegions( QgsProcessingContext &context, QgsProcessingFeedback *feedback ) const
{
  VbasRegions regions;
  const QgsFields fields = mRegions->fields();
  const int idIndex = fields.lookupField( mRegionIdField );
  const int populationIndex = mPopulationField.isEmpty() ? -1 : fields.lookupField( mPopulationField );
  regions.crs = mRegions->sourceCrs();
  regions.workingCrs = workingCrs( regions.crs, mRegions->sourceExtent(), context, feedback );
  if ( vbasHasSrs( regions.crs ) )
    regions.toWorking = QgsCoordinateTransform( regions.crs, regions.workingCrs, context.transformContext() );
  if ( mStoredRegions )
    mStoredRegions->check( fields, populationIndex >= 0 ? QgsAttributeList { idIndex, populationIndex } : QgsAttributeList { idIndex }, QObject::tr( "Region" ) );

  const long long count = mRegions->featureCount();
  QgsFeatureIterator it = mRegions->getFeatures( QgsFeatureRequest(), vbasqgis::SkipGeometryValidityChecks );
  QgsFeature f;
  int repaired = 0;
  QgsRectangle extent;
  while ( it.nextFeature( f ) )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    const QVariant id = f.attribute( idIndex );
    if ( id.isNull() )
      throw QgsProcessingException( QObject::tr( "Region with feature id %1 has a NULL id in '%2'." ).arg( f.id() ).arg( mRegionIdField ) );
    QString idKey;
    const QString reason = VbasValueCodec::regionKey( id, idKey );
    if ( !reason.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Region with feature id %1: its id in '%2' is %3." ).arg( f.id() ).arg( mRegionIdField, reason ) );
    if ( regions.index.find( utf16( idKey ) ) )
      throw QgsProcessingException( QObject::tr( "The region id '%1' appears more than once in '%2': region ids must be unique." ).arg( idKey, mRegionIdField ) );
    QgsGeometry geometry = f.geometry();
    if ( geometry.isNull() || geometry.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Region '%1' has no geometry." ).arg( idKey ) );
    if ( geometry.type() == vbasqgis::PolygonGeometry && !geometry.isGeosValid() )
    {
      geometry = geometry.makeValid();
      ++repaired;
    }
    const QgsGeometry point = mRegionPoint == 1 ? geometry.pointOnSurface() : geometry.centroid();
    if ( point.isNull() )
      throw QgsProcessingException( QObject::tr( "Region '%1': its region point could not be computed." ).arg( idKey ) );
    QgsPointXY p = point.asPoint();
    QgsGeometry working = geometry;
    try
    {
      p = regions.toWorking.transform( p );
      working.transform( regions.toWorking );
    }
    catch ( QgsCsException & )
    {
      throw QgsProcessingException( QObject::tr( "Region '%1' could not be transformed to %2." ).arg( idKey, regions.workingCrs.authid() ) );
    }
    extent.combineExtentWith( working.boundingBox() );
    if ( populationIndex >= 0 )
    {
      bool ok = false;
      const QVariant given = f.attribute( populationIndex );
      if ( given.isNull() )
        throw QgsProcessingException( QObject::tr( "Region '%1': the population field '%2' is NULL. Give every region its population (0 for none), or leave "
                                                   "POPULATION_FIELD empty to use the records per region." )
                                        .arg( idKey, mPopulationField ) );
      const double population = given.toDouble( &ok );
      if ( !ok || population < 0 || !std::isfinite( population ) )
        throw QgsProcessingException(
          QObject::tr( "Region '%1': the population field '%2' holds '%3', not a number >= 0." ).arg( idKey, mPopulationField, f.attribute( populationIndex ).toString() ) );
      regions.population.push_back( population );
    }
    regions.index.insert( utf16( idKey ) );
    regions.ids.append( id );
    regions.geometries.append( geometry );
    regions.points.push_back( { p.x(), p.y() } );
    if ( count > 0 )
      feedback->setProgress( 100.0 * static_cast<double>( regions.ids.size() ) / static_cast<double>( count ) );
  }
  if ( regions.ids.isEmpty() )
    throw QgsProcessingException( QObject::tr( "The regions layer is empty." ) );
  if ( repaired > 0 )
    feedback->pushWarning( QObject::tr( "%n invalid region polygon(s) repaired with make valid.", nullptr, repaired ) );
  vbasCheckNoOverlaps( regions.geometries, regions.ids, feedback );
  regions.extent = { extent.xMinimum(), extent.yMinimum(), extent.xMaximum(), extent.yMaximum() };
  return regions;
}

VbasRegionsAndRecords VbasInputs::readRegionsAndRecords( QgsProcessingContext &context, QgsProcessingMultiStepFeedback &steps, QgsProcessingFeedback *feedback ) const
{
  VbasInterrupt::throwIfCanceled( feedback );
  VbasRegions regions = readRegions( context, &steps );
  steps.setCurrentStep( 1 );
  VbasRecords records = readRecords( regions, &steps );
  return { std::move( regions ), std::move( records ) };
}

void VbasInputs::keepForRelease( const QString &scratchPrefix, std::size_t memoryBudget )
{
  mScratchPrefix = scratchPrefix;
  mMemoryBudget = memoryBudget;
}

VbasRecords VbasInputs::readRecords( const VbasRegions &regions, QgsProcessingFeedback *feedback ) const
{
  const QVector<VbasUnchangedFiles::Stamp> files = mRecordFiles.stamps();
  if ( mGrouped )
  {
    checkStoredRecords();
    try
    {
      const VbasCountedRows groups = mGrouped->groups();
      feedback->pushInfo( QObject::tr( "The records are counted by their %1 source (GROUP BY region and QIs)." ).arg( mGrouped->sourceName() ) );
      return count( regions, groups, feedback );
    }
    catch ( const QgsProcessingException &e )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      feedback->pushInfo( QObject::tr( "The %1 source did not count the records (%2): they are counted row by row." ).arg( mGrouped->sourceName(), e.what() ) );
    }
  }
  else if ( !mNotGrouped.isEmpty() )
    feedback->pushInfo( QObject::tr( "The records are counted row by row: %1." ).arg( mNotGrouped ) );
  VbasCountedRows rows;
  rows.fields = mRecords->fields();
  rows.roles = mRecordFields;
  QgsFeatureRequest request;
  request.setFlags( mRecordFields.region < 0 ? vbasqgis::WithGeometry : vbasqgis::NoGeometry ).setSubsetOfAttributes( mRelease ? mRecordFields.read() : mRecordFields.counted() );
  rows.next = recordRows( request, feedback );
  rows.expected = mRecords->featureCount();
  try
  {
    VbasRecords records = mGrouped ? count( regions, rows, feedback ) : countBesideCheck( regions, rows, feedback );
    mRecordFiles.checkUnchanged( files );
    return records;
  }
  catch ( const QgsProcessingException & )
  {
    mRecordFiles.checkUnchanged( files ); // a refusal of a row that an edit made during the read is said as the edit
    throw;
  }
}

std::function<bool( QgsFeature & )> VbasInputs::recordRows( const QgsFeatureRequest &request, QgsProcessingFeedback *feedback ) const
{
  QString why = mNotStreamed;
  const VbasRows streamed = mStreamed ? mStreamed->open( why ) : VbasRows();
  const auto qgisRows = [&] { return mRecords->getFeatures( request, vbasqgis::SkipGeometryValidityChecks ); };
  if ( !streamed )
  {
    feedback->pushInfo( QObject::tr( "The records are read through QGIS: %1." ).arg( why ) );
    return [it = qgisRows()]( QgsFeature &f ) mutable { return it.nextFeature( f ); };
  }
  feedback->pushInfo( QObject::tr( "The records are read through %1." ).arg( mStreamed->reader ) );
  if ( qEnvironmentVariableIsSet( "VBAS_COMPARE_READERS" ) )
    return sameAsQgis( streamed, mStreamed->reader, qgisRows(), mStreamed->read );
  return streamed;
}

void VbasInputs::checkStoredRecords() const
{
  if ( mStoredRecords )
    mStoredRecords->check( mRecords->fields(), mRecordFields.read(), QObject::tr( "Record" ) );
}

VbasRecords VbasInputs::countBesideCheck( const VbasRegions &regions, const VbasCountedRows &rows, QgsProcessingFeedback *feedback ) const
{
  // The stored values are checked through a connection of their own, on the other core, while QGIS reads the rows here.
  std::future<void> checked = std::async( std::launch::async, [this] { checkStoredRecords(); } );
  std::optional<VbasRecords> records;
  std::exception_ptr failed;
  try
  {
    records.emplace( count( regions, rows, feedback ) );
  }
  catch ( ... )
  {
    failed = std::current_exception();
  }
  checked.get(); // a stored value refused is said first, as when the check ran before the count
  if ( failed )
    std::rethrow_exception( failed );
  return std::move( *records );
}

QString VbasInputs::regionIdHint( const QStringList &ids ) const
{
  // Read again only on this refusal; a regions layer is small beside its records.
  if ( ids.isEmpty() )
    return QString();
  const QgsFields fields = mRegions->fields();
  const int distinct = QSet<QString>( ids.begin(), ids.end() ).size();
  QVector<QSet<QString>> found( fields.count() );
  QgsFeature f;
  QgsFeatureIterator it = mRegions->getFeatures( QgsFeatureRequest().setFlags( vbasqgis::NoGeometry ), vbasqgis::SkipGeometryValidityChecks );
  while ( it.nextFeature( f ) )
    for ( int i = 0; i < fields.count(); ++i )
      if ( ids.contains( f.attribute( i ).toString() ) )
        found[i].insert( f.attribute( i ).toString() );
  for ( int i = 0; i < fields.count(); ++i )
    if ( fields.at( i ).name() != mRegionIdField && isTextOrNumber( fields.at( i ).type() ) && found[i].size() == distinct )
      return QObject::tr( " The regions' field '%1' holds these ids: choose it as the region id field (REGION_ID)." ).arg( fields.at( i ).name() );
  return QString();
}

VbasRecords VbasInputs::count( const VbasRegions &regions, const VbasCountedRows &rows, QgsProcessingFeedback *feedback ) const
{
  VbasRecordReader reader( rows.fields, rows.roles );
  VbasRecords records( static_cast<std::size_t>( mRecordFields.qis.size() ) );
  if ( rows.roles.region < 0 )
  {
    if ( !vbasHasSrs( mRecords->sourceCrs() ) && vbasHasSrs( regions.crs ) )
      feedback->pushWarning(
        QObject::tr( "The records layer has no CRS: its points are taken in the regions' CRS (%1)." ).arg( regions.crs.authid().isEmpty() ? regions.crs.description() : regions.crs.authid() ) );
    records.locator = std::make_shared<VbasPointLocator>( regions, mRecords->sourceCrs(), mTransformContext );
    records.dropOutside = mDropOutside;
  }
  if ( mRelease && !rows.grouped() )
  {
    if ( mScratchPrefix.isEmpty() ) // keepForRelease() not called: the rows would spill into the working folder
      throw QgsProcessingException( QObject::tr( "The rows read have no place beside the release: nothing was written. This is a fault of the plugin: please report it." ) );
    records.spool = std::make_shared<VbasReleaseSpool>( mScratchPrefix, mMemoryBudget, mRecordFields.released );
  }
  vbas::HistogramBuilder builder( static_cast<std::size_t>( regions.ids.size() ) );
  vbas::QiEncoder sensitiveValues( 1 );
  vbas::SensitivePairs pairs; // with a sensitive field the histograms count (class, value) pairs, merged to classes at the end

  const double step = rows.expected > 0 ? 100.0 / static_cast<double>( rows.expected ) : 0;
  std::int64_t total = 0;
  std::int64_t outsideRows = 0;
  std::int64_t read = 0; // rows or groups
  Unplaced unplaced;
  QgsFeature f;
  while ( rows.next( f ) )
  {
    if ( ( read++ & 0xfff ) == 0 )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      feedback->setProgress( static_cast<double>( read ) * step );
    }
    const QgsAttributes attributes = f.attributes();
    const std::int64_t rowsHere = rows.grouped() ? groupRows( attributes, rows ) : 1;
    records.rows += rowsHere;
    const std::optional<std::uint32_t> region = records.locator ? records.locator->locate( f.geometry(), records.rows, f.id() ) : regions.find( reader.region( attributes ) );
    const auto recordsHere = [&] { return rows.grouped() ? groupRecords( attributes, rows ) : reader.count( attributes, records.rows, f.id() ); };
    if ( !region && records.dropOutside )
    {
      ++outsideRows;
      addCount( records.outside, recordsHere(), records.rows, f.id() );
      continue;
    }
    if ( !region )
    {
      if ( records.locator )
        unplaced.add( VbasRecordReader::rowName( records.rows, f.id() ), rowsHere );
      else
      {
        const QVariant id = reader.region( attributes );
        unplaced.add( shown( id ), rowsHere, id );
      }
      continue;
    }
    const std::int64_t count = recordsHere();
    addCount( total, count, records.rows, f.id() );
    const std::uint32_t cls = reader.addClass( attributes, records.encoder, records.rows, f.id() );
    builder.add( *region, mRecordFields.sensitive < 0 ? cls : pairs.id( cls, reader.addSensitive( attributes, sensitiveValues, records.rows, f.id() ) ), count );
    if ( records.spool && count > 0 )
      records.spool->add( *region, cls, count, attributes );
  }
  VbasInterrupt::throwIfCanceled( feedback );
  if ( unplaced.rows > 0 && records.locator )
    throw QgsProcessingException( QObject::tr( "%1 record row(s) lie outside every region of the regions layer or have no point: %2. Correct their points, or set "
                                               "OUTSIDE_POINTS to drop them with a warning." )
                                    .arg( unplaced.rows )
                                    .arg( unplaced.examples() ) );
  if ( unplaced.rows > 0 )
    throw QgsProcessingException( QObject::tr( "%1 record(s) have a region id (field '%2') that is not in the regions layer's '%3', for example %4.%5" )
                                    .arg( unplaced.rows )
                                    .arg( mRecords->fields().at( mRecordFields.region ).name(), mRegionIdField, unplaced.examples(), regionIdHint( unplaced.ids ) ) );
  if ( records.rows == 0 )
    throw QgsProcessingException( QObject::tr( "The records table is empty." ) );
  if ( outsideRows > 0 )
    feedback->pushWarning( QObject::tr( "%1 record(s) in %2 row(s) lie outside every region or have no point: dropped (OUTSIDE_POINTS). They are neither released nor counted as suppressed." )
                             .arg( records.outside )
                             .arg( outsideRows ) );
  for ( int q = 0; q < mQiNames.size(); ++q )
    if ( reader.nulls()[q] > 0 )
      feedback->pushInfo( QObject::tr( "QI field '%1' is NULL in %2 %3: NULL is treated as a category of its own." )
                            .arg( mQiNames[q] )
                            .arg( reader.nulls()[q] )
                            .arg( rows.grouped() ? QObject::tr( "group(s) of records" ) : QObject::tr( "record(s)" ) ) );
  if ( mRecordFields.sensitive < 0 )
    records.histograms = builder.build();
  else
  {
    records.sensitive = pairs.finish( builder.build(), sensitiveValues.categoryCount( 0 ) );
    records.histograms = records.sensitive->classHistograms();
  }
  if ( total == 0 )
    throw QgsProcessingException( QObject::tr( "The records table holds no records: every count is 0." ) );
  feedback->pushInfo(
    QObject::tr( "Read %1 record rows (%2 records) in %3 regions, %4 equivalence classes." ).arg( records.rows ).arg( total ).arg( regions.ids.size() ).arg( records.encoder.classCount() ) );
  return records;
}

VbasSites VbasInputs::readSites( const VbasRegions &regions, QgsProcessingContext &context ) const
{
  const QString kSiteId = QStringLiteral( "site_id" );
  const int idIndex = mSites->fields().lookupField( kSiteId );
  const QgsCoordinateTransform toWorking( mSites->sourceCrs(), regions.workingCrs, context.transformContext() );
  std::vector<std::pair<qlonglong, vbas::Point>> sites;
  QgsFeatureIterator it = mSites->getFeatures( QgsFeatureRequest().setSubsetOfAttributes( idIndex >= 0 ? QgsAttributeList { idIndex } : QgsAttributeList() ) );
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    qlonglong id = static_cast<qlonglong>( sites.size() + 1 );
    if ( idIndex >= 0 )
    {
      bool ok = false;
      id = f.attribute( idIndex ).toLongLong( &ok );
      if ( !ok )
        throw QgsProcessingException( QObject::tr( "Site with feature id %1: '%2' holds '%3', not a whole number." ).arg( f.id() ).arg( kSiteId, f.attribute( idIndex ).toString() ) );
    }
    const QgsGeometry geometry = f.geometry();
    if ( geometry.isNull() || geometry.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Site %1 has no geometry." ).arg( id ) );
    QgsPointXY p = geometry.centroid().asPoint();
    try
    {
      p = toWorking.transform( p );
    }
    catch ( QgsCsException & )
    {
      throw QgsProcessingException( QObject::tr( "Site %1 could not be transformed to %2." ).arg( id ).arg( regions.workingCrs.authid() ) );
    }
    sites.push_back( { id, { p.x(), p.y() } } );
  }
  if ( sites.empty() )
    throw QgsProcessingException( QObject::tr( "The sites layer is empty." ) );
  std::stable_sort( sites.begin(), sites.end(), []( const auto &a, const auto &b ) { return a.first < b.first; } );
  VbasSites result;
  for ( const auto &[id, point] : sites )
  {
    if ( !result.ids.empty() && result.ids.back() == id )
      throw QgsProcessingException( QObject::tr( "The site id %1 appears more than once in the sites layer's '%2'." ).arg( id ).arg( kSiteId ) );
    result.ids.push_back( id );
    result.points.push_back( point );
  }
  return result;
}

VbasLookup VbasInputs::readLookup( const VbasRegions &regions, const VbasSites &sites, QgsProcessingFeedback *feedback ) const
{
  const QgsFields fields = mLookup->fields();
  const int regionIndex = fields.lookupField( QStringLiteral( "region_id" ) );
  const int aggregateIndex = fields.lookupField( QStringLiteral( "aggregate_id" ) );
  const int siteIndex = fields.lookupField( QStringLiteral( "site_id" ) );
  const int levelsIndex = fields.lookupField( QStringLiteral( "qi_levels" ) );
  const int hierarchiesIndex = fields.lookupField( QStringLiteral( "hierarchies" ) );
  if ( regionIndex < 0 || aggregateIndex < 0 || siteIndex < 0 )
    throw QgsProcessingException( QObject::tr( "The region lookup needs the fields region_id, aggregate_id and site_id." ) );
  const std::size_t regionCount = static_cast<std::size_t>( regions.ids.size() );
  std::vector<qlonglong> regionLookupId( regionCount );
  std::vector<bool> seen( regionCount, false );
  std::map<qlonglong, std::size_t> lookupIndex;
  VbasLookup lookup;
  lookup.regionSites.resize( regionCount );
  QgsFeatureIterator it = mLookup->getFeatures( QgsFeatureRequest().setFlags( vbasqgis::NoGeometry ) );
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    const QString region = f.attribute( regionIndex ).toString();
    const std::optional<std::uint32_t> r = regions.find( f.attribute( regionIndex ) );
    if ( !r )
      throw QgsProcessingException( QObject::tr( "The region lookup names region '%1', which is not in the regions layer." ).arg( region ) );
    if ( seen[*r] )
      throw QgsProcessingException( QObject::tr( "The region lookup names region '%1' more than once." ).arg( region ) );
    bool okAggregate = false, okSite = false;
    const qlonglong lookupId = f.attribute( aggregateIndex ).toLongLong( &okAggregate );
    const qlonglong siteId = f.attribute( siteIndex ).toLongLong( &okSite );
    const auto site = std::lower_bound( sites.ids.begin(), sites.ids.end(), siteId );
    if ( !okAggregate || !okSite || site == sites.ids.end() || *site != siteId )
      throw QgsProcessingException( QObject::tr( "The region lookup row of region '%1' has no valid aggregate_id or a site_id that is not in the sites layer." ).arg( region ) );
    if ( levelsIndex >= 0 )
      lookup.qiLevels = sameOnEveryRow( f, levelsIndex, region, lookup.qiLevels );
    if ( hierarchiesIndex >= 0 )
      lookup.hierarchies = sameOnEveryRow( f, hierarchiesIndex, region, lookup.hierarchies.value_or( QString() ) );
    seen[*r] = true;
    regionLookupId[*r] = lookupId;
    lookupIndex.emplace( lookupId, 0 );
    lookup.regionSites[*r] = sites.points[static_cast<std::size_t>( site - sites.ids.begin() )];
  }
  const auto missing = std::find( seen.begin(), seen.end(), false );
  if ( missing != seen.end() )
    throw QgsProcessingException( QObject::tr( "Region '%1' has no row in the region lookup." ).arg( regions.ids[static_cast<int>( missing - seen.begin() )].toString() ) );
  std::size_t index = 0;
  for ( auto &entry : lookupIndex )
    entry.second = index++;
  for ( const qlonglong id : regionLookupId )
    lookup.regionAggregate.push_back( lookupIndex[id] );
  return lookup;
}
