// Every algorithm as the provider registers it: an exception other than QgsProcessingException (from the core,
// a solver, a worker thread, the standard library) ends the run as a QgsProcessingException naming the algorithm
// and what failed. QGIS catches only QgsProcessingException; any other escapes to Qt's event loop, which
// qgis_process then never leaves. The run's own clean-up (VbasRun) has removed the outputs by then. The
// algorithms report through VbasLineFeedback, which keeps log lines off qgis_process's progress line.
#pragma once

#include "plugin/support/vbaslinefeedback.h"

#include <qgsprocessingalgorithm.h>
#include <qgsprocessingfeedback.h>

#include <exception>
#include <new>

//! Why e failed, for a message: its own text; running out of memory said as such.
inline QString vbasFailureText( const std::exception &e )
{
  if ( dynamic_cast<const std::bad_alloc *>( &e ) )
    return QObject::tr( "out of memory (%1)" ).arg( QString::fromLocal8Bit( e.what() ) );
  return QString::fromLocal8Bit( e.what() );
}

template<typename Algorithm>
class VbasGuarded : public Algorithm
{
  public:
    VbasGuarded *createInstance() const override { return new VbasGuarded(); }

  protected:
    bool prepareAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override
    {
      return vbasWithLines( feedback, [&]( QgsProcessingFeedback *lines ) { return guard( [&] { return Algorithm::prepareAlgorithm( parameters, context, lines ); } ); } );
    }

    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context, QgsProcessingFeedback *feedback ) override
    {
      return vbasWithLines( feedback, [&]( QgsProcessingFeedback *lines ) { return guard( [&] { return Algorithm::processAlgorithm( parameters, context, lines ); } ); } );
    }

  private:
    template<typename Work>
    auto guard( Work work ) const
    {
      try
      {
        return work();
      }
      catch ( const QgsProcessingException & )
      {
        throw;
      }
      catch ( const std::exception &e )
      {
        throw QgsProcessingException(
          QObject::tr( "%1 stopped on an error it did not expect: %2. Nothing was written; please report it with the log." ).arg( this->displayName(), vbasFailureText( e ) ) );
      }
      catch ( ... )
      {
        throw QgsProcessingException( QObject::tr( "%1 stopped on an unknown error. Nothing was written; please report it with the log." ).arg( this->displayName() ) );
      }
    }
};
