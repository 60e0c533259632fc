#include "hearth/backends/common/host_share.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "hearth/backends/common/common_switches.h"
#include "hearth/backends/common/host_decode_pool.h"
#include "hearth/core/errors.h"

namespace hearth::backends {
namespace {

// Weight of the newest measure in the running averages: the split follows a
// change of load (training starting, evaluation ending) within a few
// batches without one slow batch swinging it.
constexpr double kNewest = 0.25;

void update(double* average, double value, bool first) {
  *average = first ? value : *average + kNewest * (value - *average);
}

}  // namespace

HostShare::HostShare(Mode mode, double fixed_fraction, size_t host_threads, size_t lanes)
    : mode_(host_threads == 0 ? Mode::off : mode),
      fixed_fraction_(std::clamp(fixed_fraction, 0.0, 1.0)),
      host_threads_(static_cast<double>(host_threads)),
      lanes_(static_cast<double>(std::max<size_t>(lanes, 1))) {}

HostShare HostShare::from_env(size_t lanes) {
  double fraction = 0.0;
  const Mode mode = host_share_mode_from_env(&fraction);
  return HostShare(mode, fraction, mode == Mode::off ? 0 : host_decode_threads_from_env(), lanes);
}

size_t HostShare::host_images(size_t candidates) const {
  const double n = static_cast<double>(candidates);
  switch (mode_) {
    case Mode::off:
      return 0;
    case Mode::fixed:
      return std::min(candidates, static_cast<size_t>(std::floor(n * fixed_fraction_)));
    case Mode::automatic:
      break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (device_per_image_ <= 0.0) return 0;
  const double a = host_threads_ * device_per_image_ / (lanes_ * host_per_image_);
  const double share = std::min(a / (1.0 + a), kMostHostShare);
  return std::min(candidates, static_cast<size_t>(std::floor(n * share)));
}

void HostShare::record_device(size_t images, double seconds) {
  if (images == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  update(&device_per_image_, seconds / static_cast<double>(images), device_per_image_ == 0.0);
}

void HostShare::record_host(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  update(&host_per_image_, seconds, !host_measured_);
  host_measured_ = true;
}

double HostShare::device_seconds_per_image() const {
  std::lock_guard<std::mutex> lock(mu_);
  return device_per_image_;
}

double HostShare::host_seconds_per_image() const {
  std::lock_guard<std::mutex> lock(mu_);
  return host_per_image_;
}

HostShare::Mode host_share_mode_from_env(double* fixed_fraction) {
  *fixed_fraction = 0.0;
  // off, auto or a fraction from 0 to 1: the switch refuses anything else.
  const std::string v = switches::image_host_decoding().get();
  if (v == "off") return HostShare::Mode::off;
  if (v == "auto") return HostShare::Mode::automatic;
  *fixed_fraction = std::strtod(v.c_str(), nullptr);
  return HostShare::Mode::fixed;
}

}  // namespace hearth::backends
