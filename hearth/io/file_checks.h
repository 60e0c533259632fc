// Checks every file reader makes before opening a path for reading.
#pragma once

#include <string>

namespace hearth::io {

// Throws IoError "<component> <path>: ..." when `path` exists but is not a
// regular file (after following symlinks): a FIFO would block the open or the
// read forever, a device or /proc file reads without end, a directory fails
// obscurely. A missing path passes, so the caller reports it as before.
void check_regular_file(const std::string& path, const std::string& component);

}  // namespace hearth::io
