// Base of the VBAS Processing algorithms: the parameters they share, and reading the regions layer
// and the records table into the core's representation (SPEC 2) in one streaming pass.
#pragma once

#include "aggregation.h"
#include "balanced_density.h"
#include "histograms.h"
#include "metrics.h"
#include "qi_encoding.h"
#include "site_count.h"
#include "string_index.h"
#include "suppression.h"

#include <qgscoordinatereferencesystem.h>
#include <qgscoordinatetransform.h>
#include <qgsfeaturesink.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingutils.h>

#include <QElapsedTimer>
#include <memory>

//! The initial regions, read once.
struct VbasRegions
{
    QgsCoordinateReferenceSystem crs;        //!< of the regions layer
    QgsCoordinateReferenceSystem workingCrs; //!< distances are computed here (projected)
    QgsCoordinateTransform toWorking;
    QgsField idField;
    QVector<QVariant> ids;                   //!< region ids, in layer order
    vbas::StringIndex index;                 //!< region id (as UTF-16 text) -> region index
    QVector<QgsGeometry> geometries;         //!< repaired geometries, layer CRS
    std::vector<vbas::Point> points;         //!< region points, working CRS
    std::vector<double> population;          //!< population field values; empty when the basis is records
    vbas::Extent extent;                     //!< of the regions, working CRS
    QgsWkbTypes::Type wkbType = QgsWkbTypes::Unknown;

    //! The index of the region with this id, matched as text; nothing for NULL or an unknown id.
    std::optional<std::uint32_t> find( const QVariant &id ) const;
};

//! The records, encoded: QI classes and per-region sparse histograms.
struct VbasRecords
{
    VbasRecords( std::size_t qiCount, std::size_t regionCount )
      : encoder( qiCount )
      , builder( regionCount )
    {}
    vbas::QiEncoder encoder;
    vbas::HistogramBuilder builder;      //!< region, class and count of each record row, in reading order
    std::vector<QgsFeatureId> featureIds; //!< of each record row, in reading order
    vbas::SparseHistograms histograms;
};

//! Sites read from a point layer, ordered by site id, in the working CRS.
struct VbasSites
{
    std::vector<vbas::Point> points;
    std::vector<qlonglong> ids;
};

//! What site number approximation computed (SPEC 3.1).
struct VbasSiteCount
{
    std::size_t sites = 0;
    double cutoff = 0;
    double entropy = 0;
    double maxCombs = 0;
    double population = 0;
};

//! An aggregation with its suppression, as written to the outputs.
struct VbasRelease
{
    vbas::Aggregation aggregation;
    vbas::Suppression suppression;
    std::vector<vbas::Point> regionSites; //!< site of each region's aggregate, working CRS
    std::vector<qlonglong> aggregateSiteIds;
};

class VbasAlgorithm : public QgsProcessingAlgorithm
{
  public:
    QString group() const override;
    QString groupId() const override;
    QIcon icon() const override;
    QString svgIconPath() const override;

  protected:
    //! Directory of the SVG icons, set by the provider.
    static QString iconFile( const QString &name );

    // Parameter declarations (initAlgorithm) and their help texts.
    void addRegionsParameters( bool withPoint, bool withPopulation );
    void addRecordsParameters( bool withQis );
    //! Site count parameters and the SITES, CUTOFF, ENTROPY, MAXCOMBS, RECORDS, POPULATION outputs.
    void addSiteCountParameters();
    void addPlacementParameters();
    void addKParameter();
    void addAggregationOutputs();
    void addEvaluationOutputs();
    //! Declares a number output unless another step declared it already.
    void addNumberOutput( const QString &name, const QString &description );
    static QString regionsHelp( bool withPoint, bool withPopulation );
    static QString recordsHelp( bool withQis );
    static QString siteCountHelp();
    static QString placementHelp();
    static QString aggregationOutputsHelp();
    static QString evaluationOutputsHelp();

    //! The feature source of parameter name, or a QgsProcessingException saying it is invalid.
    std::unique_ptr<QgsProcessingFeatureSource> resolveSource( const QVariantMap &parameters, const QString &name, QgsProcessingContext &context ) const;
    //! Resolves the regions and records sources (prepareAlgorithm).
    void prepareInputs( const QVariantMap &parameters, QgsProcessingContext &context, bool withQis );

    // Steps shared by the components and the whole pipeline (processAlgorithm).
    VbasRegions readRegions( QgsProcessingContext &context, QgsProcessingFeedback *feedback ) const;
    VbasRecords readRecords( const VbasRegions &regions, QgsProcessingFeedback *feedback ) const;
    //! Population of each region on the chosen basis (SPEC 3.6 item 3).
    static std::vector<double> regionPopulation( const VbasRegions &regions, const VbasRecords &records );
    //! Sites of a point layer: its site_id field, or 1, 2, ... in layer order without one.
    static VbasSites readSites( QgsFeatureSource *source, const VbasRegions &regions, QgsProcessingContext &context );
    static void setSiteCountOutputs( const VbasSiteCount &siteCount, const VbasRecords &records, QVariantMap &outputs );
    VbasSiteCount estimateSiteCount( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, const VbasRecords &records, QgsProcessingFeedback *feedback ) const;
    vbas::Placement placeSites( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, const VbasRecords &records, std::size_t sites ) const;
    //! Writes the placed sites (layer CRS); returns the output layer id.
    QString writeSites( const QVariantMap &parameters, const QString &name, QgsProcessingContext &context, const VbasRegions &regions, const vbas::Placement &placement ) const;
    //! Voronoi aggregation and suppression with the sites (working CRS, site ids), writing AGGREGATED,
    //! LOOKUP, VORONOI and ANONYMIZED; fills outputs with their ids.
    VbasRelease aggregateAndRelease( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, VbasRecords &records,
                                     const std::vector<vbas::Point> &sites, const std::vector<qlonglong> &siteIds, QVariantMap &outputs, QgsProcessingFeedback *feedback ) const;
    //! Evaluation (SPEC 3.4, paper measurements) written to the EVALUATION table and the number outputs.
    void writeEvaluation( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, const VbasRecords &records,
                          const VbasRelease &release, double runtime, QVariantMap &outputs ) const;

    static void throwIfCanceled( QgsProcessingFeedback *feedback );
    //! Throws a QgsProcessingException for a sink that could not be created.
    static void checkSink( const QgsFeatureSink *sink, const QVariantMap &parameters, const QString &name );

    std::unique_ptr<QgsProcessingFeatureSource> mRegionsSource;
    std::unique_ptr<QgsProcessingFeatureSource> mRecordsSource;
    QString mRegionIdField;
    QString mPopulationField;
    int mRegionPoint = 0;
    QString mRecordRegionField;
    QStringList mQiFields;
    QString mCountField;
    std::int64_t mK = 5;
    QElapsedTimer mTimer; //!< started in prepareInputs: the running time of the run
};
