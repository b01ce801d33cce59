// Placeholder: being written.
#include "qgis_test_util.h"

class TestValueCodec : public QObject
{
    Q_OBJECT
  private slots:
    void initTestCase() { vbastest::initQgisWithProvider(); }
};

QTEST_MAIN( TestValueCodec )
#include "test_value_codec.moc"
