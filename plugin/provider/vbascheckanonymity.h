// vbas:checkanonymity (docs/concepts.md): checks any released table, whatever made it. It recounts the
// equivalence classes from the values the table's file stores (VbasStoredValues), with its own exact
// keys (QDataStream bytes) and the core's AnonymityCheck, and shares no code with the steps that make a release.
#pragma once

#include "anonymity_check.h"
#include "inputs/vbasstoredvalues.h"
#include "provider/vbasalgorithm.h"
#include "outputs/vbasoutputset.h"

#include <qgsprocessingutils.h>

#include <memory>

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
    //! Read as QGIS decodes them: the QI and sensitive fields must be of a type with exact bytes.
    void checkExactTypes() const;
    //! An optional field parameter's index, -1 when empty.
    int optionalField( const QVariantMap &parameters, const QString &name, QgsProcessingContext &context ) const;
    vbas::AnonymityThresholds thresholds( const QVariantMap &parameters, QgsProcessingContext &context ) const;
    //! VIOLATIONS: the QI fields as in the input (as text when the stored values are read), then records, l_diversity, t_closeness and violates.
    VbasOutputSchema violationsSchema() const;

    //! The one reading pass: every row's EC, sensitive value and records.
    vbas::AnonymityCheck recount( QgsProcessingFeedback *feedback ) const;
    //! The exact bytes of a row's values of fields, refused naming the row and field when a value has none.
    QByteArray key( const QgsAttributes &attributes, const QgsAttributeList &fields, std::int64_t row, QgsFeatureId id ) const;
    void log( const vbas::AnonymityReport &report, QgsProcessingFeedback *feedback ) const;
    void writeViolations( VbasOutput &output, const vbas::AnonymityReport &report ) const;

    std::unique_ptr<QgsProcessingFeatureSource> mSource;
    std::unique_ptr<VbasStoredValues> mStored;
    QgsAttributeList mQis;
    int mCount = -1;
    int mSensitive = -1;
    vbas::AnonymityThresholds mThresholds;
    VbasOutputSet mOutputs;
};
