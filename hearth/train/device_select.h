// Which device the Trainer runs on, and the one line that says why.
//
//   device "auto" (the default): the best accelerator present, else the CPU;
//     under a launcher that sets LOCAL_RANK (or Slurm's SLURM_LOCALID, Open MPI's
//     OMPI_COMM_WORLD_LOCAL_RANK), that accelerator's LOCAL_RANK-th device, so
//     the processes of a launch never pick the same one.
//   device "cuda": the LOCAL_RANK-th device of that kind (0 outside a launch);
//   device "cuda:1", ...: that device, or a DeviceError before any work:
//     "[trainer] accelerator 'cuda' is not available on this system (<why>).
//      Available: cpu. Use --device auto or --cpu."
//   device "gpu" ("gpu:N"): as Lightning's accelerator "gpu", the kind of
//     accelerator auto would pick (its N-th device); a DeviceError when there is none;
//   use_cpu: the CPU, whatever device says.
#pragma once

#include <string>

#include "hearth/core/device.h"

namespace hearth::train {

struct DeviceChoice {
  Device device;
  // "cuda:0 (NVIDIA H100 80GB HBM3, 79.1 GiB free)", "cpu (no accelerator: <why>)".
  std::string description;
};

DeviceChoice select_device(const std::string& spec, bool use_cpu);

// "cuda:0 (NVIDIA H100 80GB HBM3, 79.1 GiB free)"; "cpu" for the CPU.
std::string describe_device(const Device& device);
// Every usable device: "cpu, cuda:0, cuda:1".
std::string available_devices();
// Why no accelerator is usable: each accelerator backend's reason, or that none is built.
std::string no_accelerator_reason();

}  // namespace hearth::train
