#pragma once

#include "plugin/provider/vbasalgorithm.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbaspopulationtable.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/outputs/vbasreport.h"
#include "plugin/pipeline/vbascandidates.h"
#include "plugin/pipeline/vbassteps.h"

#include <QVariantMap>

#include <memory>

//! vbas:compare: candidate releases side by side on the user's own data, none written (docs/algorithms/compare.md).
class VbasCompare : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "compare" ); }
    QString displayName() const override { return QObject::tr( "Compare candidate releases" ); }
    QString shortHelpString() const override;
    VbasCompare *createInstance() const override { return new VbasCompare(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    //! The candidate meets the stated release: k at least K and, under the average risk model, a threshold at most RISK_THRESHOLD.
    bool meets( const VbasCandidate &candidate ) const;
    //! The vbas:anonymize command that makes each candidate; empty for a baseline.
    QStringList commands( const QList<VbasCandidate> &candidates, QgsProcessingContext &context ) const;

    VbasInputs mInputs;
    VbasCandidateSettings mSettings;
    std::unique_ptr<VbasPopulationTable> mPopulationTable; //!< nothing without POPULATION_TABLE
    std::int64_t mStatedK = 5;
    QString mLossField; //!< the measure the recommendation minimises
    QVariantMap mParameters;
    VbasRunParameters mRunParameters;
    VbasOutputSet mOutputs;
};
