// The libraries behind a device kind's kernels (oneDNN on the CPU, say), each
// with a line that describes it as built and as it runs here: version, the
// instruction set it chose, its threads. `hearth env` prints them, so a bug
// report says which code computed a convolution without naming any backend
// above this layer. Backends register from static initialisers.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hearth/core/device.h"

namespace hearth {

struct BackendLibrary {
  std::string name;
  // Called when asked, not at registration: describing may start the library.
  std::function<std::string()> describe;
};

void register_backend_library(DeviceKind kind, BackendLibrary library);
// In registration order.
std::vector<BackendLibrary> backend_libraries(DeviceKind kind);

}  // namespace hearth
