#include <chrono>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/io/safetensors.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_device.h"

namespace hearth::io {
namespace {

using hearth::testing::read_file;
using hearth::testing::TempDir;

// A tensor of `shape` whose element i is f(i), of C++ type T.
template <typename T, typename F>
Tensor make(const Shape& shape, F f) {
  Tensor t = Tensor::empty(shape, dtype_of_v<T>);
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(f(i));
  return t;
}

// The bytes of a tensor's elements in row-major order (it may be strided).
std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}

// A safetensors file from a header text and data bytes, as a writer might produce.
std::string craft(const std::string& header, const std::string& data) { return le64(header.size()) + header + data; }

std::map<std::string, Tensor> every_dtype() {
  return {
      {"f32", make<float>({2, 3}, [](int64_t i) { return 0.5f * i - 1.0f; })},
      {"f64", make<double>({3}, [](int64_t i) { return 1.0 / (i + 3); })},
      {"bf16", make<BFloat16>({2, 2}, [](int64_t i) { return static_cast<float>(i) - 1.5f; })},
      {"f16", make<Half>({5}, [](int64_t i) { return 0.25f * static_cast<float>(i); })},
      {"i64", make<int64_t>({2, 1, 2}, [](int64_t i) { return (i - 2) * 10000000000LL; })},
      {"i32", make<int32_t>({4}, [](int64_t i) { return -7 * static_cast<int32_t>(i); })},
      {"u8", make<uint8_t>({3, 1}, [](int64_t i) { return 250 + i; })},
      {"bool", make<bool>({3}, [](int64_t i) { return i % 2 == 0; })},
  };
}

TEST(Safetensors, RoundTripsEveryDTypeAndTheMetadata) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  auto tensors = every_dtype();
  std::map<std::string, std::string> meta{{"format", "pt"}, {"epoch", "3"}};
  save_safetensors(path, tensors, meta);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});

  auto loaded = load_safetensors(path);
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    const Tensor& l = loaded.at(name);
    EXPECT_EQ(l.dtype(), t.dtype());
    EXPECT_EQ(l.shape(), t.shape());
    EXPECT_TRUE(l.is_contiguous());
    EXPECT_EQ(bytes_of(l), bytes_of(t));
  }
  SafetensorsFile file(path);
  EXPECT_EQ(file.metadata(), meta);
  EXPECT_EQ(file.names(), (std::vector<std::string>{"bf16", "bool", "f16", "f32", "f64", "i32", "i64", "u8"}));
  EXPECT_EQ(file.entry("i64").shape, (Shape{2, 1, 2}));
}

