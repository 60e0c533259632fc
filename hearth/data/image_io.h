// Reading images: JPEG (libjpeg-turbo) and PNG (libpng), decoded to uint8
// [H, W, 3] RGB tensors, the layout PIL's Image.convert("RGB") gives.
//
// The format is recognised from the first bytes, never from the file name:
// image collections hold PNGs named .jpg. Conversions, chosen to match what
// torchvision's PIL loader returns:
//   - grey JPEGs and PNGs are repeated into three channels;
//   - CMYK/YCCK JPEGs (Adobe's inverted CMYK) become RGB by R = C·K/255 (on the
//     inverted values), the usual naive conversion without a colour profile;
//   - palette PNGs are expanded; an alpha channel or tRNS transparency is
//     dropped, not composited (as PIL's convert("RGB") does);
//   - 16-bit PNGs keep their high byte. (PIL clips 16-bit grey to 255 instead;
//     hearth scales it like 16-bit colour.)
// JPEG decoding uses libjpeg's defaults (accurate integer DCT, fancy
// upsampling), which are PIL's too, so pixels equal PIL's exactly.
//
// Every failure is an IoError "[image] <path>: <what is wrong>": unreadable,
// empty, not JPEG or PNG (the format named when it is a known one, e.g. GIF),
// corrupt, or truncated (a JPEG that ends early is an error, not a grey-filled
// image, as PIL treats it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::data {

enum class ImageFormat { unknown, jpeg, png };

// "JPEG", "PNG", or "unknown".
const char* image_format_name(ImageFormat format);

// The format from a file's first bytes (8 are enough).
ImageFormat sniff_image_format(const uint8_t* data, size_t size);

// What the first bytes are when they are not JPEG or PNG but another known
// format ("GIF", "BMP", "WebP", "TIFF"), else "".
std::string other_image_format_name(const uint8_t* data, size_t size);

// Decodes an encoded image held in memory. `name` (a path) names it in errors.
Tensor decode_image(const uint8_t* data, size_t size, const std::string& name);
Tensor decode_image(const std::vector<uint8_t>& bytes, const std::string& name);

// Reads and decodes one file.
Tensor read_image(const std::string& path);

// Reads the first bytes of a file and returns its format, without decoding.
// Throws IoError naming the path when the file cannot be read, is empty, or
// is not a JPEG or PNG.
ImageFormat probe_image_file(const std::string& path);

// The whole file (IoError naming the path when it cannot be read).
std::vector<uint8_t> read_file_bytes(const std::string& path);

}  // namespace hearth::data
