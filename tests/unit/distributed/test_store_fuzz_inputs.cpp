// Replays, through the store_request fuzz target's harness
// (fuzz/store_harness.h), its seed corpus (fuzz/corpus/store_request/) and
// every input kept in tests/fixtures/fuzz_regressions/store_request/: each
// must decode or be refused with a ProtocolError. This runs in every build,
// with or without clang and libFuzzer.
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "fuzz/store_harness.h"

namespace hearth::fuzz {
namespace {

namespace fs = std::filesystem;

int replay(const fs::path& dir) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    EXPECT_EQ(fuzz_store_request(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "") << e.path();
    ++files;
  }
  return files;
}

TEST(StoreFuzzInputs, TheSeedCorpusDecodesOrIsRefusedCleanly) {
  EXPECT_GE(replay(fs::path(HEARTH_FIXTURES_DIR) / ".." / ".." / "fuzz" / "corpus" / "store_request"), 4);
}

TEST(StoreFuzzInputs, EveryKeptInputIsRefusedCleanly) {
  EXPECT_GE(replay(fs::path(HEARTH_FIXTURES_DIR) / "fuzz_regressions" / "store_request"), 5);
}

TEST(StoreFuzzInputs, ACutOrEmptyInputIsRefusedCleanly) {
  // A set announcing a key of 2 bytes, then the end: refused cleanly.
  const uint8_t cut[] = {1, 1, 2, 0, 0, 0, 'k'};
  EXPECT_EQ(fuzz_store_request(cut, sizeof cut), "");
  EXPECT_EQ(fuzz_store_request(nullptr, 0), "");
}

}  // namespace
}  // namespace hearth::fuzz
