// The NCCL backend: collectives between CUDA devices, one process per device.
// It is the CUDA backend's process group, registered for the "cuda" device
// kind (hearth/distributed/process_group_registry.h), and built with the CUDA
// backend where NCCL is found (cmake/cuda.cmake).
// The ranks agree on NCCL's unique id through the rendezvous store; every
// collective is enqueued on hearth's stream for the device
// (hearth/backends/cuda/context.h), so the ops before and after it are
// ordered with it without any host synchronisation.
//
// NCCL cannot time out by itself: a peer that died or hangs leaves the
// others' kernels spinning. A watchdog thread watches an event recorded after
// each collective; when one has not completed within the group's timeout, or
// NCCL reports an asynchronous error, it prints which rank and collective
// failed, aborts the communicator (ncclCommAbort, which ends the kernels) and
// ends the process with status 1, so the launcher stops the other ranks
// instead of everything hanging.
//
// NVLink multicast (NVLS) is switched off (NCCL_NVLS_ENABLE=0) before the
// communicator is made, whoever started the process.
#pragma once

#include <memory>

#include "hearth/distributed/process_group.h"

namespace hearth::distributed {

ProcessGroupPtr new_nccl_process_group(const std::shared_ptr<TcpStore>& store, const ProcessGroupOptions& options);

}  // namespace hearth::distributed
