// The population table (docs/method.md, Risk against the population): the residents of each (region,
// QI values) cell, from any table QGIS reads (CSV, GeoPackage, PostgreSQL). Its QI fields are the
// records' QIs, found by name; each value is keyed as the records' values are (VbasValueCodec), so
// that a cell is exactly a class of the records. Every row is checked before anything is written, and a
// refusal names the row.
#pragma once

#include "algorithms/base/histograms.h"
#include "algorithms/generalization/starred_residents.h"
#include "plugin/inputs/vbasinputs.h"

#include <qgsprocessingalgorithm.h>
#include <qgsprocessingutils.h>

#include <QStringList>

#include <cstdint>
#include <memory>
#include <string>
#include <optional>
#include <unordered_map>
#include <vector>

//! What the table says: the residents of each cell and of each region.
struct VbasPopulation
{
    /**
     * region -> the records' class -> residents (cells of values no record has are in unmatched, when
     * kept); once a generalized release is chosen, region -> its written class -> residents instead.
     */
    vbas::SparseHistograms cells;
    std::vector<double> regionResidents; //!< every row's residents, summed by region
    QStringList missingQis;              //!< the records' QIs the table has no field for: its cells are then not the classes', and only regionResidents counts
    std::int64_t raised = 0;             //!< cells raised to their records' count (POPULATION_RAISE)
    /**
     * The rows whose values are no class of the records, kept when read for a generalized release (a
     * label covers values no record has): each QI's value an index of unmatchedValues[qi].
     */
    vbas::PopulationCells unmatched;
    std::vector<std::vector<QVariant>> unmatchedValues; //!< per QI, the values of the unmatched rows
};

class VbasPopulationTable
{
  public:
    /**
     * POPULATION_TABLE and its POPULATION_REGION, POPULATION_COUNT and POPULATION_RAISE, resolved before
     * anything is read; nothing without a table. Refused: a missing field, a region field that is not text or
     * numbers, and a QI field whose type differs from the records' (no value of it could match theirs).
     */
    static std::unique_ptr<VbasPopulationTable> prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QgsFields &recordFields,
                                                         const QgsAttributeList &recordQis, QList<VbasLocation> &locations );

    /**
     * Reads every row, refusing, with the row: a count that is not a whole number >= 0, a region the
     * regions layer does not have, a cell given twice. Then each class of each region's records must
     * have at least as many residents as records: refused naming the region, unless raise, which
     * raises the cell to the records and counts it. keepUnmatchedRows: keep the rows of values no
     * record has (VbasPopulation::unmatched), for a generalized release.
     */
    VbasPopulation read( const VbasRegions &regions, const VbasRecords &records, bool keepUnmatchedRows, QgsProcessingFeedback *feedback ) const;

    //! The records' QIs the table has no field for.
    QStringList missingQis() const;

    /**
     * What a release's criterion and measures take from table (nothing when it is null): read, with the
     * cells raised and the QIs it lacks in the log; for a generalized release its unmatched rows kept too.
     */
    static std::optional<VbasPopulation> readFor( const VbasPopulationTable *table, const VbasRegions &regions, const VbasRecords &records, bool generalized, QgsProcessingFeedback *feedback );

  private:
    /**
     * A row's cell as bytes in cell (the region, then each QI value's key, NULL apart), and the records'
     * class it is, if matched (the table has every QI) and the records have one; a value without an
     * exact key is refused, naming rowName.
     */
    std::optional<std::uint32_t> cellOf( const QgsAttributes &attributes, std::uint32_t region, const VbasRecords &records, bool matched, const QString &rowName, std::string &cell ) const;
    //! "Population table row 12 (feature id 11)".
    static QString rowName( std::int64_t row, QgsFeatureId id );
    //! Keeps a row whose values are no class of the records: its region, each QI's value (an index of unmatchedValues) and residents.
    void keepUnmatched( const QgsAttributes &attributes, std::uint32_t region, std::int64_t residents, VbasPopulation &population,
                        std::vector<std::unordered_map<std::string, std::uint32_t>> &valueIds ) const;
    //! Raises or refuses the cells with fewer residents than records; rowOfClass: the row of each kept cell (region << 32 | class).
    void meetRecords( VbasPopulation &population, const VbasRegions &regions, const VbasRecords &records, bool raise, const std::unordered_map<std::uint64_t, std::int64_t> &rowOfClass ) const;

    std::unique_ptr<QgsProcessingFeatureSource> mTable;
    int mRegion = -1;
    int mCount = -1;
    QgsAttributeList mQis; //!< the table's field of each of the records' QIs, in QI order; -1 where it has none
    QStringList mQiNames;
    bool mRaise = false; //!< POPULATION_RAISE
};
