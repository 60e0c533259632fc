// Optimizer: parameter groups with per-group hyperparameters, per-parameter
// state, zero_grad, step, and a state dict (torch.optim.Optimizer).
//
// A group's options are a flat map of numbers ("lr", "weight_decay",
// "momentum", "beta1", ...; flags are 0 or 1). Keys a group leaves out take the
// optimizer's defaults, so a Trainer can exempt biases from weight decay:
//
//   AdamW opt({ParamGroup{decay_params}, ParamGroup{no_decay_params, {{"weight_decay", 0.0}}}},
//             AdamWOptions{.lr = 5e-5});
//
// The state dict is tensors plus JSON, to be saved as one safetensors file
// (tensors, with the JSON in its metadata): tensors are "state.<i>.<name>"
// (exp_avg, exp_avg_sq, max_exp_avg_sq, momentum_buffer) and the JSON is
//   {"optimizer": "AdamW", "state": {"<i>": {"step": 3}},
//    "param_groups": [{"lr": ..., "weight_decay": ..., "params": [0, 1, ...]}]}
// where i numbers the parameters across groups in order, as PyTorch does.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/core/tensor.h"

namespace hearth::optim {

using Options = std::map<std::string, double>;

struct ParamGroup {
  std::vector<Tensor> params;
  Options options;  // filled with the optimizer's defaults when added

  double lr() const { return get("lr"); }
  void set_lr(double lr) { options["lr"] = lr; }
  // The option's value; ValueError naming the key when the group has none.
  double get(const std::string& key) const;
  bool flag(const std::string& key) const { return get(key) != 0.0; }
};

struct OptimizerStateDict {
  std::map<std::string, Tensor> tensors;
  nlohmann::json meta;
};

// One parameter's state: the number of updates made and named tensors.
struct ParamState {
  int64_t step = 0;
  std::map<std::string, Tensor> tensors;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  const std::string& name() const { return name_; }
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const Options& defaults() const { return defaults_; }
  // Fills missing options from the defaults and validates them. A parameter
  // may appear in only one group; each must be a floating leaf tensor.
  void add_param_group(ParamGroup group);

  // Drops (set_to_none) or zeroes every parameter's gradient.
  void zero_grad(bool set_to_none = true);
  // One update of every parameter that has a gradient, without recording.
  // All or nothing: the state a step needs is allocated for every group
  // before any parameter is written, so an exception there (an
  // OutOfMemoryError) leaves parameters and state as they were.
  void step();

  // The state of `param`, or nullptr before its first update.
  const ParamState* state(const Tensor& param) const;

  // Tensors are shared with the live state (not copies): save them before the
  // next step, or clone them.
  OptimizerStateDict state_dict() const;
  // Restores per-parameter state (tensors cast to each parameter's dtype and
  // moved to its device) and group options. The parameters are this
  // optimizer's own; the dict must have as many groups and parameters per
  // group, with matching shapes, else ValueError/ShapeError naming the entry.
  void load_state_dict(const OptimizerStateDict& state);

 protected:
  Optimizer(std::string name, Options defaults);
  // Adds each group; called by the derived constructor so that validate()
  // dispatches to it.
  void init_groups(std::vector<ParamGroup> groups);
  virtual void validate(const Options& options) const = 0;
  // Checks the state load_state_dict() read for parameter `index` (in a group
  // with `options`) before it is used: throws ValueError naming the entry.
  virtual void validate_loaded_state(const ParamState&, size_t /*index*/, const Options& /*options*/) const {}
  // Prepares the update of one group (allocating any state it needs) and
  // hands the writes to parameters and state to defer(); runs under
  // NoGradGuard. step() runs the deferred writes once every group is prepared.
  virtual void update(ParamGroup& group) = 0;
  void defer(std::function<void()> write) { deferred_.push_back(std::move(write)); }
  ParamState& state_for(const Tensor& param) { return state_[param.impl().get()]; }

 private:
  std::string name_;
  Options defaults_;
  std::vector<ParamGroup> groups_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
  std::vector<std::function<void()>> deferred_;
};

// A single group of `params` with the optimizer's defaults.
std::vector<ParamGroup> single_group(const std::vector<Tensor>& params);

}  // namespace hearth::optim
