// pin_memory() on a machine without an accelerator: a dense copy in ordinary
// memory (as torch does without CUDA it would fail; hearth keeps the program
// portable), never a view of the original.
#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

TEST(PinMemory, GivesADenseCopyWithTheSameValues) {
  Tensor x = transpose(randn({3, 5}), 0, 1);
  Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_contiguous());
  EXPECT_NE(p.data_ptr(), x.data_ptr());
  EXPECT_EQ(p.device(), Device());
  EXPECT_EQ(contiguous(x).to_vector<float>(), p.to_vector<float>());
  EXPECT_EQ(p.is_pinned(), pinned_memory_runtime() != nullptr);
}

}  // namespace
}  // namespace hearth
