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
    {
    }
    QList<VbasStoredColumn> mColumns;
    int mFieldCount = 0;
};

//! How a CSV file is laid out and its rows numbered.
struct VbasCsvLayout
{
    std::optional<char> delimiter; //!< std::nullopt: the one GDAL's CSV driver detects
    bool header = true;            //!< the first line (after those skipped) names the columns; else they are field_1, field_2, ...
    int skipLines = 0;             //!< lines skipped before the header
    bool lineIds = false;          //!< a row's feature id is the line it starts on (QGIS's delimited text), else its number (GDAL's CSV: 1, 2, ...)
};

//! A delimited text layer's layout (its URI's options) when its file can be read as CSV text, or std::nullopt with why not in because.
std::optional<VbasCsvLayout> vbasDelimitedTextLayout( const QStringList &openOptions, QString &because );

/**
 * A CSV file's text, parsed by GDAL's CSV tokenizer (double quotes, a doubled quote inside them),
 * blank lines skipped. Every value is text (an empty field is empty text), whatever a .csvt or QGIS's
 * type guessing says.
 */
class VbasCsvRows : public VbasFileRows
{
  public:
    VbasCsvRows( const QString &path, const VbasCsvLayout &layout, const QList<VbasStoredColumn> &columns, int fieldCount );
    ~VbasCsvRows() override;
    VbasCsvRows( const VbasCsvRows & ) = delete;
    VbasCsvRows &operator=( const VbasCsvRows & ) = delete;

    bool next( QgsFeatureId &id, QgsAttributes &values ) override;

  private:
    //! The column of a field QGIS named field_1, field_2, ... (a file without a header line), or -1.
    static int unnamed( const QString &name );
    //! The fields of the next line (none for a blank line), std::nullopt at the end; mStart is the line it starts on.
    std::optional<QStringList> line();

    QString mPath;
    bool mLineIds = false;
    VSILFILE *mFile = nullptr;
    std::string mDelimiter;
    QList<int> mAt; //!< the CSV column of each of mColumns
    QgsFeatureId mRow = 0;
    qint64 mLine = 0;  //!< the lines read
    qint64 mStart = 0; //!< the line the last row read starts on
};
