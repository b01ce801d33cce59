// What a path names when it is not a regular file: outputs replace only regular files, and an input
// file that is a FIFO or a device would block or never end, so both refuse the others by name.
#pragma once

#include <QString>

//! Whether a symbolic link is looked through (an input read through it) or is itself the file (an output would replace it).
enum class VbasLinks
{
  Follow,
  AsFile,
};

/**
 * What path names when it is neither a regular file nor missing, for a message: "a folder", "a FIFO",
 * "a socket", "a device", "a symbolic link" (links AsFile only) or "not a regular file"; empty for
 * a regular file and for a path that names nothing (opening it reports that).
 */
QString vbasSpecialFileKind( const QString &path, VbasLinks links );
