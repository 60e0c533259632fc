// Joining a distributed job in one call: the rendezvous store (served by
// rank 0) and a process group over it.
//
//   if (auto r = distributed::rendezvous_from_environment(); r && r->world_size > 1)
//     group = distributed::init_process_group(*r, distributed::default_backend(device), device,
//                                             std::chrono::minutes(30));
#pragma once

#include <chrono>
#include <string>

#include "hearth/distributed/process_group.h"
#include "hearth/distributed/rendezvous.h"

namespace hearth::distributed {

ProcessGroupPtr init_process_group(const Rendezvous& rendezvous, const std::string& backend, Device device,
                                   std::chrono::milliseconds timeout);

// The backend registered for the device's kind (process_group_registry.h):
// "gloo" for the CPU, "nccl" for CUDA where it was built. ValueError naming
// the kind and the registered backends when no backend serves it.
std::string default_backend(Device device);

}  // namespace hearth::distributed
