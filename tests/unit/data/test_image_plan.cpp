// Image plans (hearth/data/image_plan.h): a planned pipeline draws the same
// crops and flips as the CPU path, from the same streams, and the plan
// carried out on the host gives the CPU pipeline's output bit for bit; what a
// plan cannot say is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hearth/data/encoded_image.h"
#include "hearth/data/image_plan.h"
#include "hearth/data/image_transforms.h"
#include "hearth/data/transforms.h"
#include "tests/support/jpeg_writer.h"
#include "tests/support/scoped_env.h"

namespace hearth::data {
namespace {

using hearth::testing::encode_jpeg;
using hearth::testing::ScopedEnv;

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0;
}

std::shared_ptr<Compose> train_pipeline(int64_t size) {
  return std::make_shared<Compose>(std::vector<TransformPtr>{
      std::make_shared<RandomResizedCrop>(size, std::pair<double, double>{0.5, 1.0}),
      std::make_shared<RandomHorizontalFlip>(), std::make_shared<Normalize>(kImageNetMean, kImageNetStd)});
}

std::shared_ptr<Compose> eval_pipeline(int64_t resize, int64_t crop) {
  return std::make_shared<Compose>(std::vector<TransformPtr>{std::make_shared<Resize>(resize),
                                                             std::make_shared<CenterCrop>(crop),
                                                             std::make_shared<Normalize>(kImageNetMean, kImageNetStd)});
}

TEST(ImagePlan, DrawsTheCropAndFlipTheCpuPathDraws) {
  const RandomResizedCrop crop(224, {0.08, 1.0});
  const Compose pipeline({std::make_shared<RandomResizedCrop>(224, std::pair<double, double>{0.08, 1.0}),
                          std::make_shared<RandomHorizontalFlip>(0.5)});
  int flips = 0;
  for (int64_t index = 0; index < 400; ++index) {
    const int64_t h = 100 + index % 700, w = 80 + (index * 37) % 900;
    SampleRng rng(42, index % 3, index);
    ImagePlan plan = ImagePlan::for_image(h, w);
    ASSERT_TRUE(pipeline.plan(plan, rng));
    // What Compose gives each transform: stream i for transform i.
    SampleRng crop_rng = rng.fork(0), flip_rng = rng.fork(1);
    const CropBox box = crop.sample_box(h, w, crop_rng);
    EXPECT_EQ(plan.box.top, box.top);
    EXPECT_EQ(plan.box.left, box.left);
    EXPECT_EQ(plan.box.height, box.height);
    EXPECT_EQ(plan.box.width, box.width);
    EXPECT_EQ(plan.flip, flip_rng.uniform() < 0.5) << "sample " << index;
    flips += plan.flip;
    EXPECT_EQ(plan.out_height, 224);
    EXPECT_EQ(plan.out_width, 224);
  }
  EXPECT_GT(flips, 150);
  EXPECT_LT(flips, 250);
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
  return worst;
}

// The plan carried out on the host against the CPU pipeline, on the same
// file and sample: equal bytes. (`tolerance`: for pipelines whose CPU path
// resizes float planes, summed in the same order as the byte path but
// compiled into other instructions, so the last bit may differ.)
void expect_plan_gives_the_cpu_output(const Transform& pipeline, const std::vector<uint8_t>& jpeg, int64_t index,
                                      double tolerance = 0.0) {
  const EncodedImage image(jpeg, "t.jpg");
  const auto [h, w] = image.size();
  SampleRng plan_rng(7, 1, index), cpu_rng(7, 1, index);
  ImagePlan plan = ImagePlan::for_image(h, w);
  ASSERT_TRUE(pipeline.plan(plan, plan_rng));
  const Tensor cpu = pipeline.from_encoded(image, cpu_rng);
  const Tensor planned = apply_image_plan(image.decode(), plan);
  if (tolerance == 0.0)
    EXPECT_TRUE(same_bytes(planned, cpu)) << "sample " << index << " of a " << h << "x" << w << " image";
  else
    EXPECT_LE(max_abs_difference(planned, cpu), tolerance) << "sample " << index;
}

TEST(ImagePlan, OnTheHostItIsTheCpuPipelineBitForBit) {
  // Whole decodes on the CPU path: the reduced-scale decode is the one
  // difference a device decoder keeps (documented), not the plan's.
  ScopedEnv whole("HEARTH_IMAGE_FAST_DECODE", "0");
  const std::vector<uint8_t> landscape = encode_jpeg(301, 197, {}), portrait = encode_jpeg(150, 260, {}, 5);
  for (int64_t index = 0; index < 12; ++index) {
    expect_plan_gives_the_cpu_output(*train_pipeline(64), index % 2 ? landscape : portrait, index);
    expect_plan_gives_the_cpu_output(*eval_pipeline(80, 64), index % 2 ? landscape : portrait, index);
  }
  // A crop larger than the resized image: CenterCrop's zero padding.
  expect_plan_gives_the_cpu_output(*eval_pipeline(60, 100), landscape, 0);
  // ToTensor first, then the crop on float pixels (the CPU path's float-plane resize).
  const Compose to_tensor_first({std::make_shared<ToTensor>(),
                                 std::make_shared<RandomResizedCrop>(48, std::pair<double, double>{0.3, 1.0}),
                                 std::make_shared<RandomHorizontalFlip>()});
  for (int64_t index = 0; index < 6; ++index)
    expect_plan_gives_the_cpu_output(to_tensor_first, landscape, index, 1e-6);
}

TEST(ImagePlan, WithTheFastDecodeTooWhereTheCropIsTooSmallToReduce) {
  // Region decoding is exact: only a reduced scale differs.
  const std::vector<uint8_t> jpeg = encode_jpeg(300, 200, {});
  for (int64_t index = 0; index < 8; ++index) expect_plan_gives_the_cpu_output(*train_pipeline(180), jpeg, index);
}

bool plans(std::vector<TransformPtr> transforms) {
  ImagePlan plan = ImagePlan::for_image(100, 120);
  SampleRng rng(0, 0, 0);
  return Compose(std::move(transforms)).plan(plan, rng);
}

TEST(ImagePlan, RefusesWhatItCannotSayOrTheCpuPathWouldComputeDifferently) {
  auto rrc = std::make_shared<RandomResizedCrop>(32);
  auto flip = std::make_shared<RandomHorizontalFlip>();
  auto norm = std::make_shared<Normalize>(kImageNetMean, kImageNetStd);
  auto center = std::make_shared<CenterCrop>(24);
  EXPECT_TRUE(plans({rrc, flip, norm}));
  EXPECT_TRUE(plans({std::make_shared<Resize>(40), center, flip, norm}));
  EXPECT_TRUE(plans({rrc}));
  EXPECT_FALSE(plans({std::make_shared<RandomCrop>(24)})) << "no plan for RandomCrop";
  EXPECT_FALSE(plans({norm, rrc})) << "Normalize on the decoded bytes fails on the CPU";
  EXPECT_FALSE(plans({flip, rrc})) << "a flip of [H, W, 3] bytes mirrors the channels on the CPU";
  EXPECT_FALSE(plans({center})) << "CenterCrop on [H, W, 3] bytes cuts W and C on the CPU";
  EXPECT_FALSE(plans({rrc, flip, center})) << "a window after a flip";
  EXPECT_FALSE(plans({rrc, std::make_shared<Resize>(16)})) << "a second resize";
  EXPECT_FALSE(plans({rrc, norm, norm})) << "normalised twice";
  EXPECT_FALSE(plans({rrc, std::make_shared<Normalize>(std::vector<double>{0.5, 0.5}, std::vector<double>{1, 1})}))
      << "two means for three channels";
}

}  // namespace
}  // namespace hearth::data
