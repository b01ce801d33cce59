// Folder inputs/: reading the inputs through QGIS providers and GDAL (layers, records, grouped counts, points, codes).
// A generalization hierarchy file in ARX's format (docs/generalization.md): one row per value, the
// value then its label at each level, separated by ';', read by GDAL's CSV tokenizer (double quotes,
// a byte order mark, quoted values across lines), every field text.
#pragma once

#include "algorithms/generalization/hierarchy.h"

#include <QString>

//! A hierarchy file read: its hierarchy and the SHA-256 of the bytes it was read from.
struct VbasHierarchyFile
{
    vbas::Hierarchy hierarchy;
    QString sha256; //!< lower-case hex, 64 digits
};

/**
 * The hierarchy of the file at path, refused with a QgsProcessingException naming the file, the
 * line and the value: a folder, FIFO, socket or device (before it is opened: a FIFO would block),
 * a file that cannot be read, bytes that are not UTF-8, and every hierarchy vbas::Hierarchy::fromRows
 * refuses. The file is read once: the digest is of the bytes parsed. Blank lines are skipped and keep
 * their numbers.
 */
VbasHierarchyFile vbasReadHierarchyFile( const QString &path );
