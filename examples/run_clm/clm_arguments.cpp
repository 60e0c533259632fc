#include "examples/run_clm/clm_arguments.h"

#include "hearth/core/errors.h"

namespace run_clm {
namespace {

// A boolean flag given bare (--do_train) or with a value (--keep_linebreaks false).
void add_bool(CLI::App& app, const std::string& name, bool& slot, const std::string& help) {
  app.add_flag("--" + name, slot, help)
      ->expected(0, 1)
      ->type_name("[BOOL]")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

}  // namespace

void add_clm_flags(CLI::App& app, ClmArguments& a) {
  app.add_option("--model_name_or_path", a.model_name_or_path,
                 "local model folder (config.json, model.safetensors, tokenizer.json); hearth never downloads");
  app.add_option("--config_name", a.config_name,
                 "a config.json (or its folder): train a randomly initialised model of that shape instead");
  app.add_option("--model_type", a.model_type,
                 "gpt2, llama, mistral or qwen2: a new model of transformers' default config for it (without "
                 "--model_name_or_path and --config_name)");
  app.add_option("--config_overrides", a.config_overrides,
                 "with --model_type: fields of the default config to change, e.g. n_embd=256,n_layer=4");
  app.add_option("--tokenizer_name", a.tokenizer_name, "folder of the tokenizer files, if not the model's");
  app.add_option("--cache_dir", a.cache_dir, "no effect: hearth never downloads, so it caches nothing");
  app.add_option("--model_revision", a.model_revision, "main (the folder as it is); another revision is refused");
  app.add_option("--token", a.token, "no effect: hearth never downloads");
  app.add_option("--torch_dtype", a.torch_dtype,
                 "auto, float32, bfloat16 or float16: accepted; the weights train in float32 (see --bf16)");
  add_bool(app, "use_fast_tokenizer", a.use_fast_tokenizer, "no effect: hearth has one tokenizer");
  add_bool(app, "trust_remote_code", a.trust_remote_code, "no effect: hearth runs no code from a model folder");
  add_bool(app, "low_cpu_mem_usage", a.low_cpu_mem_usage, "no effect");
  app.add_option("--dataset_name", a.dataset_name,
                 "the Hub's data sets need the network: export one to a file and pass --train_file");
  app.add_option("--dataset_config_name", a.dataset_config_name, "with --dataset_name (refused likewise)");
  app.add_option(
      "--train_file", a.train_file,
      "training data: .txt (a row per line), .json/.jsonl (a 'text' column, or prompt and completion), .csv");
  app.add_option("--validation_file", a.validation_file, "evaluation data, like --train_file");
  const auto sample_count = CLI::Range(int64_t{-1}, int64_t{1'000'000'000'000});
  app.add_option("--max_train_samples", a.max_train_samples, "train on the first N blocks only")->check(sample_count);
  app.add_option("--max_eval_samples", a.max_eval_samples, "evaluate on the first N blocks only")->check(sample_count);
  add_bool(app, "streaming", a.streaming, "refused: hearth reads the files whole");
  app.add_option("--block_size", a.block_size,
                 "tokens per training block (default: min(1024, the model's maximum sequence length))")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 24));
  add_bool(app, "overwrite_cache", a.overwrite_cache, "no effect: tokenized data are not cached");
  app.add_option("--validation_split_percentage", a.validation_split_percentage,
                 "percent of the training file held out for evaluation without --validation_file (default 5)")
      ->check(CLI::Range(int64_t{0}, int64_t{100}));
  app.add_option("--preprocessing_num_workers", a.preprocessing_num_workers, "no effect: tokenizing is one pass");
  add_bool(app, "keep_linebreaks", a.keep_linebreaks,
           "a .txt file's rows keep their line breaks (default true, as datasets' text loader); false drops them");
  app.add_option("--lora_r", a.lora_r, "train a LoRA adapter of this rank instead of the whole model (0: no adapter)")
      ->check(CLI::Range(int64_t{0}, int64_t{65536}));
  app.add_option("--lora_alpha", a.lora_alpha, "LoRA's alpha: the adapter is scaled by alpha / r (default 8, PEFT's)");
  app.add_option("--lora_dropout", a.lora_dropout, "dropout on the adapter's input (default 0)")
      ->check(CLI::Range(0.0, 0.999));
  app.add_option("--lora_target_modules", a.lora_target_modules,
                 "comma-separated layer names to adapt, or all-linear (default q_proj,v_proj; c_attn for GPT-2)");
  app.add_option("--lora_base_dtype", a.lora_base_dtype,
                 "float32, or bf16 to keep the frozen base weights in bfloat16 (adapters stay float32)");
  add_bool(app, "merge_adapters", a.merge_adapters,
           "after training, fold the adapter into the weights and save the full model (config.json, "
           "model.safetensors) to output_dir");
  add_bool(app, "do_train", a.do_train, "train");
  add_bool(app, "do_eval", a.do_eval, "evaluate on the validation data (perplexity)");
  app.add_flag("--cpu", a.cpu, "run on the CPU even if an accelerator is present (same as --use_cpu)");
}

void check_clm_arguments(const ClmArguments& a) {
  HEARTH_CHECK(a.dataset_name.empty(), hearth::ValueError, "--dataset_name ", a.dataset_name,
               ": hearth has no network access to the Hub's data sets; on a connected machine save it to a file "
               "(datasets' to_json) and pass --train_file");
  HEARTH_CHECK(a.dataset_config_name.empty(), hearth::ValueError, "--dataset_config_name ", a.dataset_config_name,
               ": only with --dataset_name, which needs the network");
  HEARTH_CHECK(!a.streaming, hearth::ValueError, "--streaming: hearth reads the data files whole; leave it out");
  HEARTH_CHECK(a.model_revision == "main", hearth::ValueError, "--model_revision ", a.model_revision,
               ": hearth reads --model_name_or_path as it is and never downloads; fetch that revision into a folder "
               "and pass the folder");
  HEARTH_CHECK(a.config_overrides.empty() || (a.config_name.empty() && a.model_name_or_path.empty()),
               hearth::ValueError,
               "--config_overrides can't be used in combination with --config_name or --model_name_or_path");
  HEARTH_CHECK(a.config_overrides.empty() || !a.model_type.empty(), hearth::ValueError,
               "--config_overrides: expected --model_type, the architecture whose default config it changes");
  HEARTH_CHECK(a.block_size == -1 || a.block_size >= 2, hearth::ValueError,
               "--block_size: expected at least 2 tokens (or -1 for the default), got ", a.block_size);
  HEARTH_CHECK(a.lora_base_dtype == "float32" || a.lora_base_dtype == "fp32" || a.lora_base_dtype == "bf16" ||
                   a.lora_base_dtype == "bfloat16",
               hearth::ValueError, "--lora_base_dtype: expected float32 or bf16, got ", a.lora_base_dtype);
  HEARTH_CHECK(a.lora_r > 0 || (!a.merge_adapters && a.lora_target_modules.empty()), hearth::ValueError,
               a.merge_adapters ? "--merge_adapters" : "--lora_target_modules", ": expected --lora_r > 0 with it");
  HEARTH_CHECK(a.lora_alpha > 0, hearth::ValueError, "--lora_alpha: expected a positive number, got ", a.lora_alpha);
}

}  // namespace run_clm
