// nn::Module: the owner of parameters, buffers and submodules, each registered
// under a name, so that the dotted paths ("features.0.weight",
// "layer1.0.bn1.running_mean") are PyTorch's and a state dict saved by one
// loads into the other.
//
// Modules are held by std::shared_ptr and are not copyable: a copy would share
// its parameters silently. A layer registers what it owns in its constructor:
//
//   class Block : public Module {
//    public:
//     Block() : Module("Block") {
//       fc = register_module("fc", std::make_shared<Linear>(4, 4));
//       scale = register_parameter("scale", ones({4}));
//     }
//     Tensor forward(const Tensor& x) override { return fc->forward(x) * scale; }
//     std::shared_ptr<Linear> fc;
//     Tensor scale;
//   };
//
// forward: modules with one tensor input override `forward(const Tensor&)`,
// which Sequential calls. Modules that take several inputs (BERT: ids, mask,
// token types) declare their own forward with that signature; the single-input
// one then raises NotImplementedError naming the module.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::nn {

// Tensors by dotted name: what state_dict() gives and load_state_dict() takes
// (also what hearth::io::save_safetensors/load_safetensors write and read).
using StateDict = std::map<std::string, Tensor>;

struct LoadStateDictResult {
  std::vector<std::string> missing_keys;     // the module's keys the dict lacks
  std::vector<std::string> unexpected_keys;  // the dict's keys the module lacks
};

// A parameter: `t` as a leaf that requires grad (detached from any graph).
// A tensor that already is one is returned as is, keeping its identity.
Tensor Parameter(const Tensor& t, bool requires_grad = true);

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string type_name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name, as PyTorch prints it ("Linear", "Sequential").
  const std::string& type_name() const { return type_name_; }

  virtual Tensor forward(const Tensor& x);
  Tensor operator()(const Tensor& x) { return forward(x); }

  // ---- registration (names: non-empty, no '.', unique across kinds) ----
  // Stores Parameter(t) and returns it: registering another module's
  // parameter ties the two (tied embeddings). An undefined tensor
  // registers an absent parameter (PyTorch's `bias=None`): listed nowhere.
  Tensor register_parameter(const std::string& name, const Tensor& t, bool requires_grad = true);
  // Non-persistent buffers are left out of state_dict().
  Tensor register_buffer(const std::string& name, const Tensor& t, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // ---- traversal: a module's own entries in registration order, then each
  // submodule's, depth-first (PyTorch's order) ----
  // Each tensor once, even when shared by several modules (tied weights).
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // This module first (named ""), then every descendant once.
  std::vector<std::shared_ptr<Module>> modules();
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  // The parameter, buffer or submodule under `name` (dotted paths allowed);
  // ValueError naming the path when there is none.
  Tensor get_parameter(const std::string& path) const;
  Tensor get_buffer(const std::string& path) const;
  std::shared_ptr<Module> get_submodule(const std::string& path) const;
  // Calls fn on every submodule, then on this one (PyTorch's apply order).
  void apply(const std::function<void(Module&)>& fn);

  // ---- mode ----
  // Sets the mode of this module and every descendant.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // ---- placement: parameters keep their identity (an optimizer built before
  // the move still holds them), as PyTorch's module.to() does ----
  void to(Device device);
  // Floating parameters and buffers only; integer buffers (BatchNorm's
  // num_batches_tracked) keep their dtype.
  void to(DType dtype);
  void to(Device device, DType dtype);
  // Lays every 4-D floating parameter and buffer (convolution weights) out in
  // `fmt`, as PyTorch's model.to(memory_format=...). With channels_last weights
  // and inputs, convolutions run NHWC end to end (the layout tensor cores want).
  void to(MemoryFormat fmt);
  // Turns gradient tracking of every parameter on or off (freezing).
  void requires_grad_(bool on = true);
  // Activation checkpointing (Hugging Face's gradient_checkpointing_enable):
  // blocks that support it keep only their inputs in training and recompute
  // the rest in backward (autograd::checkpoint), trading compute for memory.
  // Applies to every descendant; false when none supports it.
  bool gradient_checkpointing_enable(bool on = true);
  void zero_grad(bool set_to_none = true);

  // ---- state ----
  // Parameters and persistent buffers, by dotted name, sharing their storage
  // (detached): save it, or clone it for a snapshot.
  StateDict state_dict() const;
  // Copies matching entries into this module's tensors (cast to their dtype,
  // moved to their device). Any shape mismatch throws ShapeError naming the
  // key and both shapes; with `strict`, missing or unexpected keys throw
  // ValueError listing them. Nothing is written when it throws.
  LoadStateDictResult load_state_dict(const StateDict& state, bool strict = true);

  // PyTorch-style printout: "Linear(in_features=4, out_features=2, bias=true)",
  // containers listing their children indented.
  std::string repr() const;
  virtual std::string extra_repr() const { return ""; }

 protected:
  // Overridden by modules that can checkpoint their blocks; true when they took it.
  virtual bool set_gradient_checkpointing(bool /*on*/) { return false; }
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  // Drops the submodule `name` (an adapter folded into its layer); a
  // ValueError when there is none.
  void remove_child(const std::string& name);

 private:
  struct NamedTensor {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };
  void check_new_name(const std::string& name, const char* kind) const;
  void collect_named_tensors(const std::string& prefix, bool params, bool recurse, bool dedupe,
                             std::vector<std::pair<std::string, Tensor>>& out,
                             std::vector<const TensorImpl*>& seen) const;
  // State entries in PyTorch's order: a module's parameters, its persistent
  // buffers, then each child's, every name kept (tied tensors too).
  void collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out,
                       std::vector<const Module*>& seen);
  void convert(const std::function<Tensor(const Tensor&)>& fn, bool floating_only);
  const Module* resolve_owner(const std::string& path, std::string* leaf) const;

  std::string type_name_;
  bool training_ = true;
  std::vector<NamedTensor> params_;
  std::vector<NamedTensor> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// Prints module.repr().
std::ostream& operator<<(std::ostream& os, const Module& m);

// model.to(MemoryFormat::channels_last): the switch a training loop flips to
// run a CNN in NHWC (fastest for bfloat16/float16 on CUDA). Feed it
// channels_last inputs too (contiguous(x, MemoryFormat::channels_last)).
void to_channels_last(Module& module);
// Whether the module's convolutions run channels_last: some 4-D floating
// parameter is laid out NHWC. Its inputs should then be channels_last too
// (a convolution takes its layout from its input).
bool runs_channels_last(const Module& module);

}  // namespace hearth::nn
