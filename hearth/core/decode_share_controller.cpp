#include "hearth/core/decode_share_controller.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "hearth/core/env.h"
#include "hearth/core/errors.h"

namespace hearth {

ImageHostShareSetting parse_image_host_share(const std::string& value) {
  if (value.empty() || value == "auto") return {};
  char* end = nullptr;
  const double share = std::strtod(value.c_str(), &end);
  HEARTH_CHECK(end != value.c_str() && *end == '\0' && std::isspace(static_cast<unsigned char>(value[0])) == 0 &&
                   std::isfinite(share) && share >= 0.0 && share <= 1.0,
               ValueError, "[data] HEARTH_IMAGE_HOST_SHARE must be auto or a number from 0 to 1 (the share of ",
               "each batch's images made on the host while the device decodes the rest), got \"", value, "\"");
  return {false, share};
}

ImageHostShareSetting image_host_share_from_env() {
  return parse_image_host_share(env_string("HEARTH_IMAGE_HOST_SHARE"));
}

DecodeShareController::DecodeShareController() : DecodeShareController(ImageHostShareSetting{}, Options{}) {}
DecodeShareController::DecodeShareController(ImageHostShareSetting setting)
    : DecodeShareController(setting, Options{}) {}
DecodeShareController::DecodeShareController(ImageHostShareSetting setting, Options options)
    : setting_(setting), options_(options), share_(setting.adaptive ? 0.0 : setting.fixed) {}

DecodeShareController::Plan DecodeShareController::plan(int64_t batch_images, int64_t device_capable) const {
  std::lock_guard<std::mutex> lock(mu_);
  Plan p;
  p.generation = generation_;
  const auto k = static_cast<int64_t>(std::llround(share_ * static_cast<double>(std::max<int64_t>(batch_images, 0))));
  p.host_images = std::clamp<int64_t>(k, 0, std::max<int64_t>(device_capable, 0));
  return p;
}

void DecodeShareController::report(const Plan& plan, const Measurement& m) {
  std::lock_guard<std::mutex> lock(mu_);
  if (m.host_images > 0 && m.host_seconds > 0.0) {
    const double per_image = m.host_seconds / static_cast<double>(m.host_images);
    host_cost_ = host_cost_known_ ? host_cost_ + options_.cost_smoothing * (per_image - host_cost_) : per_image;
    host_cost_known_ = true;
  }
  if (!setting_.adaptive || plan.generation != generation_) return;
  sum_host_ += m.host_seconds;
  sum_wait_ += std::max(m.wait_seconds, 0.0);
  sum_host_images_ += static_cast<double>(m.host_images);
  sum_device_images_ += static_cast<double>(m.device_images);
  if (++count_ < options_.batches_per_decision) return;

  const double c = static_cast<double>(count_);
  const double host = sum_host_ / c, wait = sum_wait_ / c, device_images = sum_device_images_ / c;
  const double batch = (sum_host_images_ + sum_device_images_) / c;
  count_ = 0;
  sum_host_ = sum_wait_ = sum_host_images_ = sum_device_images_ = 0.0;
  if (device_images <= 0.0) return;  // the device took nothing: the share changes nothing

  const double step = options_.step, largest = options_.step * options_.max_steps;
  const bool host_slower = wait < options_.host_slower_wait * (host + wait);
  double next = share_;
  if (!host_cost_known_) {
    if (wait > 0.0 && !host_slower) next = share_ + step;  // a probe: the host's cost is measured at the next share
  } else if (wait > std::max(host_cost_ * step * batch, options_.device_slower_wait * (host + wait))) {
    // The device still the slower after one more step: towards the balance.
    const double device_cost = (host + wait) / device_images;
    const double distance = wait / (host_cost_ + device_cost) / batch;
    next = share_ + std::clamp(options_.raise_gain * distance, step, largest);
    lowerings_ = 0;
  } else if (host_slower && share_ > 0.0) {
    next = share_ - std::min(step * static_cast<double>(1 << std::clamp(lowerings_ - 1, 0, 30)), largest);
    ++lowerings_;
  } else {
    lowerings_ = 0;
  }
  next = std::clamp(next, 0.0, options_.cap);
  if (next != share_) {
    share_ = next;
    ++generation_;
  }
}

double DecodeShareController::share() const {
  std::lock_guard<std::mutex> lock(mu_);
  return share_;
}

std::string DecodeShareController::describe() const {
  std::ostringstream os;
  os.precision(3);
  const double percent = share() * 100.0;
  if (setting_.adaptive)
    os << "adaptive, now " << percent << "%";
  else
    os << "fixed at " << percent << "%";
  return os.str();
}

}  // namespace hearth
