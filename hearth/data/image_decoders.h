// The per-format decoders behind hearth/data/image_io.h. Each fills a fresh
// uint8 [H, W, 3] tensor or throws IoError "[image] <name>: <problem>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hearth/core/tensor.h"
#include "hearth/data/image_resize.h"

namespace hearth::data::detail {

// Images larger than this many pixels are refused rather than decoded: a
// corrupt or hostile header can claim gigapixels and exhaust memory.
inline constexpr uint64_t kMaxImagePixels = uint64_t{1} << 28;

Tensor decode_jpeg(const uint8_t* data, size_t size, const std::string& name);

// The JPEG's height and width from its header alone (no pixels decoded).
ImageSize read_jpeg_size(const uint8_t* data, size_t size, const std::string& name);

// The JPEG decoded at scale 1/denom (1, 2, 4 or 8: libjpeg's DCT-domain
// reduction), only the rows and columns of `window` (in the scaled image's
// pixels; nullptr: all of it). The pixels are those of a full decode at that
// scale cut to the window. ValueError when the window is not inside the
// scaled image (ceil(H / denom) x ceil(W / denom)).
Tensor decode_jpeg_window(const uint8_t* data, size_t size, const std::string& name, int denom, const CropBox* window);
Tensor decode_png(const uint8_t* data, size_t size, const std::string& name);

}  // namespace hearth::data::detail
