#include "hearth/backends/common/decode_lanes.h"

#include <cstdlib>
#include <string>

#include "hearth/backends/common/common_switches.h"
#include "hearth/core/errors.h"

namespace hearth::backends {

DecodeLanes::DecodeLanes(size_t lanes) : lanes_(lanes) {}

void DecodeLanes::enter() {
  std::unique_lock<std::mutex> lock(mu_);
  lane_free_.wait(lock, [&] { return lanes_ == 0 || active_ < lanes_; });
  ++active_;
}

void DecodeLanes::leave() {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ > 0) --active_;
  lane_free_.notify_one();
}

size_t decode_lanes_from_env() {
  return static_cast<size_t>(switches::image_decode_lanes().get());  // from 0 to 64, default 2
}

}  // namespace hearth::backends
