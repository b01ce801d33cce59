// Folder provider/: the Processing provider and one QgsProcessingAlgorithm per file, on the VbasAlgorithm base.
// The VBAS Processing provider (id "vbas").
#pragma once

#include <qgsprocessingprovider.h>

class VbasProvider : public QgsProcessingProvider
{
  public:
    //! iconDirectory holds the plugin's SVG icons.
    explicit VbasProvider( const QString &iconDirectory );

    QString id() const override;
    QString name() const override;
    QString longName() const override;
    QIcon icon() const override;
    QString svgIconPath() const override;

  protected:
    void loadAlgorithms() override;
};
