// Data-parallel training of the small CNN (no dropout) on 256 Fashion-MNIST
// samples: 2 processes with batch 16 must log the same losses, step for step,
// as one process with batch 16 and 2 accumulation steps whose micro-batches
// hold the same samples as the ranks' batches (batch norm sees the same
// batches, the averaged gradient is the same). Rank 1 starts from other
// weights, so the broadcast from rank 0 is checked too.
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include "tests/unit/distributed/dist_testing.h"

namespace hearth::testing {
namespace {

std::vector<double> read_losses(const std::string& path) {
  std::vector<double> v;
  std::ifstream in(path);
  for (double x; in >> x;) v.push_back(x);
  return v;
}

TEST(DdpTraining, TwoProcessesMatchOneProcessWithGradientAccumulation) {
  HEARTH_SKIP_WITHOUT_GLOO();
  TempDir dir;
  const std::string ddp = dir.path() + "/ddp.txt", ref = dir.path() + "/ref.txt";
  CommandResult two = run_command(launch_command(2, "train " + ddp + " ddp"));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  CommandResult one =
      run_command("env OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 " + kDistWorker + " train " + ref + " ref");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  std::vector<double> a = read_losses(ddp), b = read_losses(ref);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * b[i]) << "step " << i + 1;
  EXPECT_LT(a.back(), a.front());  // and it learns
}

}  // namespace
}  // namespace hearth::testing
