// Folder provider/: the Processing provider and one QgsProcessingAlgorithm per file, on the VbasAlgorithm base.
// The VBAS Processing provider (id "vbas").
#pragma once

#include <qgsprocessingprovider.h>

class VbasProvider : public QgsProcessingProvider
{
  public:
    //! pluginDirectory is the installed plugin folder: its icons/ and its user guide, help/.
    explicit VbasProvider( const QString &pluginDirectory );

    QString id() const override;
    QString name() const override;
    QString longName() const override;
    QIcon icon() const override;
    QString svgIconPath() const override;

  protected:
    void loadAlgorithms() override;
};
