#include "hearth/distributed/rendezvous.h"

#include <cerrno>
#include <charconv>
#include <cstring>

#include <sys/random.h>

#include "hearth/core/env.h"
#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"

namespace hearth::distributed {
namespace {

bool is_set(const char* name) { return !outside_env(name).empty(); }

int64_t parse_int(const char* name, const std::string& text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  HEARTH_CHECK(ec == std::errc() && end == text.data() + text.size() && v >= min && v <= max, ValueError,
               "[rendezvous] environment variable ", name, " must be an integer in [", min, ", ", max, "], got '", text,
               "'");
  return v;
}

int required_int(const char* name, int64_t min, int64_t max, const char* family) {
  std::string v = outside_env(name);
  HEARTH_CHECK(!v.empty(), ValueError, "[rendezvous] environment variable ", name, " is not set, but other ", family,
               " variables are; set it (or unset them all to run a single process)");
  return static_cast<int>(parse_int(name, v, min, max));
}

int optional_int(const char* name, int fallback, int64_t min, int64_t max) {
  std::string v = outside_env(name);
  return v.empty() ? fallback : static_cast<int>(parse_int(name, v, min, max));
}

// SLURM_NTASKS_PER_NODE can read "4" or "4(x2)"; the leading count is this node's.
int slurm_tasks_per_node(int fallback) {
  std::string v = outside_env("SLURM_NTASKS_PER_NODE");
  if (v.empty()) return fallback;
  return static_cast<int>(parse_int("SLURM_NTASKS_PER_NODE", v.substr(0, v.find('(')), 1, 1 << 20));
}

void read_master(Rendezvous& r, const std::string& fallback_addr, bool addr_required) {
  std::string addr = outside_env("MASTER_ADDR");
  if (addr.empty()) addr = fallback_addr;
  HEARTH_CHECK(!addr.empty() || !addr_required, ValueError,
               "[rendezvous] environment variable MASTER_ADDR is not set: set it to rank 0's host name or address");
  if (!addr.empty()) r.master_addr = addr;
  r.master_port = static_cast<uint16_t>(optional_int("MASTER_PORT", kDefaultMasterPort, 1, 65535));
}

void check_consistent(const Rendezvous& r, const char* rank_var, const char* local_var) {
  HEARTH_CHECK(r.rank < r.world_size, ValueError, "[rendezvous] ", rank_var, "=", r.rank,
               " is not below the world size ", r.world_size);
  HEARTH_CHECK(r.local_rank < r.local_world_size, ValueError, "[rendezvous] ", local_var, "=", r.local_rank,
               " is not below the local world size ", r.local_world_size);
}

}  // namespace

std::string store_token_from_environment() {
  // The switch allows kMinStoreTokenChars to kMaxStoreTokenChars printable characters.
  return switches::store_token().get();
}

std::string new_store_token() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    HEARTH_CHECK(n > 0, IoError, "[rendezvous] cannot read random bytes for the store token: ", std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static const char* const kHex = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

namespace {

std::optional<Rendezvous> launcher_variables() {
  constexpr int64_t kMax = 1 << 20;
  Rendezvous r;
  if (is_set("RANK") || is_set("WORLD_SIZE")) {
    r.source = "torchrun";
    r.rank = required_int("RANK", 0, kMax, "torchrun");
    r.world_size = required_int("WORLD_SIZE", 1, kMax, "torchrun");
    r.local_rank = optional_int("LOCAL_RANK", r.world_size == 1 ? 0 : r.rank, 0, kMax);
    r.local_world_size = optional_int("LOCAL_WORLD_SIZE", r.world_size, 1, kMax);
    read_master(r, r.world_size == 1 ? "127.0.0.1" : "", r.world_size > 1);
    check_consistent(r, "RANK", "LOCAL_RANK");
    return r;
  }
  if (is_set("SLURM_PROCID")) {
    r.source = "slurm";
    r.rank = required_int("SLURM_PROCID", 0, kMax, "Slurm");
    r.world_size = required_int("SLURM_NTASKS", 1, kMax, "Slurm");
    r.local_rank = required_int("SLURM_LOCALID", 0, kMax, "Slurm");
    r.local_world_size = slurm_tasks_per_node(r.world_size);
    read_master(r, outside_env("SLURM_LAUNCH_NODE_IPADDR"), r.world_size > 1);
    check_consistent(r, "SLURM_PROCID", "SLURM_LOCALID");
    return r;
  }
  if (is_set("OMPI_COMM_WORLD_RANK")) {
    r.source = "openmpi";
    r.rank = required_int("OMPI_COMM_WORLD_RANK", 0, kMax, "Open MPI");
    r.world_size = required_int("OMPI_COMM_WORLD_SIZE", 1, kMax, "Open MPI");
    r.local_rank = required_int("OMPI_COMM_WORLD_LOCAL_RANK", 0, kMax, "Open MPI");
    r.local_world_size = optional_int("OMPI_COMM_WORLD_LOCAL_SIZE", r.world_size, 1, kMax);
    read_master(r, r.world_size == 1 ? "127.0.0.1" : "", r.world_size > 1);
    check_consistent(r, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK");
    return r;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Rendezvous> rendezvous_from_environment() {
  std::optional<Rendezvous> r = launcher_variables();
  if (r) r->store_token = store_token_from_environment();
  return r;
}

double dist_timeout_seconds(double fallback_seconds) {
  const NumberSwitch& timeout = switches::dist_timeout();
  return timeout.is_set() ? timeout.get() : fallback_seconds;
}

}  // namespace hearth::distributed
