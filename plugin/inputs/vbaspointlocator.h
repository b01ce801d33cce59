// Geocoded records (docs/preparing-data.md): a record without a region id field gets its region by point in
// polygon against the regions layer. The candidates come from a spatial index of the regions' boxes,
// and each is tested against its prepared GEOS geometry, so a point costs a few tests, not a scan. A
// point on a shared boundary belongs to every region it touches and goes to the one with the lowest id.
#pragma once

#include "plugin/support/vbasqgiscompat.h"
#include <qgscoordinatetransform.h>
#include <qgsfeatureid.h>
#include <qgsgeometryengine.h>
#include <qgsspatialindex.h>

#include <memory>
#include <optional>
#include <vector>

struct VbasRegions;

//! Whether crs is a spatial reference: not invalid, nor GeoPackage's "Undefined geographic/cartesian SRS".
bool vbasHasSrs( const QgsCoordinateReferenceSystem &crs );

class VbasPointLocator
{
  public:
    //! The regions' polygons, for points in pointCrs (invalid: the regions' CRS).
    VbasPointLocator( const VbasRegions &regions, const QgsCoordinateReferenceSystem &pointCrs, const QgsCoordinateTransformContext &context );

    /**
     * The region of a record's geometry: nothing when it is empty or lies outside every region. Throws
     * a QgsProcessingException naming the row for a geometry that is not a single point. Not thread
     * safe: GEOS's prepared geometries are used from the thread that reads the records.
     */
    std::optional<std::uint32_t> locate( const QgsGeometry &geometry, std::int64_t row, QgsFeatureId id ) const;

    //! Whether a layer of this geometry type can be located: points, or multipoints of one point each.
    static bool locatable( vbasqgis::WkbType type );

  private:
    QgsSpatialIndex mIndex;                                   //!< region boxes, by region index
    std::vector<std::unique_ptr<QgsGeometryEngine>> mEngines; //!< prepared region polygons
    std::vector<std::uint32_t> mRank;                         //!< of each region's id, lowest id first
    QgsCoordinateTransform mToRegions;
};
