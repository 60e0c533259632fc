// What an image pipeline does to one image, said without doing it.
//
// A DataLoader that finishes images on a device (hearth/data/device_image_batches.h)
// needs, per image, the random choices and the geometry its transforms would
// apply, computed on the host exactly as the CPU path computes them, so the
// device crops the same regions and flips the same images. Each transform
// that can be said this way updates an ImagePlan (Transform::plan) instead of
// transforming pixels, drawing the same random numbers from the same
// streams as when it transforms them:
//
//   RandomResizedCrop, Resize  the box of the full-size image, the size it is resized to
//   ToTensor                   nothing (the plan's pixels are float from the start)
//   CenterCrop                 a window of the resized image (zeros outside it)
//   RandomHorizontalFlip       whether the output is mirrored
//   Normalize                  the per-channel mean and standard deviation
//
// A pipeline any other transform takes part in (RandomCrop, a custom one), or
// whose order the CPU path would refuse or compute differently, cannot be
// planned and stays on the CPU path.
#pragma once

#include <array>
#include <cstdint>

#include "hearth/core/device_image_decoder.h"
#include "hearth/core/tensor.h"
#include "hearth/data/image_resize.h"

namespace hearth::data {

struct ImagePlan {
  // The image the plan starts from: its full size, nothing done yet.
  static ImagePlan for_image(int64_t height, int64_t width);

  int64_t image_height = 0, image_width = 0;
  CropBox box;                                // of the full-size image, resized to:
  int64_t resized_height = 0, resized_width = 0;
  int64_t window_top = 0, window_left = 0;    // the output's corner in the resized image
  int64_t out_height = 0, out_width = 0;      // the output's size
  bool flip = false;
  std::array<double, 3> mean{0.0, 0.0, 0.0};
  std::array<double, 3> std{1.0, 1.0, 1.0};

  // Where the pipeline stands, so each transform can refuse an order the CPU
  // path would compute differently: pixels are float [C, H, W] once a resize
  // or ToTensor ran (the transforms after them need that), a box was chosen
  // once a resize ran, and no window may be cut after a flip or normalisation.
  bool float_pixels = false;
  bool resized = false;
  bool windowed = false;
  bool geometry_closed = false;
  bool normalized = false;

  // The device decoder's description of it (hearth/core/device_image_decoder.h).
  ImageResampling resampling() const;
};

// The plan carried out on the host by the CPU path's own functions, from the
// decoded image (uint8 [H, W, 3]): float32 [3, out_height, out_width]. What
// the CPU pipeline gives for the same draws when it decodes whole
// (HEARTH_IMAGE_FAST_DECODE=0), bit for bit; the reference for device decoders.
Tensor apply_image_plan(const Tensor& decoded, const ImagePlan& plan);

// The normalisation of `plan` as a device batch format of its output size.
ImageBatchFormat image_batch_format(const ImagePlan& plan, DType dtype, MemoryFormat memory_format);

}  // namespace hearth::data
