// float16 and bfloat16 on Vulkan (devices with shaderFloat16 and 16-bit
// storage, lavapipe among them): sums and products accumulate in float32 and
// round once, casts round as the CPU's do, and the families that run on
// widened float32 copies (convolution, batch norm, pooling) match the CPU
// forward and backward.
#include <cstdint>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

bool device_has_float16() {
  return device_runtime(vk().kind).version_info().find("\n  vulkan:0 ") != std::string::npos &&
         device_runtime(vk().kind).version_info().find("; float16 yes") != std::string::npos;
}

#define SKIP_WITHOUT_FLOAT16()                                                     \
  do {                                                                             \
    HEARTH_SKIP_WITHOUT_VULKAN();                                                  \
    if (!device_has_float16()) GTEST_SKIP() << "the Vulkan device has no float16"; \
  } while (0)

TEST(VulkanHalf, ProductsAndSumsAccumulateInFloat32) {
  SKIP_WITHOUT_FLOAT16();
  for (DType dt : {DType::float16, DType::bfloat16}) {
    const std::string what = dtype_name(dt);
    // 4096 ones: a float16 running sum stops at 2048 (2049 is not a float16),
    // a bfloat16 one at 256; a float32 one reaches 4096, which both hold exactly.
    const int64_t k = 4096;
    const Tensor a = ones({1, k}, dt, vk()), b = ones({k, 1}, dt, vk());
    const Tensor product = mm(a, b);
    ASSERT_EQ(product.dtype(), dt);
    EXPECT_EQ(product.cpu().to(DType::float32).item<float>(), 4096.0f) << what;
    const Tensor total = sum(a, {1});
    ASSERT_EQ(total.dtype(), dt);
    EXPECT_EQ(total.cpu().to(DType::float32).item<float>(), 4096.0f) << what;
    // Random operands against the CPU, with a transposed one (strides).
    const Tensor x = randn({37, 70}).to(dt), w = randn({29, 70}).to(dt);
    const double tol = dt == DType::float16 ? 2e-3 : 1e-2;
    expect_close(mm(x.to(vk()), w.to(vk()).t()), mm(x, w.t()), tol, tol, "mm " + what);
  }
}

TEST(VulkanHalf, CastsRoundAsTheCpuDoes) {
  SKIP_WITHOUT_FLOAT16();
  // Ties to even (float16 at 1 and 2048, bfloat16 at 1 + 2^-8 and 257),
  // overflow to infinity, subnormals, signed zeros, infinity, NaN.
  const std::vector<float> values = {1.0f + 1.0f / 2048,
                                     1.0f + 3.0f / 2048,
                                     2049.0f,
                                     2051.0f,
                                     1.0f + 1.0f / 256,
                                     1.0f + 3.0f / 256,
                                     257.0f,
                                     259.0f,
                                     65504.0f,
                                     65520.0f,
                                     -70000.0f,
                                     3.4e38f,
                                     1e-7f,
                                     3e-5f,
                                     -6e-8f,
                                     1e-40f,
                                     0.0f,
                                     -0.0f,
                                     1.0f / 0.0f,
                                     0.0f / 0.0f};
  const Tensor src = tensor(values, {static_cast<int64_t>(values.size())});
  for (DType dt : {DType::float16, DType::bfloat16}) {
    const Tensor want = src.to(dt);
    const Tensor got = src.to(vk()).to(dt).cpu();
    const auto* w = static_cast<const uint16_t*>(want.data_ptr());
    const auto* g = static_cast<const uint16_t*>(got.data_ptr());
    for (size_t i = 0; i < values.size(); ++i) {
      if (!std::isnan(values[i])) {
        EXPECT_EQ(g[i], w[i]) << dtype_name(dt) << " of " << values[i];
      }
    }
    EXPECT_TRUE(std::isnan(got.to(DType::float32).to_vector<float>().back())) << dtype_name(dt);
    // And back: every 16-bit float is a float32.
    expect_close(got.to(vk()).to(DType::float32), want.to(DType::float32), 0, 0,
                 std::string(dtype_name(dt)) + " to float32");
  }
  // Random bit patterns (every exponent, float32 subnormals, no NaN): the
  // same 16-bit words as the CPU's conversion, and the same floats back.
  std::mt19937 gen(7);
  std::vector<float> random(1 << 16);
  for (float& f : random) {
    do {
      const uint32_t bits = gen();
      std::memcpy(&f, &bits, 4);
    } while (std::isnan(f));
  }
  const Tensor many = tensor(random, {static_cast<int64_t>(random.size())});
  for (DType dt : {DType::float16, DType::bfloat16}) {
    const Tensor want = many.to(dt), got = many.to(vk()).to(dt).cpu();
    EXPECT_EQ(std::memcmp(want.data_ptr(), got.data_ptr(), random.size() * 2), 0)
        << dtype_name(dt) << " of random bits";
    const Tensor back_want = want.to(DType::float32), back_got = got.to(vk()).to(DType::float32).cpu();
    EXPECT_EQ(std::memcmp(back_want.data_ptr(), back_got.data_ptr(), random.size() * 4), 0)
        << dtype_name(dt) << " back to float32";
  }
}

