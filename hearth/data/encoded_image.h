// An image file not yet decoded, for transforms that keep only part of it.
//
// RandomResizedCrop keeps a window of the image and shrinks it; Resize shrinks
// the whole image. Decoding every pixel at full size first wastes most of the
// decode on pixels that are dropped or averaged away. A transform given an
// EncodedImage reads the size from the header (cheap), makes its random
// choices from that size exactly as it would from the decoded image, then
// asks for only the region it keeps and the size it will resize it to. For a
// JPEG, decode_region() then
//   - decodes only the rows and columns of the region (libjpeg-turbo's
//     jpeg_skip_scanlines and jpeg_crop_scanline, to its block boundaries,
//     the rest cut in memory): the same pixels as a full decode cut to the
//     region;
//   - when the region is at least 2x (4x, 8x) the output size in both
//     dimensions, decodes at scale 1/2 (1/4, 1/8) in the DCT domain, which
//     is close to averaging 2x2 (4x4, 8x8) pixel blocks, and maps the region
//     onto the reduced image exactly (a SubpixelBox). Resizing that is
//     close to, not equal to, resizing the full-size region (within about one
//     8-bit step on average; PIL's JPEG draft mode reduces the same way).
// Only 1/2, 1/4 and 1/8 are used of libjpeg's M/8 scales: they have SIMD
// inverse DCTs and map pixel edges onto pixel edges of the full image; 5/8,
// 6/8 and 7/8 decode slower than the full size (bench/NOTES.md, section 22).
// PNGs, and every request when HEARTH_IMAGE_FAST_DECODE=0, are decoded whole
// and the region is the requested box, so the output is exactly that of
// decoding first.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"
#include "hearth/data/dataset.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_resize.h"

namespace hearth::data {

// What a transform needs of an image: a region of the full-size image and
// the size it will be resized to.
struct RegionRequest {
  CropBox region;
  int64_t out_height = 0, out_width = 0;
};

// The pixels decoded for a RegionRequest: uint8 [h, w, 3] holding the region,
// which lies at `box` in them (fractional when decoded at a reduced scale).
struct DecodedRegion {
  Tensor pixels;
  SubpixelBox box;
  int scale_denominator = 1;  // 1: full size; 2, 4, 8: decoded at 1/2, 1/4, 1/8
};

// Whether decode_region() may decode a part or a reduced scale:
// HEARTH_IMAGE_FAST_DECODE, on unless set to 0/false/no/off.
bool fast_image_decode_enabled();

// The DCT scale denominator (1, 2, 4 or 8) for resizing a region of
// `region_height` x `region_width` to `out_height` x `out_width`: the largest
// whose reduced region is still at least the output size in both dimensions.
int choose_scale_denominator(int64_t region_height, int64_t region_width, int64_t out_height, int64_t out_width);

class EncodedImage {
 public:
  // `name` (a path) names the image in errors. Copies share the bytes.
  EncodedImage(std::vector<uint8_t> bytes, std::string name);

  const std::string& name() const { return name_; }
  const std::vector<uint8_t>& bytes() const { return *bytes_; }
  ImageFormat format() const { return format_; }

  // The full-size image's height and width. JPEG: from the header only; PNG:
  // decodes the image (kept for decode()). IoError as decode_image's.
  ImageSize size() const;
  // A JPEG that most decoders take: 8-bit sequential Huffman YCbCr (read
  // from the header; false for PNGs, grey, CMYK, progressive, 12-bit).
  bool is_plain_color_jpeg() const;
  // The whole image, uint8 [H, W, 3], as decode_image gives it.
  Tensor decode() const;
  // The region, decoded as little as the format allows (see above). The
  // region must lie inside the image; the output size must be positive.
  DecodedRegion decode_region(const RegionRequest& request) const;

 private:
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  std::string name_;
  ImageFormat format_;
  mutable std::optional<ImageSize> size_;
  mutable bool plain_color_jpeg_ = false;  // read with the size
  mutable Tensor decoded_;  // PNGs, once size() has decoded them
};

// Builds a sample's image from its encoded file (a transform's from_encoded).
using EncodedImageFn = std::function<Tensor(const EncodedImage&)>;

// A data set whose image field can be handed over still encoded, so a
// transform decodes only what it keeps (TransformDataset does this).
class EncodedImageDataset : public Dataset {
 public:
  // get_for_epoch(index, epoch), with the image field (pixel_values) made by
  // `make_image` from the encoded file rather than decoded whole. An IoError
  // from make_image counts as the file failing to decode.
  virtual Example get_with_image_fn(int64_t index, int64_t epoch, const EncodedImageFn& make_image) const = 0;
};

}  // namespace hearth::data