TEST(Safetensors, SavesNonContiguousScalarAndEmptyTensors) {
  TempDir dir;
  std::string path = dir.file("views.safetensors");
  Tensor base = make<float>({3, 4}, [](int64_t i) { return static_cast<float>(i); });
  Tensor transposed = base.transpose(0, 1);  // [4, 3], strided
  Tensor sliced = base.narrow(1, 1, 2);      // [3, 2], strided
  ASSERT_FALSE(transposed.is_contiguous());
  Tensor scalar = make<int64_t>({}, [](int64_t) { return 42; });
  Tensor empty = Tensor::empty({0, 3}, DType::float64);
  save_safetensors(path, {{"t", transposed}, {"s", sliced}, {"scalar", scalar}, {"empty", empty}});

  SafetensorsFile file(path);
  Tensor t = file.get("t");
  EXPECT_EQ(t.shape(), (Shape{4, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(file.get("s").to_vector<float>(), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(file.get("scalar").shape(), Shape{});
  EXPECT_EQ(file.get("scalar").item<int64_t>(), 42);
  EXPECT_EQ(file.get("empty").shape(), (Shape{0, 3}));
  EXPECT_EQ(file.get("empty").dtype(), DType::float64);
}

TEST(Safetensors, WritesTheStandardLayout) {
  TempDir dir;
  std::string path = dir.file("layout.safetensors");
  save_safetensors(path,
                   {{"a", make<uint8_t>({3}, [](int64_t i) { return i + 1; })},
                    {"b", make<double>({1}, [](int64_t) { return 2.0; })},
                    {"c", make<Half>({2}, [](int64_t) { return 1.0f; })}},
                   {{"k", "v"}});
  std::string bytes = read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data region starts 8-byte aligned";
  std::string header = bytes.substr(8, n);
  // Padding is spaces after the JSON text.
  EXPECT_EQ(header.find_first_not_of(' ', header.find_last_of('}') + 1), std::string::npos) << header;
  auto j = nlohmann::json::parse(header);
  EXPECT_EQ(j["__metadata__"]["k"], "v");
  EXPECT_EQ(j["b"]["dtype"], "F64");
  EXPECT_EQ(j["c"]["dtype"], "F16");
  EXPECT_EQ(j["a"]["dtype"], "U8");
  EXPECT_EQ(j["a"]["shape"], nlohmann::json::array({3}));
  // Largest itemsize first, so every tensor is aligned for its dtype.
  EXPECT_EQ(j["b"]["data_offsets"], nlohmann::json::array({0, 8}));
  EXPECT_EQ(j["c"]["data_offsets"], nlohmann::json::array({8, 12}));
  EXPECT_EQ(j["a"]["data_offsets"], nlohmann::json::array({12, 15}));
  EXPECT_EQ(bytes.size(), 8 + n + 15);
  EXPECT_EQ(bytes.substr(8 + n + 12), std::string("\x01\x02\x03"));
}

TEST(Safetensors, ReadsAFileWrittenByAnotherWriter) {
  TempDir dir;
  // What Python's safetensors writes for {"w": torch.tensor([[1., 2.]])}, with
  // metadata and without padding; the reader must not demand either.
  float w[2] = {1.0f, 2.0f};
  std::string data(reinterpret_cast<const char*>(w), 8);
  std::string path = dir.write(
      "hub.safetensors",
      craft(R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}})", data));
  auto loaded = load_safetensors(path);
  EXPECT_EQ(loaded.at("w").shape(), (Shape{1, 2}));
  EXPECT_EQ(loaded.at("w").to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
}

TEST(Safetensors, ViewSharesTheMappingAndOutlivesTheFileObject) {
  TempDir dir;
  std::string path = dir.file("v.safetensors");
  Tensor src = make<float>({4, 4}, [](int64_t i) { return static_cast<float>(i); });
  save_safetensors(path, {{"w", src}, {"n", make<int32_t>({3}, [](int64_t i) { return i; })}});
  std::string before = read_file(path);

  Tensor v;
  {
    SafetensorsFile file(path);
    v = file.view("w");
    Tensor v2 = file.view("w");
    EXPECT_EQ(v.data_ptr(), v2.data_ptr()) << "views point into the one mapping";
    Tensor copy = file.get("w");
    EXPECT_NE(copy.data_ptr(), v.data_ptr());
  }
  EXPECT_EQ(bytes_of(v), bytes_of(src));
  // The mapping is private: writing through a view never reaches the file.
  v.data<float>()[0] = 123.0f;
  EXPECT_EQ(v.data<float>()[0], 123.0f);
  EXPECT_EQ(read_file(path), before);
  EXPECT_EQ(SafetensorsFile(path).get("w").data<float>()[0], 0.0f);
}

TEST(Safetensors, UnalignedTensorsAreCopiedByView) {
  TempDir dir;
  // u8 [1] at offset 0 puts the F32 at offset 1: fine for the format, not
  // for a typed pointer, so view() copies.
  float f = 3.5f;
  std::string data = std::string("\x07", 1) + std::string(reinterpret_cast<const char*>(&f), 4);
  std::string header =
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"F32","shape":[],"data_offsets":[1,5]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string path = dir.write("unaligned.safetensors", craft(header, data));
  SafetensorsFile file(path);
  Tensor b = file.view("b");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data_ptr()) % 4, 0u);
  EXPECT_EQ(b.item<float>(), 3.5f);
  EXPECT_EQ(file.view("a").item<int64_t>(), 7);
}

TEST(Safetensors, SavesAndLoadsAcrossDevices) {
  TempDir dir;
  std::string path = dir.file("dev.safetensors");
  Device dev = hearth::testing::test_device();
  Tensor src = make<float>({2, 3}, [](int64_t i) { return static_cast<float>(i) * 1.5f; });
  save_safetensors(path, {{"w", src.to(dev)}});
  auto loaded = load_safetensors(path, dev);
  EXPECT_EQ(loaded.at("w").device(), dev);
  EXPECT_EQ(loaded.at("w").cpu().to_vector<float>(), src.to_vector<float>());
}

TEST(Safetensors, RejectsBadTensorsWhenSaving) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  EXPECT_THROW(save_safetensors(path, {{"__metadata__", Tensor::empty({1})}}), ValueError);
  EXPECT_THROW(save_safetensors(path, {{"x", Tensor()}}), ValueError);
  EXPECT_TRUE(dir.entries().empty()) << "nothing is written when the input is rejected";
  EXPECT_THROW(save_safetensors(dir.file("missing/dir.safetensors"), {{"x", Tensor::empty({1})}}), IoError);
}

TEST(Safetensors, UnknownNameListsTheFilesTensors) {
  TempDir dir;
  std::string path = dir.file("n.safetensors");
  save_safetensors(path, {{"weight", Tensor::empty({1})}, {"bias", Tensor::empty({1})}});
  SafetensorsFile file(path);
  EXPECT_TRUE(file.contains("bias"));
  EXPECT_FALSE(file.contains("gamma"));
  try {
    file.get("gamma");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bias, weight"), std::string::npos) << e.what();
  }
}

// ---- validation: every bad file is an IoError "[safetensors] <path>: ..." ----

struct BadFile {
  const char* name;
  std::string bytes;
  const char* expected;  // a part of the message
};

std::vector<BadFile> bad_files() {
  const std::string eight(8, '\0');
  const std::string sixteen(16, '\0');
  auto one = [](const std::string& entry) { return std::string(R"({"x":)") + entry + "}"; };
  return {
      {"empty", "", "too short"},
      {"short", "abc", "too short"},
      {"length_beyond_file", le64(1000) + "{}", "reaches past the end of the file"},
      {"huge_length", le64(~uint64_t{0}) + "{}", "reaches past the end of the file"},
      {"not_json", craft("{not json", ""), "not valid JSON"},
      {"nul_header", craft(std::string("\0\0\0\0", 4), ""), "not valid JSON"},
      {"not_object", craft("[1, 2, 3]", ""), "not a JSON object"},
      {"entry_not_object", craft(one("5"), ""), "must be described by an object"},
      {"missing_dtype", craft(one(R"({"shape":[1],"data_offsets":[0,4]})"), "abcd"), "no \"dtype\" field"},
      {"missing_offsets", craft(one(R"({"dtype":"F32","shape":[1]})"), "abcd"), "no \"data_offsets\" field"},
      {"unknown_dtype", craft(one(R"({"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]})"), "a"),
       "unknown dtype 'F8_E4M3'"},
      {"negative_dim", craft(one(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), "abcd"),
       "non-negative integers"},
      {"fractional_dim", craft(one(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})"), "abcd"),
       "non-negative integers"},
      {"huge_shape", craft(one(R"({"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]})"), eight),
       "too large"},
      // Found by fuzzing: no element, but the other dimensions overflow a stride.
      {"huge_dims_times_zero",
       craft(one(R"({"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]})"), ""), "too large"},
      {"size_mismatch", craft(one(R"({"dtype":"F32","shape":[2,2],"data_offsets":[0,12]})"), sixteen),
       "span 12 bytes but shape [2, 2] of F32 needs 16"},
      {"outside_data", craft(one(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), eight),
       "outside the data region of 8 bytes"},
      {"reversed_offsets", craft(one(R"({"dtype":"U8","shape":[0],"data_offsets":[4,0]})"), eight),
       "end before they begin"},
      {"bad_offsets_arity", craft(one(R"({"dtype":"U8","shape":[1],"data_offsets":[0]})"), eight),
       "must be [begin, end]"},
      {"overlap",
       craft(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
           sixteen),
       "overlap"},
      {"duplicate",
       craft(
           R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
           "ab"),
       "duplicate tensor name 'a'"},
      {"metadata_not_object", craft(R"({"__metadata__":[1]})", ""), "__metadata__ must be an object"},
      {"trailing_bytes", craft(one(R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})"), "ab"),
       "1 trailing bytes after the last tensor's data"},
      // Nested arrays: parsing 100 MB of them exhausted memory.
      {"deeply_nested", craft(R"({"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}", ""),
       "header: arrays and objects nested 100001 levels deep"},
      {"metadata_not_string", craft(R"({"__metadata__":{"epoch":3}})", ""), "must be a string"},
  };
}

