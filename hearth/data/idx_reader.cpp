#include "hearth/data/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"

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

std::vector<uint8_t> read_maybe_gzipped(const std::string& path) { return read_maybe_gzipped(path, SIZE_MAX); }

std::vector<uint8_t> read_maybe_gzipped(const std::string& path, size_t limit) {
  io::check_regular_file(path, "[idx]");
  // gzread passes bytes through unchanged when the file is not gzipped.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) HEARTH_THROW(IoError, "[idx] ", path, ": cannot open: ", std::strerror(errno ? errno : ENOMEM));
  gzbuffer(f, 1 << 17);
  std::vector<uint8_t> bytes;
  constexpr size_t kChunk = 1 << 20;
  while (bytes.size() < limit) {
    const size_t old = bytes.size(), want = std::min(kChunk, limit - old);
    bytes.resize(old + want);
    int n = gzread(f, bytes.data() + old, static_cast<unsigned>(want));
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(f, &code);
      gzclose(f);
      HEARTH_THROW(IoError, "[idx] ", path, ": cannot decompress: ", msg);
    }
    bytes.resize(old + static_cast<size_t>(n));
    if (static_cast<size_t>(n) < want) break;
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

Tensor read_idx(const std::string& path, int64_t max_items) {
  // The header first: 4 bytes, then 4 per dimension.
  std::vector<uint8_t> head = read_maybe_gzipped(path, 4);
  if (head.size() < 4 || head[0] != 0 || head[1] != 0) return parse_idx(head.data(), head.size(), path);
  const size_t header = 4 + 4 * size_t{head[3]};
  head = read_maybe_gzipped(path, header);
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes)
    if (t.code == head[2]) type = &t;
  if (head.size() < header || !type || head[3] == 0) return parse_idx(head.data(), head.size(), path);

  // Bytes of one item (the dimensions after the first) and of the whole file.
  uint64_t item = type->bytes, total = 0;
  bool overflow = false;
  for (size_t d = 1; d < head[3]; ++d)
    overflow |= __builtin_mul_overflow(item, uint64_t{load_be32(head.data() + 4 + 4 * d)}, &item);
  const uint64_t items = load_be32(head.data() + 4);
  overflow |= __builtin_mul_overflow(item, items, &total);
  overflow |= __builtin_add_overflow(total, uint64_t{header}, &total);

  // The file must be able to hold what the header claims before any of it is
  // decompressed: deflate shrinks data at most 1032-fold, and a gzip file's
  // last 4 bytes are its uncompressed length modulo 2^32.
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  bool gzipped = false;
  if (std::FILE* raw = std::fopen(path.c_str(), "rb")) {
    uint8_t magic[2] = {0, 0}, trailer[4] = {0, 0, 0, 0};
    gzipped = std::fread(magic, 1, 2, raw) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    const bool trailer_read = !ec && file_size >= 18 && std::fseek(raw, -4, SEEK_END) == 0 &&
                              std::fread(trailer, 1, 4, raw) == 4;
    std::fclose(raw);
    if (gzipped && trailer_read) {
      const uint32_t isize = uint32_t{trailer[0]} | uint32_t{trailer[1]} << 8 | uint32_t{trailer[2]} << 16 |
                             uint32_t{trailer[3]} << 24;
      if (overflow || total / 1032 > file_size)
        HEARTH_THROW(IoError, "[idx] ", path, ": the header claims ", items, " items of ", item,
                     " bytes, more than a gzip file of ", file_size, " bytes can hold");
      if (static_cast<uint32_t>(total) != isize)
        HEARTH_THROW(IoError, "[idx] ", path, ": the header claims ", total,
                     " bytes uncompressed, but the gzip trailer says ", isize, " (modulo 2^32; truncated?)");
    }
  }
  if (overflow) return parse_idx(head.data(), head.size(), path);
  if (!ec && !gzipped && file_size > total) {
    // A plain file longer than its header claims: say so without reading it.
    Shape shape(head[3]);
    for (size_t d = 0; d < shape.size(); ++d) shape[d] = load_be32(head.data() + 4 + 4 * d);
    HEARTH_THROW(IoError, "[idx] ", path, ": shape ", shape_str(shape), " of ", type->name, " needs ", total, " bytes (",
                 header, " header + ", total - header, " data), but the file has ", file_size, " (trailing bytes)");
  }
  if (max_items < 0 || static_cast<uint64_t>(max_items) >= items) {
    // Everything: one byte more than the header claims shows trailing bytes.
    std::vector<uint8_t> bytes = read_maybe_gzipped(path, total + 1);
    return parse_idx(bytes.data(), bytes.size(), path);
  }
  // The first max_items items only, parsed as a file that holds just those.
  const uint64_t wanted = header + item * static_cast<uint64_t>(max_items);
  std::vector<uint8_t> bytes = read_maybe_gzipped(path, wanted);
  if (bytes.size() < wanted)
    HEARTH_THROW(IoError, "[idx] ", path, ": ends after ", bytes.size(), " bytes, but the header claims ", total,
                 " (truncated?)");
  const auto n = static_cast<uint32_t>(max_items);
  bytes[4] = static_cast<uint8_t>(n >> 24);
  bytes[5] = static_cast<uint8_t>(n >> 16);
  bytes[6] = static_cast<uint8_t>(n >> 8);
  bytes[7] = static_cast<uint8_t>(n);
  return parse_idx(bytes.data(), bytes.size(), path);
}

}  // namespace hearth::data
