#include "hearth/train/tensorboard_events.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "hearth/core/errors.h"

namespace hearth::train {
namespace {

std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <typename T>
void put_little_endian(std::string& out, T value) {
  // x86 and ARM Linux are little-endian, the byte order the formats use.
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

// Field key: (field number << 3) | wire type (0 varint, 1 64-bit, 2 bytes, 5 32-bit).
void put_key(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<uint64_t>(field << 3 | wire_type));
}

void put_bytes_field(std::string& out, int field, std::string_view bytes) {
  put_key(out, field, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}

std::string event_header(double wall_time) {
  std::string e;
  put_key(e, 1, 1);
  put_little_endian(e, wall_time);
  return e;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = make_crc32c_table();
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : bytes) c = table[(c ^ static_cast<uint8_t>(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string tfrecord(std::string_view data) {
  std::string header;
  put_little_endian(header, static_cast<uint64_t>(data.size()));
  std::string out = header;
  put_little_endian(out, masked_crc32c(header));
  out.append(data);
  put_little_endian(out, masked_crc32c(data));
  return out;
}

std::string file_version_event(double wall_time) {
  std::string e = event_header(wall_time);
  put_bytes_field(e, 3, "brain.Event:2");
  return e;
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& scalars) {
  std::string e = event_header(wall_time);
  put_key(e, 2, 0);
  put_varint(e, static_cast<uint64_t>(step));
  std::string summary;
  for (const auto& [tag, value] : scalars) {
    std::string v;
    put_bytes_field(v, 1, tag);
    put_key(v, 2, 5);
    put_little_endian(v, value);
    put_bytes_field(summary, 1, v);
  }
  put_bytes_field(e, 5, summary);
  return e;
}

EventFileWriter::EventFileWriter(const std::string& dir) {
  static std::atomic<int> counter{0};
  std::filesystem::create_directories(dir);
  const double t = now_seconds();
  path_ =
      (std::filesystem::path(dir) / ("events.out.tfevents." + std::to_string(static_cast<int64_t>(t)) + "." +
                                     hostname() + "." + std::to_string(::getpid()) + "." + std::to_string(counter++)))
          .string();
  out_.open(path_, /*truncate=*/true);
  write_record(file_version_event(t));
}

void EventFileWriter::add_scalars(int64_t step, const std::vector<std::pair<std::string, float>>& scalars) {
  if (scalars.empty()) return;
  write_record(scalars_event(now_seconds(), step, scalars));
}

void EventFileWriter::write_record(const std::string& event) { out_.write(tfrecord(event)); }

}  // namespace hearth::train