TEST(Safetensors, EveryMalformedFileIsAnIoErrorNamingPathAndProblem) {
  TempDir dir;
  for (const BadFile& bad : bad_files()) {
    SCOPED_TRACE(bad.name);
    std::string path = dir.write(std::string(bad.name) + ".safetensors", bad.bytes);
    try {
      load_safetensors(path);
      ADD_FAILURE() << "expected IoError for " << bad.name;
    } catch (const IoError& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind("[safetensors] " + path + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(bad.expected), std::string::npos) << msg;
    }
  }
}

// A header of n one-byte tensors, "t0" .. "t<n-1>", and their data.
std::string many_tensors(int64_t n) {
  std::string header = "{", data;
  for (int64_t i = 0; i < n; ++i) {
    header += (i ? ",\"t" : "\"t") + std::to_string(i) + R"(":{"dtype":"U8","shape":[1],"data_offsets":[)" +
              std::to_string(i) + "," + std::to_string(i + 1) + "]}";
    data += static_cast<char>(i);
  }
  return craft(header + "}", data);
}

double seconds_to_load(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  SafetensorsFile file(path);
  EXPECT_GT(file.names().size(), 0u);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Parsing is linear in the entry count: 40,000 entries took 16 s when the
// duplicate-name check ran as a parser callback; now well under a second.
TEST(Safetensors, AHeaderOfFortyThousandEntriesParsesInLinearTime) {
  TempDir dir;
  const std::string path = dir.write("many.safetensors", many_tensors(40000));
  const double seconds = seconds_to_load(path);
  EXPECT_LT(seconds, 3.0);
  SafetensorsFile file(path);
  EXPECT_EQ(file.names().size(), 40000u);
  EXPECT_EQ(file.get("t39999").data<uint8_t>()[0], static_cast<uint8_t>(39999 % 256));
}

// More entries than the data region could hold bytes for is refused before
// any of them is built; so is a shape with more dimensions than any tensor
// has. Neither message quotes more than a few hundred characters.
TEST(Safetensors, EntryCountAndRankAreCappedByWhatTheFileCanHold) {
  TempDir dir;
  std::string header = "{";
  for (int i = 0; i < 5000; ++i)
    header += (i ? ",\"e" : "\"e") + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  const std::string empties = dir.write("empties.safetensors", craft(header + "}", ""));
  try {
    SafetensorsFile file(empties);
    ADD_FAILURE() << "5000 empty tensors in a file with no data were accepted";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 4096 tensors"), std::string::npos) << e.what();
  }

  std::string dims = "1";
  for (int i = 1; i < 1000000; ++i) dims += ",1";
  const std::string deep = dir.write(
      "rank.safetensors", craft(R"({"x":{"dtype":"U8","shape":[)" + dims + R"(],"data_offsets":[0,1]}})", "a"));
  const auto t0 = std::chrono::steady_clock::now();
  try {
    SafetensorsFile file(deep);
    ADD_FAILURE() << "a shape of a million dimensions was accepted";
  } catch (const IoError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("a shape has at most 64 dimensions"), std::string::npos) << msg.substr(0, 500);
    EXPECT_LT(msg.size(), 600u);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);

  // A long name in a message is cut short.
  const std::string long_name(100000, 'n');
  const std::string named = dir.write(
      "named.safetensors", craft("{\"" + long_name + R"(":{"dtype":"F32","shape":[1],"data_offsets":[0,1]}})", "a"));
  try {
    SafetensorsFile file(named);
    ADD_FAILURE() << "a span too short for its shape was accepted";
  } catch (const IoError& e) {
    EXPECT_LT(std::string(e.what()).size(), 600u);
  }
}

TEST(Safetensors, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("model.safetensors");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    SafetensorsFile file(fifo);
    FAIL() << "the FIFO was opened";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "[safetensors] " + fifo + ": is a FIFO (named pipe), expected a regular file");
  }
}

