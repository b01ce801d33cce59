#pragma once

#include "plugin/provider/vbasalgorithm.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbasgeneralization.h"
#include "plugin/pipeline/vbassteps.h"

#include <QElapsedTimer>

//! The generalization step of Anonymize as a component for the model: the lattice search with the geography, and its release.
class VbasGeneralize : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "generalize" ); }
    QString displayName() const override { return QObject::tr( "Generalize and aggregate" ); }
    QString shortHelpString() const override;
    VbasGeneralize *createInstance() const override { return new VbasGeneralize(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    QElapsedTimer mTimer;
    VbasInputs mInputs;
    VbasSiteCountSettings mSiteCount;
    VbasPlacementSettings mPlacement;
    VbasReleaseSettings mRelease;
    VbasGeneralizationSettings mGeneralization;
    VbasOutputSet mOutputs;
};
