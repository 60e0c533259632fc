// `hearth launch` as a supervisor: output prefixed by rank, a failing or
// killed rank stops the others and makes the launcher exit non-zero naming
// it, and no process is left behind.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include "tests/unit/distributed/dist_testing.h"

namespace hearth::testing {
namespace {

int read_pid(const std::string& path) {
  int pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

bool process_exists(int pid) { return pid > 0 && ::kill(pid, 0) == 0; }

TEST(Launch, AFailingRankStopsTheOthersAndNamesIt) {
  TempDir dir;
  const std::string pids = dir.path() + "/pid";
  CommandResult r = run_command(launch_command(3, "die " + pids));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("[rank 2] rank 2 exits with status 3 on purpose"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hearth launch: rank 2 (pid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exited with status 3; stopping the other ranks"), std::string::npos) << r.output;
  for (int rank : {0, 1}) {
    const int pid = read_pid(pids + "." + std::to_string(rank));
    EXPECT_GT(pid, 0) << "rank " << rank << " wrote no pid";
    EXPECT_FALSE(process_exists(pid)) << "rank " << rank << " (pid " << pid << ") outlived the launcher";
  }
}

TEST(Launch, KillingOneRankStopsTheOthers) {
  TempDir dir;
  const std::string pids = dir.path() + "/pid";
  std::thread killer([&] {
    // Once rank 1 is up, kill it as an out-of-memory killer would.
    for (int i = 0; i < 200 && read_pid(pids + ".1") == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ::kill(read_pid(pids + ".1"), SIGKILL);
  });
  CommandResult r = run_command(launch_command(2, "wait " + pids));
  killer.join();
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.output;
  EXPECT_NE(r.output.find("hearth launch: rank 1 (pid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("was killed by signal 9"), std::string::npos) << r.output;
  EXPECT_FALSE(process_exists(read_pid(pids + ".0"))) << "rank 0 outlived the launcher";
}

TEST(Launch, PrefixesEveryLineWithTheRankAndSetsTheRendezvousVariables) {
  CommandResult r =
      run_command(kHearth +
                  " launch --nproc_per_node 2 sh -c 'echo \"$RANK/$WORLD_SIZE/$LOCAL_RANK/$LOCAL_WORLD_SIZE "
                  "$MASTER_ADDR $NCCL_NVLS_ENABLE\"; echo second line >&2'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[rank 0] 0/2/0/2 127.0.0.1 0\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[rank 1] 1/2/1/2 127.0.0.1 0\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[rank 1] second line\n"), std::string::npos) << r.output;
}

TEST(Launch, GivesEveryRankTheSameFreshStoreToken) {
  const std::string show = " launch --nproc_per_node 2 sh -c 'echo \"token=$HEARTH_STORE_TOKEN\"'";
  CommandResult r = run_command("env -u HEARTH_STORE_TOKEN " + kHearth + show);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto token_of = [&](const CommandResult& c, int rank) {
    const std::string mark = "[rank " + std::to_string(rank) + "] token=";
    const size_t at = c.output.find(mark);
    if (at == std::string::npos) return std::string();
    return c.output.substr(at + mark.size(), c.output.find('\n', at) - at - mark.size());
  };
  const std::string t0 = token_of(r, 0);
  EXPECT_EQ(t0.size(), 64u) << r.output;
  EXPECT_EQ(token_of(r, 1), t0) << r.output;
  // Another job, another token.
  CommandResult again = run_command("env -u HEARTH_STORE_TOKEN " + kHearth + show);
  EXPECT_NE(token_of(again, 0), t0) << again.output;
  // One given (a multi-node job's, the same on every node) is passed on.
  CommandResult given = run_command("env HEARTH_STORE_TOKEN=0123456789abcdef-given " + kHearth + show);
  EXPECT_EQ(token_of(given, 0), "0123456789abcdef-given") << given.output;
  EXPECT_EQ(token_of(given, 1), "0123456789abcdef-given") << given.output;
  // A weak one is refused before any rank starts.
  CommandResult weak = run_command("env HEARTH_STORE_TOKEN=secret " + kHearth + show);
  EXPECT_NE(weak.exit_code, 0) << weak.output;
  EXPECT_NE(weak.output.find("HEARTH_STORE_TOKEN=<6 characters> is not allowed: must have 16 to 256 characters"),
            std::string::npos)
      << weak.output;
  EXPECT_EQ(weak.output.find("secret"), std::string::npos) << weak.output;
  EXPECT_EQ(weak.output.find("[rank 0]"), std::string::npos) << weak.output;
}

TEST(Launch, AMultiNodeJobWithoutATokenIsWarnedAbout) {
  // Node 0 of two, whose rank only prints: no fresh token (node 1 could not
  // know it), and a warning that the store is unauthenticated.
  CommandResult r = run_command("env -u HEARTH_STORE_TOKEN " + kHearth +
                                " launch --nnodes 2 --node_rank 0 --nproc_per_node 1 sh -c "
                                "'echo \"token=[$HEARTH_STORE_TOKEN]\"'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[rank 0] token=[]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("HEARTH_STORE_TOKEN is not set, so the rendezvous store at 127.0.0.1:29500 accepts any "
                          "program that reaches it"),
            std::string::npos)
      << r.output;
}

TEST(Launch, AProgramThatCannotStartFails) {
  CommandResult r = run_command(kHearth + " launch --nproc_per_node 2 /no/such/program");
  EXPECT_EQ(r.exit_code, 127) << r.output;
  EXPECT_NE(r.output.find("cannot run '/no/such/program'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hearth::testing
