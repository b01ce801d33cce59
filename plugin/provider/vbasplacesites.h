#pragma once

#include "plugin/provider/vbasalgorithm.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbassteps.h"

#include <QElapsedTimer>

class VbasPlaceSites : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "placesites" ); }
    QString displayName() const override { return QObject::tr( "Place sites" ); }
    QString shortHelpString() const override;
    VbasPlaceSites *createInstance() const override { return new VbasPlaceSites(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    QElapsedTimer mTimer;
    VbasInputs mInputs;
    std::size_t mSites = 0;
    VbasPlacementSettings mPlacement;
    VbasConstraintSettings mConstraints;
    VbasOutputSet mOutputs;
};
