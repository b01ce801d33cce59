// The recount of a table's equivalence classes from the values its file stores (docs/concepts.md):
// what vbas:checkanonymity counts, and what every run recounts of the release it wrote before it
// commits it. It keys the classes with its own exact keys (the QDataStream bytes of the stored values,
// VbasStoredValues, each numbered per field) and counts them with the core's AnonymityCheck: it shares
// no code with the steps that make a release.
#pragma once

#include "plugin/inputs/vbasstoredvalues.h"

#include "algorithms/base/string_index.h"
#include "algorithms/metrics/anonymity_check.h"

#include <qgsfeature.h>

#include <QHash>

#include <functional>
#include <memory>

class QgsProcessingFeatureSource;
class QgsProcessingFeedback;
class QgsVectorLayer;

class VbasTableRecount
{
  public:
    /**
     * The recount of source's rows, whose layer (nullptr when none) tells the format. qis: the fields
     * that key a class; count: the field of records per row, or -1 (one each); sensitive: the sensitive
     * field or -1. typedCsv: a CSV is compared as QGIS types it, not as text. rows: the rows read.
     * Refuses, read as QGIS decodes them, a QI or sensitive field of a type whose values have no exact bytes.
     */
    VbasTableRecount( QgsProcessingFeatureSource &source, const QgsVectorLayer *layer, const QgsAttributeList &qis, int count, int sensitive, bool typedCsv,
                      VbasStoredValues::Rows rows = VbasStoredValues::Rows::AsQgisReads );
    ~VbasTableRecount();

    const VbasStoredValues &stored() const { return *mStored; }

    //! Each row as the pass reads it: its class's key (as EcMeasures::key holds it), its values as read, its records.
    using RowVisitor = std::function<void( const QByteArray &key, const QgsAttributes &attributes, std::int64_t records )>;

    //! The one reading pass: every row's class, sensitive value and records, each row also to visit (if any); logs how the values were compared.
    vbas::AnonymityCheck recount( QgsProcessingFeedback *feedback, const RowVisitor &visit = {} );

    //! The QI values of a class back from its key (AnonymityReport's EcMeasures::key).
    QgsAttributes decodeKey( std::string_view key ) const;

  private:
    class KeyBytes;

    void checkExactTypes() const;
    //! The exact bytes of a row's value of field, written into bytes (valid until its next use), refused naming the row and field when the value has none.
    std::string_view valueBytes( KeyBytes &bytes, const QgsAttributes &attributes, int field, std::int64_t row, QgsFeatureId id ) const;
    //! A row's class key: the number of each QI value's exact bytes among its field's (4 bytes each), written into mClassKey.
    std::string_view classKey( KeyBytes &bytes, const QgsAttributes &attributes, std::int64_t row, QgsFeatureId id );

    QgsProcessingFeatureSource &mSource;
    std::unique_ptr<VbasStoredValues> mStored;
    QgsAttributeList mQis;
    int mCount = -1;
    int mSensitive = -1;
    //! Each QI field's values met, by their exact bytes: the ids a class key holds (short keys count fast, and decode back).
    std::vector<vbas::StringIndex> mValues;
    std::vector<QHash<QString, std::uint32_t>> mTextIds; //!< each QI field's texts met, by their characters: their numbers in mValues
    std::string mClassKey;
};
