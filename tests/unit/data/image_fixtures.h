// The image set of tests/fixtures/images (written by make_images.py) and its
// expected.json: what PIL decodes for each file, and PIL's resizes.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "hearth/core/tensor.h"

namespace hearth::testing {

inline std::string image_fixtures_dir() { return std::string(HEARTH_FIXTURES_DIR) + "/images"; }
inline std::string pets_dir() { return image_fixtures_dir() + "/pets"; }

inline const nlohmann::json& image_expectations() {
  static const nlohmann::json j = [] {
    std::ifstream in(image_fixtures_dir() + "/expected.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

// FNV-1a 64 of a contiguous tensor's bytes, as make_images.py hashes pixels.
inline std::string fnv1a64_hex(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  uint64_t h = 0xCBF29CE484222325ULL;
  for (size_t i = 0; i < t.nbytes(); ++i) {
    h ^= p[i];
    h *= 0x100000001B3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace hearth::testing
