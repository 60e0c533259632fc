#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/transforms.h"
#include "hearth/ops/factory.h"

namespace hearth::data {
namespace {

// [C, H, W] float32 with element (c, y, x) = c * 100 + y * 10 + x + 1.
Tensor grid(int64_t c, int64_t h, int64_t w) {
  Tensor t = Tensor::empty({c, h, w}, DType::float32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < c; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) p[(i * h + y) * w + x] = static_cast<float>(i * 100 + y * 10 + x + 1);
  return t;
}

float at(const Tensor& t, int64_t c, int64_t y, int64_t x) {
  return t.data<float>()[(c * t.size(1) + y) * t.size(2) + x];
}

TEST(SampleRng, DependsOnSeedEpochIndexAndStreamOnly) {
  auto draws = [](SampleRng r) {
    std::vector<uint32_t> v;
    for (int i = 0; i < 10; ++i) v.push_back(r.next_u32());
    return v;
  };
  auto base = draws(SampleRng(1, 2, 3));
  EXPECT_EQ(base, draws(SampleRng(1, 2, 3)));
  EXPECT_NE(base, draws(SampleRng(9, 2, 3)));
  EXPECT_NE(base, draws(SampleRng(1, 5, 3)));
  EXPECT_NE(base, draws(SampleRng(1, 2, 4)));
  EXPECT_NE(base, draws(SampleRng(1, 2, 3).fork(0)));
  EXPECT_NE(draws(SampleRng(1, 2, 3).fork(0)), draws(SampleRng(1, 2, 3).fork(1)));
  SampleRng r(7, 0, 0);
  std::set<int64_t> seen;
  for (int i = 0; i < 400; ++i) {
    double u = r.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    int64_t k = r.randint(5);
    EXPECT_GE(k, 0);
    EXPECT_LT(k, 5);
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_THROW(r.randint(0), ValueError);
}

TEST(Normalize, SubtractsMeanAndDividesByStdPerChannel) {
  SampleRng rng(0, 0, 0);
  Tensor x = grid(2, 2, 2);
  Tensor y = Normalize({1.0, 100.0}, {2.0, 0.5})(x, rng);
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_FLOAT_EQ(at(y, 0, 0, 0), (1.0f - 1.0f) / 2.0f);
  EXPECT_FLOAT_EQ(at(y, 0, 1, 1), (12.0f - 1.0f) / 2.0f);
  EXPECT_FLOAT_EQ(at(y, 1, 0, 1), (102.0f - 100.0f) / 0.5f);
  // One value for every channel, a batch dimension, float64.
  Tensor b = grid(3, 1, 1).reshape({1, 3, 1, 1}).to(DType::float64);
  Tensor yb = Normalize({0.5}, {0.25})(b, rng);
  EXPECT_EQ(yb.dtype(), DType::float64);
  EXPECT_EQ(yb.to_vector<double>(), (std::vector<double>{2.0, 402.0, 802.0}));
}

TEST(Normalize, HandlesNonContiguousAndHalfInputs) {
  SampleRng rng(0, 0, 0);
  Tensor x = grid(2, 3, 3);
  Tensor t = x.transpose(1, 2);  // a strided view
  Tensor y = Normalize({1.0, 2.0}, {1.0, 1.0})(t, rng);
  Tensor yc = Normalize({1.0, 2.0}, {1.0, 1.0})(t.contiguous(), rng);
  EXPECT_EQ(y.to_vector<float>(), yc.to_vector<float>());
  Tensor h = Normalize({0.5}, {0.5})(tensor<float>({0.0f, 0.5f, 1.0f}, {1, 1, 3}).to(DType::bfloat16), rng);
  EXPECT_EQ(h.dtype(), DType::bfloat16);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{-1.0f, 0.0f, 1.0f}));
}

TEST(Normalize, RejectsBadArguments) {
  SampleRng rng(0, 0, 0);
  EXPECT_THROW(Normalize({0.5}, {0.0}), ValueError);
  EXPECT_THROW(Normalize({}, {1.0}), ValueError);
  EXPECT_THROW(Normalize({0.1, 0.2}, {1.0, 1.0})(grid(3, 2, 2), rng), ShapeError);
  EXPECT_THROW(Normalize({0.1}, {1.0})(Tensor::empty({4, 4}), rng), ShapeError);
  try {
    Normalize({0.1}, {1.0})(Tensor::empty({1, 2, 2}, DType::uint8), rng);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[Normalize] expects a floating tensor, got uint8"), std::string::npos);
  }
}

TEST(RandomCrop, CutsTheWindowTheDrawsSelect) {
  Tensor x = grid(2, 5, 6);
  RandomCrop crop(3, 4, /*padding=*/2);
  for (int64_t index = 0; index < 50; ++index) {
    SampleRng rng(17, 1, index), replay(17, 1, index);
    Tensor y = crop(x, rng);
    ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
    // The window's top-left corner in the padded image.
    int64_t top = replay.randint(5 + 4 - 3 + 1) - 2, left = replay.randint(6 + 4 - 4 + 1) - 2;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t yy = 0; yy < 3; ++yy)
        for (int64_t xx = 0; xx < 4; ++xx) {
          int64_t sy = top + yy, sx = left + xx;
          float expected = (sy >= 0 && sy < 5 && sx >= 0 && sx < 6) ? at(x, c, sy, sx) : 0.0f;
          ASSERT_EQ(at(y, c, yy, xx), expected) << index << " " << c << " " << yy << " " << xx;
        }
  }
}

