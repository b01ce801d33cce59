// Placeholder: being written.
#include "e2e_util.h"

#include <QtTest>

class TestFaults : public QObject
{
    Q_OBJECT
  private slots:
    void placeholder() {}
};

QTEST_GUILESS_MAIN( TestFaults )
#include "test_faults.moc"
