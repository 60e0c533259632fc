#include "hearth/optim/optimizer.h"

#include <set>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"
#include "hearth/ops/param_half_copies.h"

namespace hearth::optim {

double ParamGroup::get(const std::string& key) const {
  auto it = options.find(key);
  HEARTH_CHECK(it != options.end(), ValueError, "[optimizer] parameter group has no option \"", key, "\"");
  return it->second;
}

std::vector<ParamGroup> single_group(const std::vector<Tensor>& params) { return {ParamGroup{params, {}}}; }

Optimizer::Optimizer(std::string name, Options defaults) : name_(std::move(name)), defaults_(std::move(defaults)) {}

void Optimizer::init_groups(std::vector<ParamGroup> groups) {
  HEARTH_CHECK(!groups.empty(), ValueError, "[", name_, "] got an empty parameter list");
  for (ParamGroup& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  for (const auto& [key, value] : defaults_) group.options.emplace(key, value);
  validate(group.options);
  std::set<const TensorImpl*> existing;
  for (const ParamGroup& g : groups_)
    for (const Tensor& p : g.params) existing.insert(p.impl().get());
  std::set<const TensorImpl*> mine;
  for (size_t i = 0; i < group.params.size(); ++i) {
    const Tensor& p = group.params[i];
    HEARTH_CHECK(p.defined(), ValueError, "[", name_, "] parameter ", i, " of the group is an undefined tensor");
    HEARTH_CHECK(p.is_floating_point(), TypeError, "[", name_,
                 "] can only optimize floating-point tensors, but parameter ", i, " of the group has dtype ",
                 dtype_name(p.dtype()));
    HEARTH_CHECK(p.is_leaf(), ValueError, "[", name_, "] can't optimize a non-leaf tensor (parameter ", i,
                 " of the group); optimize the leaf it was computed from");
    HEARTH_CHECK(!existing.count(p.impl().get()), ValueError, "[", name_, "] parameter ", i,
                 " of the new group already appears in another group");
    HEARTH_CHECK(mine.insert(p.impl().get()).second, ValueError, "[", name_, "] parameter ", i,
                 " appears twice in the same group");
  }
  groups_.push_back(std::move(group));
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (ParamGroup& g : groups_)
    for (Tensor& p : g.params) p.zero_grad_(set_to_none);
}

void Optimizer::step() {
  NoGradGuard no_grad;
  // The state holds tensor handles: copying it is cheap, and restoring the
  // copy drops step counts and buffers a failed preparation added.
  auto saved = state_;
  deferred_.clear();
  try {
    for (ParamGroup& g : groups_) update(g);
    // The low-precision copies the writes fill (param_half_copies.h) are
    // allocated now, with the state, so that running out of memory leaves
    // the step undone rather than half made.
    for (const ParamGroup& g : groups_)
      for (const Tensor& p : g.params)
        if (p.grad().defined()) param_half_copy_to_write(p);
  } catch (...) {
    state_ = std::move(saved);
    deferred_.clear();
    throw;
  }
  std::vector<std::function<void()>> writes = std::move(deferred_);
  deferred_.clear();
  for (auto& write : writes) write();
}

const ParamState* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl().get());
  return it == state_.end() ? nullptr : &it->second;
}

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict sd;
  sd.meta["optimizer"] = name_;
  sd.meta["state"] = nlohmann::json::object();
  sd.meta["param_groups"] = nlohmann::json::array();
  int64_t index = 0;
  for (const ParamGroup& g : groups_) {
    nlohmann::json group = nlohmann::json::object();
    for (const auto& [key, value] : g.options) group[key] = value;
    group["params"] = nlohmann::json::array();
    for (const Tensor& p : g.params) {
      group["params"].push_back(index);
      if (const ParamState* st = state(p)) {
        const std::string id = std::to_string(index);
        sd.meta["state"][id] = {{"step", st->step}};
        for (const auto& [name, t] : st->tensors) sd.tensors.emplace("state." + id + "." + name, t.detach());
      }
      ++index;
    }
    sd.meta["param_groups"].push_back(std::move(group));
  }
  return sd;
}

namespace {
// More optimizer steps than any run takes (10^12): a larger count is corrupt.
constexpr int64_t kMaxLoadedStep = 1'000'000'000'000;
}  // namespace

namespace {

std::string known_options(const Options& options) {
  std::string out;
  for (const auto& [key, value] : options) out += (out.empty() ? "" : ", ") + key;
  return out;
}

}  // namespace

