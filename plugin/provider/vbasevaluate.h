#pragma once

#include "plugin/provider/vbasalgorithm.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbaspopulationtable.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/outputs/vbasreport.h"
#include "plugin/pipeline/vbasgeneralization.h"

#include <memory>
#include <optional>

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
    /**
     * The generalized release at the lookup's qi_levels; none when the lookup has none (refusing
     * hierarchies given then). Refuses hierarchy files and intervals that are not those the lookup
     * records; warns that they could not be checked when it records none (a lookup written before).
     */
    std::optional<VbasGeneralized> generalizedAt( const VbasLookup &lookup, const VbasRecords &records, const VbasPopulation *population, QgsProcessingFeedback *feedback ) const;

    VbasInputs mInputs;
    VbasHierarchySettings mHierarchies;
    bool mLocalSuppression = true;
    VbasReleaseSettings mRelease; //!< K and RISK_MODEL: the criterion the release was made under
    double mRunSeconds = 0;
    double mRiskThreshold = 0.2;
    std::unique_ptr<VbasPopulationTable> mPopulationTable; //!< nothing without POPULATION_TABLE
    VbasRunParameters mRunParameters;
    VbasOutputSet mOutputs;
};
