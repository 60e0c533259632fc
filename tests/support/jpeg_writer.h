// JPEGs written by the tests themselves, in every coding the decoders meet:
// chroma subsamplings, grey, progressive. The pixels stand in for a
// photograph: smooth colour waves plus pixel noise, so the encoder keeps real
// detail in every block.
#pragma once

// jpeglib.h uses size_t and FILE without including their headers.
// clang-format off
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

namespace hearth::testing {

struct JpegOptions {
  int h_samp = 2, v_samp = 2;  // the luma's sampling factors: 2x2 is 4:2:0
  bool grey = false;
  bool progressive = false;
  int quality = 90;
};

inline std::vector<uint8_t> photo_like_rgb(int width, int height, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::normal_distribution<float> noise(0.f, 10.f);
  float fx[3], fy[3], ph[3], base[3];
  for (int c = 0; c < 3; ++c)
    fx[c] = 2 + 10 * u(rng), fy[c] = 2 + 10 * u(rng), ph[c] = 6.28f * u(rng), base[c] = 60 + 120 * u(rng);
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        float v = base[c] + 50 * std::sin(fx[c] * x / width + fy[c] * y / height + ph[c]) + noise(rng);
        rgb[(static_cast<size_t>(y) * width + x) * 3 + c] = static_cast<uint8_t>(std::clamp(v, 0.f, 255.f));
      }
  return rgb;
}

// `rgb`: width x height pixels, R, G, B bytes each.
inline std::vector<uint8_t> encode_jpeg_pixels(const std::vector<uint8_t>& rgb, int width, int height,
                                               const JpegOptions& o) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buffer, &size);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, o.quality, TRUE);
  if (o.grey) jpeg_set_colorspace(&c, JCS_GRAYSCALE);
  c.comp_info[0].h_samp_factor = o.grey ? 1 : o.h_samp;
  c.comp_info[0].v_samp_factor = o.grey ? 1 : o.v_samp;
  if (o.progressive) jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(rgb.data() + static_cast<size_t>(c.next_scanline) * width * 3);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  std::vector<uint8_t> out(buffer, buffer + size);
  jpeg_destroy_compress(&c);
  std::free(buffer);
  return out;
}

inline std::vector<uint8_t> encode_jpeg(int width, int height, const JpegOptions& o, uint32_t seed = 1) {
  return encode_jpeg_pixels(photo_like_rgb(width, height, seed), width, height, o);
}

}  // namespace hearth::testing
