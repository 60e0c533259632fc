#include "hearth/nn/container.h"

#include <string>

namespace hearth::nn {

ModuleList::ModuleList(std::vector<std::shared_ptr<Module>> modules) : Module("ModuleList") { extend(modules); }

void ModuleList::push_back(std::shared_ptr<Module> module) {
  add_child(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
}

void ModuleList::extend(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

const std::shared_ptr<Module>& ModuleList::operator[](int64_t index) const {
  const int64_t n = static_cast<int64_t>(items_.size());
  HEARTH_CHECK(index >= -n && index < n, ValueError, "[", type_name(), "] index ", index,
               " is out of range for a container of ", n, " modules");
  return items_[static_cast<size_t>(index < 0 ? index + n : index)];
}

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) : ModuleList("Sequential") { extend(modules); }

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& m : *this) h = m->forward(h);
  return h;
}

}  // namespace hearth::nn
