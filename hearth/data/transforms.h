// Image transforms (torchvision's names and semantics) on CPU tensors laid out
// [..., C, H, W] (crop and flip only need [..., H, W]).
//
// Random transforms draw from a SampleRng derived from (seed, epoch, sample
// index) with Philox, never from a shared generator: a sample's augmentation
// is the same whichever worker thread builds it and in whatever order, and an
// interrupted epoch replays exactly on resume.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hearth/data/dataset.h"
#include "hearth/data/planned_images.h"

namespace hearth::data {

// The random numbers of one sample in one epoch.
class SampleRng {
 public:
  SampleRng(uint64_t seed, int64_t epoch, int64_t index) : SampleRng(seed, epoch, index, 0) {}
  // An independent stream for the k-th of several consumers (Compose gives
  // each transform its own, so adding one does not shift the others' draws).
  SampleRng fork(uint32_t k) const;

  uint32_t next_u32();
  uint64_t next_u64();
  double uniform();            // [0, 1)
  int64_t randint(int64_t n);  // [0, n), n >= 1

 private:
  SampleRng(uint64_t seed, int64_t epoch, int64_t index, uint64_t stream);
  uint64_t seed_;
  uint64_t epoch_;
  uint64_t index_;
  uint64_t stream_;
  uint64_t block_ = 0;
  std::array<uint32_t, 4> buf_{};
  int used_ = 4;
};

class EncodedImage;  // hearth/data/encoded_image.h
struct ImagePlan;    // hearth/data/image_plan.h

class Transform {
 public:
  virtual ~Transform() = default;
  virtual Tensor operator()(const Tensor& x, SampleRng& rng) const = 0;
  // The transform of an image still encoded: decodes it whole, then applies
  // operator(). Transforms that start by cropping or resizing override it to
  // decode only the region they keep, at a reduced scale where that is
  // close enough (hearth/data/encoded_image.h), drawing the same random
  // numbers as operator() does.
  virtual Tensor from_encoded(const EncodedImage& image, SampleRng& rng) const;
  // Says what operator() would do to the image `plan` describes, without
  // doing it, for pipelines finished on a device: updates the plan, drawing
  // the same random numbers operator() draws. False when this transform
  // cannot be said as a plan, or not at this point of it (the default).
  // Defined in transform_plans.cpp.
  virtual bool plan(ImagePlan& plan, SampleRng& rng) const;
};
using TransformPtr = std::shared_ptr<const Transform>;

// (x - mean[c]) / std[c] per channel c (dim -3). mean and std hold one value
// per channel, or one value for all. Floating inputs only.
class Normalize : public Transform {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;
  bool plan(ImagePlan& plan, SampleRng& rng) const override;

 private:
  std::vector<double> mean_;
  std::vector<double> std_;
};

// Pads H and W by `padding` zeros on every side, then cuts a window of
// height x width at a uniformly random position.
class RandomCrop : public Transform {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop(size, size, padding) {}
  RandomCrop(int64_t height, int64_t width, int64_t padding);
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;

 private:
  int64_t height_, width_, padding_;
};

// Mirrors W with probability p.
class RandomHorizontalFlip : public Transform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;
  bool plan(ImagePlan& plan, SampleRng& rng) const override;

 private:
  double p_;
};

// Applies transforms in order, each with its own random stream.
class Compose : public Transform {
 public:
  explicit Compose(std::vector<TransformPtr> transforms);
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;
  // The first transform reads the encoded image, the rest its output.
  Tensor from_encoded(const EncodedImage& image, SampleRng& rng) const override;
  // Each transform plans in turn, with the stream operator() gives it.
  bool plan(ImagePlan& plan, SampleRng& rng) const override;

 private:
  std::vector<TransformPtr> transforms_;
};

// A dataset whose samples have `transform` applied to one field (by default
// the image), randomised by (seed, epoch, index). When the base data set can
// hand the image over still encoded (an EncodedImageDataset, such as
// ImageFolder), the transform receives it encoded (Transform::from_encoded);
// and when, moreover, every transform can be said as a plan, a loader may
// take the samples planned instead, to finish them on a device
// (hearth/data/planned_images.h).
class TransformDataset : public Dataset, public PlannedImageDataset {
 public:
  TransformDataset(std::shared_ptr<const Dataset> base, TransformPtr transform, uint64_t seed,
                   std::string field = field::kPixelValues);
  int64_t size() const override { return base_->size(); }
  // Epoch 0's version of the sample.
  Example get(int64_t index) const override { return get_for_epoch(index, 0); }
  Example get_for_epoch(int64_t index, int64_t epoch) const override;

  bool plans_images() const override { return plans_images_; }
  PlannedSample get_planned(int64_t index, int64_t epoch) const override;
  Example make_on_host(const PlannedSample& sample) const override;

 private:
  std::shared_ptr<const Dataset> base_;
  TransformPtr transform_;
  uint64_t seed_;
  std::string field_;
  bool plans_images_ = false;
};

}  // namespace hearth::data
