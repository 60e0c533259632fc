#include "hearth/dispatch/registry.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

namespace hearth {
namespace {

struct Registry {
  std::mutex mu;
  // std::map keeps entries at stable addresses and sorted for printing.
  std::map<std::string, std::unique_ptr<OpEntry>> ops;
};

Registry& registry() {
  static Registry r;
  return r;
}

OpEntry& get_or_create(Registry& r, const std::string& name) {
  auto& slot = r.ops[name];
  if (!slot) {
    slot = std::make_unique<OpEntry>();
    slot->def.name = name;
  }
  return *slot;
}

}  // namespace

OpHandle define_op(OpDef def) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  OpEntry& e = get_or_create(r, def.name);
  e.def = std::move(def);
  e.defined = true;
  return &e;
}

OpHandle register_kernel(const std::string& op, DeviceKind kind, KernelFn fn, DTypeSet dtypes) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  OpEntry& e = get_or_create(r, op);
  e.kernels[kind.id] = KernelEntry{fn, dtypes};
  return &e;
}

void unregister_kernel(const std::string& op, DeviceKind kind) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ops.find(op);
  if (it != r.ops.end()) it->second->kernels[kind.id] = KernelEntry{};
}

OpHandle find_op(const std::string& name) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ops.find(name);
  return it == r.ops.end() ? nullptr : it->second.get();
}

std::vector<OpHandle> all_ops() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<OpHandle> out;
  for (auto& [name, e] : r.ops) out.push_back(e.get());
  return out;
}

bool supports(OpHandle op, DeviceKind kind, DType dtype) {
  const KernelEntry& k = op->kernels[kind.id];
  return k.fn != nullptr && k.dtypes.contains(dtype);
}

}  // namespace hearth
