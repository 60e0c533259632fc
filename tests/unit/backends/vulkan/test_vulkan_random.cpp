// Random fills and arange on Vulkan: the same Philox numbers as the CPU from
// the same seed (hearth/dispatch/schemas/random.h).
#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/ops/factory.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanRandom, SameSeedSameNumbersAsTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (int64_t n : {1, 7, 1001}) {
    manual_seed(1234);
    const Tensor uc = rand({n});
    const Tensor nc = randn({n});
    const Tensor ic = randint(-5, 100000, {n});
    manual_seed(1234);
    const Tensor ug = rand({n}, DType::float32, vk());
    const Tensor ng = randn({n}, DType::float32, vk());
    const Tensor ig = randint(-5, 100000, {n}, DType::int64, vk());
    expect_close(ug, uc, 0, 1e-7, "uniform_ n=" + std::to_string(n));
    expect_close(ng, nc, 1e-5, 1e-5, "normal_ n=" + std::to_string(n));
    expect_close(ig, ic, 0, 0, "randint_ n=" + std::to_string(n));
  }
}

TEST(VulkanRange, ArangeMatchesTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  expect_close(arange(1000, vk()), arange(1000), 0, 0, "int64 arange");
  expect_close(arange(-3, 50, 7, DType::int32, vk()), arange(-3, 50, 7, DType::int32), 0, 0, "int32 arange");
  expect_close(arange(0.5, 10.0, 0.25, DType::float32, vk()), arange(0.5, 10.0, 0.25, DType::float32), 0, 0,
               "float32 arange");
}

}  // namespace
}  // namespace hearth
