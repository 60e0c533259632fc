// The process supervisor behind `hearth launch` and `hearth train --devices`:
// starts one process per rank with the rendezvous variables set
// (hearth/distributed/rendezvous.h), prefixes each line they print with "[rank K]",
// forwards SIGINT, SIGTERM and SIGHUP to them, and, when one fails, stops the
// others (SIGTERM, then SIGKILL after a grace period) and reports which rank
// failed: when it timed out waiting for ranks that never reached a collective
// (it says so: hearth/distributed/arrival.h), those ranks.
// No process outlives the launcher: each child is killed if the launcher dies.
// The ranks get HEARTH_STORE_TOKEN, the secret of the rendezvous store: the
// launcher's own when set, else a fresh random one for a single-node job
// (a multi-node job must be given one, the same on every node).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hearth::cli {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  // 0: a free port of this machine (single-node runs); 29500 otherwise.
  int master_port = 0;
  // Seconds between SIGTERM and SIGKILL when the other ranks are stopped.
  double grace_seconds = 5.0;
  // Variables every rank gets besides the rendezvous ones (the user's config
  // file, HEARTH_CONFIG_FILE); they replace the launcher's values.
  std::vector<std::pair<std::string, std::string>> environment;
};

// Runs `command` (program and arguments) as nproc_per_node ranks and returns
// the launcher's exit status: 0 when all succeeded, else the first failed
// rank's status (128 + signal for a signal).
int launch(const LaunchOptions& options, const std::vector<std::string>& command);

// The variables every process hearth starts gets, whatever the launch: NVLink
// multicast (NVLS) stays off in NCCL, PyTorch's symmetric memory and NVSHMEM.
const std::vector<std::pair<std::string, std::string>>& launch_environment_defaults();

}  // namespace hearth::cli
