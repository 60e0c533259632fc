// The kernel that finishes a batch of decoded images: for every image, one
// pass that resizes its box with the CPU path's antialiased triangle filter
// (hearth/data/image_resize.h: the same taps, weights and summation order),
// cuts the output window (zeros outside the resized image, as CenterCrop
// pads), mirrors it when asked, normalises with the mean and standard
// deviation, and writes float32 or bfloat16, NCHW or NHWC, into the batch.
// One launch per batch, on the caller's stream.
//
// Every output pixel sums its box's input pixels directly (all the taps of
// both axes), which costs taps_x * taps_y reads: about 25 at ImageNet sizes
// (crops of 0.5-1 of a 500x375 photograph resized to 224), growing with the
// square of the downscale factor for large photographs. The taps' weights
// are computed once per block's column and row into shared memory where
// they fit (kMaxTabledTaps per axis), else per pixel.
#pragma once

#include <cstdint>

#include "hearth/core/device_image_decoder.h"

struct CUstream_st;

namespace hearth::cuda {

// One image of the batch, as the kernel reads it (device-side copy of an
// array of these).
struct ResampleSource {
  // Decoded pixels, 4 bytes each (R, G, B, unused), rows `pitch` bytes apart; or null
  // when the image was made on the host: then `ready` holds its finished
  // values, float32 [3, out_height, out_width], copied as they are.
  const uint8_t* pixels = nullptr;
  const float* ready = nullptr;
  int64_t pitch = 0;
  int32_t height = 0, width = 0;
  double box_top = 0, box_left = 0, box_height = 0, box_width = 0;
  int32_t resized_height = 0, resized_width = 0;
  int32_t window_top = 0, window_left = 0;
  int32_t flip = 0;
};

// The most taps one axis of `s` can have (0 for an image made on the host);
// the batch's largest is launch_resample_batch's max_taps.
int resample_taps_bound(const ResampleSource& s);

// Taps per axis up to which the weights are tabulated in shared memory
// (64: downscales by up to 31, photographs of ~7,000 pixels to 224).
inline constexpr int kMaxTabledTaps = 64;

// sources: `count` entries in device memory; out: the batch's memory as
// `format` describes it ([count, 3, H, W] in its dtype and layout); max_taps:
// resample_taps_bound's largest over the batch.
void launch_resample_batch(const ResampleSource* sources, int64_t count, const ImageBatchFormat& format, void* out,
                           CUstream_st* stream, int max_taps);

}  // namespace hearth::cuda
