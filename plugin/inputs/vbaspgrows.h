// The records of a PostgreSQL table through one COPY (docs/preparing-data.md, "How the records are
// read"): each row decoded straight into the feature id and the values QGIS's postgres provider gives.
#pragma once

#include "plugin/inputs/vbasstreamedrows.h"

#include <optional>

class QgsVectorLayer;

namespace VbasPgRows
{
/**
 * The rows of layer read by one COPY when it gives them exactly as QGIS's provider reads them, or
 * nothing and why not: the layer is not PostgreSQL's, is an SQL query, has a subset string, unsaved
 * edits, fields of its own (expressions, joins) or a geometry column that may filter its rows; its key
 * is not one column of 16- or 32-bit whole numbers (QGIS numbers the rows of other keys through a map
 * of its own); or a read field is of a type not decoded here. A selection, a feature limit or a filter
 * of the processing input is the caller's to rule out.
 */
std::optional<VbasStreamedRows> plan( const QgsVectorLayer *layer, const QgsAttributeList &read, QString &why );
} // namespace VbasPgRows
