#include "hearth/optim/sgd.h"

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
  for (const Tensor& p : group.params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    Tensor buf;
    a.init_buffer = false;
    if (a.momentum != 0) {
      ParamState& st = state_for(p);
      Tensor& slot = st.tensors["momentum_buffer"];
      if (!slot.defined()) {
        slot = empty(p.shape(), p.dtype(), p.device());
        a.init_buffer = true;
      }
      buf = slot;
    }
    sgd_step_(p, g, buf, a);
  }
}

}  // namespace hearth::optim
