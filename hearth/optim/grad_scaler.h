// Dynamic loss scaling for float16 mixed precision (torch.amp.GradScaler).
//
// float16 holds values down to about 6e-8; many gradients are smaller and
// would flush to zero. The loss is multiplied by a large scale before
// backward, so the gradients are too, and divided back before the update:
//
//   GradScaler scaler;
//   scaler.scale(loss).backward();
//   scaler.unscale_(optimizer);           // before clipping, which needs true values
//   clip_grad_norm_(params, 1.0);
//   scaler.step(optimizer);               // skipped when a gradient is inf or NaN
//   scaler.update();                      // adapts the scale
//
// The scale starts at init_scale. A step whose gradients hold an inf or a NaN
// (the scale was too large) is skipped and the scale multiplied by
// backoff_factor; after growth_interval steps in a row without one, it is
// multiplied by growth_factor. Finding a non-finite gradient costs one host
// read per optimizer per step, for all parameters together.
#pragma once

#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include "hearth/core/tensor.h"
#include "hearth/optim/optimizer.h"

namespace hearth::optim {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  // A disabled scaler passes everything through (scale 1, every step taken),
  // so one training loop serves every precision.
  bool enabled = true;
};

class GradScaler {
 public:
  // ValueError naming the option when one is out of range.
  explicit GradScaler(GradScalerOptions options = {});

  bool is_enabled() const { return options_.enabled; }
  // loss * scale, recorded by autograd.
  Tensor scale(const Tensor& loss) const;
  // Divides the gradients of `optimizer`'s parameters by the scale, in place,
  // and records whether any of them holds an inf or a NaN. At most once per
  // optimizer between two update()s (ValueError otherwise).
  void unscale_(Optimizer& optimizer);
  // Unscales if unscale_ was not called, then steps `optimizer` unless its
  // gradients held an inf or a NaN. Returns whether it stepped.
  bool step(Optimizer& optimizer);
  // Backs the scale off if any optimizer's gradients were non-finite since the
  // last update, else counts a good step and grows the scale every
  // growth_interval of them. ValueError if no step or unscale_ came first.
  void update();

  double get_scale() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  const GradScalerOptions& options() const { return options_; }
  // Whether the last step() of `optimizer` was skipped for non-finite gradients.
  bool found_inf(const Optimizer& optimizer) const;

  // {"scale", "growth_factor", "backoff_factor", "growth_interval",
  // "growth_tracker"}: what a checkpoint needs to resume the same schedule.
  nlohmann::json state_dict() const;
  // ValueError naming the field when one is missing or out of range.
  void load_state_dict(const nlohmann::json& state);

 private:
  struct PerOptimizer {
    bool unscaled = false;
    bool stepped = false;
    bool found_inf = false;
  };

  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  std::map<const Optimizer*, PerOptimizer> this_step_;
  std::map<const Optimizer*, bool> last_found_inf_;
};

}  // namespace hearth::optim