TEST(VulkanHalf, ConvolutionBatchNormAndPoolingMatchTheCpu) {
  SKIP_WITHOUT_FLOAT16();
  const Tensor x = randn({2, 3, 10, 9}).to(DType::float16), w = (randn({4, 3, 3, 3}) * 0.3).to(DType::float16),
               bias = randn({4}).to(DType::float16), gamma = ones({4}), beta = zeros({4});
  auto forward = [&](const Tensor& xi, const Tensor& wi, const Tensor& bi, Device dev) {
    Tensor y = conv2d(xi, wi, bi, {1, 1}, {1, 1}, {1, 1}, 1);
    y = batch_norm(y, Tensor(), Tensor(), gamma.to(dev), beta.to(dev), true);
    return max_pool2d(relu(y), {2, 2});
  };
  Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_(), bc = bias.clone().requires_grad_();
  Tensor xg = x.to(vk()).requires_grad_(), wg = w.to(vk()).requires_grad_(), bg = bias.to(vk()).requires_grad_();
  const Tensor yc = forward(xc, wc, bc, Device()), yg = forward(xg, wg, bg, vk());
  ASSERT_EQ(yg.dtype(), DType::float16);
  expect_close(yg, yc, 1e-2, 1e-2, "conv2d, batch_norm, relu, max_pool2d");
  const Tensor go = randn(yc.shape()).to(DType::float16);
  sum(mul(yc, go).to(DType::float32)).backward();
  sum(mul(yg, go.to(vk())).to(DType::float32)).backward();
  expect_close(xg.grad(), xc.grad(), 2e-2, 2e-2, "grad x");
  expect_close(wg.grad(), wc.grad(), 2e-2, 5e-2, "grad weight");
  expect_close(bg.grad(), bc.grad(), 2e-2, 5e-2, "grad bias");
}

// Optimizer steps on 16-bit parameters and state (widened copies, the state
// written back rounded): the CPU's values after three Adam steps.
TEST(VulkanHalf, AdamStepsOnHalfParametersMatchTheCpu) {
  SKIP_WITHOUT_FLOAT16();
  NoGradGuard no_grad;
  for (DType dt : {DType::float16, DType::bfloat16}) {
    const Tensor p0 = (rand({777}) * 2 - 1).to(dt), g = (rand({777}) * 2 - 1).to(dt);
    auto run = [&](Device dev) {
      Tensor p = p0.to(dev).clone(), m = zeros({777}, dt, dev), v = zeros({777}, dt, dev);
      for (int step = 1; step <= 3; ++step) {
        AdamStepAttrs a;
        a.lr = 1e-2;
        a.weight_decay = 0.1;
        a.step = step;
        optim::adam_step_(p, g.to(dev), m, v, Tensor(), a);
      }
      return std::vector<Tensor>{p, m, v};
    };
    const std::vector<Tensor> want = run(Device()), got = run(vk());
    const double tol = dt == DType::float16 ? 2e-3 : 1e-2;
    for (size_t i = 0; i < want.size(); ++i)
      expect_close(got[i], want[i], tol, 1e-6, std::string(dtype_name(dt)) + " adam output " + std::to_string(i));
  }
}

}  // namespace
}  // namespace hearth
