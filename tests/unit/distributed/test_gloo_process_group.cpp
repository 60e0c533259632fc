// Gloo collectives between real processes on loopback, started by `hearth
// launch`: every rank checks sum, avg, max, min (float32, float64, int64,
// bfloat16, lists), broadcast, all_gather, reduce_scatter, pipelined
// all-reduces and barriers against values it computes itself.
#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/distributed/process_group_registry.h"
#include "hearth/distributed/tcp_store.h"
#include "hearth/ops/factory.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_device.h"
#include "tests/unit/distributed/dist_testing.h"

namespace hearth::testing {
namespace {

void expect_collectives_pass(int nproc) {
  CommandResult r = run_command(launch_command(nproc, "collectives"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (int k = 0; k < nproc; ++k) {
    const std::string line = "[rank " + std::to_string(k) + "] collectives ok on rank " + std::to_string(k) + " of " +
                             std::to_string(nproc) + " (gloo)";
    EXPECT_NE(r.output.find(line), std::string::npos) << "missing '" << line << "' in:\n" << r.output;
  }
}

TEST(GlooProcessGroup, CollectivesAcrossTwoProcesses) {
  HEARTH_SKIP_WITHOUT_GLOO();
  expect_collectives_pass(2);
}

TEST(GlooProcessGroup, CollectivesAcrossThreeProcesses) {
  HEARTH_SKIP_WITHOUT_GLOO();
  expect_collectives_pass(3);
}

TEST(GlooProcessGroup, ARankThatNeverJoinsFailsTheOthersWithinTheTimeout) {
  HEARTH_SKIP_WITHOUT_GLOO();
  CommandResult r = run_command(launch_command(2, "hang", "HEARTH_DIST_TIMEOUT=1"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[rank 0] error: [gloo] rank 0 of 2: all_reduce (collective #1) failed"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Timed out"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hearth launch: failed: rank 0"), std::string::npos) << r.output;
}

TEST(GlooProcessGroup, ATimedOutTrainerNamesTheRankThatDidNotArrive) {
  HEARTH_SKIP_WITHOUT_GLOO();
  TempDir dir;
  // Rank 2 stops answering after step 1; ranks 0 and 1 time out in the next collective.
  CommandResult r = run_command(launch_command(3, "train_hang " + dir.file("run"), "HEARTH_DIST_TIMEOUT=2"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ranks that did not arrive: 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hearth launch: failed: rank 2 (pid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did not arrive at a collective; rank "), std::string::npos) << r.output;
}

// A tensor of another device kind is refused, naming the backend that kind
// needs (here none: no backend serves the test device).
TEST(GlooProcessGroup, ATensorOfAnotherDeviceKindIsRefusedWithTheWayOut) {
  HEARTH_SKIP_WITHOUT_GLOO();
  using namespace std::chrono_literals;
  auto store = std::make_shared<distributed::TcpStore>(distributed::TcpStoreOptions{
      .host = "127.0.0.1", .port = 0, .rank = 0, .world_size = 1, .serve = true, .timeout = 5s, .token = ""});
  distributed::ProcessGroupOptions o;
  o.timeout = 5s;
  distributed::ProcessGroupPtr group = distributed::new_process_group("gloo", store, o);
  const Tensor t = zeros({4}).to(test_device());
  try {
    group->all_reduce({t}, distributed::ReduceOp::sum)->wait();
    FAIL() << "a testdev tensor went through Gloo";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("[gloo] all_reduce needs CPU tensors, got one on testdev:0; this build has "
                                         "no process group backend for testdev tensors"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hearth::testing
