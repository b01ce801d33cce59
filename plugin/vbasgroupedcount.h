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

#include <functional>
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

    //! The query's groups, their values converted as the records' provider converts them.
    struct Result
    {
        std::function<bool( QgsFeature & )> next; //!< the next group, false after the last
        QgsFields fields;       //!< of the groups
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
    //! GeoPackage and SQLite: the query run by GDAL, each value converted by QgsOgrUtils as the OGR provider converts it.
    Result openOgr() const;
    //! PostgreSQL: a query layer of the postgres provider.
    Result openPostgres() const;
    //! The groups' fields and roles: the grouped fields as the table has them, then the query's own (as text).
    Result resultFields() const;

    QString mProvider;
    QString mUri;             //!< PostgreSQL: the query layer's URI
    QString mPath;            //!< GeoPackage, SQLite: the file
    QString mSql;             //!< GeoPackage, SQLite: the query
    QString mSourceName;
    QgsFields mFields;        //!< of the records table
    VbasRecordFields mRoles;  //!< in the records table
};
