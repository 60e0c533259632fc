// The per-format decoders behind hearth/data/image_io.h. Each fills a fresh
// uint8 [H, W, 3] tensor or throws IoError "[image] <name>: <problem>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hearth/core/tensor.h"

namespace hearth::data::detail {

// Images larger than this many pixels are refused rather than decoded: a
// corrupt or hostile header can claim gigapixels and exhaust memory.
inline constexpr uint64_t kMaxImagePixels = uint64_t{1} << 28;

Tensor decode_jpeg(const uint8_t* data, size_t size, const std::string& name);
Tensor decode_png(const uint8_t* data, size_t size, const std::string& name);

}  // namespace hearth::data::detail
