#include "bench/synthetic_jpegs.h"

#include <jpeglib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
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

namespace {

// Image i: a few low-frequency waves per channel, then pixel noise, from a
// generator seeded by i alone, so the files do not depend on the threads.
void write_one(const std::string& path, int64_t i, int width, int height) {
  std::mt19937 rng(static_cast<uint32_t>(7 + i));
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::normal_distribution<float> noise(0.f, 12.f);
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
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
  write_jpeg(path, rgb, width, height);
}

}  // namespace

void write_synthetic_jpegs(const std::string& dir, int64_t count, int width, int height, int classes) {
  for (int k = 0; k < classes; ++k) std::filesystem::create_directories(dir + "/class" + std::to_string(k));
  // Tens of thousands of files take minutes on one core: every core writes.
  const int64_t threads = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(count, 1));
  std::atomic<int64_t> next{0};
  std::mutex mu;
  std::string failure;
  auto work = [&] {
    for (int64_t i = next++; i < count; i = next++) {
      try {
        write_one(dir + "/class" + std::to_string(i % classes) + "/img" + std::to_string(i) + ".jpg", i, width, height);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (failure.empty()) failure = e.what();
        next = count;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (!failure.empty()) throw std::runtime_error(failure);
}

}  // namespace hearth::bench
