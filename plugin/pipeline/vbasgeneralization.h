// Folder pipeline/: the settings the algorithms share and their calls into the core (algorithms/), beside the regions' borders.
// Generalization chosen with the geography (docs/generalization.md): the QIs' hierarchies (ARX files,
// intervals, value -> "*"), the lattice search with the site count and balanced density placed for
// each node, and the release as written at the node chosen.
#pragma once

#include "algorithms/generalization/generalization_metrics.h"
#include "algorithms/generalization/generalized_release.h"
#include "algorithms/generalization/lattice.h"
#include "plugin/pipeline/vbassteps.h"
#include "plugin/support/vbaslocation.h"

#include <QMap>
#include <QSet>
#include <QStringList>

struct VbasBorderSteps;

//! HIERARCHIES and INTERVALS: the hierarchy file or interval width of each QI that has one.
struct VbasHierarchySettings
{
    QMap<QString, vbas::Hierarchy> files; //!< QI field -> its hierarchy, read from HIERARCHIES
    QMap<QString, QString> paths;         //!< QI field -> its hierarchy file, as given
    QMap<QString, QString> digests;       //!< QI field -> the SHA-256 of its hierarchy file (hex)
    QMap<QString, double> intervals;      //!< QI field -> interval width, from INTERVALS
    std::vector<bool> releasedAsText;     //!< per QI of QI_FIELDS: written into a text field (a file, intervals, or a text field): readFieldTypes

    /**
     * Reads the hierarchy files (each named after a QI field, in any letter case, as QI_FIELDS are
     * matched: age_group.csv) and the widths (field=width, the field matched alike), each keyed by
     * the QI's name in qiNames; refuses a file named after no QI, two files for one QI, a QI with a
     * file and intervals, a bad width and a hierarchy file refused (vbasReadHierarchyFile); appends
     * the files to locations (no output may replace them).
     */
    static VbasHierarchySettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QStringList &qiNames,
                                       QList<VbasLocation> &locations );

    //! Sets releasedAsText from the records' fields and the QIs' indexes among them (VbasRecordFields::qis).
    void readFieldTypes( const QgsFields &recordFields, const QList<int> &qis );

    bool any() const { return !files.isEmpty() || !intervals.isEmpty(); }
    //! The QI fields released as text: those with a hierarchy file or intervals (their labels are text).
    QSet<QString> textFields() const;

    /**
     * What the region lookup records of the hierarchies (its hierarchies field, docs/outputs.md):
     * each QI in order, "age_group=age_group.csv sha256:<hex>" (its file's name and digest),
     * "age=5" (its interval width) or "sex=*" (value -> *), joined by "; ".
     */
    QString recorded( const QStringList &qiNames ) const;

    /**
     * Refuses, naming the QI and the file or width, hierarchies that are not those a lookup
     * recorded (recorded() of the run that made the release): another file's bytes, another
     * width, or a file, intervals or neither where the release had another.
     */
    void checkRecorded( const QString &recorded, const QStringList &qiNames ) const;
};

//! A label of a hierarchy as the release writes it: its text, but "*" as NULL in a field that is not text.
QVariant vbasWrittenLabel( const std::string &label, bool text );
//! A starred value as the release writes it: "*", or NULL in a field that is not text.
QVariant vbasWrittenStar( bool text );

//! Refuses local suppression of more QIs than it takes (vbas::kMaxLocallySuppressedQis).
void vbasRefuseLocalSuppression( std::size_t qiCount );

//! VbasHierarchySettings, GENERALIZE, SUPPRESSION_LIMIT, LOCAL_SUPPRESSION and LOSS_METRIC.
struct VbasGeneralizationSettings
{
    bool active = false; //!< search the lattice: GENERALIZE, or a hierarchy file or intervals given
    VbasHierarchySettings hierarchies;
    double suppressionLimit = 0.05; //!< share of the records
    bool localSuppression = true;
    vbas::Objective objective = vbas::Objective::GenericNue;

    //! Reads the settings, refusing besides more QIs than local suppression takes.
    static VbasGeneralizationSettings read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QStringList &qiNames,
                                            QList<VbasLocation> &locations );

    //! Refuses, before anything is read, the steps generalization does not combine with: ADC, CONTIGUOUS, REFINE_BOUNDARIES and SEARCH.
    void refuseOtherSteps( const VbasPlacementSettings &placement, const VbasBorderSteps &borderSteps ) const;
};

