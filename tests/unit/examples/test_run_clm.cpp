// examples/run_clm: the metrics run_clm.py computes, the held-out split, the
// fixed-width collation of prompt/completion batches; and a LoRA run whose
// adapter folder loads back onto the base model and whose merged model
// (--merge_adapters) gives the adapted model's logits.
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "examples/run_clm/clm_data.h"
#include "examples/run_clm/clm_metrics.h"
#include "examples/run_clm/clm_model_config.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/lora.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/ops/factory.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tensor_compare.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(HEARTH_FIXTURES_DIR) + "/causal_lm/" + name; }

TEST(RunClm, AccuracyComparesEachPredictionWithTheNextLabel) {
  // Row 0: predictions at t = 0, 1, 2 against labels at t = 1, 2, 3: 7 right, 8 right, 0 wrong.
  const Tensor preds = tensor(std::vector<float>{7, 8, 0, 99, 1, 2, 3, 99}, {2, 4});
  const Tensor labels = tensor(std::vector<int64_t>{5, 7, 8, 9, 0, 1, -100, -100}, {2, 4});
  // Row 1: t = 0 predicts 1 (right); labels -100 after are left out.
  EXPECT_DOUBLE_EQ(run_clm::next_token_accuracy(preds, labels).at("accuracy"), 3.0 / 4.0);
}

TEST(RunClm, PerplexityIsExpOfTheLossAndInfinityPastOverflow) {
  EXPECT_DOUBLE_EQ(run_clm::perplexity(std::log(12.5)), 12.5);
  EXPECT_TRUE(std::isinf(run_clm::perplexity(1e6)));
}

TEST(RunClm, HeldOutRowsRoundAsPythonRounds) {
  EXPECT_EQ(run_clm::percent_split_rows(240, 5), 12);
  EXPECT_EQ(run_clm::percent_split_rows(50, 5), 2);  // 2.5 -> 2 (half to even)
  EXPECT_EQ(run_clm::percent_split_rows(70, 5), 4);  // 3.5 -> 4
  EXPECT_EQ(run_clm::percent_split_rows(10, 0), 0);
}

TEST(RunClm, PromptCompletionBatchesArePaddedToTheBlockSize) {
  auto collate = run_clm::fixed_width_collate(/*pad_id=*/47, /*width=*/6);
  data::Example a{{data::field::kInputIds, tensor(std::vector<int64_t>{1, 2, 3})},
                  {data::field::kAttentionMask, tensor(std::vector<int64_t>{1, 1, 1})},
                  {data::field::kLabels, tensor(std::vector<int64_t>{-100, 2, 3})}};
  const data::Batch b = collate({a});
  EXPECT_EQ(b.at(data::field::kInputIds).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 47, 47, 47}));
  EXPECT_EQ(b.at(data::field::kAttentionMask).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(b.at(data::field::kLabels).to_vector<int64_t>(), (std::vector<int64_t>{-100, 2, 3, -100, -100, -100}));
}

