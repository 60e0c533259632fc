#include "hearth/optim/sgd.h"

#include <vector>

#include "hearth/ops/factory.h"
#include "hearth/optim/functional.h"

namespace hearth::optim {

Options SGDOptions::to_options() const {
  return {{"lr", lr},
          {"momentum", momentum},
          {"dampening", dampening},
          {"weight_decay", weight_decay},
          {"nesterov", nesterov ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

SGD::SGD(const std::vector<Tensor>& params, const SGDOptions& options) : SGD(single_group(params), options) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& options) : Optimizer("SGD", options.to_options()) {
  init_groups(std::move(groups));
}

void SGD::validate(const Options& o) const {
  auto get = [&](const char* k) { return o.at(k); };
  HEARTH_CHECK(get("lr") >= 0, ValueError, "[SGD] invalid learning rate: ", get("lr"));
  HEARTH_CHECK(get("momentum") >= 0, ValueError, "[SGD] invalid momentum value: ", get("momentum"));
  HEARTH_CHECK(get("weight_decay") >= 0, ValueError, "[SGD] invalid weight_decay value: ", get("weight_decay"));
  HEARTH_CHECK(get("nesterov") == 0 || (get("momentum") > 0 && get("dampening") == 0), ValueError,
               "[SGD] Nesterov momentum requires a momentum > 0 and zero dampening, got momentum=", get("momentum"),
               " dampening=", get("dampening"));
}

void SGD::update(ParamGroup& group) {
  SgdStepAttrs a;
  a.lr = group.get("lr");
  a.momentum = group.get("momentum");
  a.dampening = group.get("dampening");
  a.weight_decay = group.get("weight_decay");
  a.nesterov = group.flag("nesterov");
  a.maximize = group.flag("maximize");
  // Parameters whose momentum buffer starts now take d as the buffer: they go
  // in a call of their own (normally the first step, all of them).
  std::vector<Tensor> params[2], grads[2], bufs[2];
  for (const Tensor& p : group.params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    int fresh = 0;
    Tensor buf;
    if (a.momentum != 0) {
      ParamState& st = state_for(p);
      Tensor& slot = st.tensors["momentum_buffer"];
      if (!slot.defined()) {
        // In the parameter's layout, so the update reads all three as one flat array.
        slot = Tensor::empty(p.shape(), p.dtype(), p.device(), p.suggest_memory_format());
        fresh = 1;
      }
      buf = slot;
    }
    params[fresh].push_back(p);
    grads[fresh].push_back(g);
    bufs[fresh].push_back(buf);
  }
  for (int fresh = 0; fresh < 2; ++fresh) {
    if (params[fresh].empty()) continue;
    a.init_buffer = fresh == 1;
    defer([p = params[fresh], g = grads[fresh], b = bufs[fresh], a] { sgd_step_foreach_(p, g, b, a); });
  }
}

}  // namespace hearth::optim
