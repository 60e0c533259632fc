// Incremental decoding through the key/value cache and generation: cached
// forwards give the full forward's logits (float64, to 1e-12) for GPT-2's
// learned positions and Llama's rotary ones; greedy generation equals argmax
// decoding by full recomputation; the logits warpers follow transformers'.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/nn/models/causal_lm_generate.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tensor_compare.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;
using nn::models::CausalLM;
using nn::models::GenerationOptions;
using nn::models::KVCache;

std::string fixture(const std::string& name) { return std::string(HEARTH_FIXTURES_DIR) + "/causal_lm/" + name; }

std::shared_ptr<CausalLM> float64_model(const std::string& name) {
  auto model = nn::models::load_causal_lm(fixture(name));
  model->to(DType::float64);
  model->eval();
  return model;
}

std::vector<int64_t> random_ids(int64_t n, int64_t vocab, uint64_t seed) {
  Generator gen(seed);
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) {
    const auto bits = philox4x32(gen.reserve(1), 0, seed);
    ids.push_back(static_cast<int64_t>(bits[0] % static_cast<uint32_t>(vocab)));
  }
  return ids;
}

class CachedForward : public ::testing::TestWithParam<const char*> {};

// The prompt read at once, then single tokens, then a chunk: every step's
// logits equal the matching rows of one full forward, for two sequences.
TEST_P(CachedForward, EqualsFullForward) {
  NoGradGuard no_grad;
  auto model = float64_model(GetParam());
  const int64_t len = std::min<int64_t>(14, model->max_sequence_length());
  const std::vector<int64_t> a = random_ids(len, model->vocab_size(), 1), b = random_ids(len, model->vocab_size(), 2);
  std::vector<int64_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  const Tensor ids = tensor(both, {2, len});
  const Tensor full = model->forward(ids);
  KVCache cache;
  const std::vector<int64_t> steps = {5, 1, 1, 4, 1, len - 12};
  int64_t start = 0;
  for (int64_t n : steps) {
    const Tensor logits = model->forward_cached(narrow(ids, 1, start, n), cache);
    ASSERT_EQ(logits.shape(), (Shape{2, n, model->vocab_size()}));
    EXPECT_LT(testing::max_abs_diff(logits, narrow(full, 1, start, n)), 1e-12) << "positions " << start << "..";
    start += n;
    EXPECT_EQ(cache.length(), start);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CachedForward, ::testing::Values("gpt2_tiny", "llama_tiny", "qwen2_tiny"));

TEST(CachedForward, RefusesPositionsPastTheModelsLength) {
  NoGradGuard no_grad;
  auto model = float64_model("gpt2_tiny");  // n_positions 20
  KVCache cache;
  model->forward_cached(tensor(random_ids(18, model->vocab_size(), 3), {1, 18}), cache);
  try {
    model->forward_cached(tensor(random_ids(3, model->vocab_size(), 4), {1, 3}), cache);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("n_positions less the cached positions 2"), std::string::npos) << e.what();
  }
}

// Greedy decoding: each token the argmax of a full forward over everything so far.
std::vector<int64_t> argmax_by_recomputation(CausalLM& model, std::vector<int64_t> ids, int64_t n) {
  NoGradGuard no_grad;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor logits = model.forward(tensor(ids, {1, static_cast<int64_t>(ids.size())}));
    const Tensor last = select(select(logits, 0, 0), 0, logits.size(1) - 1);
    const int64_t token = nn::models::argmax_token(last.contiguous().to_vector<double>());
    out.push_back(token);
    ids.push_back(token);
  }
  return out;
}

class GreedyGeneration : public ::testing::TestWithParam<const char*> {};

TEST_P(GreedyGeneration, EqualsArgmaxOfFullRecomputation) {
  auto model = float64_model(GetParam());
  const std::vector<int64_t> prompt = random_ids(4, model->vocab_size(), 5);
  GenerationOptions o;
  o.max_new_tokens = 10;
  o.do_sample = false;
  const std::vector<int64_t> got = nn::models::generate(*model, prompt, o);
  EXPECT_EQ(got, argmax_by_recomputation(*model, prompt, 10));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GreedyGeneration, ::testing::Values("gpt2_tiny", "llama_tiny"));

