// vbas:checkanonymity (docs/concepts.md): checks any released table, whatever made it, by the recount of
// its equivalence classes from the values its file stores (VbasTableRecount), which shares no code with
// the steps that make a release.
#pragma once

#include "algorithms/metrics/anonymity_check.h"
#include "plugin/inputs/vbasresidentsrecount.h"
#include "plugin/inputs/vbastablerecount.h"
#include "plugin/provider/vbasalgorithm.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbassteps.h"

#include <qgsprocessingutils.h>

#include <memory>
#include <optional>

class VbasCheckAnonymity : public VbasAlgorithm
{
  public:
    QString name() const override { return QStringLiteral( "checkanonymity" ); }
    QString displayName() const override { return QObject::tr( "Check anonymity of a table" ); }
    QString shortHelpString() const override;
    VbasCheckAnonymity *createInstance() const override { return new VbasCheckAnonymity(); }

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override;

  private:
    //! QI_FIELDS, COUNT_FIELD and SENSITIVE_FIELD, refused when missing or in two roles.
    void resolveFields( const QVariantMap &parameters, QgsProcessingContext &context );
    //! An optional field parameter's index, -1 when empty.
    int optionalField( const QVariantMap &parameters, const QString &name, QgsProcessingContext &context ) const;
    vbas::AnonymityThresholds thresholds( const QVariantMap &parameters, QgsProcessingContext &context ) const;
    //! VIOLATIONS: the QI fields as in the input (as text when the stored values are read), then records, l_diversity, t_closeness, violates and residents.
    VbasOutputSchema violationsSchema() const;

    /**
     * The report under k-map: every EC measured (k records not checked), then violatesK set for the ECs
     * below k residents (mResidents), and kept when it fails a check.
     */
    vbas::AnonymityReport kMapReport( const vbas::AnonymityCheck &check ) const;
    //! Under the average risk model, the records' average risk (logged, with whether it meets RISK_THRESHOLD); nothing otherwise.
    std::optional<double> averageRisk( const vbas::AnonymityReport &report, QgsProcessingFeedback *feedback ) const;
    //! The residents of the class key, none without k-map.
    std::optional<std::int64_t> residentsOf( const std::string &key ) const;

    void log( const vbas::AnonymityReport &report, QgsProcessingFeedback *feedback ) const;
    void writeViolations( VbasOutput &output, const vbas::AnonymityReport &report ) const;

    std::unique_ptr<QgsProcessingFeatureSource> mSource;
    std::unique_ptr<VbasTableRecount> mRecount;
    QgsAttributeList mQis;
    int mCount = -1;
    int mSensitive = -1;
    vbas::AnonymityThresholds mThresholds;
    VbasReleaseSettings::Model mModel = VbasReleaseSettings::Model::KAnonymity; //!< RISK_MODEL
    double mAverageThreshold = 1;                                               //!< the average risk model's RISK_THRESHOLD
    std::unique_ptr<VbasResidentsRecount> mResidents;                           //!< k-map, or the average risk model with a table: the residents of each class
    VbasOutputSet mOutputs;
};
