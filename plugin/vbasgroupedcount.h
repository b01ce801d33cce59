// The counting pass pushed down to the data source (issue 9 item 2). For GeoPackage and SQLite files
// (OGR's SQL, which SQLite runs) and PostgreSQL tables, the first pass is one
// GROUP BY region, QIs (and the sensitive field) that sums the count field, run by the source. Its
// result is read back through the same QGIS provider as the table, so every value is converted as the
// streaming pass would convert it; a field the query returns with another type than the table's
// leaves the counting to the streaming pass. The release pass still reads every row and recounts it
// against these sums (VbasReleaseWriter).
#pragma once

#include "vbasrecordreader.h"

#include <qgsvectorlayer.h>

#include <memory>
#include <optional>

class VbasGroupedCount
{
  public:
    /**
     * The grouped query of the records layer, or nothing and why not: the provider cannot run it (not
     * GeoPackage, SQLite or PostgreSQL), the layer is filtered, or it has no single whole-number
     * feature id column (whose sum stands for the rows read, see VbasRecords::digest).
     */
    static std::optional<VbasGroupedCount> plan( const QgsVectorLayer &records, const VbasRecordFields &roles, const QgsAttributeList &identity, QString &why );

    //! The query's result as a layer of the records' provider, its fields in the records' roles.
    struct Result
    {
        std::unique_ptr<QgsVectorLayer> layer;
        VbasRecordFields roles; //!< the region, QIs, sensitive field, and the summed records as the count
        int rows = -1;          //!< the rows of each group
        int bad = -1;           //!< rows of the group whose count is not a whole number from 0 to 2^53
        int ids = -1;           //!< the sum of the group's feature ids, as text
    };

    /**
     * Opens the query; throws a QgsProcessingException when the source refuses it or returns a
     * field with another type than the table's.
     */
    Result open() const;

    //! "GeoPackage", "PostgreSQL": for the log.
    const QString &sourceName() const { return mSourceName; }

  private:
    QString mProvider;
    QString mUri;
    QString mSourceName;
    QgsFields mFields;        //!< of the records table
    VbasRecordFields mRoles;  //!< in the records table
};