// `hearth generate` as a user runs it: greedy ids equal to full recomputation.
TEST(GenerateCommand, GreedyIdsEqualArgmaxOfFullRecomputation) {
  auto model = nn::models::load_causal_lm(fixture("llama_tiny"));
  model->eval();
  const testing::CommandResult r =
      testing::run_command(std::string(HEARTH_TEST_CLI) + " generate --model " + fixture("llama_tiny") +
                           " --prompt_ids 5,9,13 --max_new_tokens 8 --do_sample false --cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Up to and with the first eos (config.json's 2), where generation stops.
  const std::vector<int64_t> eos = nn::models::read_eos_token_ids(fixture("llama_tiny"));
  ASSERT_EQ(eos, (std::vector<int64_t>{2}));
  std::string expected;
  for (int64_t id : argmax_by_recomputation(*model, {5, 9, 13}, 8)) {
    expected += (expected.empty() ? "" : ",") + std::to_string(id);
    if (id == eos[0]) break;
  }
  EXPECT_NE(("\n" + r.output).find("\n" + expected + "\n"), std::string::npos) << "expected " << expected << " in\n"
                                                                               << r.output;
}

TEST(GenerateCommand, BadFlagsExitWithUsageErrors) {
  const std::string base = std::string(HEARTH_TEST_CLI) + " generate --model " + fixture("gpt2_tiny");
  testing::CommandResult r = testing::run_command(base + " --prompt_ids 1,2 --top_p 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("top_p: expected a number in (0, 1], got 0"), std::string::npos) << r.output;
  r = testing::run_command(base + " --prompt_ids 1,x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--prompt_ids: expected an integer"), std::string::npos) << r.output;
}

TEST(Generation, StopsAtEosAndAtTheModelsLength) {
  auto model = float64_model("gpt2_tiny");
  const std::vector<int64_t> prompt = random_ids(3, model->vocab_size(), 6);
  GenerationOptions o;
  o.max_new_tokens = 6;
  o.temperature = 0;
  o.do_sample = true;  // temperature 0: greedy all the same
  const std::vector<int64_t> free_run = nn::models::generate(*model, prompt, o);
  ASSERT_EQ(free_run.size(), 6u);
  o.eos_token_ids = {99, free_run[2]};
  const std::vector<int64_t> stopped = nn::models::generate(*model, prompt, o);
  const auto first = std::find(free_run.begin(), free_run.end(), free_run[2]) - free_run.begin();
  EXPECT_EQ(stopped, std::vector<int64_t>(free_run.begin(), free_run.begin() + first + 1));
  o.eos_token_ids.clear();
  o.max_new_tokens = 100;
  EXPECT_EQ(nn::models::generate(*model, prompt, o).size(), 17u);  // 3 + 17 = n_positions 20
}

TEST(Generation, SamplingFollowsTheSeed) {
  auto model = float64_model("llama_tiny");
  const std::vector<int64_t> prompt = random_ids(3, model->vocab_size(), 7);
  GenerationOptions o;
  o.max_new_tokens = 12;
  o.do_sample = true;
  o.temperature = 1.5;
  o.seed = 11;
  const auto first = nn::models::generate(*model, prompt, o);
  EXPECT_EQ(nn::models::generate(*model, prompt, o), first);
  o.seed = 12;
  EXPECT_NE(nn::models::generate(*model, prompt, o), first);
  // A nucleus this small holds the most likely token alone: greedy.
  o.top_p = 1e-9;
  GenerationOptions greedy;
  greedy.max_new_tokens = 12;
  EXPECT_EQ(nn::models::generate(*model, prompt, o), nn::models::generate(*model, prompt, greedy));
}

std::vector<double> logs(const std::vector<double>& probs) {
  std::vector<double> out;
  for (double p : probs) out.push_back(std::log(p));
  return out;
}

std::vector<bool> kept(const std::vector<double>& logits) {
  std::vector<bool> out;
  for (double v : logits) out.push_back(std::isfinite(v));
  return out;
}

TEST(LogitsWarpers, TopPKeepsTheSmallestNucleusAsTransformers) {
  GenerationOptions o;
  o.top_k = 0;
  // Ascending 0.2, 0.3, 0.5: cumulative 0.2, 0.5, 1.0; removed while <= 1 - top_p.
  auto l = logs({0.3, 0.5, 0.2});
  o.top_p = 0.55;  // 1 - p = 0.45: only 0.2 goes
  nn::models::warp_logits(l, o);
  EXPECT_EQ(kept(l), (std::vector<bool>{true, true, false}));
  l = logs({0.3, 0.5, 0.2});
  o.top_p = 0.45;  // 0.55: 0.2 and 0.3 go
  nn::models::warp_logits(l, o);
  EXPECT_EQ(kept(l), (std::vector<bool>{false, true, false}));
  l = logs({0.3, 0.5, 0.2});
  o.top_p = 1.0;
  nn::models::warp_logits(l, o);
  EXPECT_EQ(kept(l), (std::vector<bool>{true, true, true}));
}

TEST(LogitsWarpers, TemperatureThenTopK) {
  GenerationOptions o;
  o.temperature = 2.0;
  o.top_k = 2;
  std::vector<double> l = {1.0, 4.0, 3.0, 3.0 - 1e-9};
  nn::models::warp_logits(l, o);
  EXPECT_EQ(l[1], 2.0);
  EXPECT_EQ(l[2], 1.5);
  EXPECT_EQ(kept(l), (std::vector<bool>{false, true, true, false}));
}

TEST(LogitsWarpers, SamplingWalksTheCumulativeDistribution) {
  const auto l = logs({0.5, 0.3, 0.2});
  EXPECT_EQ(nn::models::sample_from_logits(l, 0.0), 0);
  EXPECT_EQ(nn::models::sample_from_logits(l, 0.49), 0);
  EXPECT_EQ(nn::models::sample_from_logits(l, 0.51), 1);
  EXPECT_EQ(nn::models::sample_from_logits(l, 0.85), 2);
  EXPECT_EQ(nn::models::sample_from_logits({-INFINITY, 0.0, -INFINITY}, 0.999), 1);
}

TEST(Generation, EosIdsFromGenerationConfigThenConfig) {
  testing::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(fs::path(dir.path()) / name) << text;
  };
  EXPECT_TRUE(nn::models::read_eos_token_ids(dir.path()).empty());
  write("config.json", R"({"eos_token_id": 2})");
  EXPECT_EQ(nn::models::read_eos_token_ids(dir.path()), (std::vector<int64_t>{2}));
  write("generation_config.json", R"({"eos_token_id": [128001, 128009]})");
  EXPECT_EQ(nn::models::read_eos_token_ids(dir.path()), (std::vector<int64_t>{128001, 128009}));
  write("generation_config.json", R"({"eos_token_id": "two"})");
  try {
    nn::models::read_eos_token_ids(dir.path());
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("generation_config.json: field 'eos_token_id'"), std::string::npos)
        << e.what();
  }
}

