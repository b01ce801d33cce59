// The checker's own count of the residents of a released table's classes (docs/algorithms/checkanonymity.md,
// "k-map"): the population table's cells summed by released unit through a lookup (region -> unit),
// and each class of the release (as VbasTableRecount keys it) given the residents of its unit and QI
// values, matched by their text; of a generalized release (its lookup has qi_levels), the residents of
// the cells whose values are under the class's (VbasWrittenLabels). It shares no code with the release
// (VbasPopulationTable, the core's suppression), so that it checks a k-map release independently.
#pragma once

#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbaswrittenlabels.h"

#include <qgsfeature.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingutils.h>

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

class VbasStoredValues;

class VbasResidentsRecount
{
  public:
    //! A class of the release under k-map: its key (VbasTableRecount's), records and residents.
    struct Class
    {
        QByteArray key;
        std::int64_t records = 0;
        std::int64_t residents = 0;
    };

    /**
     * LOOKUP with LOOKUP_REGION and LOOKUP_UNIT, POPULATION_TABLE with POPULATION_REGION, POPULATION_COUNT
     * and a field named as each QI of the release but its unit (UNIT_FIELD, one of qis), and the hierarchy
     * files of HIERARCHIES (each named after a QI), resolved before anything is read. Refused: a missing
     * table or field, a unit field that is not a QI, a hierarchy file named after no QI or refused.
     */
    VbasResidentsRecount( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QgsFields &releaseFields, const QgsAttributeList &qis,
                          const VbasStoredValues &stored, QList<VbasLocation> &locations );
    ~VbasResidentsRecount();

    /**
     * Reads the lookup and the population table, refusing with the row: a region given twice in the
     * lookup, a count that is not a whole number from 0, a table region the lookup lacks, a cell given
     * twice; and, for a generalized release, what VbasWrittenLabels refuses, or HIERARCHIES for a release
     * that is not generalized.
     */
    void readPopulation( QgsProcessingFeedback *feedback );

    /**
     * A row of the release standing for records records of the class key (VbasTableRecount's visit),
     * its values as the stored reader gives them; a class's cell is found once, at its first row.
     */
    void addRow( const QByteArray &key, const QgsAttributes &attributes, std::int64_t records );

    //! Every class of the release with its residents, in the order of its first row.
    const std::vector<Class> &classes() const { return mClasses; }
    //! The residents of the class key: 0 for a class the release does not hold.
    std::int64_t residents( const QByteArray &key ) const;
    //! The residents of the class with fewest among those holding records; none without records.
    std::optional<std::int64_t> smallest() const;

  private:
    //! The text of a cell: its unit and its QI values (the unit's left out), each value's text by text(), NULL apart from any text.
    template<typename Text>
    static QString cellText( const QString &unit, const QgsAttributes &attributes, const QgsAttributeList &fields, const Text &text );

    const VbasStoredValues &mStored; //!< the release's reader: its values' plain text
    std::unique_ptr<QgsProcessingFeatureSource> mLookup, mTable;
    int mLookupRegion = -1, mLookupUnit = -1, mTableRegion = -1, mTableCount = -1;
    int mUnit = -1;               //!< the release's unit field
    QgsAttributeList mReleaseQis; //!< the release's QIs but the unit
    QgsAttributeList mTableQis;   //!< the table's field of each of them
    QStringList mQiNames;         //!< the name of each of them
    std::vector<bool> mQiText;    //!< whether each of them is a text field
    //! Reads HIERARCHIES (when the algorithm has it): each file by the QI field it is named after.
    void readHierarchyFiles( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, QList<VbasLocation> &locations );
    //! The residents of the cells of unit whose values are under the class's written values (a generalized release).
    std::int64_t residentsUnder( const QString &unit, const QgsAttributes &attributes ) const;
    //! Reads the lookup: each region's unit, and its qi_levels and hierarchies (the first row's; empty when it has none).
    QHash<QString, QString> readLookup( QString &qiLevels, QString &hierarchies ) const;

    //! A population table's cell of a generalized release: its QI values and residents.
    struct Cell
    {
        QgsAttributes values;
        std::int64_t residents = 0;
    };

    QHash<QString, std::int64_t> mResidents;        //!< cell text -> residents
    QMap<QString, VbasHierarchyFile> mFiles;        //!< HIERARCHIES, by QI field
    std::optional<VbasWrittenLabels> mLabels;       //!< a generalized release's labels
    QHash<QString, std::vector<Cell>> mCellsOfUnit; //!< a generalized release: unit -> its cells
    QHash<QByteArray, std::size_t> mClassIndex;
    std::vector<Class> mClasses;
};