TEST(Safetensors, MissingFileAndDirectoryAreIoErrors) {
  TempDir dir;
  EXPECT_THROW(SafetensorsFile(dir.file("nope.safetensors")), IoError);
  EXPECT_THROW(SafetensorsFile(dir.path()), IoError);
}

TEST(Safetensors, EmptyTensorsMayShareAnOffsetWithOthers) {
  TempDir dir;
  std::string path = dir.write(
      "empties.safetensors",
      craft(
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
          std::string(8, '\0')));
  auto loaded = load_safetensors(path);
  EXPECT_EQ(loaded.at("e").numel(), 0);
  EXPECT_EQ(loaded.at("a").numel(), 2);
}

TEST(Safetensors, BoolBytesOtherThanZeroOrOneReadAsTrue) {
  TempDir dir;
  std::string path = dir.write("bools.safetensors", craft(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                                                          std::string("\x00\x02\x01", 3)));
  SafetensorsFile file(path);
  EXPECT_EQ(file.get("m").to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(file.view("m").to_vector<bool>(), (std::vector<bool>{false, true, true}));
}

TEST(Safetensors, DTypeNames) {
  DType d;
  EXPECT_TRUE(parse_safetensors_dtype("BF16", &d));
  EXPECT_EQ(d, DType::bfloat16);
  EXPECT_FALSE(parse_safetensors_dtype("I8", &d));
  EXPECT_STREQ(safetensors_dtype_name(DType::bool_), "BOOL");
}

}  // namespace
}  // namespace hearth::io
