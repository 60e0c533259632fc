#include "hearth/distributed/process_group.h"

#include <map>
#include <mutex>

#include "hearth/distributed/tcp_store.h"

namespace hearth::dist {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, ProcessGroupFactory>& registry() {
  static std::map<std::string, ProcessGroupFactory> r;
  return r;
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
  }
  return "?";
}

void register_process_group_backend(const std::string& name, ProcessGroupFactory factory) {
  std::lock_guard lock(registry_mutex());
  registry()[name] = std::move(factory);
}

bool has_process_group_backend(const std::string& name) {
  std::lock_guard lock(registry_mutex());
  return registry().count(name) > 0;
}

std::string process_group_backends() {
  std::lock_guard lock(registry_mutex());
  std::string s;
  for (const auto& [name, f] : registry()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

ProcessGroupPtr new_process_group(const std::string& backend, const std::shared_ptr<TcpStore>& store,
                                  const ProcessGroupOptions& options) {
  ProcessGroupFactory factory;
  {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(backend);
    if (it != registry().end()) factory = it->second;
  }
  HEARTH_CHECK(factory != nullptr, ValueError, "[dist] this build of hearth has no '", backend,
               "' process group backend (it has: ", process_group_backends(), ")",
               backend == "nccl" ? "; NCCL needs a build with HEARTH_CUDA=ON on a machine where NCCL is found" : "");
  HEARTH_CHECK(store != nullptr, ValueError, "[dist] new_process_group needs a store");
  ProcessGroupPtr group = factory(store, options);
  group->set_store(store);
  return group;
}

void check_collective_tensors(const std::string& what, const std::vector<Tensor>& tensors) {
  HEARTH_CHECK(!tensors.empty(), ValueError, "[", what, "] was given no tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    HEARTH_CHECK(t.defined(), ValueError, "[", what, "] tensor ", i, " is undefined");
    HEARTH_CHECK(t.is_contiguous(), ValueError, "[", what, "] tensor ", i,
                 " is not contiguous; collectives work in place on contiguous tensors");
    HEARTH_CHECK(t.dtype() == tensors[0].dtype(), ValueError, "[", what, "] tensor ", i, " has dtype ",
                 dtype_name(t.dtype()), " but tensor 0 has ", dtype_name(tensors[0].dtype()));
    HEARTH_CHECK(t.device() == tensors[0].device(), ValueError, "[", what, "] tensor ", i, " is on ", t.device().str(),
                 " but tensor 0 is on ", tensors[0].device().str());
  }
}

}  // namespace hearth::dist
