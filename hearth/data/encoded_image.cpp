#include "hearth/data/encoded_image.h"

#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"
#include "hearth/data/image_decoders.h"

namespace hearth::data {

bool fast_image_decode_enabled() {
  // Read on every call (a getenv, negligible beside a decode) so that a test
  // or a program can switch it while running.
  return switches::image_fast_decode().get();
}

int choose_scale_denominator(int64_t region_height, int64_t region_width, int64_t out_height, int64_t out_width) {
  for (int denom : {8, 4, 2})
    if (region_height >= denom * out_height && region_width >= denom * out_width) return denom;
  return 1;
}

EncodedImage::EncodedImage(std::vector<uint8_t> bytes, std::string name)
    : bytes_(std::make_shared<const std::vector<uint8_t>>(std::move(bytes))),
      name_(std::move(name)),
      format_(sniff_image_format(bytes_->data(), bytes_->size())) {}

ImageSize EncodedImage::size() const {
  if (!size_) {
    if (format_ == ImageFormat::jpeg) {
      const detail::JpegHeader header = detail::read_jpeg_header(bytes_->data(), bytes_->size(), name_);
      plain_color_jpeg_ = header.plain_color();
      size_ = header.size;
    } else {
      decoded_ = decode_image(*bytes_, name_);
      size_ = ImageSize{decoded_.size(0), decoded_.size(1)};
    }
  }
  return *size_;
}

bool EncodedImage::is_plain_color_jpeg() const {
  if (format_ != ImageFormat::jpeg) return false;
  (void)size();
  return plain_color_jpeg_;
}

Tensor EncodedImage::decode() const {
  if (decoded_.defined()) return decoded_;
  return decode_image(*bytes_, name_);
}

DecodedRegion EncodedImage::decode_region(const RegionRequest& request) const {
  const auto [h, w] = size();
  const CropBox& r = request.region;
  HEARTH_CHECK(
      r.top >= 0 && r.left >= 0 && r.height >= 1 && r.width >= 1 && r.top + r.height <= h && r.left + r.width <= w,
      ValueError, "[image] ", name_, ": the region (top ", r.top, ", left ", r.left, ", ", r.height, "x", r.width,
      ") is not inside the ", h, "x", w, " image");
  HEARTH_CHECK(request.out_height >= 1 && request.out_width >= 1, ValueError, "[image] ", name_,
               ": the output size must be positive, got ", request.out_height, "x", request.out_width);
  const auto whole_pixels = [&](Tensor pixels) {
    return DecodedRegion{std::move(pixels),
                         SubpixelBox{static_cast<double>(r.top), static_cast<double>(r.left),
                                     static_cast<double>(r.height), static_cast<double>(r.width)},
                         1};
  };
  if (format_ != ImageFormat::jpeg || !fast_image_decode_enabled()) return whole_pixels(decode());

  const int denom = choose_scale_denominator(r.height, r.width, request.out_height, request.out_width);
  // The rows and columns of the reduced image that the region touches.
  const CropBox window{r.top / denom, r.left / denom, (r.top + r.height + denom - 1) / denom - r.top / denom,
                       (r.left + r.width + denom - 1) / denom - r.left / denom};
  Tensor pixels = detail::decode_jpeg_window(bytes_->data(), bytes_->size(), name_, denom, &window);
  const double d = denom;
  // Exact: the offsets are multiples of 1/denom.
  return DecodedRegion{std::move(pixels),
                       SubpixelBox{static_cast<double>(r.top) / d - static_cast<double>(window.top),
                                   static_cast<double>(r.left) / d - static_cast<double>(window.left),
                                   static_cast<double>(r.height) / d, static_cast<double>(r.width) / d},
                       denom};
}

}  // namespace hearth::data
