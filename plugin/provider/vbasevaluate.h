#pragma once

#include "provider/vbasalgorithm.h"
#include "inputs/vbasinputs.h"
#include "outputs/vbasoutputset.h"

class VbasEvaluate : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "evaluate" ); }
    QString displayName() const override { return QObject::tr( "Evaluate release" ); }
    QString shortHelpString() const override;
    VbasEvaluate *createInstance() const override { return new VbasEvaluate(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    VbasInputs mInputs;
    std::int64_t mK = 5;
    double mRunSeconds = 0;
    double mRiskThreshold = 0.2;
    QList<QPair<QString, QString>> mRunParameters;
    VbasOutputSet mOutputs;
};
