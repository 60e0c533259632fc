#include "hearth/nn/module.h"

#include <algorithm>
#include <ostream>
#include <set>
#include <sstream>
#include <type_traits>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/view.h"

namespace hearth::nn {
namespace {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string join_list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
  return s;
}

// Points `dst`'s handle at `src`'s data, keeping dst's identity and autograd
// state: optimizers and user code hold parameter handles, and a move must not
// leave them pointing at the old copy (PyTorch's param.data = ...).
void set_data(const Tensor& dst, const Tensor& src) {
  TensorImpl& d = *dst.impl();
  const TensorImpl& s = *src.impl();
  d.storage = s.storage;
  d.dtype = s.dtype;
  d.shape = s.shape;
  d.strides = s.strides;
  d.offset = s.offset;
}

}  // namespace

Tensor Parameter(const Tensor& t, bool requires_grad) {
  HEARTH_CHECK(t.defined(), ValueError, "[Parameter] expected a defined tensor");
  // A leaf already in the wanted state is kept as is, so registering one
  // module's parameter in another ties them (one tensor, two names).
  if (t.is_leaf() && t.requires_grad() == requires_grad) return t;
  Tensor p = t.detach();
  if (requires_grad) p.requires_grad_(true);
  return p;
}

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

Tensor Module::forward(const Tensor&) {
  HEARTH_THROW(NotImplementedError, "[", type_name_,
               "] has no single-tensor forward; call the forward that this module declares");
}

void Module::check_new_name(const std::string& name, const char* kind) const {
  HEARTH_CHECK(!name.empty(), ValueError, "[", type_name_, "] ", kind, " name must not be empty");
  HEARTH_CHECK(name.find('.') == std::string::npos, ValueError, "[", type_name_, "] ", kind, " name \"", name,
               "\" must not contain \".\" (dots separate submodule names)");
  auto taken = [&](const auto& v) {
    return std::any_of(v.begin(), v.end(), [&](const auto& e) {
      if constexpr (std::is_same_v<std::decay_t<decltype(e)>, NamedTensor>)
        return e.name == name;
      else
        return e.first == name;
    });
  };
  HEARTH_CHECK(!taken(params_) && !taken(buffers_) && !taken(children_), ValueError, "[", type_name_,
               "] cannot register ", kind, " \"", name, "\": the name is already taken");
}

Tensor Module::register_parameter(const std::string& name, const Tensor& t, bool requires_grad) {
  check_new_name(name, "parameter");
  if (t.defined()) {
    HEARTH_CHECK(t.is_floating_point(), TypeError, "[", type_name_, "] parameter \"", name,
                 "\" must be floating-point, got ", dtype_name(t.dtype()));
  }
  Tensor p = t.defined() ? Parameter(t, requires_grad) : Tensor();
  params_.push_back({name, p, true});
  return p;
}

Tensor Module::register_buffer(const std::string& name, const Tensor& t, bool persistent) {
  check_new_name(name, "buffer");
  Tensor b = t.defined() ? t.detach() : Tensor();
  buffers_.push_back({name, b, persistent});
  return b;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name, "submodule");
  HEARTH_CHECK(module != nullptr, ValueError, "[", type_name_, "] submodule \"", name, "\" is null");
  HEARTH_CHECK(module.get() != this, ValueError, "[", type_name_, "] a module cannot be its own submodule");
  children_.emplace_back(name, std::move(module));
}

void Module::remove_child(const std::string& name) {
  auto it = std::find_if(children_.begin(), children_.end(), [&](const auto& c) { return c.first == name; });
  HEARTH_CHECK(it != children_.end(), ValueError, "[", type_name_, "] has no submodule \"", name, "\"");
  children_.erase(it);
}

void Module::collect_named_tensors(const std::string& prefix, bool params, bool recurse, bool dedupe,
                                   std::vector<std::pair<std::string, Tensor>>& out,
                                   std::vector<const TensorImpl*>& seen) const {
  for (const NamedTensor& e : params ? params_ : buffers_) {
    if (!e.tensor.defined()) continue;
    if (dedupe) {
      const TensorImpl* key = e.tensor.impl().get();
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
    }
    out.emplace_back(join_name(prefix, e.name), e.tensor);
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_)
    child->collect_named_tensors(join_name(prefix, name), params, true, dedupe, out, seen);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  std::vector<const TensorImpl*> seen;
  collect_named_tensors("", true, recurse, true, out, seen);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  std::vector<const TensorImpl*> seen;
  collect_named_tensors("", false, recurse, true, out, seen);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [name, c] : children_) out.push_back(c);
  return out;
}

