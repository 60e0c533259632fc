#include <stdlib.h>

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/distributed/rendezvous.h"

using namespace hearth;
using namespace hearth::distributed;

namespace {

const char* kVars[] = {"RANK",
                       "WORLD_SIZE",
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
                       "HEARTH_STORE_TOKEN"};

// Sets exactly `vars` among the launcher variables for the test's duration.
class Env {
 public:
  explicit Env(const std::map<std::string, std::string>& vars) {
    for (const char* v : kVars) {
      if (const char* old = std::getenv(v)) saved_[v] = old;
      ::unsetenv(v);
    }
    for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~Env() {
    for (const char* v : kVars) ::unsetenv(v);
    for (const auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
  }

 private:
  std::map<std::string, std::string> saved_;
};

std::string error_of(const std::map<std::string, std::string>& vars) {
  Env env(vars);
  try {
    rendezvous_from_environment();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Rendezvous, NoLauncherMeansNoRendezvous) {
  Env env({});
  EXPECT_FALSE(rendezvous_from_environment().has_value());
}

TEST(Rendezvous, TorchrunVariables) {
  Env env({{"RANK", "3"},
           {"WORLD_SIZE", "4"},
           {"LOCAL_RANK", "1"},
           {"LOCAL_WORLD_SIZE", "2"},
           {"MASTER_ADDR", "node0"},
           {"MASTER_PORT", "1234"}});
  Rendezvous r = rendezvous_from_environment().value();
  EXPECT_EQ(r.source, "torchrun");
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.local_world_size, 2);
  EXPECT_EQ(r.master_addr, "node0");
  EXPECT_EQ(r.master_port, 1234);
}

TEST(Rendezvous, SlurmVariablesUseTheLaunchNodeAsMaster) {
  Env env({{"SLURM_PROCID", "5"},
           {"SLURM_NTASKS", "8"},
           {"SLURM_LOCALID", "1"},
           {"SLURM_NTASKS_PER_NODE", "4(x2)"},
           {"SLURM_LAUNCH_NODE_IPADDR", "10.0.0.7"}});
  Rendezvous r = rendezvous_from_environment().value();
  EXPECT_EQ(r.source, "slurm");
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.world_size, 8);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.local_world_size, 4);
  EXPECT_EQ(r.master_addr, "10.0.0.7");
  EXPECT_EQ(r.master_port, kDefaultMasterPort);
}

TEST(Rendezvous, OpenMpiVariables) {
  Env env({{"OMPI_COMM_WORLD_RANK", "1"},
           {"OMPI_COMM_WORLD_SIZE", "2"},
           {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
           {"MASTER_ADDR", "127.0.0.1"},
           {"MASTER_PORT", "4000"}});
  Rendezvous r = rendezvous_from_environment().value();
  EXPECT_EQ(r.source, "openmpi");
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.world_size, 2);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.master_port, 4000);
}

TEST(Rendezvous, BadValuesNameTheVariable) {
  EXPECT_NE(error_of({{"RANK", "one"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}})
                .find("environment variable RANK must be an integer in [0, "),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}}).find("environment variable WORLD_SIZE is not set"), std::string::npos);
  EXPECT_NE(
      error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).find("RANK=2 is not below the world size 2"),
      std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}).find("MASTER_ADDR is not set"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})
                .find("environment variable MASTER_PORT must be an integer in [1, 65535], got '70000'"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}).find("SLURM_LOCALID is not set"),
            std::string::npos);
  EXPECT_NE(error_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "x"}}).find("OMPI_COMM_WORLD_SIZE"),
            std::string::npos);
}

TEST(Rendezvous, TheStoreTokenComesFromTheEnvironmentAndIsChecked) {
  {
    Env env({{"RANK", "0"}, {"WORLD_SIZE", "1"}});
    EXPECT_EQ(rendezvous_from_environment()->store_token, "");
  }
  {
    Env env({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"HEARTH_STORE_TOKEN", "0123456789abcdef-token"}});
    EXPECT_EQ(rendezvous_from_environment()->store_token, "0123456789abcdef-token");
  }
  const std::string short_token = error_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"HEARTH_STORE_TOKEN", "secret"}});
  EXPECT_NE(
      short_token.find("HEARTH_STORE_TOKEN=<6 characters> is not allowed: must have 16 to 256 characters, it has 6"),
      std::string::npos)
      << short_token;
  const std::string spaces =
      error_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"HEARTH_STORE_TOKEN", "a token with spaces in it"}});
  EXPECT_NE(spaces.find("printable characters without spaces"), std::string::npos) << spaces;
  // Not read at all without a launcher's variables (a single process).
  EXPECT_EQ(error_of({{"HEARTH_STORE_TOKEN", "x"}}), "");
}

TEST(Rendezvous, NewStoreTokensAreLongRandomAndDifferent) {
  const std::string a = new_store_token(), b = new_store_token();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}
