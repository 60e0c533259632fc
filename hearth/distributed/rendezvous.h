// Who this process is in a distributed job, read from the variables launchers
// set, so `hearth launch`, torchrun, srun and mpirun all work unchanged:
//
//   torchrun / hearth launch: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   Slurm (srun):             SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE,
//                             SLURM_LAUNCH_NODE_IPADDR (the master unless MASTER_ADDR is set)
//   Open MPI (mpirun):        OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK,
//                             OMPI_COMM_WORLD_LOCAL_SIZE (MASTER_ADDR, MASTER_PORT as given)
//
// The first family whose rank variable is present wins, in that order. A
// missing or malformed value is a ValueError naming the variable.
//
// HEARTH_STORE_TOKEN, whatever the launcher, is the job's secret for the
// rendezvous store (tcp_store.h): rank 0's store refuses connections that do
// not present it. `hearth launch` sets a fresh one for each single-node job;
// a job started otherwise sets the same value on every rank itself (e.g.
// `export HEARTH_STORE_TOKEN=$(openssl rand -hex 32)` before torchrun or srun
// on every node). Unset, the store does not authenticate its clients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hearth::distributed {

struct Rendezvous {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 29500;
  std::string source;       // "torchrun", "slurm" or "openmpi": where the values came from
  std::string store_token;  // HEARTH_STORE_TOKEN; empty when unset
};

inline constexpr uint16_t kDefaultMasterPort = 29500;
inline constexpr const char* kStoreTokenVariable = "HEARTH_STORE_TOKEN";
// A store token has 16 to 256 printable characters, no spaces.
inline constexpr size_t kMinStoreTokenChars = 16;
inline constexpr size_t kMaxStoreTokenChars = 256;

// HEARTH_STORE_TOKEN, checked: empty when unset, else ValueError when it
// breaks the rule above.
std::string store_token_from_environment();
// A fresh token: 32 random bytes from the kernel, as 64 hex digits.
std::string new_store_token();

// The rendezvous of this process, or nullopt when no launcher variables are set.
std::optional<Rendezvous> rendezvous_from_environment();

// How long collectives and the store wait before failing: HEARTH_DIST_TIMEOUT
// (seconds) when set, else `fallback_seconds`.
double dist_timeout_seconds(double fallback_seconds);

}  // namespace hearth::distributed
