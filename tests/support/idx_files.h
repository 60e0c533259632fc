// Builds small IDX files (the MNIST format) for tests, raw or gzipped.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hearth::testing {

// The IDX header for `type_code` and `dims`, followed by `payload` (already big-endian).
inline std::string idx_bytes(uint8_t type_code, const std::vector<uint32_t>& dims, const std::string& payload) {
  std::string s = {'\0', '\0', static_cast<char>(type_code), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    s += static_cast<char>(d >> 24);
    s += static_cast<char>(d >> 16);
    s += static_cast<char>(d >> 8);
    s += static_cast<char>(d);
  }
  return s + payload;
}

inline void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot create " + path);
  if (!bytes.empty()) gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

}  // namespace hearth::testing
