#pragma once

#include "provider/vbasalgorithm.h"
#include "steps/vbasadjacency.h"
#include "inputs/vbasinputs.h"
#include "outputs/vbasoutputset.h"
#include "steps/vbassteps.h"

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
    QElapsedTimer mTimer;
    VbasInputs mInputs;
    VbasSiteCountSettings mSiteCount;
    VbasPlacementSettings mPlacement;
    VbasConstraintSettings mConstraints;
    VbasBorderSteps mBorderSteps;
    VbasReleaseSettings mRelease;
    double mRiskThreshold = 0.2;
    QList<QPair<QString, QString>> mRunParameters;
    VbasOutputSet mOutputs;
};
