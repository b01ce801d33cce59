// GDAL and the disk, for the outputs: GDAL's errors while a file is written, a written layer read back
// (its features counted, its field names), the file writer's options, and fsync.
#pragma once

#include <qgsvectorfilewriter.h>

#include <QPair>
#include <QStringList>

#include <cpl_error.h>

namespace VbasGdal
{
//! The GDAL errors raised while it lives (GDAL reports some write failures only through them).
class Errors
{
  public:
    Errors() { CPLPushErrorHandlerEx( &Errors::collect, this ); }
    ~Errors() { CPLPopErrorHandler(); }
    QString failures() const { return mFailures.join( QStringLiteral( "; " ) ); }

  private:
    static void CPL_STDCALL collect( CPLErr level, CPLErrorNum, const char *message )
    {
      if ( level >= CE_Failure )
        static_cast<Errors *>( CPLGetErrorHandlerUserData() )->mFailures << QString::fromUtf8( message );
    }
    QStringList mFailures;
};

//! Features in a layer of a GDAL dataset, counted by reading it; -1 if it cannot be read.
long long countFeatures( const QString &path, const QString &layerName );
//! The name of the layer layerName of the file at path as GDAL names it (its only layer when it has no such one), or empty when there is none.
QString layerName( const QString &path, const QString &layerName );
//! A layer of a GDAL dataset as a reader sees it.
struct ReadBack
{
    QStringList fields;      //!< its field names
    long long features = -1; //!< its features counted by reading them; -1 if it cannot be read
    bool geometry = false;   //!< it has a geometry column
};
ReadBack readBack( const QString &path, const QString &layerName );
/**
 * The column in which driver keeps each feature's id (the FID layer option, else its default in the
 * driver's metadata: "fid" for GeoPackage); empty for a format without one.
 */
QString fidColumn( const QString &driver, const QStringList &layerOptions );
//! The names of the files in a folder (a /vsimem/ one too).
QStringList filesIn( const QString &folder );
//! The options of a QgsVectorFileWriter that writes layerName with driver, without styles, over any existing file.
QgsVectorFileWriter::SaveVectorOptions saveOptions( const QString &driver, const QString &layerName, const QVariantMap &createOptions );
//! The layers of a GDAL dataset.
QStringList tableNames( const QString &path );
//! Drops a table of a GeoPackage or SQLite file; whether it is gone.
bool dropTable( const QString &path, const QString &table );
/**
 * Renames tables of a GeoPackage or SQLite file in one transaction, each pair (from, to) in turn after
 * dropping the tables of drop: all or nothing. Returns GDAL's error, empty on success. The file is opened
 * through GDAL alone, never through QGIS's provider, so its settings (its journal mode) stay as they are.
 */
QString renameTables( const QString &path, const QStringList &drop, const QList<QPair<QString, QString>> &renames );
//! Flushes a file (or a folder: its entries) to the disk; throws when the disk refuses.
void syncFile( const QString &path );
} // namespace VbasGdal
