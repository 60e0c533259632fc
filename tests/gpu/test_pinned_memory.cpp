// Pinned host memory: pin_memory() gives page-locked CPU tensors, copies from
// them to the GPU are correct, a freed block is reused for the next batch of
// the same size, and never while a copy from it may still be running.
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/data/dataloader.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

TEST(PinnedMemory, PinnedTensorsCopyToTheGpuExactly) {
  HEARTH_REQUIRE_CUDA();
  Tensor x = randn({3, 1000});
  Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_FALSE(x.is_pinned());
  EXPECT_EQ(p.pin_memory().data_ptr(), p.data_ptr()) << "pinning a pinned tensor copies nothing";
  Tensor g = p.to(cuda0());
  EXPECT_EQ(max_abs_diff(g, x), 0.0);
  EXPECT_THROW(g.pin_memory(), DeviceError);
}

TEST(PinnedMemory, FreedBlocksAreReusedOnceTheirCopiesFinish) {
  HEARTH_REQUIRE_CUDA();
  void* first = nullptr;
  {
    Tensor p = randn({4096}).pin_memory();
    first = p.data_ptr();
    Tensor g = p.to(cuda0());
    device_runtime(cuda0().kind).synchronize(0);
  }
  Tensor again = randn({4096}).pin_memory();
  EXPECT_EQ(again.data_ptr(), first) << "a block whose copy has finished serves the next request";
}

TEST(PinnedMemory, ABlockIsNotReusedWhileACopyFromItMayRun) {
  HEARTH_REQUIRE_CUDA();
  Tensor a = randn({2048, 2048}, DType::float32, cuda0());
  Tensor expected = randn({1 << 16});
  Tensor g;
  void* first = nullptr;
  {
    Tensor p = expected.pin_memory();
    first = p.data_ptr();
    for (int i = 0; i < 20; ++i) a = matmul(a, a).mul(1e-3);  // keeps the stream busy
    g = p.to(cuda0());                                        // queued behind the matmuls
  }
  Tensor q = zeros({1 << 16}).pin_memory();  // same size class, asked for while the copy waits
  EXPECT_NE(q.data_ptr(), first) << "the block was handed out before the copy from it ran";
  EXPECT_EQ(max_abs_diff(g, expected), 0.0);
}

TEST(PinnedMemory, TheDataLoaderPinsBatchesWhenAsked) {
  HEARTH_REQUIRE_CUDA();
  auto ds = std::make_shared<data::TensorDataset>(
      data::Example::Map{{"pixel_values", randn({10, 3})}, {"labels", arange(0, 10, 1, DType::int64)}});
  data::DataLoader loader(ds, {.batch_size = 4, .num_workers = 1, .pin_memory = true});
  std::optional<data::Batch> b = loader.next();
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->at("pixel_values").is_pinned());
  EXPECT_TRUE(b->at("labels").is_pinned());
}

}  // namespace
}  // namespace hearth::gpu_testing
