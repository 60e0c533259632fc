// The image transforms of a torchvision classification pipeline, on top of
// hearth/data/transforms.h (Normalize, RandomCrop, RandomHorizontalFlip,
// Compose). Decoded images are uint8 [H, W, 3] (hearth/data/image_io.h);
// every transform after the first works on float32 pixels [C, H, W]:
//
//   train: RandomResizedCrop(224), RandomHorizontalFlip, Normalize(ImageNet)
//   eval:  Resize(256), CenterCrop(224), Normalize(ImageNet)
//
// Resize and RandomResizedCrop read a uint8 [H, W, C] image directly and give
// float32 [C, H, W] in [0, 1], as ToTensor then the resize would, but without
// converting the full-size image first (a third of the cost of the whole
// pipeline at 500x375). Pipelines that do not start by resizing start with
// ToTensor. torchvision resizes 8-bit PIL images and rounds after each pass;
// resizing in float skips that rounding, otherwise the results are the same
// (hearth/data/image_resize.h). Random choices come from the SampleRng of
// (seed, epoch, sample), so the same seed gives the same crops whichever
// worker builds the sample. Given an image still encoded (from_encoded),
// Resize and RandomResizedCrop decode only what they keep
// (hearth/data/encoded_image.h).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "hearth/data/image_resize.h"
#include "hearth/data/transforms.h"

namespace hearth::data {

// torchvision's ImageNet statistics, what its pretrained weights expect.
inline const std::vector<double> kImageNetMean = {0.485, 0.456, 0.406};
inline const std::vector<double> kImageNetStd = {0.229, 0.224, 0.225};

// uint8 [H, W, C] (or [H, W]) -> float32 [C, H, W] (or [1, H, W]) in [0, 1].
class ToTensor : public Transform {
 public:
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;
  bool plan(ImagePlan& plan, SampleRng& rng) const override;
};

// Resize(size): the shorter side becomes `size`, the longer keeps the aspect
// ratio (truncated: torchvision's int(size * long / short)).
// Resize(height, width): exactly that size. Bilinear with antialiasing; uint8
// [H, W, C] images come out as float32 [C, H, W] (see above).
class Resize : public Transform {
 public:
  explicit Resize(int64_t size);
  Resize(int64_t height, int64_t width);
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;
  // Decodes a JPEG at a reduced scale when it is at least twice the output.
  Tensor from_encoded(const EncodedImage& image, SampleRng& rng) const override;
  bool plan(ImagePlan& plan, SampleRng& rng) const override;
  // The output [height, width] for an input of h x w.
  std::pair<int64_t, int64_t> output_size(int64_t h, int64_t w) const;

 private:
  int64_t size_ = 0, height_ = 0, width_ = 0;
};

// The central height x width window; an image smaller than that is padded
// with zeros first, split as torchvision splits it.
class CenterCrop : public Transform {
 public:
  explicit CenterCrop(int64_t size) : CenterCrop(size, size) {}
  CenterCrop(int64_t height, int64_t width);
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;
  bool plan(ImagePlan& plan, SampleRng& rng) const override;
  // The window's top-left corner in the input (negative where it pads).
  std::pair<int64_t, int64_t> offset(int64_t h, int64_t w) const;

 private:
  int64_t height_, width_;
};

// torchvision's RandomResizedCrop: a window covering a random fraction
// `scale` of the area with a random aspect ratio (log-uniform in `ratio`),
// resized to size x size (uint8 [H, W, C] images come out as float32
// [C, size, size]). After 10 failed draws, the largest central window
// whose ratio is within `ratio`.
class RandomResizedCrop : public Transform {
 public:
  explicit RandomResizedCrop(int64_t size, std::pair<double, double> scale = {0.08, 1.0},
                             std::pair<double, double> ratio = {3.0 / 4.0, 4.0 / 3.0});
  Tensor operator()(const Tensor& x, SampleRng& rng) const override;
  // Draws the window from the header's size, then decodes only the window
  // (at a reduced scale when it is at least twice the output).
  Tensor from_encoded(const EncodedImage& image, SampleRng& rng) const override;
  bool plan(ImagePlan& plan, SampleRng& rng) const override;
  // The window for an image of h x w (what the transform then resizes).
  CropBox sample_box(int64_t h, int64_t w, SampleRng& rng) const;

 private:
  int64_t size_;
  std::pair<double, double> scale_, ratio_;
};

}  // namespace hearth::data