TEST(Generation, DefaultsFromGenerationConfig) {
  testing::TempDir dir;
  GenerationOptions o;
  o.do_sample = true;
  nn::models::read_generation_defaults(dir.path(), o);  // no file: nothing changes
  EXPECT_TRUE(o.do_sample);
  EXPECT_EQ(o.top_k, 50);
  dir.write("generation_config.json",
            R"({"do_sample": false, "temperature": 0.6, "top_k": null, "top_p": 0.9, "max_new_tokens": 7})");
  nn::models::read_generation_defaults(dir.path(), o);
  EXPECT_FALSE(o.do_sample);
  EXPECT_EQ(o.temperature, 0.6);
  EXPECT_EQ(o.top_k, 50);  // null: unset
  EXPECT_EQ(o.top_p, 0.9);
  EXPECT_EQ(o.max_new_tokens, 7);
  dir.write("generation_config.json", R"({"do_sample": "yes"})");
  try {
    nn::models::read_generation_defaults(dir.path(), o);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'do_sample': expected true or false"), std::string::npos) << e.what();
  }
}

TEST(Generation, RefusesBadOptions) {
  auto model = float64_model("gpt2_tiny");
  GenerationOptions o;
  o.top_p = 0;
  EXPECT_THROW(nn::models::generate(*model, {1}, o), ValueError);
  EXPECT_THROW(nn::models::generate(*model, {}, GenerationOptions{}), ValueError);
  EXPECT_THROW(nn::models::generate(*model, {1000}, GenerationOptions{}), ValueError);
}

}  // namespace
}  // namespace hearth
