// run_clm's own flags, under the names of Hugging Face's run_clm.py
// (ModelArguments and DataTrainingArguments), and the LoRA flags of PEFT's
// LoraConfig; besides every TrainingArguments flag
// (apps/common/training_argument_flags.h).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace run_clm {

struct ClmArguments {
  // ---- the model ----
  // A local model folder (config.json, model.safetensors, tokenizer.json).
  std::string model_name_or_path;
  // A config.json (or a folder holding one) to build a randomly initialised
  // model from instead (transformers' from_config).
  std::string config_name;
  // Neither: a new model of this architecture's transformers defaults, with
  // --config_overrides "key=value,..." applied (clm_model_config.h).
  std::string model_type, config_overrides;
  // The folder of the tokenizer files, if not the model's.
  std::string tokenizer_name;
  // Hugging Face's download options: nothing is downloaded here.
  std::string cache_dir, token, model_revision = "main", torch_dtype;
  bool use_fast_tokenizer = true, trust_remote_code = false, low_cpu_mem_usage = false;

  // ---- the data ----
  std::string dataset_name, dataset_config_name;
  std::string train_file, validation_file;
  int64_t max_train_samples = -1, max_eval_samples = -1;
  bool streaming = false;
  // Tokens per training block; -1: min(1024, the model's maximum length).
  int64_t block_size = -1;
  bool overwrite_cache = false;
  // The share of the training file held out for evaluation when there is no
  // --validation_file.
  int64_t validation_split_percentage = 5;
  int64_t preprocessing_num_workers = -1;
  bool keep_linebreaks = true;

  // ---- LoRA (PEFT's LoraConfig) ----
  int64_t lora_r = 0;       // 0: no adapter, the whole model trains
  double lora_alpha = 8.0;  // PEFT's default
  double lora_dropout = 0.0;
  std::string lora_target_modules;  // default: q_proj,v_proj (c_attn for GPT-2)
  std::string lora_base_dtype = "float32";
  bool merge_adapters = false;

  // ---- what to do ----
  bool do_train = false, do_eval = false;
  bool cpu = false;
};

void add_clm_flags(CLI::App& app, ClmArguments& a);

// Refuses (hearth::ValueError naming the flag) what only the network could
// give and values out of range.
void check_clm_arguments(const ClmArguments& a);

}  // namespace run_clm
