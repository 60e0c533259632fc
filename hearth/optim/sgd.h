// SGD with momentum, dampening, Nesterov momentum and weight decay
// (torch.optim.SGD; update formula in hearth/dispatch/schemas/optim.h).
// State per parameter: "momentum_buffer" when momentum != 0.
#pragma once

#include "hearth/optim/optimizer.h"

namespace hearth::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
  Options to_options() const;
};

class SGD : public Optimizer {
 public:
  SGD(const std::vector<Tensor>& params, const SGDOptions& options = {});
  SGD(std::vector<ParamGroup> groups, const SGDOptions& options = {});

 protected:
  void validate(const Options& options) const override;
  void update(ParamGroup& group) override;
};

}  // namespace hearth::optim
