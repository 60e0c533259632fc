#include "hearth/distributed/init.h"

#include "hearth/distributed/process_group_registry.h"
#include "hearth/distributed/tcp_store.h"

namespace hearth::distributed {

std::string default_backend(Device device) { return process_group_backend_for(device.kind); }

ProcessGroupPtr init_process_group(const Rendezvous& r, const std::string& backend, Device device,
                                   std::chrono::milliseconds timeout) {
  // Fail before rank 0 opens its port when the backend is missing.
  HEARTH_CHECK(has_process_group_backend(backend), ValueError, "[dist] this build of hearth has no '", backend,
               "' process group backend (it has: ", process_group_backends(), ")");
  auto store = std::make_shared<TcpStore>(TcpStoreOptions{.host = r.master_addr,
                                                          .port = r.master_port,
                                                          .rank = r.rank,
                                                          .world_size = r.world_size,
                                                          .serve = true,
                                                          .timeout = timeout,
                                                          .token = r.store_token});
  ProcessGroupOptions o;
  o.rank = r.rank;
  o.world_size = r.world_size;
  o.device = device;
  o.timeout = timeout;
  o.master_addr = r.master_addr;
  return new_process_group(backend, store, o);
}

}  // namespace hearth::distributed
