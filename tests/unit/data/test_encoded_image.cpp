// Decoding only what a crop keeps (hearth/data/encoded_image.h): region
// decodes equal a full decode cut to the region, reduced-scale decodes stay
// close to the full path, the random crop is the same either way, and
// HEARTH_IMAGE_FAST_DECODE=0 gives exactly the full path's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/data/encoded_image.h"
#include "hearth/data/image_decoders.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_transforms.h"
#include "tests/support/jpeg_writer.h"
#include "tests/support/scoped_env.h"

namespace hearth::data {
namespace {

using hearth::testing::encode_jpeg;
using hearth::testing::JpegOptions;

Tensor cut(const Tensor& image, const CropBox& b) {
  return image.narrow(0, b.top, b.height).narrow(1, b.left, b.width).contiguous();
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0;
}

double mean_abs_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  double total = 0;
  for (int64_t i = 0; i < a.numel(); ++i) total += std::abs(static_cast<double>(pa[i]) - pb[i]);
  return total / static_cast<double>(a.numel());
}

struct FastDecode : hearth::testing::ScopedEnv {
  explicit FastDecode(const char* value) : ScopedEnv("HEARTH_IMAGE_FAST_DECODE", value) {}
};

TEST(EncodedImage, RegionDecodeEqualsFullDecodeCutForEverySamplingAndScale) {
  const std::vector<std::pair<const char*, JpegOptions>> kinds = {
      {"4:2:0", {2, 2}}, {"4:2:2", {2, 1}},      {"4:4:0", {1, 2}},
      {"4:4:4", {1, 1}}, {"grey", {1, 1, true}}, {"4:2:0 progressive", {2, 2, false, true}}};
  std::mt19937 rng(3);
  for (const auto& [kind, options] : kinds) {
    // Odd sizes: partial blocks on the right and at the bottom.
    const std::vector<uint8_t> jpeg = encode_jpeg(203, 157, options);
    for (int denom : {1, 2, 4, 8}) {
      const Tensor full = detail::decode_jpeg_window(jpeg.data(), jpeg.size(), "t.jpg", denom, nullptr);
      const int64_t h = full.size(0), w = full.size(1);
      ASSERT_EQ(h, (157 + denom - 1) / denom);
      ASSERT_EQ(w, (203 + denom - 1) / denom);
      for (int trial = 0; trial < 40; ++trial) {
        const int64_t top = std::uniform_int_distribution<int64_t>(0, h - 1)(rng);
        const int64_t left = std::uniform_int_distribution<int64_t>(0, w - 1)(rng);
        const CropBox box{top, left, std::uniform_int_distribution<int64_t>(1, h - top)(rng),
                          std::uniform_int_distribution<int64_t>(1, w - left)(rng)};
        const Tensor region = detail::decode_jpeg_window(jpeg.data(), jpeg.size(), "t.jpg", denom, &box);
        ASSERT_TRUE(same_bytes(region, cut(full, box)))
            << kind << " at 1/" << denom << ", window top " << box.top << " left " << box.left << " " << box.height
            << "x" << box.width;
      }
    }
  }
}

TEST(EncodedImage, FullScaleRegionIsTheFullDecodeCut) {
  const std::vector<uint8_t> jpeg = encode_jpeg(120, 90, {});
  EncodedImage image(jpeg, "t.jpg");
  EXPECT_EQ(image.size().height, 90);
  EXPECT_EQ(image.size().width, 120);
  // A region under twice the output: no reduced scale.
  const CropBox box{13, 27, 61, 70};
  DecodedRegion r = image.decode_region({box, 40, 50});
  EXPECT_EQ(r.scale_denominator, 1);
  const Tensor expected = resize_bilinear(decode_image(jpeg, "t.jpg"), box, 40, 50);
  EXPECT_TRUE(same_bytes(resize_bilinear(r.pixels, r.box, 40, 50), expected));
}

TEST(EncodedImage, ScaleIsTheLargestThatKeepsTheRegionAtLeastTheOutput) {
  EXPECT_EQ(choose_scale_denominator(375, 500, 224, 224), 1);
  EXPECT_EQ(choose_scale_denominator(448, 448, 224, 224), 2);
  EXPECT_EQ(choose_scale_denominator(447, 2000, 224, 224), 1);
  EXPECT_EQ(choose_scale_denominator(900, 1000, 224, 224), 4);
  EXPECT_EQ(choose_scale_denominator(1792, 1800, 224, 224), 8);
  EXPECT_EQ(choose_scale_denominator(5000, 5000, 224, 224), 8);
}

TEST(EncodedImage, ReducedScaleResizeIsCloseToTheFullSizePath) {
  // 1000x750 to 224: decoded at 1/2 (750 >= 448); 1000x1000 at 1/4.
  for (auto [w, h, expected_denom] : {std::tuple{1000, 750, 2}, std::tuple{1000, 1000, 4}, std::tuple{1900, 1850, 8}}) {
    const std::vector<uint8_t> jpeg = encode_jpeg(w, h, {}, 5);
    EncodedImage image(jpeg, "photo.jpg");
    const CropBox whole{0, 0, h, w};
    DecodedRegion r = image.decode_region({whole, 224, 224});
    EXPECT_EQ(r.scale_denominator, expected_denom);
    const Tensor fast = resize_bilinear(r.pixels, r.box, 224, 224);
    const Tensor full = resize_bilinear(decode_image(jpeg, "photo.jpg"), whole, 224, 224);
    const double mae = mean_abs_difference(fast, full);
    // Under one 8-bit step on average.
    EXPECT_LT(mae, 1.0 / 255) << w << "x" << h << ": " << mae * 255 << " 8-bit steps";
    // And an off-centre region, whose mapping onto the reduced image is fractional.
    const CropBox part{h / 7 + 1, w / 9 + 3, h - h / 7 - 5, w - w / 9 - 7};
    DecodedRegion rp = image.decode_region({part, 200, 210});
    EXPECT_EQ(rp.scale_denominator, choose_scale_denominator(part.height, part.width, 200, 210));
    EXPECT_LT(mean_abs_difference(resize_bilinear(rp.pixels, rp.box, 200, 210),
                                  resize_bilinear(decode_image(jpeg, "photo.jpg"), part, 200, 210)),
              1.0 / 255);
  }
}

TEST(EncodedImage, RandomResizedCropPicksTheSameBoxWithAndWithoutTheFastPath) {
  const std::vector<uint8_t> jpeg = encode_jpeg(1000, 800, {}, 9);
  EncodedImage image(jpeg, "photo.jpg");
  const Tensor decoded = decode_image(jpeg, "photo.jpg");
  RandomResizedCrop wide(112, {0.5, 1.0});    // regions >= 2x the output: reduced scale
  RandomResizedCrop narrow(400, {0.5, 1.0});  // full scale, region decode only
  for (int64_t index = 0; index < 12; ++index) {
    {
      SampleRng a(42, 0, index), b(42, 0, index);
      const Tensor fast = narrow.from_encoded(image, a);
      const Tensor full = narrow(decoded, b);
      EXPECT_TRUE(same_bytes(fast, full)) << "sample " << index;
      EXPECT_EQ(a.next_u64(), b.next_u64()) << "both drew the same numbers";
    }
    SampleRng a(42, 0, index), b(42, 0, index), other(42, 0, index + 100);
    const Tensor fast = wide.from_encoded(image, a);
    // Close to the same crop, far from another sample's.
    EXPECT_LT(mean_abs_difference(fast, wide(decoded, b)), 1.0 / 255) << "sample " << index;
    EXPECT_GT(mean_abs_difference(fast, wide(decoded, other)), 4.0 / 255) << "sample " << index;
  }
}

TEST(EncodedImage, SwitchedOffEveryTransformGivesExactlyTheFullPath) {
  const std::vector<uint8_t> jpeg = encode_jpeg(1000, 800, {}, 11);
  EncodedImage image(jpeg, "photo.jpg");
  const Tensor decoded = decode_image(jpeg, "photo.jpg");
  RandomResizedCrop crop(112, {0.5, 1.0});
  Compose eval({std::make_shared<Resize>(128), std::make_shared<CenterCrop>(112)});
  SampleRng r0(1, 0, 0);
  const Tensor fast = crop.from_encoded(image, r0);
  {
    FastDecode off("0");
    EXPECT_FALSE(fast_image_decode_enabled());
    SampleRng a(1, 0, 0), b(1, 0, 0);
    const Tensor slow = crop.from_encoded(image, a);
    EXPECT_TRUE(same_bytes(slow, crop(decoded, b)));
    EXPECT_FALSE(same_bytes(slow, fast)) << "on, the fast path decoded at a reduced scale";
    SampleRng c(1, 0, 0), d(1, 0, 0);
    EXPECT_TRUE(same_bytes(eval.from_encoded(image, c), eval(decoded, d)));
  }
  {
    FastDecode on("1");
    EXPECT_TRUE(fast_image_decode_enabled());
  }
  {
    FastDecode typo("nope");
    EXPECT_THROW(fast_image_decode_enabled(), ValueError);
  }
}

TEST(EncodedImage, DataEndingEarlyIsStillAnErrorWhenTheRegionIsAbove) {
  std::vector<uint8_t> jpeg = encode_jpeg(300, 200, {});
  jpeg.resize(jpeg.size() * 2 / 3);  // the last third of the rows is missing
  EncodedImage image(jpeg, "cut.jpg");
  EXPECT_EQ(image.size().height, 200);
  try {
    (void)image.decode_region({CropBox{0, 0, 20, 300}, 10, 150});
    FAIL() << "a truncated JPEG decoded";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.jpg: truncated JPEG"), std::string::npos) << e.what();
  }
}

TEST(EncodedImage, WithoutAnEndMarkerLastTheRegionDecodeReadsOnAndAgreesWithTheFullDecode) {
  const std::vector<uint8_t> jpeg = encode_jpeg(300, 200, {});
  ASSERT_EQ(jpeg[jpeg.size() - 1], 0xD9);
  const CropBox box{10, 20, 50, 60};
  // Bytes after the end marker (cameras append some): both decode.
  std::vector<uint8_t> trailing = jpeg;
  for (int k = 0; k < 100; ++k) trailing.push_back(static_cast<uint8_t>(k));
  DecodedRegion r = EncodedImage(trailing, "trailing.jpg").decode_region({box, 40, 40});
  EXPECT_TRUE(same_bytes(r.pixels, cut(decode_image(trailing, "trailing.jpg"), box)));
  // The end marker missing: libjpeg reads past the last block for it, so the
  // full decode calls the file truncated, and so does the region decode.
  std::vector<uint8_t> no_marker(jpeg.begin(), jpeg.end() - 2);
  EXPECT_THROW((void)decode_image(no_marker, "no_eoi.jpg"), IoError);
  EXPECT_THROW((void)EncodedImage(no_marker, "no_eoi.jpg").decode_region({box, 40, 40}), IoError);
}

TEST(EncodedImage, BadRequestsAndBadFilesNameTheFile) {
  const std::vector<uint8_t> jpeg = encode_jpeg(64, 48, {});
  EncodedImage image(jpeg, "small.jpg");
  EXPECT_THROW(image.decode_region({CropBox{0, 0, 49, 10}, 10, 10}), ValueError);
  EXPECT_THROW(image.decode_region({CropBox{0, 0, 10, 10}, 0, 10}), ValueError);
  const CropBox outside{40, 0, 20, 10};
  EXPECT_THROW(detail::decode_jpeg_window(jpeg.data(), jpeg.size(), "small.jpg", 2, &outside), ValueError);
  EXPECT_THROW(detail::decode_jpeg_window(jpeg.data(), jpeg.size(), "small.jpg", 3, nullptr), ValueError);
  std::vector<uint8_t> garbage = {0xFF, 0xD8, 0xFF, 0x00, 0x01};
  EncodedImage bad(garbage, "bad.jpg");
  try {
    (void)bad.size();
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jpg"), std::string::npos);
  }
}

}  // namespace
}  // namespace hearth::data
