// What refers to what inside a GeoPackage or SQLite file, asked of SQLite itself (so that no run touches an input):
// the tables a layer reads (through views, at any depth) and the views, triggers and foreign keys that
// depend on a table. The file is opened read-only and nothing in it changes.
#pragma once

#include <QSet>
#include <QStringList>

#include <optional>

class QgsVectorLayer;

namespace VbasSqliteCatalog
{
//! The SQLite table an OGR layer reads: its file, its table's name and its feature id column (empty when OGR names none).
struct Table
{
    QString path;
    QString name;
    QString fid;
};
//! The table of layer when it is an OGR layer of a GeoPackage or SQLite file (its layerName, or the table at its layerId); nothing otherwise.
std::optional<Table> ogrTable( const QgsVectorLayer *layer );
//! Whether path is an SQLite database (a GeoPackage included).
bool isDatabase( const QString &path );
//! The tables and views that reading table (or view) reads, itself included, in lower case; std::nullopt if SQLite cannot tell.
std::optional<QSet<QString>> reads( const QString &path, const QString &table );
//! The views, triggers and foreign keys of other objects that refer to table: "view v_records", ...
QStringList dependents( const QString &path, const QString &table );
} // namespace VbasSqliteCatalog
