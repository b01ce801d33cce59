// The records table's rows through GDAL's Arrow array stream (docs/preparing-data.md, "How the
// records are read"): batches of columns, decoded straight into the values QGIS's own reading gives,
// without a feature of GDAL or QGIS per row.
#pragma once

#include "plugin/support/vbasqgiscompat.h"

#include <qgsfeature.h>
#include <qgsfields.h>

#include <memory>
#include <optional>

class QgsVectorLayer;

class VbasArrowRows
{
  public:
    //! What to read, resolved from the layer before the run (prepareAlgorithm), opened in the pass.
    struct Source
    {
        QString path;
        QString layerName; //!< empty: the layer numbered layerId
        int layerId = 0;
        QStringList openOptions;
        QgsFields fields;      //!< the layer's
        QgsAttributeList read; //!< the fields given values
        //! Whether rows get their geometry, as QGIS reads it; then a geometry of one part is made multipart when the layer's type (wkbType) is.
        bool geometry = false;
        vbasqgis::WkbType wkbType = vbasqgis::WkbType();
    };

    /**
     * The source of layer's rows when GDAL's stream can give them as QGIS reads them, or nothing and
     * why not: the layer is not read through GDAL, it has a subset string, unsaved edits or fields of
     * its own (expressions, joins), or QGIS decodes its text itself (another encoding than UTF-8, a
     * shapefile, whose encoding QGIS may take from the layer's settings). A selection, a feature limit or a
     * filter of the processing input is the caller's to rule out.
     */
    static std::optional<Source> plan( const QgsVectorLayer *layer, const QgsAttributeList &read, bool geometry, QString &why );

    /**
     * Every row of source, as QGIS reads it: in the same order, with the same feature ids, the read
     * fields of the same types and values, and the geometry if asked; the other attributes are NULL. Or nullptr, with why
     * set, when GDAL cannot open the source or gives a read field as another type than QGIS does.
     */
    static std::unique_ptr<VbasArrowRows> open( const Source &source, QString &why );
    ~VbasArrowRows();

    //! The next row, false after the last; a QgsProcessingException when GDAL fails to read a batch.
    bool next( QgsFeature &feature );

  private:
    class Stream;
    explicit VbasArrowRows( std::unique_ptr<Stream> stream );
    std::unique_ptr<Stream> mStream;
};
