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

// The property that matters: a block freed while a copy from it is queued is
// not handed out and overwritten before the copy reads it. The copy waits
// behind queued GPU work; the next same-size request is filled with garbage at
// once; the GPU must still receive the original bytes. (Whether the block was
// reused depends on timing; the data never may.)
TEST(PinnedMemory, ABlockIsNotReusedWhileACopyFromItMayRun) {
  HEARTH_REQUIRE_CUDA();
  Tensor a = randn({4096, 4096}, DType::float32, cuda0());
  a = mul(matmul(a, a), 1e-4);  // cuBLAS set up before the timed part
  device_runtime(cuda0().kind).synchronize(0);
  for (int round = 0; round < 5; ++round) {
    Tensor expected = randn({1 << 16});
    Tensor g;
    {
      Tensor p = expected.pin_memory();
      ASSERT_TRUE(p.is_pinned());
      for (int i = 0; i < 40; ++i) a = mul(matmul(a, a), 1e-4);  // queued GPU work ahead of the copy
      g = p.to(cuda0());
    }
    Tensor q = full({1 << 16}, -7.0).pin_memory();  // same size class, written while the copy may wait
    ASSERT_TRUE(q.is_pinned());
    EXPECT_EQ(max_abs_diff(g, expected), 0.0) << "round " << round << ": the copy read a reused block";
  }
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
