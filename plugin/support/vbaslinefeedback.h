// The feedback the algorithms report to: QGIS's own, passed through unchanged, except at qgis_process's
// terminal. There qgis_process prints progress as dots and tens on one line it ends only at 100 %
// ("0...10...20"), and a log line pushed meanwhile is glued to it ("5015 sites" for "50", then
// "15 sites"). This proxy follows the progress qgis_process prints and ends its line before any log
// line. Only a plain-text qgis_process run prints dots: the desktop, PyQGIS and `--json` runs see
// nothing changed. In a model, an algorithm reports to the model's feedback, which moves qgis_process's
// progress by a share this cannot see: there the line is ended after any move of the progress, and a
// log line may follow an empty line (docs/troubleshooting.md, "Messages QGIS prints").
#pragma once

#include <qgsprocessingfeedback.h>

//! A pass-through feedback (one step of QgsProcessingMultiStepFeedback: progress unscaled) that ends qgis_process's progress line before each log line.
class VbasLineFeedback : public QgsProcessingMultiStepFeedback
{
  public:
    //! Proxies feedback, which must not be null.
    explicit VbasLineFeedback( QgsProcessingFeedback *feedback );

    void setProgressText( const QString &text ) override;
    void reportError( const QString &error, bool fatalError = false ) override;
    void pushWarning( const QString &warning ) override;
    void pushInfo( const QString &info ) override;
    void pushCommandInfo( const QString &info ) override;
    void pushDebugInfo( const QString &info ) override;
    void pushConsoleInfo( const QString &info ) override;
    //! Ends the progress line if qgis_process printed on it since the last line (before an error QGIS prints itself).
    void endLine();

  private:
    //! Follows the ticks qgis_process prints for progress (40 to a run, a line ended at the 40th).
    void followProgress( double progress );

    int mTick = 0;
    bool mLineOpen = false;
};

//! work( feedback as the algorithms report to it ): through a VbasLineFeedback unless feedback is null; the line ended before an exception leaves.
template<typename Work>
auto vbasWithLines( QgsProcessingFeedback *feedback, Work work )
{
  if ( !feedback )
    return work( feedback );
  VbasLineFeedback lines( feedback );
  try
  {
    return work( &lines );
  }
  catch ( ... )
  {
    lines.endLine(); // QGIS prints the exception's message itself
    throw;
  }
}
