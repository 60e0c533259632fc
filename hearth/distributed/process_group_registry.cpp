#include "hearth/distributed/process_group_registry.h"

#include <algorithm>
#include <mutex>

#include "hearth/core/errors.h"
#include "hearth/distributed/tcp_store.h"

namespace hearth::distributed {
namespace {

struct Backend {
  std::string name;
  std::vector<DeviceKind> device_kinds;
  ProcessGroupFactory factory;
};

struct BackendTable {
  std::mutex mu;
  std::vector<Backend> backends;  // in registration order
};

BackendTable& table() {
  static BackendTable t;
  return t;
}

const Backend* find_locked(const BackendTable& t, const std::string& name) {
  for (const Backend& b : t.backends)
    if (b.name == name) return &b;
  return nullptr;
}

std::string names_locked(const BackendTable& t) {
  std::vector<std::string> names;
  for (const Backend& b : t.backends) names.push_back(b.name);
  std::sort(names.begin(), names.end());
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// "gloo for cpu, nccl for cuda"; "none" when nothing is registered.
std::string served_kinds_locked(const BackendTable& t) {
  std::string s;
  for (const Backend& b : t.backends) {
    std::string kinds;
    for (DeviceKind k : b.device_kinds) kinds += (kinds.empty() ? "" : " and ") + device_kind_name(k);
    s += (s.empty() ? "" : ", ") + b.name + " for " + kinds;
  }
  return s.empty() ? "none" : s;
}

}  // namespace

void register_process_group_backend(const std::string& name, std::vector<DeviceKind> device_kinds,
                                    ProcessGroupFactory factory) {
  BackendTable& t = table();
  std::lock_guard lock(t.mu);
  for (Backend& b : t.backends) {
    if (b.name == name) {
      b.device_kinds = std::move(device_kinds);
      b.factory = std::move(factory);
      return;
    }
  }
  t.backends.push_back(Backend{name, std::move(device_kinds), std::move(factory)});
}

bool has_process_group_backend(const std::string& name) {
  BackendTable& t = table();
  std::lock_guard lock(t.mu);
  return find_locked(t, name) != nullptr;
}

std::string process_group_backends() {
  BackendTable& t = table();
  std::lock_guard lock(t.mu);
  return names_locked(t);
}

std::string process_group_backend_for(DeviceKind kind) {
  BackendTable& t = table();
  std::lock_guard lock(t.mu);
  for (const Backend& b : t.backends)
    for (DeviceKind k : b.device_kinds)
      if (k == kind) return b.name;
  HEARTH_THROW(ValueError, "[dist] no process group backend serves ", device_kind_name(kind),
               " devices in this build of hearth (registered: ", served_kinds_locked(t), ")");
}

ProcessGroupPtr new_process_group(const std::string& backend, const std::shared_ptr<TcpStore>& store,
                                  const ProcessGroupOptions& options) {
  ProcessGroupFactory factory;
  {
    BackendTable& t = table();
    std::lock_guard lock(t.mu);
    if (const Backend* b = find_locked(t, backend)) factory = b->factory;
  }
  HEARTH_CHECK(factory != nullptr, ValueError, "[dist] this build of hearth has no '", backend,
               "' process group backend (it has: ", process_group_backends(), ")");
  HEARTH_CHECK(store != nullptr, ValueError, "[dist] new_process_group needs a store");
  ProcessGroupPtr group = factory(store, options);
  group->set_store(store);
  return group;
}

}  // namespace hearth::distributed
