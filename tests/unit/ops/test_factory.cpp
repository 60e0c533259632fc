#include <cstdint>

#include <gtest/gtest.h>

#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::throws_with;
using test::values_near;

TEST(Factory, ZerosOnesFullInEveryDtype) {
  for (DType dt : {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32,
                   DType::uint8, DType::bool_}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor z = zeros({2, 3}, dt);
    EXPECT_EQ(z.dtype(), dt);
    EXPECT_EQ(z.shape(), (Shape{2, 3}));
    EXPECT_TRUE(z.is_contiguous());
    EXPECT_TRUE(values_near(z, std::vector<double>(6, 0.0)));
    EXPECT_TRUE(values_near(ones({4}, dt), std::vector<double>(4, 1.0)));
  }
  EXPECT_TRUE(values_near(full({2}, 2.5), {2.5, 2.5}));
  EXPECT_TRUE(values_near(full({2}, 2.5, DType::int64), {2, 2}));
  EXPECT_TRUE(values_near(full({3}, -7, DType::int32), {-7, -7, -7}));
}

TEST(Factory, LikeVariantsCopyShapeDtypeDevice) {
  Tensor t = zeros({3, 1}, DType::float16);
  for (Tensor l : {empty_like(t), zeros_like(t), ones_like(t), full_like(t, 4)}) {
    EXPECT_EQ(l.shape(), t.shape());
    EXPECT_EQ(l.dtype(), DType::float16);
    EXPECT_EQ(l.device(), t.device());
  }
  EXPECT_TRUE(values_near(full_like(t, 4), {4, 4, 4}));
  EXPECT_TRUE(values_near(ones_like(t), {1, 1, 1}));
}

TEST(Factory, EmptyShapesAndScalars) {
  EXPECT_EQ(zeros({0}).numel(), 0);
  EXPECT_EQ(ones({2, 0, 3}).shape(), (Shape{2, 0, 3}));
  Tensor s = scalar_tensor(3.5, DType::float64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<double>(), 3.5);
  EXPECT_EQ(scalar_tensor(true, DType::bool_).item<bool>(), true);
  EXPECT_EQ(zeros({}).dim(), 0);
  EXPECT_TRUE(throws_with<ShapeError>([] { zeros({2, -1}); }, "negative"));
}

TEST(Factory, TensorFromHostVectors) {
  Tensor f = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(f.dtype(), DType::float32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(tensor(std::vector<double>{1.5}).dtype(), DType::float64);
  EXPECT_EQ(tensor(std::vector<int64_t>{-1, 2}).to_vector<int64_t>(), (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(tensor(std::vector<int32_t>{-1, 2}).dtype(), DType::int32);
  EXPECT_EQ(tensor(std::vector<uint8_t>{255}).to_vector<uint8_t>(), (std::vector<uint8_t>{255}));
  Tensor b = tensor(std::vector<bool>{true, false, true});
  EXPECT_EQ(b.dtype(), DType::bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  Tensor h = tensor(std::vector<BFloat16>{BFloat16(1.5f), BFloat16(-2.f)});
  EXPECT_EQ(h.dtype(), DType::bfloat16);
  EXPECT_TRUE(values_near(h, {1.5, -2}));
  EXPECT_EQ(tensor(std::vector<Half>{Half(0.5f)}).dtype(), DType::float16);
  Tensor il = tensor({1.f, 2.f});
  EXPECT_EQ(il.shape(), (Shape{2}));
  EXPECT_TRUE(throws_with<ShapeError>([] { tensor(std::vector<float>{1, 2, 3}, {2, 2}); }, "[tensor]"));
}

TEST(Factory, FromBufferCopiesTheBytes) {
  std::vector<int32_t> host = {1, 2, 3, 4};
  Tensor t = from_buffer(host.data(), {2, 2}, DType::int32);
  host[0] = 100;  // the tensor owns its own copy
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(t.shape(), (Shape{2, 2}));
  float one = 1.f;
  EXPECT_EQ(from_buffer(&one, {}, DType::float32).item<float>(), 1.f);
}

}  // namespace
}  // namespace hearth
