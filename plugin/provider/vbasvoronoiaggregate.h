#pragma once

#include "plugin/pipeline/vbaspartitionsearch.h"
#include "plugin/provider/vbasalgorithm.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbassteps.h"

#include <QElapsedTimer>

#include <memory>
#include <optional>

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
    std::unique_ptr<VbasPopulationTable> mPopulationTable; //!< nothing without POPULATION_TABLE
    std::optional<VbasPopulation> mPopulation;             //!< the table as read, for k-map
    VbasBorderSteps mBorderSteps;
    VbasConstraintSettings mConstraints;
    VbasOutputSet mOutputs;
};
