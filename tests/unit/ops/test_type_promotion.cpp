#include "hearth/ops/type_promotion.h"

#include <gtest/gtest.h>

#include <vector>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"

namespace hearth {
namespace {

constexpr DType f32 = DType::float32, f64 = DType::float64, bf16 = DType::bfloat16, f16 = DType::float16,
                i64 = DType::int64, i32 = DType::int32, u8 = DType::uint8, b8 = DType::bool_;

Tensor dimensioned(DType t) { return zeros({2}, t); }
Tensor zero_dim(DType t) { return zeros({}, t); }

// torch.promote_types over hearth's dtypes, written out by hand: rows and
// columns in the order f32, f64, bf16, f16, i64, i32, u8, bool.
TEST(TypePromotion, PromoteTypesTable) {
  const DType order[8] = {f32, f64, bf16, f16, i64, i32, u8, b8};
  const DType table[8][8] = {
      {f32, f64, f32, f32, f32, f32, f32, f32},       // f32
      {f64, f64, f64, f64, f64, f64, f64, f64},       // f64
      {f32, f64, bf16, f32, bf16, bf16, bf16, bf16},  // bf16
      {f32, f64, f32, f16, f16, f16, f16, f16},       // f16
      {f32, f64, bf16, f16, i64, i64, i64, i64},      // i64
      {f32, f64, bf16, f16, i64, i32, i32, i32},      // i32
      {f32, f64, bf16, f16, i64, i32, u8, u8},        // u8
      {f32, f64, bf16, f16, i64, i32, u8, b8},        // bool
  };
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_EQ(promote_types(order[r], order[c]), table[r][c])
          << dtype_name(order[r]) << " with " << dtype_name(order[c]);
}

TEST(TypePromotion, DimensionedTensorsPromoteByTable) {
  EXPECT_EQ(result_type(dimensioned(i64), dimensioned(f32)), f32);
  EXPECT_EQ(result_type(dimensioned(i32), dimensioned(i64)), i64);
  EXPECT_EQ(result_type(dimensioned(b8), dimensioned(u8)), u8);
  EXPECT_EQ(result_type(dimensioned(bf16), dimensioned(f16)), f32);
  EXPECT_EQ(result_type(dimensioned(f32), dimensioned(f64)), f64);
  EXPECT_EQ(result_type(dimensioned(b8), dimensioned(b8)), b8);
}

TEST(TypePromotion, ZeroDimTensorsOnlyRaiseTheCategory) {
  EXPECT_EQ(result_type(dimensioned(i32), zero_dim(i64)), i32);   // same category: the dimensioned one wins
  EXPECT_EQ(result_type(dimensioned(f16), zero_dim(f64)), f16);
  EXPECT_EQ(result_type(dimensioned(u8), zero_dim(i64)), u8);
  EXPECT_EQ(result_type(dimensioned(i32), zero_dim(f64)), f64);   // higher category: its own dtype
  EXPECT_EQ(result_type(dimensioned(i64), zero_dim(f16)), f16);
  EXPECT_EQ(result_type(dimensioned(b8), zero_dim(i32)), i32);
  EXPECT_EQ(result_type(dimensioned(f32), zero_dim(b8)), f32);    // lower category: no effect
  EXPECT_EQ(result_type(zero_dim(i32), zero_dim(i64)), i64);      // zero-dim alone: promote normally
  EXPECT_EQ(result_type(zero_dim(bf16), zero_dim(f16)), f32);
  EXPECT_EQ(result_type(zero_dim(f64), dimensioned(i32)), f64);   // order does not matter
}

TEST(TypePromotion, ScalarsUseDefaultWidthsAndRankLowest) {
  EXPECT_EQ(result_type(dimensioned(i32), Scalar(5)), i32);
  EXPECT_EQ(result_type(dimensioned(u8), Scalar(-1)), u8);  // the value is not inspected, only its kind
  EXPECT_EQ(result_type(dimensioned(i32), Scalar(2.5)), f32);
  EXPECT_EQ(result_type(dimensioned(i64), Scalar(2.5f)), f32);
  EXPECT_EQ(result_type(dimensioned(f16), Scalar(2.5)), f16);
  EXPECT_EQ(result_type(dimensioned(bf16), Scalar(1)), bf16);
  EXPECT_EQ(result_type(dimensioned(f64), Scalar(1.5)), f64);
  EXPECT_EQ(result_type(dimensioned(b8), Scalar(true)), b8);
  EXPECT_EQ(result_type(dimensioned(b8), Scalar(3)), i64);
  EXPECT_EQ(result_type(dimensioned(b8), Scalar(0.5)), f32);
  EXPECT_EQ(result_type(zero_dim(i32), Scalar(2.5)), f32);
  EXPECT_EQ(result_type(zero_dim(f64), Scalar(2.5)), f64);
  EXPECT_EQ(result_type(zero_dim(u8), Scalar(7)), u8);
}

TEST(TypePromotion, ManyTensors) {
  EXPECT_EQ(result_type({dimensioned(i32), dimensioned(u8), zero_dim(f16)}), f16);
  EXPECT_EQ(result_type({dimensioned(i32), dimensioned(u8), zero_dim(i64)}), i32);
  EXPECT_EQ(result_type({zero_dim(u8), zero_dim(b8)}), u8);
  EXPECT_EQ(result_type({dimensioned(bf16), zero_dim(f64), dimensioned(f16)}), f32);
  EXPECT_EQ(result_type(std::vector<Tensor>{dimensioned(f64)}), f64);
}

TEST(TypePromotion, ScalarCategoriesAndDefaults) {
  EXPECT_EQ(Scalar(true).category(), DTypeCategory::boolean);
  EXPECT_EQ(Scalar(int32_t{3}).category(), DTypeCategory::integral);
  EXPECT_EQ(Scalar(uint8_t{3}).category(), DTypeCategory::integral);
  EXPECT_EQ(Scalar(3.0f).category(), DTypeCategory::floating);
  EXPECT_EQ(Scalar(BFloat16(1.0f)).category(), DTypeCategory::floating);
  EXPECT_EQ(Scalar(true).default_dtype(), b8);
  EXPECT_EQ(Scalar(int64_t{7}).default_dtype(), i64);
  EXPECT_EQ(Scalar(7.0).default_dtype(), f32);
  EXPECT_EQ(Scalar(2.75).to<int64_t>(), 2);
  EXPECT_EQ(Scalar(-2.75).to<int32_t>(), -2);
  EXPECT_EQ(Scalar(3).to<double>(), 3.0);
  EXPECT_TRUE(Scalar(0.5).to<bool>());
  EXPECT_FALSE(Scalar(0).to<bool>());
  EXPECT_EQ(static_cast<float>(Scalar(1.5).to<Half>()), 1.5f);
}

TEST(TypePromotion, ArithmeticOpsFollowResultType) {
  Tensor i = tensor(std::vector<int32_t>{1, 2, 3});
  Tensor add_f = add(i, 0.5);
  EXPECT_EQ(add_f.dtype(), f32);
  EXPECT_EQ(add_f.to_vector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(add(i, 2).dtype(), i32);
  EXPECT_EQ(mul(i, tensor(std::vector<int64_t>{2, 2, 2})).dtype(), i64);
  Tensor h = tensor(std::vector<float>{1, 2, 3}).to(f16);
  Tensor hd = add(h, full({}, 0.25, f64));  // a float64 zero-dim tensor does not widen float16
  EXPECT_EQ(hd.dtype(), f16);
  EXPECT_EQ(hd.to_vector<float>(), (std::vector<float>{1.25f, 2.25f, 3.25f}));
  Tensor q = div(i, tensor(std::vector<int32_t>{2, 2, 2}));  // true division of integers
  EXPECT_EQ(q.dtype(), f32);
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{0.5f, 1.0f, 1.5f}));
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(add(b, b).dtype(), b8);
  EXPECT_EQ(add(b, 1).dtype(), i64);
  EXPECT_EQ(add(b, 1).to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  Tensor mixed = add(tensor(std::vector<float>{1, 2}).to(bf16), tensor(std::vector<float>{1, 2}).to(f16));
  EXPECT_EQ(mixed.dtype(), f32);
  EXPECT_EQ(mixed.to_vector<float>(), (std::vector<float>{2, 4}));
}

}  // namespace
}  // namespace hearth
