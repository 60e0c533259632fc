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
// What one decode may produce: 64 Mpx (192 MiB of RGB), more than any camera's
// photograph. A JPEG larger than this is still read at a reduced scale or in
// part when that is all a transform needs; a PNG (which has no reduced
// decode) larger than this, or a JPEG whose decode would be, is refused, and
// a data set skips it like a corrupt image. A 260 KB PNG can claim 16384 x
// 16384 pixels: 805 MB decoded.
inline constexpr uint64_t kMaxDecodedPixels = uint64_t{1} << 26;

// Progressive JPEGs with more scans than this are refused: every scan is a
// pass over the whole image, so thousands of tiny ones make a small file
// decode for minutes.
inline constexpr int kMaxJpegScans = 64;

Tensor decode_jpeg(const uint8_t* data, size_t size, const std::string& name);

// The JPEG's height and width from its header alone (no pixels decoded).
ImageSize read_jpeg_size(const uint8_t* data, size_t size, const std::string& name);

// What the header says about how the JPEG is coded, beyond its size.
struct JpegHeader {
  ImageSize size;
  int components = 0;
  bool ycbcr = false;        // three components coded as YCbCr (not RGB, CMYK or YCCK)
  bool sequential = false;   // baseline or extended sequential DCT, not progressive
  bool huffman = false;      // not arithmetic coded
  int precision = 0;         // bits per sample
  // What most decoders take: 8-bit sequential Huffman YCbCr, the plain
  // colour photograph (not grey, CMYK, progressive or 12-bit).
  bool plain_color() const { return components == 3 && ycbcr && sequential && huffman && precision == 8; }
};
JpegHeader read_jpeg_header(const uint8_t* data, size_t size, const std::string& name);

// The JPEG decoded at scale 1/denom (1, 2, 4 or 8: libjpeg's DCT-domain
// reduction), only the rows and columns of `window` (in the scaled image's
// pixels; nullptr: all of it). The pixels are those of a full decode at that
// scale cut to the window. ValueError when the window is not inside the
// scaled image (ceil(H / denom) x ceil(W / denom)).
Tensor decode_jpeg_window(const uint8_t* data, size_t size, const std::string& name, int denom, const CropBox* window);
Tensor decode_png(const uint8_t* data, size_t size, const std::string& name);

}  // namespace hearth::data::detail
