#pragma once

#include "plugin/provider/vbasalgorithm.h"
#include "plugin/pipeline/vbaspartitionsearch.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbaspopulationtable.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/outputs/vbasreport.h"
#include "plugin/pipeline/vbasgeneralization.h"
#include "plugin/pipeline/vbassteps.h"

#include <QElapsedTimer>

class VbasAnonymize : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "anonymize" ); }
    QString displayName() const override { return QObject::tr( "Anonymize (whole VBAS pipeline)" ); }
    QString shortHelpString() const override;
    VbasAnonymize *createInstance() const override { return new VbasAnonymize(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    //! The pipeline with generalization (pipeline/vbasgeneralization.h): the lattice search, then its release.
    QVariantMap processGeneralized( const VbasRegions &regions, const VbasRecords &records, QgsProcessingContext &context, QgsProcessingMultiStepFeedback &steps, QgsProcessingFeedback *feedback );
    //! The release's outputs, the evaluation and the report; outputs the number outputs so far.
    QVariantMap writeRelease( const VbasRegions &regions, const VbasRecords &records, const VbasRecords &measured, const std::vector<vbas::Point> &sites, const vbas::Release &release,
                              QVariantMap outputs, QgsProcessingContext &context, QgsProcessingMultiStepFeedback &steps, QgsProcessingFeedback *feedback, const VbasGeneralized *generalized );

  private:
    QElapsedTimer mTimer;
    VbasInputs mInputs;
    VbasSiteCountSettings mSiteCount;
    VbasPlacementSettings mPlacement;
    VbasConstraintSettings mConstraints;
    VbasBorderSteps mBorderSteps;
    VbasReleaseSettings mRelease;
    VbasGeneralizationSettings mGeneralization;
    std::unique_ptr<VbasPopulationTable> mPopulationTable; //!< nothing without POPULATION_TABLE
    std::optional<VbasPopulation> mPopulation;             //!< read at the start of the run, before anything is written
    double mRiskThreshold = 0.2;
    VbasRunParameters mRunParameters;
    VbasOutputSet mOutputs;
};
