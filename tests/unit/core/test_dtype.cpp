#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "hearth/core/dtype.h"

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
  EXPECT_EQ(static_cast<float>(BFloat16(1.00390625f)), 1.0f);       // exact tie -> even
  EXPECT_EQ(static_cast<float>(BFloat16(1.01171875f)), 1.015625f);  // tie -> even (up)
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
}

TEST(DType, LowestFiniteIsTheMostNegativeValueEachFloatingTypeHolds) {
  EXPECT_EQ(lowest_finite(DType::float32), static_cast<double>(std::numeric_limits<float>::lowest()));
  EXPECT_EQ(lowest_finite(DType::float64), std::numeric_limits<double>::lowest());
  EXPECT_EQ(lowest_finite(DType::float16), static_cast<double>(static_cast<float>(Half(-65504.0f))));
  const float bf = static_cast<float>(BFloat16(static_cast<float>(lowest_finite(DType::bfloat16))));
  EXPECT_EQ(static_cast<double>(bf), lowest_finite(DType::bfloat16));                           // representable...
  EXPECT_TRUE(std::isinf(static_cast<float>(BFloat16(std::numeric_limits<float>::lowest()))));  // ...float32's is not
  EXPECT_THROW(lowest_finite(DType::int64), TypeError);
}

}  // namespace
}  // namespace hearth