void Optimizer::load_state_dict(const OptimizerStateDict& sd) {
  const nlohmann::json& meta = sd.meta;
  HEARTH_CHECK(meta.is_object() && meta.contains("param_groups") && meta["param_groups"].is_array(), ValueError, "[",
               name_, "] load_state_dict: the state has no \"param_groups\" list");
  if (meta.contains("optimizer")) {
    HEARTH_CHECK(meta["optimizer"] == name_, ValueError, "[", name_, "] load_state_dict: the state was saved by ",
                 meta["optimizer"].dump(), ", not ", name_);
  }
  const nlohmann::json& groups = meta["param_groups"];
  HEARTH_CHECK(groups.size() == groups_.size(), ValueError, "[", name_, "] load_state_dict: the state has ",
               groups.size(), " parameter groups, the optimizer has ", groups_.size());
  // Check everything before changing anything.
  std::vector<Tensor> params;
  std::vector<size_t> group_of;  // the group of each of params
  std::vector<Options> options(groups_.size());
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const nlohmann::json& g = groups[gi];
    options[gi] = groups_[gi].options;  // options the state lacks keep their current value
    HEARTH_CHECK(g.is_object() && g.contains("params") && g["params"].is_array(), ValueError, "[", name_,
                 "] load_state_dict: parameter group ", gi, " has no \"params\" list");
    HEARTH_CHECK(g["params"].size() == groups_[gi].params.size(), ValueError, "[", name_,
                 "] load_state_dict: parameter group ", gi, " has ", g["params"].size(),
                 " parameters in the state but ", groups_[gi].params.size(), " in the optimizer");
    for (auto it = g.begin(); it != g.end(); ++it) {
      if (it.key() == "params") continue;
      // Only this optimizer's options (and the scheduler's initial_lr): an
      // unknown one would be kept and saved again without meaning anything.
      HEARTH_CHECK(options[gi].count(it.key()) != 0 || it.key() == "initial_lr", ValueError, "[", name_,
                   "] load_state_dict: group ", gi, " has the option \"", io::excerpt(it.key()), "\", which ", name_,
                   " does not have (its options: ", known_options(groups_[gi].options), ")");
      HEARTH_CHECK(it.value().is_number() || it.value().is_boolean(), ValueError, "[", name_,
                   "] load_state_dict: option \"", it.key(), "\" of group ", gi, " is not a number");
      options[gi][it.key()] = it.value().is_boolean() ? (it.value().get<bool>() ? 1.0 : 0.0) : it.value().get<double>();
    }
    validate(options[gi]);
    for (const Tensor& p : groups_[gi].params) {
      params.push_back(p);
      group_of.push_back(gi);
    }
  }
  std::unordered_map<const TensorImpl*, ParamState> loaded;
  if (meta.contains("state")) {
    HEARTH_CHECK(meta["state"].is_object(), ValueError, "[", name_, "] load_state_dict: \"state\" is not an object");
    for (auto it = meta["state"].begin(); it != meta["state"].end(); ++it) {
      size_t pos = 0;
      int64_t index = -1;
      try {
        index = std::stoll(it.key(), &pos);
      } catch (const std::exception&) {
      }
      HEARTH_CHECK(pos == it.key().size() && index >= 0 && index < static_cast<int64_t>(params.size()), ValueError, "[",
                   name_, "] load_state_dict: state entry \"", it.key(), "\" names no parameter (there are ",
                   params.size(), ")");
      ParamState st;
      HEARTH_CHECK(it.value().is_object(), ValueError, "[", name_, "] load_state_dict: state entry \"", it.key(),
                   "\" is not an object");
      if (it.value().contains("step")) {
        const nlohmann::json& step = it.value()["step"];
        HEARTH_CHECK(
            io::json_integer_fits<int64_t>(step) && step.get<int64_t>() >= 0 && step.get<int64_t>() <= kMaxLoadedStep,
            ValueError, "[", name_, "] load_state_dict: field \"state.", it.key(),
            ".step\": expected an integer in [0, ", kMaxLoadedStep, "], got ", step.dump());
        st.step = step.get<int64_t>();
      }
      loaded[params[index].impl().get()] = st;
    }
  }
  for (const auto& [key, t] : sd.tensors) {
    // "state.<i>.<name>"
    const size_t dot = key.find('.', 6);
    HEARTH_CHECK(key.rfind("state.", 0) == 0 && dot != std::string::npos, ValueError, "[", name_,
                 "] load_state_dict: unexpected tensor \"", key, "\" (expected state.<index>.<name>)");
    const std::string id = key.substr(6, dot - 6), name = key.substr(dot + 1);
    size_t pos = 0;
    int64_t index = -1;
    try {
      index = std::stoll(id, &pos);
    } catch (const std::exception&) {
    }
    HEARTH_CHECK(pos == id.size() && index >= 0 && index < static_cast<int64_t>(params.size()), ValueError, "[", name_,
                 "] load_state_dict: tensor \"", key, "\" names no parameter (there are ", params.size(), ")");
    const Tensor& p = params[index];
    HEARTH_CHECK(t.defined() && t.shape() == p.shape(), ShapeError, "[", name_, "] load_state_dict: \"", key,
                 "\" has shape ", t.defined() ? t.shape_string() : "undefined", " but parameter ", index, " has shape ",
                 p.shape_string());
    HEARTH_CHECK(is_floating(t.dtype()) == is_floating(p.dtype()), TypeError, "[", name_, "] load_state_dict: \"", key,
                 "\" is ", dtype_name(t.dtype()), " but parameter ", index, " is ", dtype_name(p.dtype()));
    loaded[p.impl().get()].tensors[name] = t;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = loaded.find(params[i].impl().get());
    if (it != loaded.end()) validate_loaded_state(it->second, i, options[group_of[i]]);
  }
  // Own copies, in the parameter's dtype and on its device, so that updates
  // never write into the caller's tensors (or a mapped file).
  NoGradGuard no_grad;
  for (auto& [impl, st] : loaded) {
    const Tensor* p = nullptr;
    for (const Tensor& q : params)
      if (q.impl().get() == impl) p = &q;
    for (auto& [name, t] : st.tensors) {
      Tensor owned = Tensor::empty(p->shape(), p->dtype(), p->device());
      if (owned.numel() > 0) owned.copy_(t.detach());
      t = owned;
    }
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi) groups_[gi].options = options[gi];
  state_ = std::move(loaded);
}

}  // namespace hearth::optim
