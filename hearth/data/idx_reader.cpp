#include "hearth/data/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "hearth/core/errors.h"

namespace hearth::data {
namespace {

struct IdxType {
  uint8_t code;
  const char* name;
  size_t bytes;  // per value in the file
  DType dtype;   // in hearth
};
constexpr IdxType kTypes[] = {
    {0x08, "unsigned byte", 1, DType::uint8}, {0x09, "signed byte", 1, DType::int32},
    {0x0B, "short", 2, DType::int32},         {0x0C, "int", 4, DType::int32},
    {0x0D, "float", 4, DType::float32},       {0x0E, "double", 8, DType::float64},
};

uint32_t load_be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 |
         p[3];
}
uint64_t load_be64(const uint8_t* p) { return static_cast<uint64_t>(load_be32(p)) << 32 | load_be32(p + 4); }

std::string hex_bytes(const uint8_t* p, size_t n) {
  std::string s = "0x";
  char buf[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02X", p[i]);
    s += buf;
  }
  return s;
}

// Converts the big-endian values to host order.
void decode(const IdxType& type, const uint8_t* src, int64_t n, void* out) {
  switch (type.code) {
    case 0x08:
      std::memcpy(out, src, static_cast<size_t>(n));
      break;
    case 0x09: {
      auto* dst = static_cast<int32_t*>(out);
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int8_t>(src[i]);
      break;
    }
    case 0x0B: {
      auto* dst = static_cast<int32_t*>(out);
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int16_t>(src[2 * i] << 8 | src[2 * i + 1]);
      break;
    }
    case 0x0C:
    case 0x0D: {
      auto* dst = static_cast<uint32_t*>(out);
      for (int64_t i = 0; i < n; ++i) dst[i] = load_be32(src + 4 * i);
      break;
    }
    case 0x0E: {
      auto* dst = static_cast<uint64_t*>(out);
      for (int64_t i = 0; i < n; ++i) dst[i] = load_be64(src + 8 * i);
      break;
    }
  }
}

}  // namespace

std::vector<uint8_t> read_maybe_gzipped(const std::string& path) {
  // gzread passes bytes through unchanged when the file is not gzipped.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) HEARTH_THROW(IoError, "[idx] ", path, ": cannot open: ", std::strerror(errno ? errno : ENOMEM));
  gzbuffer(f, 1 << 17);
  std::vector<uint8_t> bytes;
  constexpr size_t kChunk = 1 << 20;
  for (;;) {
    size_t old = bytes.size();
    bytes.resize(old + kChunk);
    int n = gzread(f, bytes.data() + old, static_cast<unsigned>(kChunk));
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(f, &code);
      gzclose(f);
      HEARTH_THROW(IoError, "[idx] ", path, ": cannot decompress: ", msg);
    }
    bytes.resize(old + static_cast<size_t>(n));
    if (static_cast<size_t>(n) < kChunk) break;
  }
  int code = Z_OK;
  std::string msg = gzerror(f, &code);
  gzclose(f);
  // A truncated gzip stream reads as a short file with Z_BUF_ERROR set.
  if (code != Z_OK) HEARTH_THROW(IoError, "[idx] ", path, ": cannot decompress: ", msg);
  return bytes;
}

Tensor parse_idx(const uint8_t* data, size_t size, const std::string& source) {
  auto fail = [&](const auto&... args) { HEARTH_THROW(IoError, "[idx] ", source, ": ", args...); };
  if (size < 4) fail("file is ", size, " bytes, too short for the 4-byte IDX magic number");
  if (data[0] != 0 || data[1] != 0)
    fail("bad magic number ", hex_bytes(data, 4),
         ": expected two zero bytes, a type code and a dimension count (is it an IDX file?)");
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes)
    if (t.code == data[2]) type = &t;
  if (!type)
    fail("unknown type code ", hex_bytes(data + 2, 1),
         " (expected 0x08 unsigned byte, 0x09 signed byte, 0x0B short, 0x0C int, 0x0D float or 0x0E double)");
  size_t ndim = data[3];
  if (ndim == 0) fail("the header declares 0 dimensions (expected at least 1)");
  size_t header = 4 + 4 * ndim;
  if (size < header) fail("the header needs ", header, " bytes for ", ndim, " dimensions, but the file has ", size);

  Shape shape(ndim);
  uint64_t numel = 1;
  // The product of the dimensions with zeros counted as ones: a tensor's
  // strides and element count are int64 even when it holds no element.
  uint64_t extent = 1;
  bool overflow = false, extent_overflow = false;
  for (size_t d = 0; d < ndim; ++d) {
    shape[d] = load_be32(data + 4 + 4 * d);
    overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(shape[d]), &numel);
    extent_overflow |= __builtin_mul_overflow(extent, std::max<uint64_t>(static_cast<uint64_t>(shape[d]), 1), &extent);
  }
  uint64_t payload = 0;
  overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(type->bytes), &payload);
  if (overflow || payload > size) payload = UINT64_MAX;
  uint64_t expected = payload == UINT64_MAX ? UINT64_MAX : header + payload;
  if (expected != size) {
    if (expected == UINT64_MAX)
      fail("shape ", shape_str(shape), " of ", type->name, " needs more bytes than the file's ", size);
    fail("shape ", shape_str(shape), " of ", type->name, " needs ", expected, " bytes (", header, " header + ", payload,
         " data), but the file has ", size, size < expected ? " (truncated?)" : " (trailing bytes)");
  }
  if (extent_overflow || extent > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail("shape ", shape_str(shape), ": the product of its dimensions does not fit in 64 bits");
  Tensor out = Tensor::empty(shape, type->dtype);
  if (numel > 0) decode(*type, data + header, static_cast<int64_t>(numel), out.data_ptr());
  return out;
}

Tensor read_idx(const std::string& path) {
  std::vector<uint8_t> bytes = read_maybe_gzipped(path);
  return parse_idx(bytes.data(), bytes.size(), path);
}

}  // namespace hearth::data
