// The clone's own folders a test reads or writes (the sample layers, the built plugin folder, ...),
// which ctest gives each test in its environment (tests/CMakeLists.txt, vbas_test_environment). They
// are not compiled into the tests: an object file that holds no path of its clone is the same in
// every clone, and ccache keeps it from one clone to the next (docs/development.md, CI).
#pragma once

#include <QByteArray>
#include <QString>

#include <cstdio>
#include <cstdlib>

//! The folder the environment variable name names; a test run without it (not through ctest) stops at once, saying so.
inline QString ctestPath( const char *name )
{
  const QByteArray value = qgetenv( name );
  if ( value.isEmpty() )
  {
    std::fprintf( stderr, "%s is not set: run the tests through ctest (docs/development.md, Tests)\n", name );
    std::exit( 2 );
  }
  return QString::fromLocal8Bit( value );
}
