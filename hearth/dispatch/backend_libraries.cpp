#include "hearth/dispatch/backend_libraries.h"

#include <map>
#include <mutex>

namespace hearth {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<int, std::vector<BackendLibrary>> by_kind;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: registrations run from static initialisers
  return *r;
}

}  // namespace

void register_backend_library(DeviceKind kind, BackendLibrary library) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_kind[kind.id].push_back(std::move(library));
}

std::vector<BackendLibrary> backend_libraries(DeviceKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_kind.find(kind.id);
  return it == r.by_kind.end() ? std::vector<BackendLibrary>{} : it->second;
}

}  // namespace hearth
