// What a layer or an output is, by the identities the system gives (no run changes an input:
// docs/outputs.md): files by device and inode, a table of a GeoPackage or SQLite file by the file and the tables
// its readers read, a PostgreSQL table by the server, the database and the table's oid. How a path or
// a connection is spelled never decides.
#pragma once

#include <QSet>
#include <QStringList>

class QgsVectorLayer;

struct VbasLocation
{
    QString what;           //!< the parameter, for messages: RECORDS, ANONYMIZED, ...
    QString where;          //!< for messages: the file or the connection, and the table
    QStringList files;      //!< the files it lives in or replaces: "<device>:<inode>", or "path:<absolute path>" of a file not yet made
    QString database;       //!< the database of its table; empty: whole files, or a temporary layer
    QSet<QString> reads;    //!< an input's table: every table reading it reads, itself included ("*": any)
    QString table;          //!< an output's table, in the keys of reads
    QStringList dependents; //!< an output's table: the views, triggers and foreign keys that refer to it

    //! The identity of an input layer.
    static VbasLocation of( const QString &what, const QgsVectorLayer *layer );
    //! An output that replaces whole files (a shapefile writes several).
    static VbasLocation ofFiles( const QString &what, const QStringList &paths );
    //! An output table of a GeoPackage or SQLite file.
    static VbasLocation ofSqliteTable( const QString &what, const QString &path, const QString &table );
    //! An output table of a PostgreSQL database (uri: the connection).
    static VbasLocation ofPostgresTable( const QString &what, const QString &uri, const QString &schema, const QString &table );

    //! Whether writing this output changes other (an input, or another output).
    bool overwrites( const VbasLocation &other ) const;

    //! "RECORDS (/data/patients.gpkg, table patients)".
    QString describe() const;
};
