// Folder inputs/: reading the inputs through QGIS providers and GDAL (layers, records, grouped counts, points, codes).
// Reading the inputs: the regions layer, the records table (the counting pass), the sites
// and the region lookup. Every source, field and role is resolved and checked in prepare(), before
// anything is read or written.
#pragma once

#include "plugin/support/vbasqgiscompat.h"
#include "algorithms/base/geometry.h"
#include "algorithms/base/histograms.h"
#include "algorithms/base/qi_encoding.h"
#include "algorithms/metrics/sensitive.h"
#include "algorithms/base/string_index.h"
#include "plugin/inputs/vbasstreamedrows.h"
#include "plugin/inputs/vbasgroupedcount.h"
#include "plugin/support/vbaslocation.h"
#include "plugin/inputs/vbaspointlocator.h"
#include "plugin/inputs/vbasrecordreader.h"
#include "plugin/inputs/vbasreleasespool.h"
#include "plugin/inputs/vbasstoredtable.h"
#include "plugin/inputs/vbasunchangedfiles.h"

#include <qgscoordinatereferencesystem.h>
#include <qgscoordinatetransform.h>
#include <qgsgeometry.h>
#include <qgsprocessingutils.h>

#include <memory>
#include <optional>

class QgsProcessingAlgorithm;
class QgsProcessingMultiStepFeedback;
class QgsVectorLayer;

//! The initial regions, read once.
struct VbasRegions
{
    QgsCoordinateReferenceSystem crs;        //!< of the regions layer
    QgsCoordinateReferenceSystem workingCrs; //!< distances are computed here (projected)
    QgsCoordinateTransform toWorking;
    QVector<QVariant> ids;           //!< region ids, in layer order
    vbas::StringIndex index;         //!< region key (VbasValueCodec::regionKey, UTF-16) -> region
    QVector<QgsGeometry> geometries; //!< repaired geometries, layer CRS
    std::vector<vbas::Point> points; //!< region points, working CRS
    std::vector<double> population;  //!< population field values; empty when the basis is records
    vbas::Extent extent;             //!< of the regions, working CRS

    //! The region with this id, matched by its key; nothing for NULL or an unknown id. Throws for a value that is no region id.
    std::optional<std::uint32_t> find( const QVariant &id ) const;
};

//! The records, counted: the QI classes and the per-region sparse histograms of the counting pass.
struct VbasRecords
{
    explicit VbasRecords( std::size_t qiCount )
      : encoder( qiCount )
    {
    }
    vbas::QiEncoder encoder;
    vbas::SparseHistograms histograms;
    std::optional<vbas::SensitiveHistograms> sensitive; //!< with a sensitive field: the records per (region, class, value)
    std::int64_t rows = 0;                              //!< rows read, a row standing for its count of records
    //! Counted for a release (always row by row): every counted row as the release needs it, drained once by VbasReleaseWriter.
    std::shared_ptr<VbasReleaseSpool> spool;
    //! Records without a region field: their points located in the regions, the same way in every pass.
    std::shared_ptr<const VbasPointLocator> locator;
    bool dropOutside = false; //!< a located record outside every region is dropped (OUTSIDE_POINTS), not refused
    std::int64_t outside = 0; //!< records dropped as outside every region (the first pass's count, for the log)
};

//! Sites read from a point layer, ordered by site id, in the working CRS.
struct VbasSites
{
    std::vector<vbas::Point> points;
    std::vector<qlonglong> ids;
};

//! The aggregate and the site of every region, from a region lookup table.
struct VbasLookup
{
    std::vector<std::size_t> regionAggregate; //!< the aggregate of each region: the index of its aggregate_id among the lookup's, increasing
    std::vector<vbas::Point> regionSites;     //!< the site of each region's aggregate, working CRS
    QString qiLevels;                         //!< of a generalized release: its qi_levels, the same on every row; else empty
    std::optional<QString> hierarchies;       //!< its hierarchies field, the same on every row; none without the field (a lookup written before it)
};

/**
 * Opens the source of the algorithm's parameter name, refusing one that cannot be loaded, and appends
 * where it lives to locations, for the output checks (VbasOutputSet::prepare).
 */
std::unique_ptr<QgsProcessingFeatureSource> vbasSource( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context,
                                                        QList<VbasLocation> &locations );

//! The layer behind the source parameter name (a selection or filter of it aside); nullptr when it is no layer.
const QgsVectorLayer *vbasSourceLayer( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context );

//! The identity fields (the table's feature id column) of the source parameter name: they carry the input's order and are never released.
QgsAttributeList vbasIdentityFields( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context );

//! Refuses a number parameter of algorithm that is NaN or infinite, naming it.
void vbasCheckFiniteNumbers( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context );

//! The regions and their records, as every algorithm of the pipeline reads them first.
struct VbasRegionsAndRecords
{
    VbasRegions regions;
    VbasRecords records;
};

