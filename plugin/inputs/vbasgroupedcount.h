// The counting pass pushed down to the data source (GROUP_IN_SOURCE). For GeoPackage and SQLite files
// (OGR's SQL, which SQLite runs) and PostgreSQL tables (passed to the server), the first pass is one
// GROUP BY region, QIs (and the sensitive field) that sums the count field, run by the source and read
// through GDAL. Each grouped value is converted by QgsOgrUtils with the table's own field definition,
// as QGIS's OGR provider converts it; a value the streaming pass would key differently makes the
// release pass stop the run, never a wrong release: the release pass still reads every row and
// recounts it against these sums (VbasReleaseWriter).
#pragma once

#include "inputs/vbasrecordreader.h"

#include <qgsvectorlayer.h>

#include <functional>
#include <memory>
#include <optional>

//! What the counting pass counts: the table's rows one by one, or the groups its source counted.
struct VbasCountedRows
{
    std::function<bool( QgsFeature & )> next; //!< the next row or group, false after the last
    QgsFields fields;       //!< of the rows or groups
    VbasRecordFields roles; //!< the region, QIs and sensitive field; the count (for groups: the summed records)
    long long expected = 0; //!< rows, for the progress; 0: unknown
    // Groups only (-1 for rows):
    int rows = -1;          //!< the rows of each group
    int bad = -1;           //!< rows of the group whose count is not a whole number from 0 to 2^53
    int ids = -1;           //!< the sum of the group's feature ids, as text

    bool grouped() const { return ids >= 0; }
};

class VbasGroupedCount
{
  public:
    /**
     * The grouped query of the records layer, or nothing and why not: the provider cannot run it (not
     * GeoPackage, SQLite or PostgreSQL), the layer is filtered, or it has no single whole-number
     * feature id column (whose sum stands for the rows read, see VbasRecords::digest).
     */
    static std::optional<VbasGroupedCount> plan( const QgsVectorLayer &records, const VbasRecordFields &roles, const QgsAttributeList &identity, QString &why );

    /**
     * Runs the query through GDAL; its groups' values are converted by QgsOgrUtils with the table's
     * own fields. Throws a QgsProcessingException when the source refuses the query.
     */
    VbasCountedRows groups() const;

    //! "GeoPackage", "PostgreSQL": for the log.
    const QString &sourceName() const { return mSourceName; }

  private:
    //! The groups' fields and roles: the grouped fields as the table has them, then the query's own (as text).
    VbasCountedRows resultFields() const;

    QString mPath;            //!< the GDAL dataset: the file, or PG: and the connection
    QString mSql;             //!< the query
    QString mSourceName;
    QgsFields mFields;        //!< of the records table
    VbasRecordFields mRoles;  //!< in the records table
};
