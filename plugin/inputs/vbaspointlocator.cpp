#include "plugin/inputs/vbaspointlocator.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbasrecordreader.h"

#include <qgsexception.h>
#include <qgspoint.h>

#include <numeric>

namespace
{

//! Region ids ordered as their values: numbers as numbers, text by its code units (not by locale, so every machine agrees).
bool lowerId( const QVariant &a, const QVariant &b )
{
  if ( a.userType() == QMetaType::QString || b.userType() == QMetaType::QString )
    return a.toString() < b.toString();
  if ( a.userType() == QMetaType::Double || b.userType() == QMetaType::Double )
    return a.toDouble() < b.toDouble();
  if ( a.userType() == QMetaType::ULongLong || b.userType() == QMetaType::ULongLong )
    return a.toULongLong() < b.toULongLong();
  return a.toLongLong() < b.toLongLong();
}

} // namespace

VbasPointLocator::VbasPointLocator( const VbasRegions &regions, const QgsCoordinateReferenceSystem &pointCrs, const QgsCoordinateTransformContext &context )
  : mToRegions( vbasHasSrs( pointCrs ) ? pointCrs : regions.crs, regions.crs, context )
{
  const std::size_t count = static_cast<std::size_t>( regions.ids.size() );
  std::vector<std::uint32_t> order( count );
  std::iota( order.begin(), order.end(), 0u );
  std::stable_sort( order.begin(), order.end(), [&]( std::uint32_t a, std::uint32_t b ) { return lowerId( regions.ids[static_cast<int>( a )], regions.ids[static_cast<int>( b )] ); } );
  mRank.resize( count );
  for ( std::size_t i = 0; i < count; ++i )
    mRank[order[i]] = static_cast<std::uint32_t>( i );

  mEngines.reserve( count );
  for ( std::size_t r = 0; r < count; ++r )
  {
    const QgsGeometry &polygon = regions.geometries[static_cast<int>( r )];
    mEngines.push_back( std::unique_ptr<QgsGeometryEngine>( QgsGeometry::createGeometryEngine( polygon.constGet() ) ) );
    mEngines.back()->prepareGeometry();
    mIndex.addFeature( static_cast<QgsFeatureId>( r ), polygon.boundingBox() );
  }
}

bool VbasPointLocator::locatable( vbasqgis::WkbType type )
{
  return QgsWkbTypes::geometryType( type ) == vbasqgis::PointGeometry;
}

std::optional<std::uint32_t> VbasPointLocator::locate( const QgsGeometry &geometry, std::int64_t row, QgsFeatureId id ) const
{
  if ( geometry.isNull() || geometry.isEmpty() )
    return std::nullopt;
  if ( geometry.type() != vbasqgis::PointGeometry || geometry.constGet()->partCount() != 1 )
    throw QgsProcessingException(
      QObject::tr( "%1: its geometry is not a single point, so it cannot be located in a region. Give RECORD_REGION, or one point per record." ).arg( VbasRecordReader::rowName( row, id ) ) );
  QgsPointXY xy = geometry.vertexAt( 0 );
  try
  {
    xy = mToRegions.transform( xy );
  }
  catch ( QgsCsException & )
  {
    throw QgsProcessingException( QObject::tr( "%1: its point could not be transformed to the regions' CRS." ).arg( VbasRecordReader::rowName( row, id ) ) );
  }
  const QgsPoint point( xy );
  std::optional<std::uint32_t> found;
  for ( const QgsFeatureId candidate : mIndex.intersects( QgsRectangle( xy.x(), xy.y(), xy.x(), xy.y() ) ) )
  {
    const std::uint32_t r = static_cast<std::uint32_t>( candidate );
    if ( ( !found || mRank[r] < mRank[*found] ) && mEngines[r]->intersects( &point ) ) // boundary included: the lowest id wins
      found = r;
  }
  return found;
}

bool vbasHasSrs( const QgsCoordinateReferenceSystem &crs )
{
  // GeoPackage's srs_id 0 and -1, which GDAL reads as these two named CRSs.
  return crs.isValid() && !( crs.authid().isEmpty() && ( crs.description() == QLatin1String( "Undefined geographic SRS" ) || crs.description() == QLatin1String( "Undefined cartesian SRS" ) ) );
}
