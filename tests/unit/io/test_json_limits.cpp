// The nesting and size limits every JSON reader applies.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/io/json_limits.h"

namespace hearth::io {
namespace {

std::string error_of(const std::string& text, size_t max_bytes = kMaxJsonBytes) {
  try {
    check_json_limits(text, "[x] a.json", max_bytes);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonLimits, DepthCountsArraysAndObjectsButNotStrings) {
  EXPECT_EQ(json_nesting_depth("3"), 0);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": []}]})"), 4);
  EXPECT_EQ(json_nesting_depth(R"(["[[[[", "\"[[[", {}])"), 2);
}

TEST(JsonLimits, DeepNestingIsRefusedNamingTheFile) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(error_of(deep), "[x] a.json: arrays and objects nested 100000 levels deep, more than the 128 allowed");
  const std::string ok = std::string(kMaxJsonDepth, '{') + std::string(kMaxJsonDepth, '}');
  EXPECT_EQ(error_of(ok), "no error");
}

TEST(JsonLimits, SizeIsRefusedBeforeReadingEverything) {
  EXPECT_EQ(error_of("[1, 2, 3]", 4), "[x] a.json: 9 bytes of JSON, more than the 4 allowed");
  std::istringstream in(std::string(1 << 20, ' ') + "{}");
  try {
    read_json_text(in, "[x] a.json", 1000);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[x] a.json: more than 1000 bytes"), std::string::npos) << e.what();
  }
  std::istringstream small(R"({"a": 1})");
  EXPECT_EQ(read_json_text(small, "[x] a.json"), R"({"a": 1})");
}

}  // namespace
}  // namespace hearth::io
