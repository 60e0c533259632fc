// Joining a distributed job in one call: the rendezvous store (served by
// rank 0) and a process group over it.
//
//   if (auto r = dist::rendezvous_from_environment(); r && r->world_size > 1)
//     group = dist::init_process_group(*r, "gloo", Device(), std::chrono::minutes(30));
#pragma once

#include <chrono>
#include <string>

#include "hearth/distributed/process_group.h"
#include "hearth/distributed/rendezvous.h"

namespace hearth::dist {

ProcessGroupPtr init_process_group(const Rendezvous& rendezvous, const std::string& backend, Device device,
                                   std::chrono::milliseconds timeout);

// "nccl" for CUDA devices, "gloo" otherwise.
std::string default_backend(Device device);

}  // namespace hearth::dist
