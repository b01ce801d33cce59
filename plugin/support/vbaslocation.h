// Where a layer lives on disk or in a database, to refuse an output that would overwrite one of the
// run's inputs or another of its outputs (issue 5 item 6).
#pragma once

#include <QString>

class QgsVectorLayer;

struct VbasLocation
{
    QString what;   //!< the parameter, for messages: RECORDS, ANONYMIZED, ...
    QString path;   //!< the file (or database file); empty for memory layers and database servers
    QString table;  //!< the layer or table inside path or on the server; empty: the whole file, or unknown
    QString server; //!< the provider and connection of a server table (PostgreSQL); empty otherwise

    //! Where a layer's data lives.
    static VbasLocation of( const QString &what, const QgsVectorLayer *layer );

    /**
     * Whether writing this location (an output) would change other: the same file when this output
     * replaces the whole file (a file output, or other's table is unknown), or the same table of the
     * same file or server. Files are compared by device and inode when both exist, so links and
     * different spellings of one path are caught.
     */
    bool overwrites( const VbasLocation &other ) const;

    //! "RECORDS (/data/patients.gpkg, table patients)".
    QString describe() const;

    //! Whether two paths name the same file.
    static bool sameFile( const QString &a, const QString &b );
};
