// Folder inputs/: reading the inputs through QGIS providers and GDAL (layers, records, grouped counts, points, codes).
// The values of an input checked as stored, before QGIS decodes them (docs/preparing-data.md, "Values as they are stored").
#pragma once

#include <qgsfields.h>

#include <memory>

class QgsVectorLayer;

/**
 * An input table whose values are checked as stored before QGIS decodes them, one kind per source:
 * a GeoPackage or SQLite table, a CSV file (through GDAL, or a delimited text layer), a shapefile's .dbf, a PostgreSQL table. A value QGIS would
 * read as another (text in an INTEGER column, which QGIS reads as 0; "01" in a CSV Integer column, read
 * as 1), text holding NUL (QGIS drops what follows) or beginning with U+FEFF (QGIS drops it) is refused
 * naming its row.
 */
class VbasStoredTable
{
  public:
    virtual ~VbasStoredTable() = default;
    //! The check of layer's source, or nullptr when its values are not read as stored (a memory layer, another format).
    static std::unique_ptr<VbasStoredTable> of( const QgsVectorLayer *layer );
    //! One scan of the table; throws naming the first row (for rowKind: "Record") with a value QGIS would change.
    virtual void check( const QgsFields &fields, const QgsAttributeList &checked, const QString &rowKind ) const = 0;
};