class VbasInputs
{
  public:
    /**
     * Resolves the inputs that algorithm declares (REGIONS, RECORDS, SITES, LOOKUP and their
     * fields) and refuses, before anything is read, a missing source or field, a field in two
     * roles, a QI listed twice, or a field type that cannot be read exactly.
     */
    void prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context );

    VbasRegions readRegions( QgsProcessingContext &context, QgsProcessingFeedback *feedback ) const;
    /**
     * The counting pass over the records: grouped by the data source where it can (GROUP_IN_SOURCE,
     * VbasGroupedCount), else (and whenever the source's count fails) row by row.
     */
    VbasRecords readRecords( const VbasRegions &regions, QgsProcessingFeedback *feedback ) const;
    /**
     * The start every algorithm of the pipeline shares: a cancel made before the run is honoured (steps,
     * a multi-step feedback over feedback, does not see it), then the regions as step 0 and their
     * records as step 1 of steps.
     */
    VbasRegionsAndRecords readRegionsAndRecords( QgsProcessingContext &context, QgsProcessingMultiStepFeedback &steps, QgsProcessingFeedback *feedback ) const;
    /**
     * For an algorithm that writes a release (RELEASE_FIELDS), after prepare(): the counting pass keeps
     * every row for the release (VbasRecords::spool) in memoryBudget bytes, beyond them in temporary
     * files whose paths start with scratchPrefix (the release's VbasOutput::scratchPrefix).
     */
    void keepForRelease( const QString &scratchPrefix, std::size_t memoryBudget );
    //! The sites: their site_id field, or 1, 2, ... in layer order without one.
    VbasSites readSites( const VbasRegions &regions, QgsProcessingContext &context ) const;
    VbasLookup readLookup( const VbasRegions &regions, const VbasSites &sites, QgsProcessingFeedback *feedback ) const;

    QgsFeatureSource *records() const { return mRecords.get(); }
    const VbasRecordFields &recordFields() const { return mRecordFields; }
    //! The QI fields' own names (as the records table spells them, whatever the letter case of QI_FIELDS), in QI order.
    const QStringList &qiNames() const { return mQiNames; }
    QgsFields regionFields() const;
    //! Each region's value of a field of the regions as text, in the regions' order (a NULL is a value of its own); throws for a field the regions lack.
    std::vector<std::string> regionValues( const VbasRegions &regions, const QString &field ) const;
    const QString &regionIdField() const { return mRegionIdField; }
    vbasqgis::WkbType regionsWkbType() const;
    QgsCoordinateReferenceSystem regionsCrs() const;
    //! Where each input lives, for the output checks.
    const QList<VbasLocation> &locations() const { return mLocations; }

  private:
    //! The counting pass over rows, or over the groups of the source.
    VbasRecords count( const VbasRegions &regions, const VbasCountedRows &rows, QgsProcessingFeedback *feedback ) const;
    //! The records row by row: through GDAL's stream where it gives them as QGIS would, else through QGIS; said in the log.
    std::function<bool( QgsFeature & )> recordRows( const QgsFeatureRequest &request, QgsProcessingFeedback *feedback ) const;
    //! Refuses a records value that QGIS would read other than stored (VbasStoredTable).
    void checkStoredRecords() const;
    //! count() of the rows, with checkStoredRecords() beside it in a second thread; the check's refusal comes first.
    VbasRecords countBesideCheck( const VbasRegions &regions, const VbasCountedRows &rows, QgsProcessingFeedback *feedback ) const;
    //! For the refusal of records whose region ids the regions lack: a sentence naming the regions' field that holds all of ids (REGION_ID mistaken, say fid), or nothing.
    QString regionIdHint( const QStringList &ids ) const;

    std::unique_ptr<QgsProcessingFeatureSource> mRegions;
    std::unique_ptr<QgsProcessingFeatureSource> mRecords;
    std::unique_ptr<QgsProcessingFeatureSource> mSites;
    std::unique_ptr<QgsProcessingFeatureSource> mLookup;
    QString mRegionIdField;
    QString mPopulationField;
    int mRegionPoint = 0;
    bool mDropOutside = false;
    bool mRelease = false;                     //!< the algorithm writes a release: the counting pass is row by row and keeps the rows (keepForRelease)
    QString mScratchPrefix;                    //!< of the rows kept for the release
    std::size_t mMemoryBudget = 0;             //!< bytes of the rows kept for the release held in memory
    std::optional<VbasGroupedCount> mGrouped;  //!< the records counted by their data source
    QString mNotGrouped;                       //!< why not, when asked to
    std::optional<VbasStreamedRows> mStreamed; //!< the records read row by row through GDAL's stream or PostgreSQL's COPY
    QString mNotStreamed;                      //!< why not: they are read through QGIS
    QgsCoordinateTransformContext mTransformContext;
    VbasRecordFields mRecordFields;
    QStringList mQiNames;
    QList<VbasLocation> mLocations;
    std::unique_ptr<VbasStoredTable> mStoredRegions; //!< the regions as stored, when their source is one VbasStoredTable reads
    std::unique_ptr<VbasStoredTable> mStoredRecords; //!< the records as stored, likewise
    VbasUnchangedFiles mRecordFiles;                 //!< the records' files, when their source reads no snapshot: unchanged across the read
};
