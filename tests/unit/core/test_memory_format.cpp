#include <gtest/gtest.h>

#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

const MemoryFormat kCl = MemoryFormat::channels_last;

TEST(MemoryFormat, ChannelsLastStridesAreNhwc) {
  EXPECT_EQ(strides_for({2, 3, 4, 5}, kCl), (Strides{60, 1, 15, 3}));
  EXPECT_EQ(strides_for({2, 3, 4, 5}, MemoryFormat::contiguous), (Strides{60, 20, 5, 1}));
  EXPECT_THROW(strides_for({2, 3, 4}, kCl), ShapeError);
}

TEST(MemoryFormat, EmptyLaysOutAndReports) {
  Tensor t = Tensor::empty({2, 3, 4, 5}, DType::float32, Device(), kCl);
  EXPECT_EQ(t.strides(), (Strides{60, 1, 15, 3}));
  EXPECT_TRUE(t.is_contiguous(kCl));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.suggest_memory_format(), kCl);
  EXPECT_EQ(Tensor::empty({2, 3, 4, 5}).suggest_memory_format(), MemoryFormat::contiguous);
}

TEST(MemoryFormat, AmbiguousShapesCountAsContiguous) {
  // C == 1 or H == W == 1: both layouts are the same memory.
  for (const Shape& s : {Shape{2, 1, 4, 5}, Shape{2, 7, 1, 1}}) {
    Tensor t = Tensor::empty(s, DType::float32, Device(), kCl);
    EXPECT_TRUE(t.is_contiguous()) << shape_str(s);
    EXPECT_TRUE(t.is_contiguous(kCl)) << shape_str(s);
    EXPECT_EQ(t.suggest_memory_format(), MemoryFormat::contiguous) << shape_str(s);
  }
  // A transposed 4-D tensor is dense in neither format.
  Tensor odd = randn({2, 3, 4, 5}).transpose(2, 3);
  EXPECT_FALSE(odd.is_contiguous(kCl));
  EXPECT_EQ(odd.suggest_memory_format(), MemoryFormat::contiguous);
}

TEST(MemoryFormat, ContiguousConvertsBothWaysKeepingValues) {
  Tensor x = randn({2, 3, 4, 5});
  Tensor cl = x.contiguous(kCl);
  EXPECT_TRUE(cl.is_contiguous(kCl));
  EXPECT_EQ(cl.to_vector<float>(), x.to_vector<float>());
  // NHWC memory: the channel index moves fastest.
  const float* mem = cl.data<float>();
  EXPECT_EQ(mem[1], x.to_vector<float>()[20]);  // (0, 1, 0, 0)
  EXPECT_TRUE(contiguous(cl, kCl).is_same(cl));
  Tensor back = cl.contiguous();
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_EQ(back.to_vector<float>(), x.to_vector<float>());
  EXPECT_TRUE(cl.clone().is_contiguous(kCl));  // clone preserves the format
}

TEST(MemoryFormat, ConversionIsDifferentiable) {
  Tensor x = randn({2, 3, 2, 2}).requires_grad_();
  Tensor y = contiguous(x, kCl);
  (y * y).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (x * 2).detach().to_vector<float>());
}

}  // namespace
}  // namespace hearth
