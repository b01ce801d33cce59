#include "plugin/support/vbaslinefeedback.h"

#include <QCoreApplication>

#include <algorithm>

namespace
{

//! Whether feedback is qgis_process's own, printing progress as text: its ConsoleFeedback, in a run without --json.
bool printsProgressLine( const QgsProcessingFeedback *feedback )
{
  return QLatin1String( feedback->metaObject()->className() ) == QLatin1String( "ConsoleFeedback" ) && !QCoreApplication::arguments().contains( QStringLiteral( "--json" ) );
}

} // namespace

VbasLineFeedback::VbasLineFeedback( QgsProcessingFeedback *feedback )
  : QgsProcessingMultiStepFeedback( 1, feedback )
{
  // QgsProcessingMultiStepFeedback follows a cancel to come; one that came already is taken here.
  if ( feedback->isCanceled() )
    cancel();
  // Connected after qgis_process's own printing, so called after it.
  if ( printsProgressLine( feedback ) )
    connect( feedback, &QgsFeedback::progressChanged, this, [this]( double progress ) { followProgress( progress ); } );
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
