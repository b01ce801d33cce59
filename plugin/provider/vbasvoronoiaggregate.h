#pragma once

#include "pipeline/vbaspartitionsearch.h"
#include "provider/vbasalgorithm.h"
#include "inputs/vbasinputs.h"
#include "outputs/vbasoutputset.h"
#include "pipeline/vbassteps.h"

#include <QElapsedTimer>

class VbasVoronoiAggregate : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "voronoiaggregate" ); }
    QString displayName() const override { return QObject::tr( "Voronoi aggregation" ); }
    QString shortHelpString() const override;
    VbasVoronoiAggregate *createInstance() const override { return new VbasVoronoiAggregate(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    QElapsedTimer mTimer;
    VbasInputs mInputs;
    VbasReleaseSettings mRelease;
    VbasBorderSteps mBorderSteps;
    VbasConstraintSettings mConstraints;
    VbasOutputSet mOutputs;
};
