// The CPU fallback from a real accelerator: an op whose CUDA kernel is taken
// away runs on the CPU only when HEARTH_ENABLE_CPU_FALLBACK=1, returns its result
// on the GPU, and autograd flows through it.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/train/count_text.h"
#include "hearth/train/device_select.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

// Removes the cuda kernel of `op` for the test's duration.
class WithoutCudaKernel {
 public:
  explicit WithoutCudaKernel(const char* op) : op_(op) {
    DeviceKind k = cuda0().kind;
    saved_ = find_op(op)->kernels[k.id];
    unregister_kernel(op, k);
  }
  ~WithoutCudaKernel() { register_kernel(op_, cuda0().kind, saved_.fn, saved_.dtypes); }

 private:
  const char* op_;
  KernelEntry saved_;
};

TEST(CudaFallback, MissingKernelErrorsThenFallsBackWithAutograd) {
  HEARTH_REQUIRE_CUDA();
  WithoutCudaKernel gone("tanh");
  Tensor x_cpu = randn({33, 17}, DType::float32);
  Tensor x = x_cpu.to(cuda0()).detach().requires_grad_();
  unsetenv("HEARTH_ENABLE_CPU_FALLBACK");
  try {
    tanh(x);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[tanh] is not implemented for cuda"), std::string::npos) << m;
    EXPECT_NE(m.find("HEARTH_ENABLE_CPU_FALLBACK=1"), std::string::npos) << m;
  }
  setenv("HEARTH_ENABLE_CPU_FALLBACK", "1", 1);
  reset_fallback_stats();
  Tensor y = tanh(x);
  EXPECT_EQ(y.device(), cuda0());
  EXPECT_LT(relative_error(y, tanh(x_cpu)), 1e-6);
  sum(mul(y, y)).backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device(), cuda0());
  Tensor xc = x_cpu.detach().requires_grad_();
  Tensor yc = tanh(xc);
  sum(mul(yc, yc)).backward();
  EXPECT_LT(relative_error(x.grad(), xc.grad()), 1e-5);
  auto stats = fallback_stats();
  ASSERT_TRUE(stats.count("tanh"));
  EXPECT_GE(stats["tanh"].calls, 1);
  EXPECT_EQ(stats["tanh"].bytes_to_cpu, 33 * 17 * 4);
  unsetenv("HEARTH_ENABLE_CPU_FALLBACK");
}

TEST(CudaDevice, MixedDevicesAreRejectedNamingBoth) {
  HEARTH_REQUIRE_CUDA();
  Tensor a = ones({3}, DType::float32, cuda0());
  Tensor b = ones({3});
  try {
    add(a, b);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("[add] expected all tensors on cuda:0, but argument 2 is on cpu"),
              std::string::npos)
        << e.what();
  }
}

TEST(CudaDevice, AutoPicksTheGpuAndAbsentIndexFails) {
  HEARTH_REQUIRE_CUDA();
  EXPECT_EQ(resolve_device("auto"), cuda0());
  EXPECT_THROW(resolve_device("cuda:99"), DeviceError);
}

// The Trainer's choice: an absent index lists the devices that are there, by name.
TEST(CudaDevice, AbsentIndexListsTheDevicesPresent) {
  HEARTH_REQUIRE_CUDA();
  const int count = device_runtime(cuda0().kind).device_count();
  const std::string name = device_runtime(cuda0().kind).device_name(0);
  try {
    train::select_device("cuda:" + std::to_string(count), false);
    FAIL() << "cuda:" << count << " was accepted";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cuda:0 (" + name + ")"), std::string::npos) << m;
    EXPECT_NE(m.find(train::count_of(count, "cuda device") + " visible"), std::string::npos) << m;
  }
  train::DeviceChoice c = train::select_device("auto", false);
  EXPECT_EQ(c.device, cuda0());
  EXPECT_NE(c.description.find(name), std::string::npos) << c.description;
}

}  // namespace
}  // namespace hearth::gpu_testing
