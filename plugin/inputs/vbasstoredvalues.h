// The values of a table as its file stores them, for vbas:checkanonymity (docs/algorithms/checkanonymity.md,
// "Which values are compared"). An independent recount of a released file sees what is stored, which
// QGIS's decoding can merge: text in an INTEGER column read as 0, a BLOB beside the same text, two
// spellings of one date, a .csvt's Integer "01" read as 1, a JSON 1 beside "1". So the classes are
// keyed here by the stored values: a GeoPackage or SQLite value by its storage class and bytes (as
// SQLite's typeof() and a binary comparison tell them apart), a CSV value (GDAL's CSV or QGIS's
// delimited text) by its text, a GeoJSON or GeoJSONSeq property by its JSON type and value, a
// PostgreSQL value by its text. Other sources are read as QGIS gives them, and say so.
#pragma once

#include <qgsfeature.h>
#include <qgsfields.h>

#include <memory>
#include <vector>

class QgsProcessingFeatureSource;
class VbasStoredRows;
class QgsVectorLayer;

class VbasStoredValues
{
  public:
    //! How the values are read, for the log and the VALUES_READ output.
    enum class Reading
    {
      Qgis,     //!< as QGIS decodes them (a memory layer, another format, or a CSV with TYPED_CSV)
      Sqlite,   //!< GeoPackage or SQLite: storage class and bytes
      CsvText,  //!< CSV or delimited text: the text of each field
      Json,     //!< GeoJSON or GeoJSONSeq: the JSON type and value
      Postgres, //!< a PostgreSQL table: the text of each value (value::text)
    };

    //! Which rows next() gives.
    enum class Rows
    {
      AsQgisReads, //!< the rows QGIS reads of the layer (its selection, filter and subset), named by QGIS's feature ids
      EveryStored, //!< every row the file stores, named by the file's own ids: a table read whole (a release just written) needs no list of QGIS's ids first
    };

    /**
     * The reader of source's rows, whose layer (nullptr when none) tells the format. compared: the fields
     * keyed exactly (the QIs and the sensitive field); count: the count field or -1. typedCsv: a CSV
     * is read as QGIS types it (its .csvt), not as text.
     */
    VbasStoredValues( QgsProcessingFeatureSource &source, const QgsVectorLayer *layer, const QgsAttributeList &compared, int count, bool typedCsv, Rows rows = Rows::AsQgisReads );
    ~VbasStoredValues();

    Reading reading() const { return mReading; }
    //! "stored values (SQLite storage class and bytes)", ...: for the log.
    QString describe() const;
    //! Why a source whose stored values could be read is read as QGIS gives them (a warning), or empty.
    QString fallback() const { return mFallback; }
    //! "sqlite", "csv-text", "csv-typed", "json", "postgresql-text", "qgis": the VALUES_READ output.
    QString code() const;
    //! Whether compared values come as text that names each stored value exactly (SQL literals, CSV text, JSON, PostgreSQL text), not in the field's own type.
    bool asText() const { return mReading != Reading::Qgis; }

    /**
     * The next row of the source: its feature id and values (by field index; compared fields exactly as
     * stored, as text when asText(), and the count as stored). False after the last. Throws a
     * QgsProcessingException naming the row when a row QGIS reads has no stored values.
     */
    bool next( QgsFeatureId &id, QgsAttributes &values );

    /**
     * A compared value as next() gives it, as a person reads it: a text's characters, a number's
     * shortest digits (7.0 stored is 7), true or false; a null QString for NULL. What k-map matches a
     * population table's values by (docs/algorithms/checkanonymity.md, "k-map").
     */
    QString plainText( const QVariant &compared ) const;

  private:
    Reading mReading = Reading::Qgis;
    bool mTypedCsv = false;
    QString mFallback;
    //! The rows QGIS reads, collected before the first stored row.
    void collectIds();

    QgsProcessingFeatureSource &mSource;
    std::unique_ptr<VbasStoredRows> mReader;
    int mKey = -1; //!< the field whose value names a row where the values are stored (a PostgreSQL key); -1: the feature id
    Rows mRows = Rows::AsQgisReads;
    bool mCollected = false;
    //! stored readings: the rows QGIS reads (its selection, filter and subset) as (the id the reader gives the row, its feature id), sorted
    std::vector<std::pair<qint64, QgsFeatureId>> mIds;
    std::vector<bool> mSeen;
};