// --model_type with --config_overrides: transformers' defaults, fields set
// as their defaults' types, unknown keys and bad values named.
TEST(RunClm, ModelTypeDefaultsTakeConfigOverridesAsTransformers) {
  const nlohmann::json c = nlohmann::json::parse(
      run_clm::config_of_model_type("gpt2", "n_embd=24,n_layer=2,n_head=4,resid_pdrop=0.25,activation_function=relu"));
  EXPECT_EQ(c.at("n_embd"), 24);
  EXPECT_EQ(c.at("n_layer"), 2);
  EXPECT_EQ(c.at("n_positions"), 1024);  // a default kept
  EXPECT_EQ(c.at("resid_pdrop"), 0.25);
  EXPECT_EQ(c.at("activation_function"), "relu");
  auto error = [](const std::string& type, const std::string& overrides) {
    try {
      run_clm::config_of_model_type(type, overrides);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("gpt2", "n_embdd=3").find("key n_embdd is not a field of the gpt2 config"), std::string::npos);
  EXPECT_NE(error("gpt2", "n_layer=two").find("n_layer=two: expected an integer"), std::string::npos);
  EXPECT_NE(error("gpt2", "n_inner=64").find("only integer, number, boolean and string fields"), std::string::npos);
  EXPECT_NE(error("bert", "").find("--model_type bert: expected one of gpt2, llama"), std::string::npos);
  auto model = run_clm::model_of_type("llama",
                                      "hidden_size=16,intermediate_size=32,num_hidden_layers=1,"
                                      "num_attention_heads=2,num_key_value_heads=1,vocab_size=40");
  EXPECT_EQ(model->model_type(), "llama");
  EXPECT_EQ(model->vocab_size(), 40);
}

// datasets' text loader under run_clm.py's keep_linebreaks=True: each line
// keeps its break; a last line the file does not end keeps none.
TEST(RunClm, TextRowsKeepTheirLineBreaksAsDatasetsReadsThem) {
  testing::TempDir dir;
  dir.write("train.txt", "ab\r\n\ncd");
  std::vector<std::string> seen;
  auto tokenize = [&](const std::string& text) {
    seen.push_back(text);
    return data::TokenIds{1, 2, 3};
  };
  run_clm::ClmArguments a;
  a.train_file = dir.file("train.txt");
  a.do_train = true;
  a.validation_split_percentage = 0;
  run_clm::load_clm_data(a, tokenize, -1, 0, 2, nullptr);
  EXPECT_EQ(seen, (std::vector<std::string>{"ab\n", "\n", "cd"}));
  seen.clear();
  a.keep_linebreaks = false;
  run_clm::load_clm_data(a, tokenize, -1, 0, 2, nullptr);
  EXPECT_EQ(seen, (std::vector<std::string>{"ab", "", "cd"}));
}

// run_clm with --lora_r on the fixture GPT-2 (c_attn adapted, PEFT's Conv1D
// case): the adapter folder in PEFT's files loads back onto the base model,
// and the merged model folder gives the same logits.
TEST(RunClm, LoraAdapterLoadsBackAndMergedModelGivesTheAdaptedLogits) {
  testing::TempDir dir;
  const std::string out = dir.file("lora");
  const testing::CommandResult r = testing::run_command(
      std::string("OMP_NUM_THREADS=1 XDG_CONFIG_HOME=") + dir.file("no-config") + " " + HEARTH_TEST_RUN_CLM +
      " --model_name_or_path " + fixture("gpt2_tiny") + " --tokenizer_name " + fixture("tiny_tokenizer") +
      " --train_file " + fixture("tiny_corpus.txt") +
      " --do_train --lora_r 4 --lora_alpha 16 --merge_adapters --per_device_train_batch_size 8 --learning_rate 1e-2"
      " --max_steps 8 --save_steps 4 --seed 3 --use_cpu --disable_tqdm --report_to none --output_dir " +
      out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f : {"adapter_config.json", "adapter_model.safetensors", "config.json", "model.safetensors",
                        "tokenizer.json", "checkpoint-4/adapter_config.json", "checkpoint-4/adapter_model.safetensors"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f << " missing:\n" << r.output;
  // A checkpoint holds the adapter alone, not the frozen base, as Hugging
  // Face's Trainer saves a PEFT model; and it resumes.
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-4" / "model.safetensors"));
  EXPECT_LT(fs::file_size(fs::path(out) / "checkpoint-4" / "adapter_model.safetensors"),
            fs::file_size(fs::path(fixture("gpt2_tiny")) / "model.safetensors"));
  const std::string resumed_out = dir.file("lora-resumed");
  fs::create_directories(resumed_out);
  fs::copy(fs::path(out) / "checkpoint-4", fs::path(resumed_out) / "checkpoint-4", fs::copy_options::recursive);
  const testing::CommandResult resumed = testing::run_command(
      std::string("OMP_NUM_THREADS=1 XDG_CONFIG_HOME=") + dir.file("no-config") + " " + HEARTH_TEST_RUN_CLM +
      " --model_name_or_path " + fixture("gpt2_tiny") + " --tokenizer_name " + fixture("tiny_tokenizer") +
      " --train_file " + fixture("tiny_corpus.txt") +
      " --do_train --lora_r 4 --lora_alpha 16 --per_device_train_batch_size 8 --learning_rate 1e-2"
      " --max_steps 8 --save_steps 4 --seed 3 --use_cpu --disable_tqdm --report_to none --resume_from_checkpoint "
      "latest --output_dir " +
      resumed_out);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  // Resumed from step 4, it ends where the uninterrupted run ended.
  EXPECT_LT(testing::max_abs_diff(
                io::load_safetensors(resumed_out + "/checkpoint-8/adapter_model.safetensors").begin()->second,
                io::load_safetensors(out + "/checkpoint-8/adapter_model.safetensors").begin()->second),
            1e-6);

  NoGradGuard no_grad;
  const Tensor ids = tensor(std::vector<int64_t>{29, 33, 41, 12, 5, 30, 46}, {1, 7});
  auto base = nn::models::load_causal_lm(fixture("gpt2_tiny"));
  base->eval();
  const Tensor base_logits = base->forward(ids);
  const nn::LoraConfig config = nn::load_lora_adapter(out, *base);
  EXPECT_EQ(config.r, 4);
  EXPECT_EQ(config.target_modules, (std::vector<std::string>{"c_attn"}));
  const Tensor adapted = base->forward(ids);
  EXPECT_GT(testing::max_abs_diff(adapted, base_logits), 1e-4) << "training left the adapter at zero";

  auto merged = nn::models::load_causal_lm(out);
  merged->eval();
  EXPECT_LT(testing::max_abs_diff(merged->forward(ids), adapted), 1e-4);

  // `hearth generate --adapter` on the base continues as the merged folder does.
  const std::string generate = std::string(HEARTH_TEST_CLI) +
                               " generate --prompt_ids 29,33,41 --max_new_tokens 6 "
                               "--do_sample false --cpu --model ";
  const testing::CommandResult with_adapter =
      testing::run_command("{ " + generate + fixture("gpt2_tiny") + " --adapter " + out + " 2>/dev/null; }");
  const testing::CommandResult with_merged = testing::run_command("{ " + generate + out + " 2>/dev/null; }");
  ASSERT_EQ(with_adapter.exit_code, 0) << with_adapter.output;
  ASSERT_EQ(with_merged.exit_code, 0) << with_merged.output;
  EXPECT_EQ(with_adapter.output.substr(0, with_adapter.output.find('\n')),
            with_merged.output.substr(0, with_merged.output.find('\n')));
}

}  // namespace
}  // namespace hearth
