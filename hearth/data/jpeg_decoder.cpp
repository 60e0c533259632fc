// JPEG through libjpeg's classic API. libjpeg reports errors by calling a
// function that must not return; it longjmps back to the stage that was
// running. Each stage below sets its own jump point and keeps no object with a
// destructor in its frame (longjmp would skip it); the tensor is allocated
// between stages, in ordinary C++.
#include <csetjmp>
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
  bool cmyk = false;
  bool inverted = false;  // Adobe CMYK stores 255 - value
};

bool read_header(JpegDecoder& d, const uint8_t* data, size_t size) {
  if (setjmp(d.err.jump)) return false;
  jpeg_create_decompress(&d.cinfo);
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

// `row` holds one CMYK scanline when the image is CMYK.
bool read_pixels(JpegDecoder& d, uint8_t* out, uint8_t* row) {
  if (setjmp(d.err.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  const size_t width = d.cinfo.output_width;
  while (d.cinfo.output_scanline < d.cinfo.output_height) {
    uint8_t* dst = out + static_cast<size_t>(d.cinfo.output_scanline) * width * 3;
    JSAMPROW target = d.cmyk ? row : dst;
    jpeg_read_scanlines(&d.cinfo, &target, 1);
    if (!d.cmyk) continue;
    for (size_t x = 0; x < width; ++x) {
      const uint8_t* p = row + 4 * x;
      for (int c = 0; c < 3; ++c) dst[3 * x + c] = cmyk_channel(p[c], p[3], d.inverted);
    }
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

}  // namespace

Tensor decode_jpeg(const uint8_t* data, size_t size, const std::string& name) {
  JpegDecoder d{};
  d.cinfo.err = jpeg_std_error(&d.err.pub);
  d.err.pub.error_exit = on_jpeg_error;
  d.err.pub.emit_message = on_jpeg_message;
  DecoderGuard guard{d};
  if (!read_header(d, data, size)) HEARTH_THROW(IoError, "[image] ", name, ": corrupt JPEG: ", d.err.message);
  const uint64_t width = d.cinfo.image_width, height = d.cinfo.image_height;
  HEARTH_CHECK(width * height <= kMaxImagePixels, IoError, "[image] ", name, ": the JPEG claims ", width, "x", height,
               " pixels, more than the ", kMaxImagePixels, " hearth decodes");
  Tensor out = Tensor::empty({static_cast<int64_t>(height), static_cast<int64_t>(width), 3}, DType::uint8);
  std::vector<uint8_t> cmyk_row(d.cmyk ? width * 4 : 0);
  if (!read_pixels(d, out.data<uint8_t>(), cmyk_row.data())) {
    bool truncated = d.err.pub.msg_code == JWRN_JPEG_EOF;
    HEARTH_THROW(IoError, "[image] ", name,
                 truncated ? ": truncated JPEG (the data ends before the image does)" : ": corrupt JPEG: ",
                 truncated ? "" : d.err.message);
  }
  return out;
}

}  // namespace hearth::data::detail
