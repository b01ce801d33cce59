// The core's progress and cancel interface: a long loop reports through it and stops when asked. The
// core stays free of QGIS types; the plugin adapts its QgsProcessingFeedback to it.
#pragma once

#include <string>

namespace vbas
{

class Progress
{
  public:
    virtual ~Progress() = default;
    //! Whether the user asked to stop: the loop then ends at its next consistent state.
    virtual bool canceled() const = 0;
    //! percent (0-100) of the current stage and a one-line status, counts only (never data values).
    virtual void report( double percent, const std::string &status ) = 0;
};

} // namespace vbas
