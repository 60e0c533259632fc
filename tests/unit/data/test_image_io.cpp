// Decoding against PIL: every fixture image's pixels hash to what PIL decodes
// (tests/fixtures/images/make_images.py), and bad files fail with the path.
#include <chrono>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/image_io.h"
#include "tests/support/jpeg_scans.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/data/image_fixtures.h"

namespace hearth::data {
namespace {

using hearth::testing::fnv1a64_hex;
using hearth::testing::image_expectations;
using hearth::testing::pets_dir;
using hearth::testing::TempDir;

// The message of the IoError `fn` throws ("" if none).
template <typename F>
std::string io_error(F fn) {
  try {
    fn();
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

TEST(ImageIo, EveryFixtureDecodesToPilsPixels) {
  const auto& files = image_expectations().at("files");
  ASSERT_EQ(files.size(), 24u);
  for (const auto& [name, want] : files.items()) {
    SCOPED_TRACE(name + " (" + want.at("variant").get<std::string>() + ")");
    Tensor img = read_image(pets_dir() + "/" + name);
    EXPECT_EQ(img.dtype(), DType::uint8);
    EXPECT_EQ(img.shape(), want.at("shape").get<Shape>());
    EXPECT_EQ(fnv1a64_hex(img), want.at("fnv1a64").get<std::string>());
  }
}

TEST(ImageIo, FormatComesFromTheBytesNotTheName) {
  const std::string path = pets_dir() + "/blue_triangle_8.jpg";  // a PNG
  EXPECT_EQ(probe_image_file(path), ImageFormat::png);
  EXPECT_EQ(probe_image_file(pets_dir() + "/blue_triangle_1.jpg"), ImageFormat::jpeg);
  EXPECT_STREQ(image_format_name(ImageFormat::png), "PNG");
}

TEST(ImageIo, TruncatedJpegIsAnErrorNamingThePath) {
  const std::string path = pets_dir() + "/red_circle_9.jpg";
  EXPECT_EQ(probe_image_file(path), ImageFormat::jpeg);  // the header is fine
  std::string msg = io_error([&] { read_image(path); });
  EXPECT_NE(msg.find("[image] " + path + ": truncated JPEG"), std::string::npos) << msg;
}

TEST(ImageIo, TruncatedPngIsAnErrorNamingThePath) {
  TempDir dir;
  std::string bytes = hearth::testing::read_file(pets_dir() + "/red_circle_2.png");
  std::string path = dir.write("cut.png", bytes.substr(0, bytes.size() / 2));
  std::string msg = io_error([&] { read_image(path); });
  EXPECT_NE(msg.find("[image] " + path + ": truncated PNG"), std::string::npos) << msg;
}

TEST(ImageIo, CorruptDataIsAnErrorNamingThePath) {
  TempDir dir;
  std::string png = hearth::testing::read_file(pets_dir() + "/red_circle_2.png");
  for (size_t i = 40; i < 80; ++i) png[i] = static_cast<char>(png[i] ^ 0x5A);  // inside IHDR/IDAT: CRC fails
  std::string bad_png = dir.write("bad.png", png);
  std::string msg = io_error([&] { read_image(bad_png); });
  EXPECT_NE(msg.find("[image] " + bad_png + ": corrupt PNG: "), std::string::npos) << msg;

  std::string jpg = hearth::testing::read_file(pets_dir() + "/red_circle_1.jpg");
  std::string header_only = dir.write("bad.jpg", jpg.substr(0, 2) + std::string(64, '\x01'));
  msg = io_error([&] { read_image(header_only); });
  EXPECT_NE(msg.find("[image] " + header_only + ": "), std::string::npos) << msg;
}

TEST(ImageIo, UnsupportedAndEmptyFilesAreNamed) {
  TempDir dir;
  std::string gif = dir.write("a.jpg", std::string("GIF89a") + std::string(20, '\0'));
  std::string msg = io_error([&] { read_image(gif); });
  EXPECT_NE(msg.find(gif + ": the file is a GIF image; only JPEG and PNG are supported"), std::string::npos) << msg;
  msg = io_error([&] { probe_image_file(gif); });
  EXPECT_NE(msg.find("GIF"), std::string::npos) << msg;

  std::string text = dir.write("notes.png", "hello, world");
  msg = io_error([&] { read_image(text); });
  EXPECT_NE(msg.find(text + ": the file is not a JPEG or PNG image"), std::string::npos) << msg;

  std::string empty = dir.write("empty.jpg", "");
  msg = io_error([&] { read_image(empty); });
  EXPECT_NE(msg.find(empty + ": the file is empty"), std::string::npos) << msg;

  msg = io_error([&] { read_image(dir.file("missing.jpg")); });
  EXPECT_NE(msg.find("missing.jpg: cannot open"), std::string::npos) << msg;
}

// Every prefix of a file, and copies with bytes overwritten, either decode to
// a full-size image or fail with an IoError naming the path: never a crash, a
// hang or another exception (run under the sanitizers by `make asan`).
TEST(ImageIo, CutAndDamagedFilesFailCleanly) {
  const std::string path = "damaged";
  for (const char* name : {"red_circle_1.jpg", "red_circle_5.jpg", "red_circle_2.png", "red_circle_4.png"}) {
    SCOPED_TRACE(name);
    const std::string bytes = hearth::testing::read_file(pets_dir() + "/" + name);
    auto check = [&](const std::string& data) {
      try {
        Tensor img = decode_image(reinterpret_cast<const uint8_t*>(data.data()), data.size(), path);
        EXPECT_EQ(img.dim(), 3);
        EXPECT_EQ(img.size(2), 3);
      } catch (const IoError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("[image] damaged: ", 0), 0u) << e.what();
      }
    };
    for (size_t n = 0; n < bytes.size(); n += 7) check(bytes.substr(0, n));
    uint64_t state = 12345;
    for (int trial = 0; trial < 200; ++trial) {
      std::string damaged = bytes;
      for (int k = 0; k < 4; ++k) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        damaged[(state >> 33) % damaged.size()] = static_cast<char>(state >> 56);
      }
      check(damaged);
    }
  }
}

// Every scan of a progressive JPEG is a pass over the whole image: a file
// repeating one scan thousands of times decoded for minutes. Past 64 scans it
// is refused at once; a progressive JPEG of ordinary scans still decodes.
TEST(ImageIo, AProgressiveJpegOfThousandsOfScansIsRefusedQuickly) {
  const std::string progressive = hearth::testing::read_file(pets_dir() + "/red_circle_5.jpg");
  const std::string few = hearth::testing::with_repeated_last_scan(progressive, 20);
  Tensor img = decode_image(reinterpret_cast<const uint8_t*>(few.data()), few.size(), "few.jpg");
  EXPECT_EQ(img.size(2), 3);

  const std::string hostile = hearth::testing::with_repeated_last_scan(progressive, 20000);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e =
      io_error([&] { decode_image(reinterpret_cast<const uint8_t*>(hostile.data()), hostile.size(), "scans.jpg"); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(e.find("[image] scans.jpg: a progressive JPEG of more than 64 scans"), std::string::npos) << e;
  EXPECT_LT(seconds, 1.0);
}

uint32_t png_crc(const std::string& bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char ch : bytes) {
    c ^= ch;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string png_chunk(const std::string& type, const std::string& data) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  return be32(static_cast<uint32_t>(data.size())) + type + data + be32(png_crc(type + data));
}

// A PNG claiming 16384 x 16384 pixels (1-bit grey compresses such an image to
// a few hundred kilobytes) would need an 805 MB tensor: it is refused from its
// header, before any pixel is allocated, like a JPEG that large.
TEST(ImageIo, APngBeyondThePixelBudgetIsRefusedFromItsHeader) {
  std::string ihdr = std::string("\x00\x00\x40\x00\x00\x00\x40\x00", 8) + std::string("\x01\x00\x00\x00\x00", 5);
  const std::string png = std::string("\x89PNG\r\n\x1A\n", 8) + png_chunk("IHDR", ihdr) +
                          png_chunk("IDAT", std::string("\x78\x9C\x03\x00\x00\x00\x00\x01", 8)) + png_chunk("IEND", "");
  const std::string e =
      io_error([&] { decode_image(reinterpret_cast<const uint8_t*>(png.data()), png.size(), "huge.png"); });
  EXPECT_NE(e.find("[image] huge.png: the PNG claims 16384x16384 pixels, more than the 67108864 hearth decodes"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace hearth::data
