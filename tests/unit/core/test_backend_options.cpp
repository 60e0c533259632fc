// The backend options (hearth/core/backend_options.h): set and read from any
// thread, bad precisions refused by name, and the environment read once, at
// the first use, never written.
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/backend_options.h"
#include "hearth/core/errors.h"
#include "tests/support/run_command.h"
#include "tests/support/scoped_env.h"

namespace hearth {
namespace {

using testing::ScopedEnv;

// Restores the options a test changed.
class KeepOptions {
 public:
  KeepOptions() : precision_(float32_matmul_precision()), benchmark_(convolution_benchmark()) {}
  ~KeepOptions() {
    set_float32_matmul_precision(precision_);
    set_convolution_benchmark(benchmark_);
  }

 private:
  Float32MatmulPrecision precision_;
  bool benchmark_;
};

TEST(BackendOptions, PrecisionIsSetByNameOrValue) {
  KeepOptions keep;
  set_float32_matmul_precision("highest");
  EXPECT_EQ(float32_matmul_precision(), Float32MatmulPrecision::highest);
  EXPECT_FALSE(float32_reduced_precision_allowed());
  set_float32_matmul_precision("medium");
  EXPECT_EQ(float32_matmul_precision(), Float32MatmulPrecision::medium);
  EXPECT_TRUE(float32_reduced_precision_allowed());
  set_float32_matmul_precision(Float32MatmulPrecision::high);
  EXPECT_STREQ(float32_matmul_precision_name(float32_matmul_precision()), "high");
  EXPECT_TRUE(float32_reduced_precision_allowed());
}

TEST(BackendOptions, ABadPrecisionIsRefusedAndChangesNothing) {
  KeepOptions keep;
  set_float32_matmul_precision("highest");
  for (const char* bad : {"High", "tf32", "", "low"}) {
    try {
      set_float32_matmul_precision(std::string(bad));
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("[backend options] float32 matmul precision must be highest, "
                                                   "high or medium, got '") +
                                           bad + "'");
    }
  }
  EXPECT_EQ(float32_matmul_precision(), Float32MatmulPrecision::highest);
}

TEST(BackendOptions, ConvolutionBenchmarkIsSetAndRead) {
  KeepOptions keep;
  set_convolution_benchmark(true);
  EXPECT_TRUE(convolution_benchmark());
  set_convolution_benchmark(false);
  EXPECT_FALSE(convolution_benchmark());
}

// The environment is read once: after the first use, changing it changes nothing.
TEST(BackendOptions, TheEnvironmentIsReadOnceAndNeverWritten) {
  KeepOptions keep;
  const Float32MatmulPrecision now = float32_matmul_precision();
  const bool benchmark = convolution_benchmark();
  ScopedEnv tf32("HEARTH_ALLOW_TF32", now == Float32MatmulPrecision::highest ? "1" : "0");
  ScopedEnv bench("HEARTH_CUDNN_BENCHMARK", benchmark ? "0" : "1");
  EXPECT_EQ(float32_matmul_precision(), now);
  EXPECT_EQ(convolution_benchmark(), benchmark);
  set_float32_matmul_precision(Float32MatmulPrecision::medium);
  EXPECT_STREQ(std::getenv("HEARTH_ALLOW_TF32"), now == Float32MatmulPrecision::highest ? "1" : "0");
}

// Each reader sees a whole value while others set it.
TEST(BackendOptions, SettersAndReadersOnManyThreads) {
  KeepOptions keep;
  std::atomic<bool> bad{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        if (t % 2 == 0) {
          set_float32_matmul_precision(i % 2 ? Float32MatmulPrecision::high : Float32MatmulPrecision::highest);
          set_convolution_benchmark(i % 2 == 0);
        } else {
          const Float32MatmulPrecision p = float32_matmul_precision();
          if (p != Float32MatmulPrecision::high && p != Float32MatmulPrecision::highest) bad = true;
          (void)convolution_benchmark();
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_FALSE(bad.load());
}

// A fresh process starts from the environment: HEARTH_ALLOW_TF32=0 is "highest".
TEST(BackendOptions, AProgramStartsFromTheEnvironment) {
  const std::string cli = HEARTH_TEST_CLI;
  const testing::CommandResult off = testing::run_command("HEARTH_ALLOW_TF32=0 " + cli + " env");
  EXPECT_NE(off.output.find("backend options: float32 matmul precision highest, convolution benchmark off\n"),
            std::string::npos)
      << off.output;
  const testing::CommandResult on =
      testing::run_command("HEARTH_ALLOW_TF32=1 HEARTH_CUDNN_BENCHMARK=1 " + cli + " env");
  EXPECT_NE(on.output.find("backend options: float32 matmul precision high, convolution benchmark on\n"),
            std::string::npos)
      << on.output;
  const testing::CommandResult bad = testing::run_command("HEARTH_ALLOW_TF32=sometimes " + cli + " ops");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("HEARTH_ALLOW_TF32='sometimes' is not allowed"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace hearth
