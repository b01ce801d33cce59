// The records read without QGIS's provider (docs/preparing-data.md, "How the records are read"): one
// small interface for GDAL's column stream (vbasarrowrows) and PostgreSQL's COPY (vbaspgrows).
#pragma once

#include <qgsfeature.h>

#include <functional>

//! The next row into a feature (its id and the read fields; the other attributes NULL), false after the last.
using VbasRows = std::function<bool( QgsFeature & )>;

//! How the records are read without QGIS: planned before the run (prepareAlgorithm), opened in the pass.
struct VbasStreamedRows
{
    QString reader;        //!< as the log names it: "GDAL's column stream"
    QgsAttributeList read; //!< the fields given values
    //! The rows as QGIS reads them, or an empty VbasRows with why set, when QGIS reads them instead.
    std::function<VbasRows( QString &why )> open;
};
