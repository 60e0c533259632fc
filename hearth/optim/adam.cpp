#include "hearth/optim/adam.h"

#include "hearth/ops/factory.h"
#include "hearth/optim/functional.h"

namespace hearth::optim {

namespace {

template <typename O>
Options adam_options(const O& o) {
  return {{"lr", o.lr},
          {"beta1", o.beta1},
          {"beta2", o.beta2},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay},
          {"amsgrad", o.amsgrad ? 1.0 : 0.0},
          {"maximize", o.maximize ? 1.0 : 0.0}};
}

}  // namespace

Options AdamOptions::to_options() const { return adam_options(*this); }
Options AdamWOptions::to_options() const { return adam_options(*this); }

Adam::Adam(const std::vector<Tensor>& params, const AdamOptions& options) : Adam(single_group(params), options) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options)
    : Adam("Adam", std::move(groups), options.to_options(), false) {}

Adam::Adam(const char* name, std::vector<ParamGroup> groups, Options defaults, bool decoupled)
    : Optimizer(name, std::move(defaults)), decoupled_(decoupled) {
  init_groups(std::move(groups));
}

void Adam::validate(const Options& o) const {
  const char* n = name().c_str();
  HEARTH_CHECK(o.at("lr") >= 0, ValueError, "[", n, "] invalid learning rate: ", o.at("lr"));
  HEARTH_CHECK(o.at("eps") >= 0, ValueError, "[", n, "] invalid epsilon value: ", o.at("eps"));
  HEARTH_CHECK(o.at("beta1") >= 0 && o.at("beta1") < 1, ValueError, "[", n,
               "] invalid beta parameter at index 0: ", o.at("beta1"), " (expected 0 <= beta1 < 1)");
  HEARTH_CHECK(o.at("beta2") >= 0 && o.at("beta2") < 1, ValueError, "[", n,
               "] invalid beta parameter at index 1: ", o.at("beta2"), " (expected 0 <= beta2 < 1)");
  HEARTH_CHECK(o.at("weight_decay") >= 0, ValueError, "[", n, "] invalid weight_decay value: ", o.at("weight_decay"));
}

void Adam::update(ParamGroup& group) {
  AdamStepAttrs a;
  a.lr = group.get("lr");
  a.beta1 = group.get("beta1");
  a.beta2 = group.get("beta2");
  a.eps = group.get("eps");
  a.weight_decay = group.get("weight_decay");
  a.amsgrad = group.flag("amsgrad");
  a.maximize = group.flag("maximize");
  a.decoupled_weight_decay = decoupled_;
  for (const Tensor& p : group.params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    ParamState& st = state_for(p);
    auto slot = [&](const char* name) -> Tensor& {
      Tensor& t = st.tensors[name];
      if (!t.defined()) t = zeros(p.shape(), p.dtype(), p.device());
      return t;
    };
    const Tensor exp_avg = slot("exp_avg"), exp_avg_sq = slot("exp_avg_sq");
    const Tensor max_sq = a.amsgrad ? slot("max_exp_avg_sq") : Tensor();
    st.step += 1;
    a.step = st.step;
    adam_step_(p, g, exp_avg, exp_avg_sq, max_sq, a);
  }
}

AdamW::AdamW(const std::vector<Tensor>& params, const AdamWOptions& options) : AdamW(single_group(params), options) {}

AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options)
    : Adam("AdamW", std::move(groups), options.to_options(), true) {}

}  // namespace hearth::optim
