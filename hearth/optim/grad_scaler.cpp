#include "hearth/optim/grad_scaler.h"

#include <cmath>
#include <vector>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/reduction.h"

namespace hearth::optim {
namespace {

void check_options(const GradScalerOptions& o, const char* where) {
  HEARTH_CHECK(std::isfinite(o.init_scale) && o.init_scale > 0, ValueError, "[grad_scaler] ", where,
               ": field 'init_scale': expected a finite number > 0, got ", o.init_scale);
  HEARTH_CHECK(std::isfinite(o.growth_factor) && o.growth_factor > 1, ValueError, "[grad_scaler] ", where,
               ": field 'growth_factor': expected a finite number > 1, got ", o.growth_factor);
  HEARTH_CHECK(o.backoff_factor > 0 && o.backoff_factor < 1, ValueError, "[grad_scaler] ", where,
               ": field 'backoff_factor': expected a number in (0, 1), got ", o.backoff_factor);
  HEARTH_CHECK(o.growth_interval >= 1, ValueError, "[grad_scaler] ", where,
               ": field 'growth_interval': expected an integer >= 1, got ", o.growth_interval);
}

// Whether any gradient holds an inf or a NaN, read once for all of them. The
// sum of a tensor is non-finite when one of its elements is (inf - inf is NaN);
// a sum of finite gradients would have to pass 3e38 to overflow float32, and a
// step with gradients that large is one to skip anyway.
bool any_non_finite(const std::vector<Tensor>& grads) {
  if (grads.empty()) return false;
  const Device device = grads[0].device();
  std::vector<Tensor> sums;
  sums.reserve(grads.size());
  for (const Tensor& g : grads) {
    HEARTH_CHECK(g.device() == device, DeviceError, "[grad_scaler] gradients are on ", device.str(), " and ",
                 g.device().str(), "; expected one device");
    // Half gradients are summed in float32, whose range their sum cannot leave.
    const Tensor s = sum(is_half_type(g.dtype()) ? cast(g, DType::float32) : g);
    sums.push_back(s.dtype() == DType::float64 ? s : cast(s, DType::float64));
  }
  return !std::isfinite(sum(stack(sums)).item<double>());
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {
  check_options(options_, "options");
}

Tensor GradScaler::scale(const Tensor& loss) const {
  HEARTH_CHECK(loss.defined(), ValueError, "[grad_scaler] scale() was given an undefined loss");
  if (!options_.enabled) return loss;
  return mul(loss, scale_);
}

void GradScaler::unscale_(Optimizer& optimizer) {
  if (!options_.enabled) return;
  PerOptimizer& st = this_step_[&optimizer];
  HEARTH_CHECK(!st.unscaled, ValueError,
               "[grad_scaler] unscale_() was already called on this optimizer since the last update(); call it once "
               "per step, before clipping");
  HEARTH_CHECK(!st.stepped, ValueError,
               "[grad_scaler] unscale_() was called after step() on this optimizer; call "
               "it before step(), then update()");
  NoGradGuard no_grad;
  const double inv_scale = 1.0 / scale_;
  std::vector<Tensor> grads;
  for (const ParamGroup& group : optimizer.param_groups()) {
    for (const Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      mul_(p.grad(), inv_scale);
      grads.push_back(p.grad());
    }
  }
  st.unscaled = true;
  st.found_inf = any_non_finite(grads);
  last_found_inf_[&optimizer] = st.found_inf;
}

bool GradScaler::step(Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  PerOptimizer& st = this_step_[&optimizer];
  HEARTH_CHECK(!st.stepped, ValueError,
               "[grad_scaler] step() was already called on this optimizer since the last update(); call update() "
               "after each step");
  if (!st.unscaled) unscale_(optimizer);
  st.stepped = true;
  if (st.found_inf) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  HEARTH_CHECK(!this_step_.empty(), ValueError,
               "[grad_scaler] update() was called without a step() or unscale_() since the last update(), so there "
               "is nothing to adapt the scale to");
  bool found_inf = false;
  for (const auto& [opt, st] : this_step_) found_inf = found_inf || st.found_inf;
  this_step_.clear();
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
    return;
  }
  if (++growth_tracker_ == options_.growth_interval) {
    // Growing past float32's range would turn every loss into inf.
    const double grown = scale_ * options_.growth_factor;
    if (std::isfinite(static_cast<float>(grown))) scale_ = grown;
    growth_tracker_ = 0;
  }
}

bool GradScaler::found_inf(const Optimizer& optimizer) const {
  auto it = last_found_inf_.find(&optimizer);
  return it != last_found_inf_.end() && it->second;
}

nlohmann::json GradScaler::state_dict() const {
  return {{"scale", scale_},
          {"growth_factor", options_.growth_factor},
          {"backoff_factor", options_.backoff_factor},
          {"growth_interval", options_.growth_interval},
          {"growth_tracker", growth_tracker_}};
}

void GradScaler::load_state_dict(const nlohmann::json& state) {
  HEARTH_CHECK(state.is_object(), ValueError, "[grad_scaler] state_dict: expected a JSON object, got ",
               state.type_name());
  auto number = [&](const char* key) {
    HEARTH_CHECK(state.contains(key) && state.at(key).is_number(), ValueError, "[grad_scaler] state_dict: field '", key,
                 "': expected a number, got ", state.contains(key) ? state.at(key).dump() : "nothing");
    return state.at(key).get<double>();
  };
  auto integer = [&](const char* key) {
    HEARTH_CHECK(state.contains(key) && state.at(key).is_number_integer(), ValueError,
                 "[grad_scaler] state_dict: field '", key, "': expected an integer, got ",
                 state.contains(key) ? state.at(key).dump() : "nothing");
    return state.at(key).get<int64_t>();
  };
  const double scale = number("scale");
  HEARTH_CHECK(std::isfinite(scale) && scale > 0, ValueError,
               "[grad_scaler] state_dict: field 'scale': expected a finite number > 0, got ", scale);
  GradScalerOptions o = options_;
  o.growth_factor = number("growth_factor");
  o.backoff_factor = number("backoff_factor");
  o.growth_interval = integer("growth_interval");
  check_options(o, "state_dict");
  const int64_t tracker = integer("growth_tracker");
  HEARTH_CHECK(tracker >= 0 && tracker < o.growth_interval, ValueError,
               "[grad_scaler] state_dict: field 'growth_tracker': expected an integer in [0, growth_interval), got ",
               tracker);
  options_ = o;
  scale_ = scale;
  growth_tracker_ = tracker;
  this_step_.clear();
}

}  // namespace hearth::optim
