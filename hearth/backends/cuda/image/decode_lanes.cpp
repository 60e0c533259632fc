#include "hearth/backends/cuda/image/decode_lanes.h"

#include <cstdlib>
#include <string>

#include "hearth/core/env.h"
#include "hearth/core/errors.h"

namespace hearth::cuda {
namespace {

// Weight of the newest batch in the running averages: a few batches follow a
// change (training starting, evaluation ending) without one slow batch
// swinging the choice.
constexpr double kNewest = 0.25;

// Lanes idle this long mean the load has changed (see the header).
constexpr std::chrono::milliseconds kIdleForgets{50};

void update(double* average, double value, bool first) { *average = first ? value : *average + kNewest * (value - *average); }

}  // namespace

DecodeLanes::DecodeLanes(size_t lanes, bool host_spill) : lanes_(lanes), host_spill_(host_spill && lanes > 0) {}

DecodeLanes::Route DecodeLanes::enter(size_t images) {
  std::unique_lock<std::mutex> lock(mu_);
  if (active_ == 0 && waiting_ == 0 && std::chrono::steady_clock::now() - idle_since_ > kIdleForgets)
    device_per_image_ = 0.0;
  if (lanes_ == 0 || active_ < lanes_) {
    ++active_;
    return Route::device;
  }
  // Every lane is busy: this batch would wait for the batches queued before
  // it (shared among the lanes) and for a lane to free (half a batch on
  // average), then take a batch's time itself. The host makes it instead if
  // it would finish sooner, so no batch is made later than the device would
  // have made it (the loader hands batches over in order).
  if (host_spill_ && device_per_image_ > 0.0) {
    const double device_batch = device_per_image_ * static_cast<double>(images);
    const double on_device = device_batch * (static_cast<double>(waiting_) / static_cast<double>(lanes_) + 1.5);
    if (host_per_image_ * static_cast<double>(images) < on_device) return Route::host;
  }
  ++waiting_;
  lane_free_.wait(lock, [&] { return active_ < lanes_; });
  --waiting_;
  ++active_;
  return Route::device;
}

void DecodeLanes::leave_device(size_t images, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ > 0) --active_;
  if (images > 0) update(&device_per_image_, seconds / static_cast<double>(images), device_per_image_ == 0.0);
  if (active_ == 0 && waiting_ == 0) idle_since_ = std::chrono::steady_clock::now();
  lane_free_.notify_one();
}

void DecodeLanes::record_host(size_t images, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (images == 0) return;
  update(&host_per_image_, seconds / static_cast<double>(images), !host_measured_);
  host_measured_ = true;
}

double DecodeLanes::device_seconds_per_image() const {
  std::lock_guard<std::mutex> lock(mu_);
  return device_per_image_;
}

double DecodeLanes::host_seconds_per_image() const {
  std::lock_guard<std::mutex> lock(mu_);
  return host_per_image_;
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

bool host_decoding_from_env() {
  const std::string v = env_string("HEARTH_IMAGE_HOST_DECODING");
  if (v == "auto") return true;
  if (v.empty() || v == "off") return false;
  HEARTH_THROW(ValueError, "[cuda] HEARTH_IMAGE_HOST_DECODING must be auto or off, got \"", v, "\"");
}

}  // namespace hearth::cuda
