// Antialiased bilinear resizing against PIL's Image.resize(BILINEAR)
// (tests/fixtures/images/expected.json), plus its exact properties.
#include <cmath>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_resize.h"
#include "hearth/data/image_transforms.h"
#include "hearth/ops/factory.h"
#include "tests/unit/data/image_fixtures.h"

namespace hearth::data {
namespace {

Tensor to_float_chw(const Tensor& hwc) {
  SampleRng rng(0, 0, 0);
  return ToTensor()(hwc, rng);
}

TEST(ImageResize, MatchesPilWithinOneEightBitStep) {
  const auto& cases = hearth::testing::image_expectations().at("resize");
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) {
    const int64_t ow = c.at("width"), oh = c.at("height");
    SCOPED_TRACE(std::to_string(ow) + "x" + std::to_string(oh));
    Tensor src = to_float_chw(read_image(hearth::testing::pets_dir() + "/" + c.at("source").get<std::string>()));
    Tensor out;
    if (c.at("box").is_null()) {
      out = resize_bilinear(src, oh, ow);
    } else {
      // PIL's box is (left, upper, right, lower).
      auto b = c.at("box").get<std::vector<int64_t>>();
      out = resize_bilinear(src, CropBox{b[1], b[0], b[3] - b[1], b[2] - b[0]}, oh, ow);
    }
    ASSERT_EQ(out.shape(), (Shape{3, oh, ow}));
    auto want = c.at("pixels").get<std::vector<int>>();  // [oh, ow, 3]
    const float* got = out.data<float>();
    double worst = 0.0;
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t k = 0; k < 3; ++k)
          worst = std::max(worst, std::abs(got[(k * oh + y) * ow + x] * 255.0 - want[((y * ow) + x) * 3 + k]));
    // PIL rounds to 8 bits after each of its two passes: at most half a step
    // each, carried through weights that sum to one.
    EXPECT_LE(worst, 1.0 + 1e-3);
  }
}

// A decoded uint8 [H, W, C] image is resized as ToTensor's float [C, H, W]
// output would be: the same numbers, in the same layout.
TEST(ImageResize, Uint8HwcImagesResizeLikeTheirToTensorOutput) {
  Tensor img = read_image(hearth::testing::pets_dir() + "/green_square_1.jpg");
  Tensor chw = to_float_chw(img);
  for (auto [box, oh, ow] : {std::tuple<CropBox, int64_t, int64_t>{CropBox{0, 0, 36, 40}, 36, 40},
                             {CropBox{3, 5, 20, 30}, 16, 16},
                             {CropBox{0, 0, 36, 40}, 50, 61}}) {
    Tensor a = resize_bilinear(img, box, oh, ow), b = resize_bilinear(chw, box, oh, ow);
    ASSERT_EQ(a.shape(), (Shape{3, oh, ow}));
    ASSERT_EQ(a.shape(), b.shape());
    // Equal up to the compiler's choice of fused multiply-adds.
    for (int64_t i = 0; i < a.numel(); ++i) ASSERT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-6f) << i;
  }
}

// Three-channel images take a path that reads each pixel's bytes together;
// every value must be the one each channel alone (the plane-by-plane path) gives.
TEST(ImageResize, InterleavedRgbEqualsEachChannelResizedAlone) {
  manual_seed(4);
  const Tensor rgb = randint(0, 256, {37, 53, 3}, DType::int64).to(DType::uint8);
  const CropBox box{3, 5, 30, 41};
  for (auto [oh, ow] : {std::pair<int64_t, int64_t>{224, 224}, {17, 9}, {30, 41}}) {
    const Tensor all = resize_bilinear(rgb, box, oh, ow);
    for (int64_t c = 0; c < 3; ++c) {
      const Tensor alone = resize_bilinear(rgb.narrow(2, c, 1).contiguous(), box, oh, ow);
      EXPECT_EQ(all.narrow(0, c, 1).contiguous().to_vector<float>(), alone.to_vector<float>())
          << "channel " << c << " at " << oh << "x" << ow;
    }
  }
}

TEST(ImageResize, SameSizeIsTheIdentityAndConstantsStayConstant) {
  Tensor x = Tensor::empty({2, 5, 7}, DType::float32);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 11) / 10.0f;
  Tensor same = resize_bilinear(x, 5, 7);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(same.data<float>()[i], x.data<float>()[i]);

  Tensor flat = Tensor::empty({1, 9, 13}, DType::float32);
  for (int64_t i = 0; i < flat.numel(); ++i) flat.data<float>()[i] = 0.25f;
  for (auto [h, w] : {std::pair<int64_t, int64_t>{3, 4}, {20, 31}, {9, 2}}) {
    Tensor r = resize_bilinear(flat, h, w);
    for (int64_t i = 0; i < r.numel(); ++i) EXPECT_NEAR(r.data<float>()[i], 0.25f, 1e-6f);
  }
}

TEST(ImageResize, DownscalingByAnIntegerFactorAveragesBlocks) {
  // 2x downscale: support 2, so each output averages pixels 2o-1..2o+2 with
  // weights 1/8, 3/8, 3/8, 1/8 (edges renormalised).
  Tensor x = Tensor::empty({1, 1, 8}, DType::float32);
  for (int64_t i = 0; i < 8; ++i) x.data<float>()[i] = static_cast<float>(i);
  Tensor r = resize_bilinear(x, 1, 4);
  const float* p = r.data<float>();
  EXPECT_NEAR(p[1], (1 * 1 + 2 * 3 + 3 * 3 + 4 * 1) / 8.0f, 1e-5f);
  EXPECT_NEAR(p[0], (0 * 3 + 1 * 3 + 2 * 1) / 7.0f, 1e-5f);
}

TEST(ImageResize, BoxReadsOnlyInsideTheBox) {
  Tensor x = Tensor::empty({1, 6, 6}, DType::float32);
  for (int64_t i = 0; i < 36; ++i) x.data<float>()[i] = 100.0f;
  for (int64_t y = 1; y < 5; ++y)
    for (int64_t c = 1; c < 5; ++c) x.data<float>()[y * 6 + c] = 1.0f;
  Tensor r = resize_bilinear(x, CropBox{1, 1, 4, 4}, 3, 3);
  for (int64_t i = 0; i < 9; ++i) EXPECT_NEAR(r.data<float>()[i], 1.0f, 1e-6f);
}

TEST(ImageResize, RejectsBadArguments) {
  Tensor x = Tensor::empty({1, 4, 4}, DType::float32);
  EXPECT_THROW(resize_bilinear(x, CropBox{2, 0, 3, 4}, 2, 2), ValueError);
  EXPECT_THROW(resize_bilinear(x, 0, 2), ValueError);
  EXPECT_THROW(resize_bilinear(Tensor::empty({4, 4}, DType::int64), 2, 2), TypeError);
  EXPECT_THROW(resize_bilinear(Tensor::empty({4, 4}, DType::uint8), 2, 2), ShapeError);  // not [H, W, C]
}

}  // namespace
}  // namespace hearth::data
