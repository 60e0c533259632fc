#include "bench/synthetic_jpegs.h"

#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <vector>

namespace hearth::bench {
namespace {

void write_jpeg(const std::string& path, const std::vector<uint8_t>& rgb, int width, int height) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(rgb.data() + static_cast<size_t>(c.next_scanline) * width * 3);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::fclose(f);
}

}  // namespace

void write_synthetic_jpegs(const std::string& dir, int64_t count, int width, int height, int classes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::normal_distribution<float> noise(0.f, 12.f);
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (int k = 0; k < classes; ++k) std::filesystem::create_directories(dir + "/class" + std::to_string(k));
  for (int64_t i = 0; i < count; ++i) {
    // A few low-frequency waves per channel, then pixel noise.
    float fx[3], fy[3], ph[3], base[3];
    for (int ch = 0; ch < 3; ++ch) {
      fx[ch] = 2.f + 10.f * u(rng), fy[ch] = 2.f + 10.f * u(rng), ph[ch] = 6.28f * u(rng), base[ch] = 60 + 120 * u(rng);
    }
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        for (int ch = 0; ch < 3; ++ch) {
          const float v = base[ch] + 50.f * std::sin(fx[ch] * x / width + fy[ch] * y / height + ph[ch]) + noise(rng);
          rgb[(static_cast<size_t>(y) * width + x) * 3 + ch] = static_cast<uint8_t>(std::clamp(v, 0.f, 255.f));
        }
    write_jpeg(dir + "/class" + std::to_string(i % classes) + "/img" + std::to_string(i) + ".jpg", rgb, width, height);
  }
}

}  // namespace hearth::bench
