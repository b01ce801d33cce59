#pragma once

#include "vbasalgorithm.h"

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

};
