#include "hearth/optim/adam.h"

#include <map>
#include <vector>

#include "hearth/ops/elementwise.h"
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

void Adam::validate_loaded_state(const ParamState& st, size_t index, const Options& o) const {
  const char* n = name().c_str();
  // Adam's bias correction divides by 1 - beta^step: a state has step >= 1.
  HEARTH_CHECK(st.step >= 1, ValueError, "[", n, "] load_state_dict: field \"state.", index,
               ".step\": expected an integer >= 1 for a parameter with saved state, got ", st.step);
  std::vector<const char*> needed = {"exp_avg", "exp_avg_sq"};
  if (o.count("amsgrad") && o.at("amsgrad") != 0) needed.push_back("max_exp_avg_sq");
  for (const char* tensor : needed)
    HEARTH_CHECK(st.tensors.count(tensor), ValueError, "[", n, "] load_state_dict: the tensor \"state.", index, ".",
                 tensor, "\" is missing (step ", st.step, ")");
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
  // One foreach call per step count (parameters that joined later have
  // counted fewer steps); normally there is one.
  struct Lists {
    std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs, max_sqs;
  };
  std::map<int64_t, Lists> by_step;
  for (const Tensor& p : group.params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    ParamState& st = state_for(p);
    auto slot = [&](const char* name) -> Tensor& {
      Tensor& t = st.tensors[name];
      if (!t.defined()) {  // in the parameter's layout, so the update reads them as one flat array
        t = Tensor::empty(p.shape(), p.dtype(), p.device(), p.suggest_memory_format());
        zero_(t);
      }
      return t;
    };
    st.step += 1;
    Lists& l = by_step[st.step];
    l.params.push_back(p);
    l.grads.push_back(g);
    l.exp_avgs.push_back(slot("exp_avg"));
    l.exp_avg_sqs.push_back(slot("exp_avg_sq"));
    l.max_sqs.push_back(a.amsgrad ? slot("max_exp_avg_sq") : Tensor());
  }
  for (const auto& entry : by_step) {
    const Lists& l = entry.second;
    a.step = entry.first;
    defer([l, a] { adam_step_foreach_(l.params, l.grads, l.exp_avgs, l.exp_avg_sqs, l.max_sqs, a); });
  }
}

AdamW::AdamW(const std::vector<Tensor>& params, const AdamWOptions& options) : AdamW(single_group(params), options) {}

AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options)
    : Adam("AdamW", std::move(groups), options.to_options(), true) {}

}  // namespace hearth::optim