void Module::collect_modules(const std::string& prefix,
                             std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out,
                             std::vector<const Module*>& seen) {
  for (auto& [name, child] : children_) {
    if (std::find(seen.begin(), seen.end(), child.get()) != seen.end()) continue;
    seen.push_back(child.get());
    out.emplace_back(join_name(prefix, name), child);
    child->collect_modules(join_name(prefix, name), out, seen);
  }
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  // A module held by a plain object (not a shared_ptr) still lists itself,
  // through a non-owning pointer.
  std::shared_ptr<Module> self = weak_from_this().lock();
  if (!self) self = std::shared_ptr<Module>(std::shared_ptr<Module>(), this);
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out{{"", self}};
  std::vector<const Module*> seen{this};
  collect_modules("", out, seen);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [name, m] : named_modules()) out.push_back(m);
  return out;
}

const Module* Module::resolve_owner(const std::string& path, std::string* leaf) const {
  const Module* m = this;
  size_t start = 0;
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    const std::string part = path.substr(start, dot - start);
    auto it = std::find_if(m->children_.begin(), m->children_.end(), [&](const auto& c) { return c.first == part; });
    HEARTH_CHECK(it != m->children_.end(), ValueError, "[", type_name_, "] has no submodule \"", path.substr(0, dot),
                 "\" (looking up \"", path, "\")");
    m = it->second.get();
    start = dot + 1;
  }
  *leaf = path.substr(start);
  return m;
}

Tensor Module::get_parameter(const std::string& path) const {
  std::string leaf;
  const Module* m = resolve_owner(path, &leaf);
  for (const NamedTensor& e : m->params_)
    if (e.name == leaf && e.tensor.defined()) return e.tensor;
  HEARTH_THROW(ValueError, "[", type_name_, "] has no parameter \"", path, "\"");
}

Tensor Module::get_buffer(const std::string& path) const {
  std::string leaf;
  const Module* m = resolve_owner(path, &leaf);
  for (const NamedTensor& e : m->buffers_)
    if (e.name == leaf && e.tensor.defined()) return e.tensor;
  HEARTH_THROW(ValueError, "[", type_name_, "] has no buffer \"", path, "\"");
}

std::shared_ptr<Module> Module::get_submodule(const std::string& path) const {
  std::string leaf;
  const Module* m = resolve_owner(path, &leaf);
  for (const auto& [name, c] : m->children_)
    if (name == leaf) return c;
  HEARTH_THROW(ValueError, "[", type_name_, "] has no submodule \"", path, "\"");
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& [name, c] : children_) c->apply(fn);
  fn(*this);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, c] : children_) c->train(on);
}

void Module::convert(const std::function<Tensor(const Tensor&)>& fn, bool floating_only) {
  NoGradGuard no_grad;
  std::set<const TensorImpl*> done;  // tied tensors convert once
  for (const auto& m : modules()) {
    for (auto* list : {&m->params_, &m->buffers_}) {
      for (NamedTensor& e : *list) {
        if (!e.tensor.defined() || (floating_only && !e.tensor.is_floating_point())) continue;
        if (!done.insert(e.tensor.impl().get()).second) continue;
        set_data(e.tensor, fn(e.tensor.detach()));
        Tensor g = e.tensor.grad();
        if (g.defined()) e.tensor.set_grad(fn(g));
      }
    }
  }
}

void Module::to(Device device) {
  // A move keeps each tensor's memory format (transfers produce NCHW copies).
  convert(
      [&](const Tensor& t) {
        Tensor moved = t.to(device);
        const MemoryFormat fmt = t.suggest_memory_format();
        return fmt == MemoryFormat::contiguous ? moved : contiguous(moved, fmt);
      },
      false);
}

void Module::to(MemoryFormat fmt) {
  convert([&](const Tensor& t) { return t.dim() == 4 ? contiguous(t, fmt) : t; }, true);
}

