#include "plugin/support/vbaslinefeedback.h"

#include <qgsapplication.h>

#include <QCoreApplication>

#include <algorithm>

namespace
{

//! Whether this is qgis_process printing progress as text: a run without --json.
bool progressAsText()
{
  return QgsApplication::platform() == QLatin1String( "qgis_process" ) && !QCoreApplication::arguments().contains( QStringLiteral( "--json" ) );
}

//! Whether feedback is qgis_process's own ConsoleFeedback, which prints the progress it is given.
bool isConsole( const QgsProcessingFeedback *feedback )
{
  return QLatin1String( feedback->metaObject()->className() ) == QLatin1String( "ConsoleFeedback" );
}

} // namespace

VbasLineFeedback::VbasLineFeedback( QgsProcessingFeedback *feedback )
  : QgsProcessingMultiStepFeedback( 1, feedback )
{
  // QgsProcessingMultiStepFeedback follows a cancel to come; one that came already is taken here.
  if ( feedback->isCanceled() )
    cancel();
  if ( !progressAsText() )
    return;
  // Connected after qgis_process's own printing, so called after it.
  if ( isConsole( feedback ) )
  {
    connect( feedback, &QgsFeedback::progressChanged, this, [this]( double progress ) { followProgress( progress ); } );
    return;
  }
  // A model's step: qgis_process prints the model's progress, which this one moves by an unknown
  // share, and the model may have printed on the line already. Any move may have printed: the line
  // is ended, at the cost of an empty line where nothing was printed.
  mLineOpen = true;
  connect( feedback, &QgsFeedback::progressChanged, this, [this]( double ) { mLineOpen = true; } );
}

void VbasLineFeedback::followProgress( double progress )
{
  // As qgis_process's ConsoleFeedback::showTerminalProgress counts: a tick per 2.5 %, printed once.
  const int tick = std::clamp( static_cast<int>( progress * 0.4 ), 0, 40 );
  if ( tick <= mTick )
    return;
  mTick = tick;
  mLineOpen = tick < 40; // the 40th tick ends the line itself (" - done.")
}

void VbasLineFeedback::endLine()
{
  if ( !mLineOpen )
    return;
  mLineOpen = false;
  QgsProcessingMultiStepFeedback::pushInfo( QString() ); // qgis_process prints it as a line end
}

void VbasLineFeedback::setProgressText( const QString &text )
{
  endLine();
  QgsProcessingMultiStepFeedback::setProgressText( text );
}

void VbasLineFeedback::reportError( const QString &error, bool fatalError )
{
  endLine();
  QgsProcessingMultiStepFeedback::reportError( error, fatalError );
}

void VbasLineFeedback::pushWarning( const QString &warning )
{
  endLine();
  QgsProcessingMultiStepFeedback::pushWarning( warning );
}

void VbasLineFeedback::pushInfo( const QString &info )
{
  endLine();
  QgsProcessingMultiStepFeedback::pushInfo( info );
}

void VbasLineFeedback::pushCommandInfo( const QString &info )
{
  endLine();
  QgsProcessingMultiStepFeedback::pushCommandInfo( info );
}

void VbasLineFeedback::pushDebugInfo( const QString &info )
{
  endLine();
  QgsProcessingMultiStepFeedback::pushDebugInfo( info );
}

void VbasLineFeedback::pushConsoleInfo( const QString &info )
{
  endLine();
  QgsProcessingMultiStepFeedback::pushConsoleInfo( info );
}
