// Folder inputs/: reading the inputs through QGIS providers and GDAL (layers, records, grouped counts, points, codes).
// The rows of a table as its file stores them, shared by the checker's stored values (VbasStoredValues)
// and the inputs' stored-value check (VbasStoredTable): the fields read, and a CSV file's text.
#pragma once

#include <qgsfeature.h>
#include <qgsfields.h>

#include <cpl_vsi.h>

#include <optional>
#include <string>

//! A field read from the file: its index in the layer, its name, and whether it is compared exactly (else: the count).
struct VbasStoredColumn
{
    int field = -1;
    QString name;
    bool compared = true;
};

//! The compared fields, then the count field (when count >= 0).
QList<VbasStoredColumn> vbasStoredColumns( const QgsFields &fields, const QgsAttributeList &compared, int count );

//! Text that is valid UTF-8 without NUL, or std::nullopt.
std::optional<QString> vbasPlainText( const QByteArray &bytes );

//! One format's reader of stored rows.
class VbasStoredRows
{
  public:
    virtual ~VbasStoredRows() = default;
    //! The next stored row: its feature id and the values of the fields asked for; false after the last.
    virtual bool next( QgsFeatureId &id, QgsAttributes &values ) = 0;
};

//! A reader of the file itself: the columns it reads, and the layer's field count (the size of a row).
class VbasFileRows : public VbasStoredRows
{
  protected:
    VbasFileRows( const QList<VbasStoredColumn> &columns, int fieldCount )
      : mColumns( columns )
      , mFieldCount( fieldCount )
    {}
    QList<VbasStoredColumn> mColumns;
    int mFieldCount = 0;
};

/**
 * A CSV file's text, parsed by GDAL's CSV tokenizer with the delimiter GDAL's CSV driver detects,
 * the first line the header, blank lines skipped, feature ids 1, 2, ... as the driver numbers the
 * rows. Every value is text (an empty field is empty text), whatever a .csvt says.
 */
class VbasCsvRows : public VbasFileRows
{
  public:
    VbasCsvRows( const QString &path, const QList<VbasStoredColumn> &columns, int fieldCount );
    ~VbasCsvRows() override;
    VbasCsvRows( const VbasCsvRows & ) = delete;
    VbasCsvRows &operator=( const VbasCsvRows & ) = delete;

    bool next( QgsFeatureId &id, QgsAttributes &values ) override;

  private:
    //! The fields of the next line (none for a blank line), std::nullopt at the end.
    std::optional<QStringList> line();

    QString mPath;
    VSILFILE *mFile = nullptr;
    std::string mDelimiter;
    QList<int> mAt; //!< the CSV column of each of mColumns
    QgsFeatureId mRow = 0;
};