TEST(RandomCrop, ReachesEveryOffsetAndKeepsDtype) {
  Tensor x = grid(1, 4, 4).to(DType::uint8);
  RandomCrop crop(2, 1);  // 6x6 padded, 5 positions per axis
  std::set<std::vector<int32_t>> windows;
  for (int64_t i = 0; i < 300; ++i) {
    SampleRng rng(3, 0, i);
    Tensor y = crop(x, rng);
    EXPECT_EQ(y.dtype(), DType::uint8);
    windows.insert(y.to_vector<int32_t>());
  }
  EXPECT_EQ(windows.size(), 25u);
  SampleRng rng(0, 0, 0);
  EXPECT_EQ(RandomCrop(4)(x, rng).to_vector<uint8_t>(), x.to_vector<uint8_t>()) << "a full-size crop is the image";
  EXPECT_THROW(RandomCrop(5)(x, rng), ShapeError);
  EXPECT_THROW(RandomCrop(0), ValueError);
  EXPECT_THROW(RandomCrop(2, -1), ValueError);
}

TEST(RandomHorizontalFlip, FlipsWithProbabilityP) {
  Tensor x = grid(2, 2, 3);
  SampleRng rng(1, 0, 0);
  Tensor f = RandomHorizontalFlip(1.0)(x, rng);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t y = 0; y < 2; ++y)
      for (int64_t xx = 0; xx < 3; ++xx) EXPECT_EQ(at(f, c, y, xx), at(x, c, y, 2 - xx));
  EXPECT_EQ(RandomHorizontalFlip(0.0)(x, rng).to_vector<float>(), x.to_vector<float>());
  int flipped = 0;
  RandomHorizontalFlip half(0.5);
  for (int64_t i = 0; i < 400; ++i) {
    SampleRng a(5, 2, i), b(5, 2, i);
    Tensor y = half(x, a);
    EXPECT_EQ(y.to_vector<float>(), half(x, b).to_vector<float>()) << "same draw, same result";
    flipped += y.to_vector<float>() != x.to_vector<float>();
  }
  EXPECT_NEAR(flipped, 200, 40);
  EXPECT_THROW(RandomHorizontalFlip(1.5), ValueError);
}

TEST(Compose, AppliesInOrderWithIndependentStreams) {
  Tensor x = grid(1, 4, 4);
  auto normalize = std::make_shared<Normalize>(std::vector<double>{1.0}, std::vector<double>{2.0});
  auto flip = std::make_shared<RandomHorizontalFlip>(1.0);
  Compose both({flip, normalize});
  SampleRng rng(0, 0, 0);
  Tensor y = both(x, rng);
  SampleRng r2(0, 0, 0);
  Tensor expected = (*normalize)((*flip)(x, r2), r2);
  EXPECT_EQ(y.to_vector<float>(), expected.to_vector<float>());
  EXPECT_THROW(Compose({nullptr}), ValueError);
}

class OneImage : public Dataset {
 public:
  int64_t size() const override { return 64; }
  Example get(int64_t index) const override {
    Tensor label = Tensor::empty({}, DType::int64);
    *label.data<int64_t>() = index;
    return Example{{field::kPixelValues, grid(1, 6, 6)}, {field::kLabels, label}};
  }
};

TEST(TransformDataset, RandomnessFollowsSeedEpochAndIndex) {
  auto base = std::make_shared<OneImage>();
  auto aug = std::make_shared<Compose>(
      std::vector<TransformPtr>{std::make_shared<RandomCrop>(6, 2), std::make_shared<RandomHorizontalFlip>()});
  TransformDataset a(base, aug, 42), b(base, aug, 42), c(base, aug, 43);
  auto img = [](const Example& e) { return e.at(field::kPixelValues).to_vector<float>(); };
  EXPECT_EQ(a.size(), 64);
  int differ_epoch = 0, differ_index = 0, differ_seed = 0;
  for (int64_t i = 0; i < 32; ++i) {
    EXPECT_EQ(img(a.get_for_epoch(i, 3)), img(b.get_for_epoch(i, 3)));
    EXPECT_EQ(img(a.get(i)), img(a.get_for_epoch(i, 0)));
    EXPECT_EQ(a.get(i).at(field::kLabels).item<int64_t>(), i) << "other fields pass through";
    differ_epoch += img(a.get_for_epoch(i, 3)) != img(a.get_for_epoch(i, 4));
    differ_index += img(a.get_for_epoch(i, 3)) != img(a.get_for_epoch(i + 32, 3));
    differ_seed += img(a.get_for_epoch(i, 3)) != img(c.get_for_epoch(i, 3));
  }
  EXPECT_GT(differ_epoch, 20);
  EXPECT_GT(differ_index, 20);
  EXPECT_GT(differ_seed, 20);
  TransformDataset wrong_field(base, aug, 1, "input_ids");
  EXPECT_THROW(wrong_field.get(0), ValueError);
}

}  // namespace
}  // namespace hearth::data
