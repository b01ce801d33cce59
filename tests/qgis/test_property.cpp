// Placeholder: being written.
#include "qgis_test_util.h"

class TestProperty : public QObject
{
    Q_OBJECT
  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
};

QTEST_MAIN( TestProperty )
#include "test_property.moc"
