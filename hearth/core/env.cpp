#include "hearth/core/env.h"

#include <cstdlib>
#include <string_view>

#include "hearth/core/errors.h"

namespace hearth {
namespace {

// Variables other programs define and hearth reads, each with its reader.
constexpr std::string_view kOutsideVariables[] = {
    "HOME",                  // apps/common/user_config.cpp: ~/.config
    "XDG_CONFIG_HOME",       // apps/common/user_config.cpp
    "TMPDIR",                // apps/hearth/launch_command.cpp
    "PATH",                  // apps/hearth/launch_command.cpp: whether a program name is found on it
    "XDG_CACHE_HOME",        // a backend's compiled-kernel cache (hearth/backends/vulkan/vulkan_switches.cpp)
    "TERM",                  // hearth/train/progress.cpp: whether the terminal redraws a line
    "OMP_NUM_THREADS",       // apps/hearth/env_command.cpp, apps/hearth/launcher.cpp
    "OMP_WAIT_POLICY",       // hearth/backends/cpu/onednn/size_rule.cpp
    "CUDA_VISIBLE_DEVICES",  // hearth/backends/cuda/runtime.cu (reported, never changed)
    "GLOO_SOCKET_IFNAME",    // hearth/distributed/gloo/gloo_process_group.cpp
    "RANK",                  // the launchers' variables: hearth/distributed/rendezvous.cpp,
    "WORLD_SIZE",            //   hearth/train/device_select.cpp (the local rank)
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_LAUNCH_NODE_IPADDR",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
};

}  // namespace

bool is_outside_variable(const std::string& name) {
  for (std::string_view v : kOutsideVariables)
    if (v == name) return true;
  return false;
}

std::string outside_env(const char* name) {
  HEARTH_CHECK(is_outside_variable(name), ValueError, "[env] ", name,
               " is not one of the outside variables hearth reads (hearth/core/env.cpp); a HEARTH_* variable is "
               "declared as a switch (hearth/core/switches.h)");
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

bool outside_env_is_set(const char* name) {
  HEARTH_CHECK(is_outside_variable(name), ValueError, "[env] ", name,
               " is not one of the outside variables hearth reads (hearth/core/env.cpp)");
  return std::getenv(name) != nullptr;
}

}  // namespace hearth
