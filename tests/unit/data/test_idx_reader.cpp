#include <cstring>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/data/idx_reader.h"
#include "tests/support/idx_files.h"
#include "tests/support/temp_dir.h"

namespace hearth::data {
namespace {

using hearth::testing::idx_bytes;
using hearth::testing::TempDir;
using hearth::testing::write_gzip;

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

TEST(Idx, ReadsUnsignedBytesRawAndGzipped) {
  TempDir dir;
  std::string payload;
  for (int i = 0; i < 2 * 3 * 4; ++i) payload += static_cast<char>(i * 10);
  std::string bytes = idx_bytes(0x08, {2, 3, 4}, payload);
  std::string raw = dir.write("images-idx3-ubyte", bytes);
  std::string gz = dir.file("images-idx3-ubyte.gz");
  write_gzip(gz, bytes);
  std::string gz_named_plain = dir.file("gzipped-without-suffix");
  write_gzip(gz_named_plain, bytes);
  for (const std::string& path : {raw, gz, gz_named_plain}) {
    SCOPED_TRACE(path);
    Tensor t = read_idx(path);
    EXPECT_EQ(t.dtype(), DType::uint8);
    EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
    std::vector<uint8_t> v = t.to_vector<uint8_t>();
    for (int i = 0; i < 24; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], static_cast<uint8_t>(i * 10));
  }
}

TEST(Idx, DecodesEveryTypeFromBigEndian) {
  auto parse = [](const std::string& b) {
    return parse_idx(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "mem");
  };
  Tensor sb = parse(idx_bytes(0x09, {3}, std::string("\x01\xFF\x80", 3)));
  EXPECT_EQ(sb.dtype(), DType::int32);
  EXPECT_EQ(sb.to_vector<int32_t>(), (std::vector<int32_t>{1, -1, -128}));
  Tensor sh = parse(idx_bytes(0x0B, {2}, std::string("\x01\x02\xFF\xFE", 4)));
  EXPECT_EQ(sh.to_vector<int32_t>(), (std::vector<int32_t>{258, -2}));
  Tensor in = parse(idx_bytes(0x0C, {2}, be32(70000) + be32(static_cast<uint32_t>(-5))));
  EXPECT_EQ(in.to_vector<int32_t>(), (std::vector<int32_t>{70000, -5}));
  float f = -1.75f;
  uint32_t fb;
  std::memcpy(&fb, &f, 4);
  Tensor fl = parse(idx_bytes(0x0D, {1, 1}, be32(fb)));
  EXPECT_EQ(fl.dtype(), DType::float32);
  EXPECT_EQ(fl.shape(), (Shape{1, 1}));
  EXPECT_EQ(fl.item<float>(), -1.75f);
  double d = 3.125;
  uint64_t db;
  std::memcpy(&db, &d, 8);
  Tensor dd = parse(idx_bytes(0x0E, {1}, be32(static_cast<uint32_t>(db >> 32)) + be32(static_cast<uint32_t>(db))));
  EXPECT_EQ(dd.dtype(), DType::float64);
  EXPECT_EQ(dd.item<double>(), 3.125);
  EXPECT_EQ(parse(idx_bytes(0x08, {0, 28}, "")).shape(), (Shape{0, 28}));
}

TEST(Idx, ErrorsNameTheFileAndWhatWasExpected) {
  TempDir dir;
  struct Case {
    const char* name;
    std::string bytes;
    const char* expected;
  };
  std::vector<Case> cases = {
      {"short", std::string("\0\0", 2), "too short for the 4-byte IDX magic"},
      {"magic", std::string("PK\x03\x04", 4), "bad magic number 0x504B0304: expected two zero bytes"},
      {"type", idx_bytes(0x07, {1}, "x"), "unknown type code 0x07 (expected 0x08"},
      {"nodims", idx_bytes(0x08, {}, ""), "declares 0 dimensions"},
      {"header", std::string("\0\0\x08\x03\0\0\0\x05", 8),
       "the header needs 16 bytes for 3 dimensions, but the file has 8"},
      {"truncated", idx_bytes(0x08, {2, 3}, "abcde"),
       "shape [2, 3] of unsigned byte needs 18 bytes (12 header + 6 data), but the file has 17 (truncated?)"},
      {"trailing", idx_bytes(0x0C, {1}, "abcdXY"),
       "needs 12 bytes (8 header + 4 data), but the file has 14 (trailing bytes)"},
      {"huge", idx_bytes(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, ""), "needs more bytes than the file's"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.write(c.name, c.bytes);
    try {
      read_idx(path);
      ADD_FAILURE() << "expected IoError";
    } catch (const IoError& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind("[idx] " + path + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
    }
  }
}

// Found by fuzzing: a zero dimension makes the payload empty, but the other
// dimensions' product overflows the tensor's strides.
TEST(Idx, DimensionsWhoseProductOverflowsAreRefusedEvenWithAZero) {
  TempDir dir;
  std::string path = dir.write("zero-idx3-ubyte", idx_bytes(0x08, {4282664004u, 3166419963u, 0}, ""));
  try {
    read_idx(path);
    FAIL() << "the overflowing shape was accepted";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not fit in 64 bits"), std::string::npos) << e.what();
  }
}

TEST(Idx, TruncatedGzipAndMissingFilesAreIoErrors) {
  TempDir dir;
  std::string full = dir.file("full.gz");
  std::string payload(5000, '\x11');
  write_gzip(full, idx_bytes(0x08, {5000}, payload));
  std::string gz = hearth::testing::read_file(full);
  std::string cut = dir.write("cut.gz", gz.substr(0, gz.size() / 2));
  EXPECT_THROW(read_idx(cut), IoError);
  try {
    read_idx(dir.file("absent-idx1-ubyte"));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("absent-idx1-ubyte: cannot open"), std::string::npos) << e.what();
  }
}

TEST(Idx, OnlyTheItemsAskedForAreDecompressed) {
  TempDir dir;
  // 100,000 zero images: 78 MB once decompressed, 76 KB gzipped.
  std::string images = dir.file("bomb-idx3-ubyte.gz");
  std::string payload(size_t{100000} * 28 * 28, '\0');
  payload[28 * 28 + 5] = 7;
  write_gzip(images, idx_bytes(0x08, {100000, 28, 28}, payload));
  Tensor first = read_idx(images, 3);
  EXPECT_EQ(first.shape(), (Shape{3, 28, 28}));
  EXPECT_EQ(first.data<uint8_t>()[28 * 28 + 5], 7);
  EXPECT_EQ(read_idx(images, 0).shape(), (Shape{0, 28, 28}));
}

TEST(Idx, AHeaderClaimingMoreThanTheGzipFileCanHoldIsRefusedBeforeDecompressing) {
  TempDir dir;
  std::string path = dir.file("claims-idx3-ubyte.gz");
  write_gzip(path, idx_bytes(0x08, {10000000, 28, 28}, std::string(28 * 28 * 4, '\x01')));
  for (int64_t max_items : {int64_t{-1}, int64_t{100}}) {
    try {
      read_idx(path, max_items);
      FAIL() << "the claim was accepted";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": the header claims 10000000 items of 784 bytes, more than a gzip"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Idx, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("fifo-idx1-ubyte");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    read_idx(fifo);
    FAIL() << "the FIFO was opened";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(fifo + ": is a FIFO (named pipe), expected a regular file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hearth::data
