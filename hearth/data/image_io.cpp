#include "hearth/data/image_io.h"

#include <cstring>
#include <fstream>

#include "hearth/core/errors.h"
#include "hearth/data/image_decoders.h"
#include "hearth/io/file_checks.h"

namespace hearth::data {
namespace {

bool starts_with(const uint8_t* data, size_t size, const char* magic, size_t n) {
  return size >= n && std::memcmp(data, magic, n) == 0;
}

std::string describe_unsupported(const uint8_t* data, size_t size) {
  std::string other = other_image_format_name(data, size);
  if (!other.empty()) return "is a " + other + " image; only JPEG and PNG are supported";
  return "is not a JPEG or PNG image (unrecognised first bytes)";
}

}  // namespace

const char* image_format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::jpeg:
      return "JPEG";
    case ImageFormat::png:
      return "PNG";
    default:
      return "unknown";
  }
}

ImageFormat sniff_image_format(const uint8_t* data, size_t size) {
  if (starts_with(data, size, "\xFF\xD8\xFF", 3)) return ImageFormat::jpeg;
  if (starts_with(data, size, "\x89PNG\r\n\x1A\n", 8)) return ImageFormat::png;
  return ImageFormat::unknown;
}

std::string other_image_format_name(const uint8_t* data, size_t size) {
  if (starts_with(data, size, "GIF87a", 6) || starts_with(data, size, "GIF89a", 6)) return "GIF";
  if (starts_with(data, size, "BM", 2)) return "BMP";
  if (size >= 12 && starts_with(data, size, "RIFF", 4) && std::memcmp(data + 8, "WEBP", 4) == 0) return "WebP";
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4)) return "TIFF";
  return "";
}

Tensor decode_image(const uint8_t* data, size_t size, const std::string& name) {
  HEARTH_CHECK(size > 0, IoError, "[image] ", name, ": the file is empty");
  switch (sniff_image_format(data, size)) {
    case ImageFormat::jpeg:
      return detail::decode_jpeg(data, size, name);
    case ImageFormat::png:
      return detail::decode_png(data, size, name);
    default:
      HEARTH_THROW(IoError, "[image] ", name, ": the file ", describe_unsupported(data, size));
  }
}

Tensor decode_image(const std::vector<uint8_t>& bytes, const std::string& name) {
  return decode_image(bytes.data(), bytes.size(), name);
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  io::check_regular_file(path, "[image]");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  HEARTH_CHECK(in.good(), IoError, "[image] ", path, ": cannot open the file for reading");
  std::streamoff size = in.tellg();
  HEARTH_CHECK(size >= 0, IoError, "[image] ", path, ": cannot determine the file's size");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  HEARTH_CHECK(in.gcount() == size, IoError, "[image] ", path, ": read ", in.gcount(), " of ", size, " bytes");
  return bytes;
}

Tensor read_image(const std::string& path) { return decode_image(read_file_bytes(path), path); }

ImageFormat probe_image_file(const std::string& path) {
  io::check_regular_file(path, "[image]");
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, "[image] ", path, ": cannot open the file for reading");
  uint8_t head[16] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  size_t n = static_cast<size_t>(in.gcount());
  HEARTH_CHECK(n > 0, IoError, "[image] ", path, ": the file is empty");
  ImageFormat format = sniff_image_format(head, n);
  HEARTH_CHECK(format != ImageFormat::unknown, IoError, "[image] ", path, ": the file ", describe_unsupported(head, n));
  return format;
}

}  // namespace hearth::data
