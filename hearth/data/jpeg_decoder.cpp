// JPEG through libjpeg's classic API. libjpeg reports errors by calling a
// function that must not return; it longjmps back to the stage that was
// running. Each stage below sets its own jump point and keeps no object with a
// destructor in its frame (longjmp would skip it); the tensor is allocated
// between stages, in ordinary C++.
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

// jpeglib.h uses size_t and FILE without including their headers.
// clang-format off
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include "hearth/core/errors.h"
#include "hearth/data/image_decoders.h"

namespace hearth::data::detail {
namespace {

struct JpegErrorManager {
  jpeg_error_mgr pub;  // first, so libjpeg's pointer to it is a pointer to this
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool over_limit = false;  // stopped by a limit of hearth's, not by libjpeg
};

[[noreturn]] void on_jpeg_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings are tolerated (as PIL does: "extraneous bytes before marker" is
// common in real files) except running out of data, where libjpeg would fill
// the rest of the image with grey and carry on.
void on_jpeg_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) on_jpeg_error(cinfo);
}

struct JpegDecoder {
  jpeg_decompress_struct cinfo;
  JpegErrorManager err;
  jpeg_progress_mgr progress;
  bool cmyk = false;
  bool inverted = false;  // Adobe CMYK stores 255 - value
};

// libjpeg calls this as it reads; a progressive JPEG is read scan by scan,
// each scan a pass over every coefficient of the image, so thousands of scans
// (a few bytes each) cost minutes. Past kMaxJpegScans decoding stops with an
// error, as libjpeg-turbo's own tools do past their scan limit.
void on_jpeg_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  const auto* dinfo = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (dinfo->input_scan_number <= kMaxJpegScans) return;
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  err->over_limit = true;
  std::snprintf(err->message, sizeof err->message,
                "a progressive JPEG of more than %d scans (real ones have about 10; each scan is another pass over "
                "the whole image)",
                kMaxJpegScans);
  std::longjmp(err->jump, 1);
}

bool read_header(JpegDecoder& d, const uint8_t* data, size_t size) {
  if (setjmp(d.err.jump)) return false;
  jpeg_create_decompress(&d.cinfo);  // clears cinfo.progress: set after it
  d.progress.progress_monitor = on_jpeg_progress;
  d.cinfo.progress = &d.progress;
  jpeg_mem_src(&d.cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&d.cinfo, TRUE);
  d.cmyk = d.cinfo.jpeg_color_space == JCS_CMYK || d.cinfo.jpeg_color_space == JCS_YCCK;
  d.inverted = d.cmyk && d.cinfo.saw_Adobe_marker;
  // libjpeg converts grey and YCbCr to RGB itself, but not CMYK.
  d.cinfo.out_color_space = d.cmyk ? JCS_CMYK : JCS_RGB;
  return true;
}

uint8_t cmyk_channel(unsigned c, unsigned k, bool inverted) {
  if (!inverted) {
    c = 255 - c;
    k = 255 - k;
  }
  return static_cast<uint8_t>((c * k + 127) / 255);
}

// One decoded scanline (RGB, or CMYK when the image is CMYK) to RGB at `dst`:
// `count` pixels from column `first`.
void convert_row(const JpegDecoder& d, const uint8_t* row, size_t first, size_t count, uint8_t* dst) {
  if (!d.cmyk) {
    std::memcpy(dst, row + first * 3, count * 3);
    return;
  }
  for (size_t x = 0; x < count; ++x) {
    const uint8_t* p = row + 4 * (first + x);
    for (int c = 0; c < 3; ++c) dst[3 * x + c] = cmyk_channel(p[c], p[3], d.inverted);
  }
}

// The output size at 1/denom scale, which libjpeg computes when decoding
// starts; known here before, so the tensor is allocated (and range-checked)
// between stages.
bool compute_output_size(JpegDecoder& d, int denom) {
  if (setjmp(d.err.jump)) return false;
  d.cinfo.scale_num = 1;
  d.cinfo.scale_denom = static_cast<unsigned>(denom);
  jpeg_calc_output_dimensions(&d.cinfo);
  return true;
}

