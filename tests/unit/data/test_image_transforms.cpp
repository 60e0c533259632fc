// ToTensor, Resize, CenterCrop and RandomResizedCrop: torchvision's sizes,
// offsets and crop-parameter rules, and seeded determinism.
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/image_transforms.h"

namespace hearth::data {
namespace {

// [C, H, W] float32 with element (c, y, x) = c * 100 + y * 10 + x.
Tensor grid(int64_t c, int64_t h, int64_t w) {
  Tensor t = Tensor::empty({c, h, w}, DType::float32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < c; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) p[(i * h + y) * w + x] = static_cast<float>(i * 100 + y * 10 + x);
  return t;
}

float at(const Tensor& t, int64_t c, int64_t y, int64_t x) {
  return t.data<float>()[(c * t.size(1) + y) * t.size(2) + x];
}

TEST(ToTensor, HwcBytesBecomeChwFractions) {
  Tensor img = Tensor::empty({2, 3, 3}, DType::uint8);
  uint8_t* p = img.data<uint8_t>();
  for (int i = 0; i < 18; ++i) p[i] = static_cast<uint8_t>(i * 15);
  SampleRng rng(0, 0, 0);
  Tensor t = ToTensor()(img, rng);
  ASSERT_EQ(t.shape(), (Shape{3, 2, 3}));
  EXPECT_EQ(t.dtype(), DType::float32);
  for (int64_t y = 0; y < 2; ++y)
    for (int64_t x = 0; x < 3; ++x)
      for (int64_t c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(at(t, c, y, x), p[(y * 3 + x) * 3 + c] / 255.0f);
  Tensor grey = Tensor::empty({4, 5}, DType::uint8);
  EXPECT_EQ(ToTensor()(grey, rng).shape(), (Shape{1, 4, 5}));
  EXPECT_THROW(ToTensor()(grid(3, 2, 2), rng), TypeError);
}

TEST(Resize, ShorterSideAndTruncatedLongerSideLikeTorchvision) {
  EXPECT_EQ(Resize(224).output_size(375, 500), (std::pair<int64_t, int64_t>{224, 298}));  // int(224 * 500 / 375)
  EXPECT_EQ(Resize(224).output_size(500, 333), (std::pair<int64_t, int64_t>{336, 224}));
  EXPECT_EQ(Resize(32).output_size(36, 40), (std::pair<int64_t, int64_t>{32, 35}));
  EXPECT_EQ(Resize(10, 20).output_size(36, 40), (std::pair<int64_t, int64_t>{10, 20}));
  SampleRng rng(0, 0, 0);
  EXPECT_EQ(Resize(8)(grid(3, 12, 16), rng).shape(), (Shape{3, 8, 10}));
  EXPECT_THROW(Resize(0), ValueError);
}

TEST(CenterCrop, OffsetsRoundLikePythonAndPadSmallImages) {
  // round((h - crop) / 2) with halves to even: 1.5 -> 2, 2.5 -> 2, 0.5 -> 0.
  EXPECT_EQ(CenterCrop(3).offset(6, 8), (std::pair<int64_t, int64_t>{2, 2}));
  EXPECT_EQ(CenterCrop(4, 3).offset(5, 8), (std::pair<int64_t, int64_t>{0, 2}));
  // Padding: (crop - size) // 2 zeros before.
  EXPECT_EQ(CenterCrop(7).offset(4, 7), (std::pair<int64_t, int64_t>{-1, 0}));

  SampleRng rng(0, 0, 0);
  Tensor c = CenterCrop(3)(grid(2, 6, 8), rng);
  ASSERT_EQ(c.shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(at(c, 1, 0, 0), 100 + 20 + 2);
  EXPECT_EQ(at(c, 0, 2, 2), 44);  // grid value (4, 4)

  Tensor padded = CenterCrop(6)(grid(1, 4, 4), rng);  // one row and column of zeros on each side
  ASSERT_EQ(padded.shape(), (Shape{1, 6, 6}));
  EXPECT_EQ(at(padded, 0, 0, 0), 0.0f);
  EXPECT_EQ(at(padded, 0, 1, 1), 0.0f);  // grid value (0, 0)
  EXPECT_EQ(at(padded, 0, 1, 2), 1.0f);
  EXPECT_EQ(at(padded, 0, 4, 4), 33.0f);
  EXPECT_EQ(at(padded, 0, 5, 5), 0.0f);
}

TEST(RandomResizedCrop, BoxesFollowTheScaleAndRatioBounds) {
  RandomResizedCrop rrc(32, {0.25, 0.75}, {0.5, 2.0});
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> distinct;
  for (int64_t i = 0; i < 300; ++i) {
    SampleRng rng(3, 0, i);
    CropBox b = rrc.sample_box(60, 80, rng);
    ASSERT_GE(b.top, 0);
    ASSERT_GE(b.left, 0);
    ASSERT_LE(b.top + b.height, 60);
    ASSERT_LE(b.left + b.width, 80);
    const double area = static_cast<double>(b.height * b.width) / (60.0 * 80.0);
    const double ratio = static_cast<double>(b.width) / static_cast<double>(b.height);
    // Rounding each side to an integer moves area and ratio a little.
    EXPECT_GE(area, 0.25 * 0.9);
    EXPECT_LE(area, 0.75 * 1.1);
    EXPECT_GE(ratio, 0.5 * 0.9);
    EXPECT_LE(ratio, 2.0 * 1.1);
    distinct.insert({b.top, b.left, b.height, b.width});
  }
  EXPECT_GT(distinct.size(), 200u);
}

TEST(RandomResizedCrop, FallsBackToTheCentralCropOfTheRatioBound) {
  // A very wide image with a scale no window can reach: torchvision's fallback
  // takes the full height and width = round(h * max_ratio), centred.
  RandomResizedCrop rrc(8, {1.0, 1.0}, {1.0, 1.0});
  SampleRng rng(0, 0, 0);
  CropBox b = rrc.sample_box(10, 40, rng);
  EXPECT_EQ(b.height, 10);
  EXPECT_EQ(b.width, 10);
  EXPECT_EQ(b.top, 0);
  EXPECT_EQ(b.left, 15);
  // An image within the ratio bounds: the whole image.
  b = RandomResizedCrop(8, {1.0, 1.0}, {0.5, 2.0}).sample_box(10, 12, rng);
  EXPECT_EQ(b.height * b.width, 120);
}

TEST(Resize, Uint8ImagesBecomeFloatChwEvenAtTheirOwnSize) {
  Tensor img = Tensor::empty({4, 6, 3}, DType::uint8);
  for (int64_t i = 0; i < img.numel(); ++i) img.data<uint8_t>()[i] = static_cast<uint8_t>(i * 3);
  SampleRng rng(0, 0, 0);
  Tensor same = Resize(4)(img, rng), reference = ToTensor()(img, rng);
  ASSERT_EQ(same.shape(), (Shape{3, 4, 6}));
  for (int64_t i = 0; i < same.numel(); ++i) EXPECT_EQ(same.data<float>()[i], reference.data<float>()[i]);
  EXPECT_EQ(RandomResizedCrop(5)(img, rng).shape(), (Shape{3, 5, 5}));
}

TEST(RandomResizedCrop, SameSeedSameCropsOtherSeedOtherCrops) {
  RandomResizedCrop rrc(16);
  Tensor img = grid(3, 40, 36);
  auto crop = [&](uint64_t seed, int64_t epoch, int64_t index) {
    SampleRng rng(seed, epoch, index);
    return rrc(img, rng);
  };
  Tensor a = crop(5, 1, 7), b = crop(5, 1, 7);
  ASSERT_EQ(a.shape(), (Shape{3, 16, 16}));
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]);
  int differing = 0;
  for (auto [seed, epoch] : {std::pair<uint64_t, int64_t>{6, 1}, {5, 2}}) {
    Tensor c = crop(seed, epoch, 7);
    for (int64_t i = 0; i < a.numel(); ++i) differing += a.data<float>()[i] != c.data<float>()[i];
  }
  EXPECT_GT(differing, 0);
}

TEST(ImageTransforms, RejectBadArgumentsWithTheirNames) {
  EXPECT_THROW(RandomResizedCrop(0), ValueError);
  EXPECT_THROW(RandomResizedCrop(8, {0.5, 0.2}), ValueError);
  EXPECT_THROW(RandomResizedCrop(8, {0.1, 1.0}, {0.0, 1.0}), ValueError);
  EXPECT_THROW(CenterCrop(0), ValueError);
  SampleRng rng(0, 0, 0);
  try {
    RandomResizedCrop(8)(Tensor::empty({8, 8, 3}, DType::int32), rng);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[RandomResizedCrop] expects a uint8 [H, W, C] image or float32"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hearth::data
