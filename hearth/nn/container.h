// Containers: Sequential (children run in order, each output feeding the next)
// and ModuleList (an indexable list of submodules with no forward of its own).
// Children are named "0", "1", ..., so parameters read "features.0.weight".
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "hearth/nn/module.h"

namespace hearth::nn {

class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  explicit ModuleList(std::vector<std::shared_ptr<Module>> modules);
  // make_shared<ModuleList>(make_shared<Linear>(4, 4), make_shared<ReLU>()).
  template <typename... M>
  explicit ModuleList(std::shared_ptr<M>... modules) : Module("ModuleList") {
    (push_back(std::move(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  void extend(const std::vector<std::shared_ptr<Module>>& modules);
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  // Negative indices count from the end; out of range is a ValueError.
  const std::shared_ptr<Module>& operator[](int64_t index) const;
  template <typename M>
  std::shared_ptr<M> at(int64_t index) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[index]);
    HEARTH_CHECK(m != nullptr, TypeError, "[", type_name(), "] element ", index, " is a ", (*this)[index]->type_name(),
                 ", not the requested type");
    return m;
  }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return items_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return items_.end(); }

 protected:
  explicit ModuleList(const char* type_name) : Module(type_name) {}

 private:
  std::vector<std::shared_ptr<Module>> items_;
};

class Sequential : public ModuleList {
 public:
  Sequential() : ModuleList("Sequential") {}
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
  template <typename... M>
  explicit Sequential(std::shared_ptr<M>... modules) : ModuleList("Sequential") {
    (push_back(std::move(modules)), ...);
  }
  // Each child's single-tensor forward, in order; the identity when empty.
  Tensor forward(const Tensor& x) override;
};

}  // namespace hearth::nn
