// run_glue's own flags, under the names of Hugging Face's run_glue.py
// (ModelArguments and DataTrainingArguments), besides every TrainingArguments
// flag (apps/common/training_argument_flags.h), which include --bf16/--fp16.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace run_glue {

struct GlueArguments {
  // ---- the model ----
  // A local model folder (config.json, model.safetensors, vocab.txt or tokenizer.json).
  std::string model_name_or_path;
  // A config.json to build a randomly initialised model from instead
  // (Hugging Face's from_config); with it, --model_name_or_path may be left out.
  std::string config_name;
  // Another folder for the tokenizer files (default: the model's).
  std::string tokenizer_name;
  // Train a new classifier when the checkpoint's has another label count.
  bool ignore_mismatched_sizes = false;
  // Hugging Face's download options: nothing is downloaded here, so they have
  // no effect, but for a revision other than the folder's (refused).
  std::string cache_dir, token, model_revision = "main";
  bool use_auth_token = false, use_fast_tokenizer = true, trust_remote_code = false;

  // ---- the data ----
  std::string task_name;  // a GLUE task, or empty for --train_file data
  // The Hub's names for a data set: "glue" with a task as its configuration
  // is --task_name; any other needs the network, so it is refused.
  std::string dataset_name, dataset_config_name;
  bool overwrite_cache = false;  // no effect: tokenized data are not cached
  // A folder of the original GLUE files of the task (train.tsv, dev.tsv).
  std::string data_dir;
  std::string train_file, validation_file, test_file;
  int64_t max_seq_length = 128;
  bool pad_to_max_length = true;
  int64_t max_train_samples = -1, max_eval_samples = -1, max_predict_samples = -1;

  // ---- what to do ----
  bool do_train = false, do_eval = false, do_predict = false;
  // --cpu: train on the CPU (as --use_cpu), the spelling the device messages recommend.
  bool cpu = false;
};

// Registers the flags above on `app`, writing into `a`.
void add_glue_flags(CLI::App& app, GlueArguments& a);

// Resolves the Hub's spellings: --dataset_name glue --dataset_config_name T
// becomes --task_name T. Throws hearth::ValueError naming the flag for a data
// set or a model revision only the network could give, and for a task that
// is not GLUE's.
void resolve_hub_names(GlueArguments& a);

}  // namespace run_glue
