// The IDX format of MNIST and Fashion-MNIST: two zero bytes, a type code, the
// number of dimensions, each dimension as a big-endian uint32, then the values
// big-endian in row-major order. Files may be gzipped (detected by their magic
// bytes, not their name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::data {

// Reads a whole IDX file into a contiguous CPU tensor: 0x08 (unsigned byte) ->
// uint8, 0x09 (signed byte), 0x0B (short) and 0x0C (int) -> int32 (hearth has
// no int8/int16), 0x0D -> float32, 0x0E -> float64. Throws IoError
// "[idx] <path>: <problem>" naming what was expected: a bad magic number,
// unknown type code, or a size that does not match the file's length.
// With max_items >= 0, only the first max_items entries along the first
// dimension are read (and decompressed). Before reading the data, the size the
// header claims is checked against the file (a gzip file's length and trailer).
Tensor read_idx(const std::string& path, int64_t max_items = -1);

// Parses IDX bytes already in memory; `source` names them in errors.
Tensor parse_idx(const uint8_t* data, size_t size, const std::string& source);

// The file's bytes, gunzipped when they start with the gzip magic.
std::vector<uint8_t> read_maybe_gzipped(const std::string& path);
// At most `limit` bytes of them.
std::vector<uint8_t> read_maybe_gzipped(const std::string& path, size_t limit);

}  // namespace hearth::data
