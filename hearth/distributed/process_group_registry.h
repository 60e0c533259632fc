// The process-group backends this build has, registered per device kind the
// way device runtimes are (hearth/core/device_runtime.h). A backend registers,
// from a static initialiser in its own folder, its name, the device kinds
// whose tensors its groups communicate, and a factory: Gloo for the CPU
// (hearth/distributed/gloo/), NCCL for CUDA (hearth/backends/cuda/distributed/,
// compiled only where NCCL is found). A build without a backend simply does
// not offer it. The default backend for a device is the one registered for its
// kind, so an accelerator brings its collectives from its own backend folder
// and nothing here names it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/distributed/process_group.h"

namespace hearth::distributed {

using ProcessGroupFactory =
    std::function<ProcessGroupPtr(const std::shared_ptr<TcpStore>& store, const ProcessGroupOptions& options)>;

// Called from a backend's static initialiser. `device_kinds`: the kinds whose
// tensors its groups take; a kind served by several backends defaults to the
// one registered first.
void register_process_group_backend(const std::string& name, std::vector<DeviceKind> device_kinds,
                                    ProcessGroupFactory factory);
bool has_process_group_backend(const std::string& name);
// "gloo, nccl": the backends this build offers.
std::string process_group_backends();

// The backend that serves devices of `kind` ("gloo" for the CPU). ValueError
// naming the kind and the backends this build has when none serves it.
std::string process_group_backend_for(DeviceKind kind);

// A group of all ranks, connected through `store`; ValueError naming the
// backend when this build lacks it.
ProcessGroupPtr new_process_group(const std::string& backend, const std::shared_ptr<TcpStore>& store,
                                  const ProcessGroupOptions& options);

}  // namespace hearth::distributed
