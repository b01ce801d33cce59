#pragma once

#include "plugin/provider/vbasalgorithm.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbassteps.h"

#include <QElapsedTimer>

class VbasEstimateSiteCount : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "estimatesitecount" ); }
    QString displayName() const override { return QObject::tr( "Estimate site count" ); }
    QString shortHelpString() const override;
    VbasEstimateSiteCount *createInstance() const override { return new VbasEstimateSiteCount(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    QElapsedTimer mTimer;
    VbasInputs mInputs;
    VbasSiteCountSettings mSettings;
    VbasOutputSet mOutputs; //!< none: the results are numbers
};
