// The thin base of the VBAS Processing algorithms: their group, icon and help page, and the
// declarations and help texts of the parameters and outputs they share. Reading, the steps and writing
// are collaborators: VbasInputs, vbassteps.h, VbasOutputSet and the writers.
#pragma once

#include "plugin/support/vbasqgiscompat.h"

#include <qgsprocessingalgorithm.h>

class VbasAlgorithm : public QgsProcessingAlgorithm
{
  public:
    QString group() const override;
    QString groupId() const override;
    QIcon icon() const override;
    QString svgIconPath() const override;
    //! The file URL of this algorithm's page of the installed user guide, help/algorithms/<name>.html; empty without that page.
    QString helpUrl() const override;
    //! Whole-number parameters (K, site counts, SEED) are whole numbers in range, refused with the user's value otherwise.
    bool checkParameterValues( const QVariantMap &parameters, QgsProcessingContext &context, QString *message = nullptr ) const override;

    //! The installed plugin folder, with icons/ and help/ (set once, by the provider).
    static void setPluginDirectory( const QString &directory );
    static QString pluginDirectory();

  protected:
    // Parameter declarations (initAlgorithm) and their help texts.
    //! Where a parameter shows in the dialog: in the main list, or under Advanced Parameters, where QGIS core puts its tuning parameters.
    enum class Shown
    {
      Main,
      Advanced,
    };
    using QgsProcessingAlgorithm::addParameter;
    //! Adds definition with its tooltip: one line in plain words (setHelp); the long help is shortHelpString's and the user guide's.
    void addParameter( QgsProcessingParameterDefinition *definition, const QString &tooltip, Shown shown = Shown::Main );
    //! What POPULATION_FIELD is for: none; the weights of balanced density (and the residents, where the algorithm evaluates); the residents only.
    enum class Population
    {
      None,
      Weights,
      Residents,
    };
    void addRegionsParameters( bool withPoint, Population population );
    enum class Qis
    {
      None,
      Optional,
      Required,
    };
    void addRecordsParameters( Qis qis );
    //! RELEASE_FIELDS and SHUFFLE_MEMORY_MB.
    void addReleaseParameters();
    //! SEED (advanced, empty: a fresh one) and the SEED output.
    void addSeedParameter( const QString &description, const QString &tooltip );
    //! Site count parameters and the SITES, CUTOFF, ENTROPY, MAXCOMBS, RECORDS, POPULATION outputs.
    void addSiteCountParameters();
    //! METHOD, SITE_POSITION and ADC's OBJECTIVE, SEEDING, MAX_ITERATIONS, with ADC's outputs.
    void addSitePositionParameter();
    void addPlacementParameters();
    //! MAX_ITERATIONS (advanced): the most trial moves ADC makes.
    void addAdcMovesParameter();
    //! K, with the tooltip of an algorithm that makes a release (or tooltip).
    void addKParameter( const QString &tooltip = QString() );
    //! RISK_MODEL: k-anonymity (k records in every released class) or k-map (k residents of the population table).
    void addRiskModelParameter();
    //! RISK_THRESHOLD: a record above it is at risk; the average risk model's bound.
    void addRiskThresholdParameter();
    static QString riskModelHelp();
    //! COMPACTNESS_BUDGET and RECORD_FLOOR, the constraints of the steps that optimise the aggregates (VbasConstraintSettings); their help text.
    void addConstraintParameters();
    static QString constraintHelp();
    //! CONTIGUOUS: reassign the detached parts of the aggregates (algorithms/aggregation/contiguity.h); its help text.
    void addContiguityParameter();
    static QString contiguityHelp();
    //! REFINE_BOUNDARIES: move single boundary regions between aggregates (algorithms/aggregation/partition_search.h); its help text.
    void addRefinementParameter();
    static QString refinementHelp();
    //! SEARCH, TIME_LIMIT and SEARCH_MOVES: the suppression search after the aggregation.
    void addSearchParameters();
    static QString searchHelp();
    //! HIERARCHIES, INTERVALS, GENERALIZE, SUPPRESSION_LIMIT, LOCAL_SUPPRESSION, LOSS_METRIC and the generalization outputs (pipeline/vbasgeneralization.h).
    //! HIERARCHIES and INTERVALS.
    void addHierarchyParameters();
    void addLocalSuppressionParameter();
    //! The hierarchies, GENERALIZE (withSwitch), SUPPRESSION_LIMIT, LOCAL_SUPPRESSION, LOSS_METRIC and addGeneralizationOutputs.
    void addGeneralizationParameters( bool withSwitch = true );
    //! LEVELS, LATTICE_SIZE, NODES_EVALUATED, RECORDS_STARRED, VALUES_STARRED and addLossOutputs.
    void addGeneralizationOutputs();
    //! LOSS_GENERIC_NUE, LOSS_GENERIC_NUE_NORM, LOSS_PREC, LOSS_LM, LOSS_DM_STAR, LOSS_GC, LOSS_ARE and RECORDS_GENERALIZED.
    void addLossOutputs();
    static QString hierarchyHelp();
    static QString localSuppressionHelp();
    static QString generalizationHelp( bool withSwitch = true );
    static QString generalizationOutputsHelp();
    void addAggregationOutputs();
    //! EVALUATION and a number output per metric (vbas::metrics()).
    void addEvaluationOutputs();
    //! SENSITIVE_FIELD and RISK_THRESHOLD.
    void addEvaluationParameters();
    //! POPULATION_TABLE with its region and count fields (shown as said) and its raise parameter (advanced) (VbasPopulationTable).
    void addPopulationTableParameters( Shown shown, bool withRaise = true );
    //! Whether the dialog starts an optional output as a temporary one, or as [Skip output]. qgis_process, PyQGIS and models write it only when named, either way.
    enum class InDialog
    {
      Skipped,
      Created,
    };
    //! REPORT: the HTML report (docs/outputs.md), a temporary file in the dialog unless skipped.
    void addReportOutput();
    //! A layer output written only when asked for: optional, and skipped in the dialog unless inDialog says otherwise (as the secondary outputs of QGIS's own algorithms).
    void addOptionalSink( const QString &name, const QString &description, vbasqgis::SourceType type, const QString &tooltip, InDialog inDialog = InDialog::Skipped );
    //! Declares a number output unless another step declared it already.
    void addNumberOutput( const QString &name, const QString &description );
    static QString regionsHelp( bool withPoint, Population population );
    static QString recordsHelp( Qis qis );
    static QString releaseHelp();
    static QString siteCountHelp();
    static QString placementHelp();
    static QString adcOutputsHelp();
    QString aggregationOutputsHelp() const;
    static QString evaluationParametersHelp();
    static QString populationTableHelp();
    static QString evaluationOutputsHelp();
    static QString reportHelp();
    //! Which outputs are optional (optionalOutputsHelp), and how every output is written: all or nothing, refused destinations.
    QString outputsHelp() const;
    //! The optional outputs (addOptionalSink, REPORT), written only when asked for, and those the dialog creates by default; empty when there are none.
    QString optionalOutputsHelp() const;
    //! The mark of an output's audience in the help (docs/outputs.md): for the custodian only, or for publication.
    static QString custodianOnly();
    static QString forPublication();
};