// Decodes rows [window.top, + height) and columns [window.left, + width) of
// the image at the scale set by compute_output_size into `out` (packed RGB).
// `row` holds one full scanline of the output colour space. The window is
// widened by a pixel on each side before libjpeg sees it: a cropped
// scanline's edge pixels may be upsampled as if they were the image's edge,
// so they are decoded and dropped. With `to_the_end`, the rows below the
// window are decoded too (and dropped), so that data ending early is noticed
// exactly as a full decode notices it.
bool read_window(JpegDecoder& d, const CropBox& window, bool to_the_end, uint8_t* out, uint8_t* row) {
  if (setjmp(d.err.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  const auto full_width = static_cast<int64_t>(d.cinfo.output_width);
  const auto full_height = static_cast<int64_t>(d.cinfo.output_height);
  const int64_t x0 = std::max<int64_t>(window.left - 1, 0);
  const int64_t x1 = std::min<int64_t>(window.left + window.width + 1, full_width);
  auto xoffset = static_cast<JDIMENSION>(x0);
  auto xwidth = static_cast<JDIMENSION>(x1 - x0);
  // libjpeg moves xoffset left to an iMCU boundary and widens accordingly.
  if (x0 > 0 || x1 < full_width) jpeg_crop_scanline(&d.cinfo, &xoffset, &xwidth);
  const size_t first = static_cast<size_t>(window.left) - xoffset;
  const int64_t y0 = std::max<int64_t>(window.top - 1, 0);
  if (y0 > 0) jpeg_skip_scanlines(&d.cinfo, static_cast<JDIMENSION>(y0));
  const int64_t last = to_the_end ? full_height : window.top + window.height;
  while (static_cast<int64_t>(d.cinfo.output_scanline) < last) {
    const auto y = static_cast<int64_t>(d.cinfo.output_scanline);
    JSAMPROW target = row;
    jpeg_read_scanlines(&d.cinfo, &target, 1);
    if (y < window.top || y >= window.top + window.height) continue;
    convert_row(d, row, first, static_cast<size_t>(window.width),
                out + static_cast<size_t>(y - window.top) * static_cast<size_t>(window.width) * 3);
  }
  // jpeg_finish_decompress is skipped on purpose: it would read on to the end
  // marker, and a file whose pixels are complete but whose end marker is
  // missing still decodes (as PIL's loader allows).
  return true;
}

// Destroys the decoder whichever way the function leaves.
struct DecoderGuard {
  JpegDecoder& d;
  ~DecoderGuard() { jpeg_destroy_decompress(&d.cinfo); }
};

void start(JpegDecoder& d, const uint8_t* data, size_t size, const std::string& name) {
  d.cinfo.err = jpeg_std_error(&d.err.pub);
  d.err.pub.error_exit = on_jpeg_error;
  d.err.pub.emit_message = on_jpeg_message;

  if (!read_header(d, data, size)) HEARTH_THROW(IoError, "[image] ", name, ": corrupt JPEG: ", d.err.message);
  const uint64_t width = d.cinfo.image_width, height = d.cinfo.image_height;
  HEARTH_CHECK(width * height <= kMaxImagePixels, IoError, "[image] ", name, ": the JPEG claims ", width, "x", height,
               " pixels, more than the ", kMaxImagePixels, " hearth decodes");
}

[[noreturn]] void throw_decode_error(const JpegDecoder& d, const std::string& name) {
  if (d.err.over_limit) HEARTH_THROW(IoError, "[image] ", name, ": ", d.err.message);
  const bool truncated = d.err.pub.msg_code == JWRN_JPEG_EOF;
  HEARTH_THROW(IoError, "[image] ", name,
               truncated ? ": truncated JPEG (the data ends before the image does)" : ": corrupt JPEG: ",
               truncated ? "" : d.err.message);
}

// Whether the data ends with the end-of-image marker. Only then can decoding
// stop below a window without missing an error a full decode would raise:
// libjpeg fails on data that ends early, and a file ending with the marker
// does not end early (damage before it is only warned about).
bool ends_with_end_marker(const uint8_t* data, size_t size) {
  return size >= 2 && data[size - 2] == 0xFF && data[size - 1] == 0xD9;
}

}  // namespace

ImageSize read_jpeg_size(const uint8_t* data, size_t size, const std::string& name) {
  return read_jpeg_header(data, size, name).size;
}

JpegHeader read_jpeg_header(const uint8_t* data, size_t size, const std::string& name) {
  JpegDecoder d{};
  DecoderGuard guard{d};
  start(d, data, size, name);
  JpegHeader h;
  h.size = {static_cast<int64_t>(d.cinfo.image_height), static_cast<int64_t>(d.cinfo.image_width)};
  h.components = d.cinfo.num_components;
  h.ycbcr = d.cinfo.jpeg_color_space == JCS_YCbCr;
  // The libjpeg hearth builds with (libjpeg-turbo 2.x) refuses lossless
  // frames when it reads the header, so a frame read here is DCT coded.
  h.sequential = !d.cinfo.progressive_mode;
  h.huffman = !d.cinfo.arith_code;
  h.precision = d.cinfo.data_precision;
  return h;
}

Tensor decode_jpeg_window(const uint8_t* data, size_t size, const std::string& name, int denom, const CropBox* window) {
  HEARTH_CHECK(denom == 1 || denom == 2 || denom == 4 || denom == 8, ValueError, "[image] ", name, ": JPEG scale 1/",
               denom, " is not one of 1, 1/2, 1/4, 1/8");
  JpegDecoder d{};
  DecoderGuard guard{d};
  start(d, data, size, name);
  if (!compute_output_size(d, denom)) throw_decode_error(d, name);
  const auto width = static_cast<int64_t>(d.cinfo.output_width), height = static_cast<int64_t>(d.cinfo.output_height);
  const CropBox whole{0, 0, height, width};
  const CropBox& w = window ? *window : whole;
  HEARTH_CHECK(w.top >= 0 && w.left >= 0 && w.height >= 1 && w.width >= 1 && w.top + w.height <= height &&
                   w.left + w.width <= width,
               ValueError, "[image] ", name, ": the window (top ", w.top, ", left ", w.left, ", ", w.height, "x",
               w.width, ") is not inside the ", height, "x", width, " image at scale 1/", denom);
  HEARTH_CHECK(static_cast<uint64_t>(w.height) * static_cast<uint64_t>(w.width) <= kMaxDecodedPixels, IoError,
               "[image] ", name, ": decoding ", w.height, "x", w.width, " pixels of the JPEG is more than the ",
               kMaxDecodedPixels, " hearth decodes at once");
  Tensor out = Tensor::empty({w.height, w.width, 3}, DType::uint8);
  std::vector<uint8_t> row(static_cast<size_t>(width) * (d.cmyk ? 4 : 3));
  const bool to_the_end = w.top + w.height < height && !ends_with_end_marker(data, size);
  if (!read_window(d, w, to_the_end, out.data<uint8_t>(), row.data())) throw_decode_error(d, name);
  return out;
}

Tensor decode_jpeg(const uint8_t* data, size_t size, const std::string& name) {
  return decode_jpeg_window(data, size, name, 1, nullptr);
}

}  // namespace hearth::data::detail
