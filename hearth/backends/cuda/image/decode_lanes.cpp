#include "hearth/backends/cuda/image/decode_lanes.h"

#include <cstdlib>
#include <string>

#include "hearth/core/env.h"
#include "hearth/core/errors.h"

namespace hearth::cuda {

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
  const std::string v = env_string("HEARTH_IMAGE_DECODE_LANES");
  if (v.empty()) return 2;
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  HEARTH_CHECK(end != v.c_str() && *end == '\0' && n >= 0 && n <= 64, ValueError,
               "[cuda] HEARTH_IMAGE_DECODE_LANES must be a whole number from 0 to 64, got \"", v, "\"");
  return static_cast<size_t>(n);
}

}  // namespace hearth::cuda
