// PNG through libpng's classic API (rather than the simplified one, which
// applies gamma correction and composites alpha, where PIL's convert("RGB")
// does neither). libpng reports errors by longjmp; as in jpeg_decoder.cpp,
// each stage sets its own jump point and keeps no object with a destructor in
// its frame.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "hearth/core/errors.h"
#include "hearth/data/image_decoders.h"

namespace hearth::data::detail {
namespace {

struct PngDecoder {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  char message[256] = {};
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* d = static_cast<PngDecoder*>(png_get_error_ptr(png));
  std::snprintf(d->message, sizeof d->message, "%s", message);
  png_longjmp(png, 1);
}

// Warnings (unknown chunks, a bad sRGB profile) do not stop PIL either.
void on_png_warning(png_structp, png_const_charp) {}

void read_from_memory(png_structp png, png_bytep out, size_t n) {
  auto* d = static_cast<PngDecoder*>(png_get_io_ptr(png));
  if (n > d->size - d->pos) png_error(png, "truncated PNG (the data ends before the image does)");
  std::memcpy(out, d->data + d->pos, n);
  d->pos += n;
}

// Reads the header and sets up the conversions to 8-bit RGB.
bool read_header(PngDecoder& d, uint32_t* width, uint32_t* height) {
  if (setjmp(png_jmpbuf(d.png))) return false;
  png_set_read_fn(d.png, &d, read_from_memory);
  png_read_info(d.png, d.info);
  *width = png_get_image_width(d.png, d.info);
  *height = png_get_image_height(d.png, d.info);
  const int color = png_get_color_type(d.png, d.info);
  const int depth = png_get_bit_depth(d.png, d.info);
  if (depth == 16) png_set_strip_16(d.png);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(d.png);
  if ((color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) && depth < 8)
    png_set_expand_gray_1_2_4_to_8(d.png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(d.png);
  // Drops an alpha channel, including the one palette expansion makes from tRNS.
  png_set_strip_alpha(d.png);
  png_set_interlace_handling(d.png);
  png_read_update_info(d.png, d.info);
  return true;
}

bool read_pixels(PngDecoder& d, png_bytepp rows) {
  if (setjmp(png_jmpbuf(d.png))) return false;
  if (png_get_rowbytes(d.png, d.info) != static_cast<size_t>(png_get_image_width(d.png, d.info)) * 3)
    png_error(d.png, "unexpected row size after conversion to 8-bit RGB");
  png_read_image(d.png, rows);
  return true;
}

struct DecoderGuard {
  PngDecoder& d;
  ~DecoderGuard() { png_destroy_read_struct(&d.png, d.info ? &d.info : nullptr, nullptr); }
};

}  // namespace

Tensor decode_png(const uint8_t* data, size_t size, const std::string& name) {
  PngDecoder d;
  d.data = data;
  d.size = size;
  d.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &d, on_png_error, on_png_warning);
  HEARTH_CHECK(d.png != nullptr, IoError, "[image] ", name, ": libpng could not start (out of memory?)");
  DecoderGuard guard{d};
  d.info = png_create_info_struct(d.png);
  HEARTH_CHECK(d.info != nullptr, IoError, "[image] ", name, ": libpng could not start (out of memory?)");
  uint32_t width = 0, height = 0;
  if (!read_header(d, &width, &height)) HEARTH_THROW(IoError, "[image] ", name, ": corrupt PNG: ", d.message);
  HEARTH_CHECK(uint64_t{width} * height <= kMaxDecodedPixels, IoError, "[image] ", name, ": the PNG claims ", width,
               "x", height, " pixels, more than the ", kMaxDecodedPixels, " hearth decodes at once");
  Tensor out = Tensor::empty({static_cast<int64_t>(height), static_cast<int64_t>(width), 3}, DType::uint8);
  std::vector<png_bytep> rows(height);
  uint8_t* base = out.data<uint8_t>();
  for (uint32_t y = 0; y < height; ++y) rows[y] = base + static_cast<size_t>(y) * width * 3;
  if (!read_pixels(d, rows.data())) {
    bool truncated = std::strncmp(d.message, "truncated", 9) == 0;
    HEARTH_THROW(IoError, "[image] ", name, truncated ? ": " : ": corrupt PNG: ", d.message);
  }
  return out;
}

}  // namespace hearth::data::detail
