// Replays, through the fuzz targets' own harnesses (fuzz/harnesses.h), the
// committed seed corpus (fuzz/corpus/<target>/) and every input a fuzzer ever
// failed on (tests/fixtures/fuzz_regressions/<target>/): each must parse or
// fail with a hearth::Error naming its file. This runs in every build, with
// or without clang and libFuzzer.
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "fuzz/harnesses.h"

namespace hearth::fuzz {
namespace {

namespace fs = std::filesystem;
using Harness = std::function<std::string(const uint8_t*, size_t)>;

const std::map<std::string, Harness>& harnesses() {
  static const std::map<std::string, Harness> h = {{"safetensors", fuzz_safetensors},
                                                   {"idx", fuzz_idx},
                                                   {"csv", fuzz_csv},
                                                   {"training_arguments", fuzz_training_arguments},
                                                   {"trainer_state", fuzz_trainer_state},
                                                   {"bert_config", fuzz_bert_config},
                                                   {"image", fuzz_image},
                                                   {"tokenizer", fuzz_tokenizer},
                                                   {"glue_text", fuzz_glue_text},
                                                   {"user_config", fuzz_user_config}};
  return h;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every file under `root`/<target>/ for the targets above; how many were replayed.
int replay(const fs::path& root) {
  int files = 0;
  for (const auto& [target, harness] : harnesses()) {
    const fs::path dir = root / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      const std::string bytes = read_bytes(e.path());
      EXPECT_EQ(harness(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "")
          << target << " input " << e.path();
      ++files;
    }
  }
  return files;
}

TEST(FuzzRegressions, TheSeedCorpusParsesOrFailsCleanly) {
  EXPECT_GE(replay(fs::path(HEARTH_FIXTURES_DIR) / ".." / ".." / "fuzz" / "corpus"), 15);
}

TEST(FuzzRegressions, EveryInputAFuzzerFailedOnNowFailsCleanly) {
  EXPECT_GE(replay(fs::path(HEARTH_FIXTURES_DIR) / "fuzz_regressions"), 2);
}

TEST(FuzzRegressions, TheCheckCatchesAnEscapedExceptionAndAnUnnamedFile) {
  EXPECT_EQ(check_clean_failure("a.json", [] {}), "");
  EXPECT_EQ(check_clean_failure("a.json", [] { throw ValueError("[x] a.json: bad"); }), "");
  EXPECT_NE(check_clean_failure("a.json", [] { throw ValueError("[x] bad"); }), "");
  EXPECT_NE(check_clean_failure("a.json", [] { throw std::out_of_range("vector"); }), "");
}

}  // namespace
}  // namespace hearth::fuzz
