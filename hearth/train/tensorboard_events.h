// TensorBoard's event-file format, written by hand (no protobuf needed):
//
//   a file is a sequence of TFRecords:
//     uint64 length (little-endian) | uint32 masked_crc32c(length bytes)
//     | data[length] | uint32 masked_crc32c(data)
//   each record's data is a tensorflow.Event protocol buffer:
//     wall_time = 1 (double), step = 2 (int64), file_version = 3 (string),
//     summary = 5 (Summary { repeated Value value = 1 }),
//     Value { tag = 1 (string), simple_value = 2 (float) }.
//   The first event carries file_version "brain.Event:2"; the others scalars.
//
// masked_crc32c(x) = rotate_right(crc32c(x), 15) + 0xa282ead8 (CRC-32C is the
// Castagnoli polynomial, reflected, as in iSCSI).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hearth/io/log_file.h"

namespace hearth::train {

uint32_t crc32c(std::string_view bytes);
uint32_t masked_crc32c(std::string_view bytes);

// One TFRecord around `data`.
std::string tfrecord(std::string_view data);

// The Event messages (their protocol-buffer bytes).
std::string file_version_event(double wall_time);
std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& scalars);

// Appends events to `dir`/events.out.tfevents.<seconds>.<host>.<pid>.<n>, each
// flushed as written so TensorBoard shows a run while it trains.
class EventFileWriter {
 public:
  explicit EventFileWriter(const std::string& dir);
  const std::string& path() const { return path_; }
  void add_scalars(int64_t step, const std::vector<std::pair<std::string, float>>& scalars);

 private:
  void write_record(const std::string& event);
  std::string path_;
  io::LogFile out_;  // O_NOFOLLOW: never through a symlink planted in the run's folder
};

}  // namespace hearth::train
