// The event files are read back by a decoder written here from the format's
// description (TFRecord framing, protocol-buffer wire format), independently
// of the writer, with a bitwise CRC-32C.
#include <cstring>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "hearth/train/tensorboard.h"
#include "hearth/train/tensorboard_events.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using hearth::testing::read_file;
using hearth::testing::TempDir;

uint32_t bitwise_crc32c(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char ch : s) {
    c ^= ch;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
  }
  return ~c;
}

uint32_t bitwise_masked(const std::string& s) {
  uint32_t c = bitwise_crc32c(s);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

template <typename T>
T load(const std::string& s, size_t at) {
  T v;
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

// Splits a file into its records' data, checking both checksums of each.
std::vector<std::string> read_records(const std::string& bytes) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < bytes.size()) {
    EXPECT_LE(at + 12, bytes.size());
    const uint64_t len = load<uint64_t>(bytes, at);
    EXPECT_EQ(load<uint32_t>(bytes, at + 8), bitwise_masked(bytes.substr(at, 8))) << "length checksum";
    std::string data = bytes.substr(at + 12, len);
    EXPECT_EQ(load<uint32_t>(bytes, at + 12 + len), bitwise_masked(data)) << "data checksum";
    out.push_back(data);
    at += 12 + len + 4;
  }
  EXPECT_EQ(at, bytes.size());
  return out;
}

uint64_t varint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    auto b = static_cast<uint8_t>(s.at(at++));
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
  }
}

struct Field {
  int number = 0, wire = 0;
  uint64_t integer = 0;  // varint, or the raw bits of a fixed field
  std::string bytes;
};

std::vector<Field> fields(const std::string& msg) {
  std::vector<Field> out;
  size_t at = 0;
  while (at < msg.size()) {
    uint64_t key = varint(msg, at);
    Field f;
    f.number = static_cast<int>(key >> 3);
    f.wire = static_cast<int>(key & 7);
    if (f.wire == 0) {
      f.integer = varint(msg, at);
    } else if (f.wire == 1) {
      f.integer = load<uint64_t>(msg, at);
      at += 8;
    } else if (f.wire == 5) {
      f.integer = load<uint32_t>(msg, at);
      at += 4;
    } else if (f.wire == 2) {
      uint64_t n = varint(msg, at);
      f.bytes = msg.substr(at, n);
      at += n;
    } else {
      ADD_FAILURE() << "unexpected wire type " << f.wire;
      break;
    }
    out.push_back(f);
  }
  return out;
}

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::map<std::string, float> scalars;
};

DecodedEvent decode_event(const std::string& data) {
  DecodedEvent e;
  for (const Field& f : fields(data)) {
    if (f.number == 1 && f.wire == 1) std::memcpy(&e.wall_time, &f.integer, 8);
    if (f.number == 2 && f.wire == 0) e.step = static_cast<int64_t>(f.integer);
    if (f.number == 3 && f.wire == 2) e.file_version = f.bytes;
    if (f.number == 5 && f.wire == 2) {
      for (const Field& v : fields(f.bytes)) {
        EXPECT_EQ(v.number, 1);
        std::string tag;
        float value = 0;
        for (const Field& p : fields(v.bytes)) {
          if (p.number == 1) tag = p.bytes;
          if (p.number == 2 && p.wire == 5) {
            auto bits = static_cast<uint32_t>(p.integer);
            std::memcpy(&value, &bits, 4);
          }
        }
        e.scalars[tag] = value;
      }
    }
  }
  return e;
}

TEST(TensorBoardEvents, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(masked_crc32c("hearth"), bitwise_masked("hearth"));
}

TEST(TensorBoardEvents, ARecordFramesAnEvent) {
  std::string event = scalars_event(1700000000.5, 42, {{"train/loss", 0.25f}, {"eval/accuracy", 0.875f}});
  std::vector<std::string> records = read_records(tfrecord(event));
  ASSERT_EQ(records.size(), 1u);
  DecodedEvent e = decode_event(records[0]);
  EXPECT_EQ(e.wall_time, 1700000000.5);
  EXPECT_EQ(e.step, 42);
  EXPECT_EQ(e.scalars.at("train/loss"), 0.25f);
  EXPECT_EQ(e.scalars.at("eval/accuracy"), 0.875f);
}

TEST(TensorBoardEvents, TheTrainerWritesLossesLearningRatesAndEvaluations) {
  TempDir dir;
  TrainingArguments args = testing::toy_args(dir.file("out"));
  args.report_to = {"tensorboard"};
  args.num_train_epochs = 1;
  args.logging_steps = 2;
  args.eval_strategy = "epoch";
  Trainer trainer(testing::toy_model(), args, testing::toy_dataset(64), testing::toy_dataset(32, 9), {},
                  testing::quiet());
  trainer.train();

  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir.file("out/runs")))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_FALSE(fs::exists(dir.file("out/metrics.jsonl")));  // only what report_to names
  std::vector<std::string> records = read_records(read_file(files[0].string()));
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(decode_event(records[0]).file_version, "brain.Event:2");

  std::map<int64_t, DecodedEvent> train_logs, eval_logs;
  for (size_t i = 1; i < records.size(); ++i) {
    DecodedEvent e = decode_event(records[i]);
    EXPECT_GT(e.wall_time, 1.6e9);
    if (e.scalars.count("train/loss")) train_logs[e.step] = e;
    if (e.scalars.count("eval/loss")) eval_logs[e.step] = e;
  }
  // Every logged loss and learning rate, at its step, as the log history has it.
  int64_t losses = 0;
  for (const nlohmann::json& entry : trainer.state().log_history) {
    if (entry.contains("loss")) {
      ++losses;
      const DecodedEvent& e = train_logs.at(entry["step"].get<int64_t>());
      EXPECT_EQ(e.scalars.at("train/loss"), entry["loss"].get<float>());
      EXPECT_EQ(e.scalars.at("train/learning_rate"), entry["learning_rate"].get<float>());
      EXPECT_EQ(e.scalars.at("train/epoch"), entry["epoch"].get<float>());
      EXPECT_TRUE(e.scalars.count("train/memory_allocated_gib"));  // the CPU allocator counts too
    }
    if (entry.contains("eval_loss")) {
      const DecodedEvent& e = eval_logs.at(entry["step"].get<int64_t>());
      EXPECT_EQ(e.scalars.at("eval/accuracy"), entry["eval_accuracy"].get<float>());
    }
  }
  EXPECT_EQ(losses, static_cast<int64_t>(train_logs.size()));
  EXPECT_EQ(eval_logs.size(), 1u);
  EXPECT_TRUE(train_logs.rbegin()->second.scalars.count("train/samples_per_second"));
}

}  // namespace
}  // namespace hearth::train
