// The files of a records table that its source does not read as one snapshot (a CSV, a shapefile, a
// GeoJSON file: whatever is neither a database table, a GeoPackage or SQLite table, nor a temporary
// layer), checked unchanged across the read: the records are read once (docs/method.md, "One read"),
// and an edit made while they are read would give a mix of the rows before and after it.
#pragma once

#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QVector>

class QgsVectorLayer;

class VbasUnchangedFiles
{
  public:
    //! The files of layer's source (its file and those beside it of the same base name: .dbf, .csvt, ...); none for a source that reads as one snapshot.
    static VbasUnchangedFiles of( const QgsVectorLayer *layer );

    //! A file's size and modification time.
    struct Stamp
    {
        QString path;
        qint64 size = -1; //!< -1: no such file
        QDateTime modified;
        bool operator==( const Stamp &other ) const { return path == other.path && size == other.size && modified == other.modified; }
    };

    //! The files' stamps now: take them before the read.
    QVector<Stamp> stamps() const;
    //! Throws a QgsProcessingException naming a file whose stamp is no longer as before.
    void checkUnchanged( const QVector<Stamp> &before ) const;

  private:
    QStringList mPaths;
};
