// Placeholder: being written.
#include "qgis_test_util.h"

class TestReleaseSafety : public QObject
{
    Q_OBJECT
  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
};

QTEST_MAIN( TestReleaseSafety )
#include "test_release_safety.moc"