void to_channels_last(Module& module) { module.to(MemoryFormat::channels_last); }

bool runs_channels_last(const Module& module) {
  for (const Tensor& p : module.parameters())
    if (p.dim() == 4 && is_floating(p.dtype()) && p.suggest_memory_format() == MemoryFormat::channels_last) return true;
  return false;
}

void Module::to(DType dtype) {
  HEARTH_CHECK(is_floating(dtype), TypeError, "[", type_name_,
               "] to(dtype) expects a floating dtype (it converts floating parameters and buffers), got ",
               dtype_name(dtype));
  convert([&](const Tensor& t) { return t.to(dtype); }, true);
}

void Module::to(Device device, DType dtype) {
  to(device);
  to(dtype);
}

bool Module::gradient_checkpointing_enable(bool on) {
  bool any = false;
  apply([&](Module& m) { any = m.set_gradient_checkpointing(on) || any; });
  return any;
}

void Module::requires_grad_(bool on) {
  for (Tensor& p : parameters()) p.requires_grad_(on);
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (Tensor& p : parameters()) p.zero_grad_(set_to_none);
}

void Module::collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const NamedTensor& e : params_)
    if (e.tensor.defined()) out.emplace_back(join_name(prefix, e.name), e.tensor);
  for (const NamedTensor& e : buffers_)
    if (e.tensor.defined() && e.persistent) out.emplace_back(join_name(prefix, e.name), e.tensor);
  for (const auto& [name, child] : children_) child->collect_state(join_name(prefix, name), out);
}

StateDict Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect_state("", all);
  StateDict out;
  for (auto& [name, t] : all) out.emplace(name, t.detach());
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state, bool strict) {
  std::vector<std::pair<std::string, Tensor>> own;
  collect_state("", own);

  LoadStateDictResult result;
  std::set<std::string> own_names;
  for (const auto& [name, t] : own) {
    own_names.insert(name);
    auto it = state.find(name);
    if (it == state.end()) {
      result.missing_keys.push_back(name);
      continue;
    }
    HEARTH_CHECK(it->second.defined(), ValueError, "[load_state_dict] entry \"", name, "\" is an undefined tensor");
    HEARTH_CHECK(it->second.shape() == t.shape(), ShapeError, "[load_state_dict] size mismatch for \"", name,
                 "\": the checkpoint has shape ", it->second.shape_string(), ", the module expects ", t.shape_string());
    HEARTH_CHECK(is_floating(it->second.dtype()) == is_floating(t.dtype()), TypeError,
                 "[load_state_dict] dtype mismatch for \"", name, "\": the state holds ",
                 dtype_name(it->second.dtype()), ", the module's tensor is ", dtype_name(t.dtype()));
  }
  for (const auto& [name, t] : state)
    if (!own_names.count(name)) result.unexpected_keys.push_back(name);
  if (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty())) {
    std::ostringstream msg;
    msg << "[load_state_dict] error loading state into " << type_name_ << ":";
    if (!result.missing_keys.empty()) msg << " missing key(s): " << join_list(result.missing_keys) << ".";
    if (!result.unexpected_keys.empty()) msg << " unexpected key(s): " << join_list(result.unexpected_keys) << ".";
    msg << " Pass strict=false to load the matching entries only.";
    throw ValueError(msg.str());
  }
  NoGradGuard no_grad;
  for (const auto& [name, t] : own) {
    auto it = state.find(name);
    if (it == state.end() || it->second.is_same(t)) continue;
    copy_(t, it->second);
  }
  return result;
}

std::string Module::repr() const {
  std::ostringstream os;
  os << type_name_ << "(";
  const std::string extra = extra_repr();
  if (children_.empty()) {
    os << extra << ")";
    return os.str();
  }
  os << "\n";
  if (!extra.empty()) os << "  " << extra << "\n";
  for (const auto& [name, c] : children_) {
    std::string child = c->repr();
    // Indent the child's continuation lines under its name.
    std::string indented;
    for (char ch : child) {
      indented += ch;
      if (ch == '\n') indented += "  ";
    }
    os << "  (" << name << "): " << indented << "\n";
  }
  os << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.repr(); }

}  // namespace hearth::nn
