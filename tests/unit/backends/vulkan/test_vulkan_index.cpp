// index_select, gather and scatter_add on Vulkan against the CPU, and an
// out-of-range index raised by the next indexing call.
#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanIndex, SelectGatherAndScatterAddMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor x = randn({5, 7, 4});
  for (int64_t dim : {0, 1, 2}) {
    const Tensor i = randint(0, x.size(dim), {9});
    expect_close(index_select(x.to(vk()), dim, i.to(vk())), index_select(x, dim, i), 0, 0,
                 "index_select dim " + std::to_string(dim));
  }
  for (int64_t dim : {0, 1, 2}) {
    Shape s = x.shape();
    s[dim] = 3;
    const Tensor i = randint(0, x.size(dim), s);
    expect_close(gather(x.to(vk()), dim, i.to(vk())), gather(x, dim, i), 0, 0, "gather dim " + std::to_string(dim));
    const Tensor src = randn(s);
    expect_close(scatter_add(x.to(vk()), dim, i.to(vk()), src.to(vk())), scatter_add(x, dim, i, src), 1e-6, 1e-6,
                 "scatter_add dim " + std::to_string(dim));
  }
  // Transposed (strided) operands.
  const Tensor xtv = randn({6, 5}).to(vk()), itv = randint(0, 5, {6, 3}).to(vk());
  expect_close(gather(xtv.t(), 0, itv.t()), gather(xtv.cpu().t(), 0, itv.cpu().t()), 0, 0,
               "gather of transposed operands");
  const Tensor src = randn({6, 3}).to(vk());
  expect_close(scatter_add(xtv.t(), 0, itv.t(), src.t()), scatter_add(xtv.cpu().t(), 0, itv.cpu().t(), src.cpu().t()),
               1e-6, 1e-6, "scatter_add of transposed operands");
}

TEST(VulkanIndex, AnOutOfRangeIndexIsRaisedByTheNextIndexingCall) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor x = randn({4, 3}).to(vk());
  const Tensor bad = tensor(std::vector<int64_t>{0, 9}, {2}).to(vk());
  const Tensor good = tensor(std::vector<int64_t>{1, 2}, {2}).to(vk());
  Tensor out;
  try {
    out = index_select(x, 0, bad);  // may raise here already where indices are checked on the host
  } catch (const ValueError&) {
    return;
  }
  out.cpu();  // the kernel has run
  EXPECT_THROW(index_select(x, 0, good), ValueError);
  EXPECT_NO_THROW(index_select(x, 0, good).cpu()) << "the record is cleared once raised";
}

}  // namespace
}  // namespace hearth
