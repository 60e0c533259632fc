// The colour conversion of a batch of decoded JPEGs: nvJPEG hands back each
// image's Y, Cb and Cr planes as decoded, and one kernel per batch turns them
// into RGB pixels the way libjpeg (libjpeg-turbo, which the CPU
// path and PIL decode with) does it by default: the chroma planes upsampled
// by its "fancy" triangle filter where it uses one (2x across, 2x across and
// down, 2x down; plain repetition otherwise, and for chroma planes of one or
// two columns, as libjpeg does), then its fixed-point YCbCr-to-RGB
// arithmetic with the same rounding. Given the same planes, the pixels are
// libjpeg's exactly; what remains between the decoders is the inverse DCT.
//
// One launch for the batch, where nvJPEG's own conversion launches a kernel
// per image: a batch's 128 small kernels each wait for room on a GPU that a
// training step fills.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace hearth::cuda {

// One image's planes (device memory) and where its RGB goes.
struct YcbcrSource {
  const uint8_t* planes[3] = {nullptr, nullptr, nullptr};  // Y, Cb, Cr
  int32_t pitches[3] = {0, 0, 0};
  int32_t width = 0, height = 0;                // the image, and its Y plane
  int32_t chroma_width = 0, chroma_height = 0;  // the Cb and Cr planes
  int32_t h_factor = 1, v_factor = 1;           // image pixels per chroma sample across (1, 2, 4) and down (1, 2)
  // R, G, B and an unused byte per pixel (one 32-bit word: one store here,
  // one load per tap in the resampling), rows rgb_pitch bytes apart (a
  // multiple of 4).
  uint8_t* rgb = nullptr;
  int64_t rgb_pitch = 0;
  // The pixels converted: the columns [left, left + region_width) of the rows
  // [top, top + region_height), the part of the image the resampling reads
  // (a random crop's box); the rest of `rgb` is left as it was.
  int32_t left = 0, top = 0, region_width = 0, region_height = 0;
};

// sources: `count` entries in device memory; max_width and max_height: the
// largest region's, which the grid covers.
void launch_ycbcr_to_rgb_batch(const YcbcrSource* sources, int64_t count, int32_t max_width, int32_t max_height,
                               CUstream_st* stream);

}  // namespace hearth::cuda
