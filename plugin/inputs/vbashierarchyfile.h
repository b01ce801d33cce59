// Folder inputs/: reading the inputs through QGIS providers and GDAL (layers, records, grouped counts, points, codes).
// A generalization hierarchy file in ARX's format (docs/generalization.md): one row per value, the
// value then its label at each level, separated by ';', read by GDAL's CSV tokenizer (double quotes,
// a byte order mark, quoted values across lines), every field text.
#pragma once

#include "hierarchy.h"

#include <QString>

/**
 * The hierarchy of the file at path, refused with a QgsProcessingException naming the file, the
 * line and the value: a file that cannot be read, bytes that are not UTF-8, and every hierarchy
 * vbas::Hierarchy::fromRows refuses. Blank lines are skipped and keep their numbers.
 */
vbas::Hierarchy vbasReadHierarchyFile( const QString &path );
