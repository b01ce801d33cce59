// What every test folder's helpers share: CHECKED, which stops a test function when a helper it
// calls recorded a failure, and the tail of a process's output for failure messages.
#pragma once

#include <QByteArray>
#include <QString>
#include <QtTest>

// Stops the calling test function when a helper recorded a failure.
#define CHECKED( call ) \
  do \
  { \
    call; \
    if ( QTest::currentTestFailed() ) \
      return; \
  } while ( false )

namespace vbastest
{

//! The last n characters of a process's output, for failure messages.
inline QString tail( const QByteArray &bytes, int n = 2000 )
{
  const QString s = QString::fromUtf8( bytes );
  return s.size() <= n ? s : s.right( n );
}

} // namespace vbastest
