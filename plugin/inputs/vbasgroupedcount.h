// The counting pass pushed down to the data source (GROUP_IN_SOURCE). For GeoPackage and SQLite files
// (OGR's SQL, which SQLite runs) and PostgreSQL tables (passed to the server), the first pass is one
// GROUP BY region, QIs (and the sensitive field) that sums the count field, run by the source and read
// through GDAL. The query groups by the stored values exactly (docs/preparing-data.md, "Counting in
// the data source"): by SQLite's storage class and value under the binary collation, by PostgreSQL's
// text form of the value under the "C" collation (the binary form of reals), never by the column's own
// collation or type equality (NOCASE, RTRIM, citext, 1 = 1.0). So a group never joins rows that the
// row-by-row pass keeps apart, and its values are read from one of its rows through the records
// layer's own provider: groups that provider reads alike are counted as one class, as row by row.
#pragma once

#include "plugin/inputs/vbasrecordreader.h"

#include <qgsvectorlayer.h>
#include <qgsvectorlayerfeatureiterator.h>

#include <functional>
#include <memory>
#include <optional>

//! What the counting pass counts: the table's rows one by one, or the groups its source counted.
struct VbasCountedRows
{
    std::function<bool( QgsFeature & )> next; //!< the next row or group, false after the last
    QgsFields fields;                         //!< of the rows or groups
    VbasRecordFields roles;                   //!< the region, QIs and sensitive field; the count (for groups: the summed records)
    long long expected = 0;                   //!< rows, for the progress; 0: unknown
    // Groups only (-1 for rows):
    int rows = -1; //!< the rows of each group
    int bad = -1;  //!< rows of the group whose count is not a whole number from 0 to 2^53

    bool grouped() const { return rows >= 0; }
};

class VbasGroupedCount
{
  public:
    /**
     * The grouped query of the records layer, or nothing and why not: the provider cannot run it (not
     * GeoPackage, SQLite or PostgreSQL), the layer is filtered, or it has no single whole-number
     * feature id column (the smallest in each group names the row its values are read back from).
     */
    static std::optional<VbasGroupedCount> plan( const QgsVectorLayer &records, const VbasRecordFields &roles, const QgsAttributeList &identity, QString &why );

    /**
     * Runs the query through GDAL; each group's values are those of its first row (smallest feature
     * id) as the records layer's provider reads it. Throws a QgsProcessingException when the source
     * refuses the query or a group's row cannot be read back.
     */
    VbasCountedRows groups() const;

    //! "GeoPackage", "PostgreSQL": for the log.
    const QString &sourceName() const { return mSourceName; }

  private:
    //! The groups' fields and roles: the grouped fields as the table has them, then the query's own (as text).
    VbasCountedRows resultFields() const;

    QString mPath; //!< the GDAL dataset: the file, or PG: and the connection
    QString mSql;  //!< the query
    QString mSourceName;
    QgsFields mFields;                                     //!< of the records table
    VbasRecordFields mRoles;                               //!< in the records table
    int mId = -1;                                          //!< the feature id column
    std::shared_ptr<QgsVectorLayerFeatureSource> mRecords; //!< the records layer, to read each group's first row
};
