#include "hearth/core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hearth {
namespace {

TEST(DType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(DType::int32, DType::float16), DType::float16);
  EXPECT_EQ(promote_types(DType::bfloat16, DType::float16), DType::float32);
  EXPECT_EQ(promote_types(DType::uint8, DType::int32), DType::int32);
  EXPECT_EQ(promote_types(DType::bool_, DType::uint8), DType::uint8);
  EXPECT_EQ(promote_types(DType::int64, DType::float32), DType::float32);
  EXPECT_EQ(promote_types(DType::float32, DType::float64), DType::float64);
}

TEST(DType, ParseAcceptsCommonSpellingsAndRejectsOthers) {
  EXPECT_EQ(parse_dtype("bf16"), DType::bfloat16);
  EXPECT_EQ(parse_dtype("Float32"), DType::float32);
  EXPECT_THROW(parse_dtype("float8"), ValueError);
}

TEST(Half, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(static_cast<float>(Half(f)), f) << f;
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
  EXPECT_EQ(static_cast<float>(Half(1.0f + 1.0f / 2048)), 1.0f);  // tie to even
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(1.00390625f)), 1.0f);      // exact tie -> even
  EXPECT_EQ(static_cast<float>(BFloat16(1.01171875f)), 1.015625f);  // tie -> even (up)
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
}

}  // namespace
}  // namespace hearth