//! The chosen node and its release as written.
struct VbasGeneralized
{
    std::vector<vbas::QiHierarchy> qis;
    vbas::LatticeSearch search; //!< its best is the chosen node
    VbasSiteCount siteCount;    //!< of the chosen node
    VbasPlacement placement;    //!< of the chosen node's site count
    vbas::WrittenClasses written;
    vbas::Release release;                   //!< over the written classes: what the outputs and the metrics count
    vbas::SparseHistograms writtenResidents; //!< per region: written class -> residents of the population table (empty without one)
    VbasRecords writtenRecords { 0 };        //!< histograms (and sensitive pairs) over the written classes
    vbas::GeneralizationMetrics metrics;
    QStringList qiNames;
    QString hierarchies; //!< the hierarchies it was generalized with, as the region lookup records them (VbasHierarchySettings::recorded)

    const vbas::NodeRelease &node() const { return *search.best; }
    //! "age_group = 2 of 4, sex = 0 of 1": each QI's level and its hierarchy's top level.
    QString levels() const;
};

/**
 * Builds each QI's hierarchy over its observed values (a value missing from its file is refused,
 * naming it), searches the lattice (site count and balanced density for each node, each count's
 * placement computed once), logs the lattice size, the nodes evaluated and pruned, and refuses a
 * lattice where no node keeps the suppression limit. A cancel throws, as every canceled run does.
 * With population (read for a generalized release), the written classes' residents are counted,
 * and under k-map (release's RISK_MODEL) every class is below k when it has fewer than k residents.
 */
VbasGeneralized vbasGeneralize( const VbasGeneralizationSettings &settings, const VbasSiteCountSettings &siteCount, const VbasPlacementSettings &placement, const VbasConstraintSettings &constraints,
                                const VbasRegions &regions, const VbasRecords &records, const VbasReleaseSettings &release, const VbasPopulation *population, const QStringList &qiNames,
                                QgsProcessingFeedback *feedback );

//! A release's information loss and its generalization metrics.
struct VbasReleaseLoss
{
    vbas::NodeLoss loss;
    vbas::GeneralizationMetrics metrics;
};

/**
 * The release at the levels a region lookup records (qi_levels, as VbasGeneralized::levels writes
 * them) in the lookup's aggregation (regionAggregate), with local suppression or without, population
 * and release as in vbasGeneralize: what vbas:evaluate measures. Refuses levels that name other QIs than QI_FIELDS, in another order, or a
 * level or top that the QI's hierarchy (its file, its intervals, or value -> "*") does not have.
 */
VbasGeneralized vbasGeneralizedAt( const VbasHierarchySettings &hierarchies, bool localSuppression, const QString &levels, const VbasRecords &records, const std::vector<std::size_t> &regionAggregate,
                                   const VbasReleaseSettings &release, const VbasPopulation *population, const QStringList &qiNames, QgsProcessingFeedback *feedback );

/**
 * The information loss of a release without generalization (every QI at level 0, the ECs the release
 * suppressed dropped), on the scale of generalized runs: each QI's hierarchy value -> "*".
 */
VbasReleaseLoss vbasReleaseLoss( const VbasRecords &records, const vbas::Release &release );

//! LOSS_GENERIC_NUE, LOSS_GENERIC_NUE_NORM, LOSS_PREC, LOSS_LM, LOSS_DM_STAR, LOSS_GC, LOSS_ARE and RECORDS_GENERALIZED.
QVariantMap vbasLossOutputs( const VbasReleaseLoss &loss );

//! UNITS_IN_PIECES, UNITS_RELEASING_NOTHING and COMPACTNESS_USED (1: balanced density's own) of the chosen node's release.
QVariantMap vbasGeneralizedAggregateOutputs( const VbasGeneralized &generalized, const VbasRegions &regions, const vbas::Criterion &criterion, QgsProcessingFeedback *feedback );

//! What the search chose and did, as rows (what, value) for the report.
QList<QPair<QString, QString>> vbasGeneralizationFacts( const VbasGeneralized &generalized );

//! LEVELS, LATTICE_SIZE, NODES_EVALUATED, RECORDS_STARRED, VALUES_STARRED, and the chosen node's vbasLossOutputs.
QVariantMap vbasGeneralizationOutputs( const VbasGeneralized &generalized );
