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

  // ---- the data ----
  std::string task_name;  // a GLUE task, or empty for --train_file data
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

}  // namespace run_glue
