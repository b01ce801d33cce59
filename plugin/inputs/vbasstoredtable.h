// Folder inputs/: reading the inputs through QGIS providers and GDAL (layers, records, grouped counts, points, codes).
// The values of a GeoPackage or SQLite input checked as stored, before QGIS decodes them.
#pragma once

#include <qgsfields.h>

#include <optional>

class QgsVectorLayer;

/**
 * A GeoPackage or SQLite table, whose values are checked as stored before QGIS decodes them: a value
 * its field's type cannot hold (text in an INTEGER column, which QGIS reads as 0), text holding NUL
 * (QGIS drops what follows) or beginning with U+FEFF (QGIS drops it) is refused naming its row.
 */
class VbasStoredTable
{
  public:
    //! The table behind layer, or nothing when it is no GeoPackage or SQLite table.
    static std::optional<VbasStoredTable> of( const QgsVectorLayer *layer );
    //! One scan of the table; throws naming the first row (by feature id, for rowKind) with a value QGIS would change.
    void check( const QgsFields &fields, const QgsAttributeList &checked, const QString &rowKind ) const;

  private:
    QString mPath;
    QString mTable;
    QString mFid;    //!< the feature id column (rowid when the table has none)
    QString mFilter; //!< the layer's subset string
};
