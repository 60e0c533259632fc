// Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight
// decay), with torch.optim's update formulas including bias correction and
// the optional AMSGrad variant (see hearth/dispatch/schemas/optim.h).
// State per parameter: step, "exp_avg", "exp_avg_sq", and "max_exp_avg_sq"
// with amsgrad.
#pragma once

#include "hearth/optim/optimizer.h"

namespace hearth::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
  bool maximize = false;
  Options to_options() const;
};

// AdamOptions with AdamW's default weight decay, 1e-2, as in PyTorch.
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
  Options to_options() const;
};

class Adam : public Optimizer {
 public:
  Adam(const std::vector<Tensor>& params, const AdamOptions& options = {});
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options = {});

 protected:
  Adam(const char* name, std::vector<ParamGroup> groups, Options defaults, bool decoupled);
  void validate(const Options& options) const override;
  void validate_loaded_state(const ParamState& state, size_t index, const Options& options) const override;
  void update(ParamGroup& group) override;

 private:
  bool decoupled_;
};

class AdamW : public Adam {
 public:
  AdamW(const std::vector<Tensor>& params, const AdamWOptions& options = {});
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options = {});
};

}  // namespace hearth::optim
