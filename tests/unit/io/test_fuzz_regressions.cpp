// Replays, through the fuzz targets' own harnesses (fuzz/harnesses.h), the
// committed seed corpus (fuzz/corpus/<target>/) and every input a fuzzer ever
// failed on (tests/fixtures/fuzz_regressions/<target>/): each must parse or
// fail with a hearth::Error naming its file. This runs in every build, with
// or without clang and libFuzzer.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "fuzz/bpe_harness.h"
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
                                                   {"bpe_tokenizer", fuzz_bpe_tokenizer},
                                                   {"glue_text", fuzz_glue_text},
                                                   {"user_config", fuzz_user_config},
                                                   {"optimizer_state", fuzz_optimizer_state}};
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

TEST(FuzzRegressions, TheOptimizerStateSeedIsAcceptedAsAValidState) {
  // A seed the loader refused would leave the fuzzer nothing valid to mutate.
  const fs::path seed = fs::path(HEARTH_FIXTURES_DIR) / ".." / ".." / "fuzz" / "corpus" / "optimizer_state" /
                        "adamw_two_params_step_1.safetensors";
  const fs::path dir = fs::temp_directory_path() / ("hearth-optimizer-seed-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(seed, dir / "optimizer.safetensors", fs::copy_options::overwrite_existing);
  std::vector<Tensor> params = {zeros({3}), zeros({2, 2})};
  for (const Tensor& p : params) p.requires_grad_(true);
  optim::AdamW optimizer(params, {.lr = 0.1});
  auto scheduler = optim::get_linear_schedule_with_warmup(optimizer, 1, 10);
  EXPECT_NO_THROW(train::load_optimizer_state(dir.string(), optimizer, scheduler.get()));
  ASSERT_NE(optimizer.state(params[1]), nullptr);
  EXPECT_EQ(optimizer.state(params[1])->step, 1);
  EXPECT_EQ(scheduler->last_epoch(), 1);
  fs::remove_all(dir);
}

TEST(FuzzRegressions, TheCheckCatchesAnEscapedExceptionAndAnUnnamedFile) {
  EXPECT_EQ(check_clean_failure("a.json", [] {}), "");
  EXPECT_EQ(check_clean_failure("a.json", [] { throw ValueError("[x] a.json: bad"); }), "");
  EXPECT_NE(check_clean_failure("a.json", [] { throw ValueError("[x] bad"); }), "");
  EXPECT_NE(check_clean_failure("a.json", [] { throw std::out_of_range("vector"); }), "");
}

}  // namespace
}  // namespace hearth::fuzz
