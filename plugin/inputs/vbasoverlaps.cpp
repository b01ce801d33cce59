#include "plugin/inputs/vbasoverlaps.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/support/vbasinterrupt.h"

#include <qgsgeometryengine.h>
#include <qgsexception.h>
#include <qgsspatialindex.h>

#include <algorithm>
#include <memory>

namespace
{
//! An overlap above this share of the smaller polygon's area is refused.
constexpr double kOverlapShare = 0.01;
} // namespace

void vbasCheckNoOverlaps( const QVector<QgsGeometry> &geometries, const QVector<QVariant> &ids, QgsProcessingFeedback *feedback )
{
  QgsSpatialIndex index;
  for ( int i = 0; i < geometries.size(); ++i )
    if ( geometries[i].type() == vbasqgis::PolygonGeometry )
      index.addFeature( i, geometries[i].boundingBox() );
  for ( int i = 0; i < geometries.size(); ++i )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    const QgsGeometry &a = geometries[i];
    if ( a.type() != vbasqgis::PolygonGeometry )
      continue;
    const std::unique_ptr<QgsGeometryEngine> engine( QgsGeometry::createGeometryEngine( a.constGet() ) );
    engine->prepareGeometry();
    for ( const QgsFeatureId candidate : index.intersects( a.boundingBox() ) )
    {
      const int j = static_cast<int>( candidate );
      const QgsGeometry &b = geometries[j];
      if ( j <= i || !( engine->overlaps( b.constGet() ) || engine->contains( b.constGet() ) || engine->within( b.constGet() ) ) )
        continue;
      const double shared = a.intersection( b ).area();
      const double smaller = std::min( a.area(), b.area() );
      if ( shared > kOverlapShare * smaller )
        throw QgsProcessingException( QObject::tr( "Regions '%1' and '%2' overlap (the overlap is %3% of the smaller one's area): regions must not overlap, or the "
                                                   "aggregates would overlap too. Repair the regions layer so that each place lies in one region." )
                                        .arg( ids[i].toString(), ids[j].toString() )
                                        .arg( 100 * shared / smaller, 0, 'g', 3 ) );
    }
  }
}
