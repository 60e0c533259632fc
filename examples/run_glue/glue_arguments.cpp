#include "examples/run_glue/glue_arguments.h"

#include "hearth/core/errors.h"
#include "hearth/data/glue.h"

namespace run_glue {
namespace {

std::string task_names() {
  std::string out;
  for (const hearth::data::GlueTask& t : hearth::data::glue_tasks()) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

// A boolean flag given bare (--do_train) or with a value (--pad_to_max_length
// false); --help shows it as "--do_train [BOOL]".
void add_bool(CLI::App& app, const std::string& name, bool& slot, const std::string& help) {
  app.add_flag("--" + name, slot, help)
      ->expected(0, 1)
      ->type_name("[BOOL]")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

}  // namespace

void add_glue_flags(CLI::App& app, GlueArguments& a) {
  app.add_option("--model_name_or_path", a.model_name_or_path,
                 "local model folder (config.json, model.safetensors, vocab.txt); hearth never downloads");
  app.add_option("--config_name", a.config_name,
                 "a BERT config.json: train a randomly initialised model of that shape instead (needs "
                 "--tokenizer_name when there is no --model_name_or_path)");
  app.add_option("--tokenizer_name", a.tokenizer_name, "folder of the tokenizer files, if not the model's");
  add_bool(app, "ignore_mismatched_sizes", a.ignore_mismatched_sizes,
           "train a new classifier when the checkpoint's has another label count");
  app.add_option("--cache_dir", a.cache_dir, "no effect: hearth never downloads, so it caches nothing");
  app.add_option("--model_revision", a.model_revision,
                 "main (the folder as it is); another revision is refused: download it into a folder of its own");
  app.add_option("--token", a.token, "no effect: hearth never downloads");
  add_bool(app, "use_auth_token", a.use_auth_token, "no effect: hearth never downloads");
  add_bool(app, "use_fast_tokenizer", a.use_fast_tokenizer,
           "no effect: hearth's WordPiece tokenizer gives the fast tokenizer's ids either way");
  add_bool(app, "trust_remote_code", a.trust_remote_code,
           "no effect: hearth runs no code from a model folder, only its own models");
  app.add_option("--task_name", a.task_name, "GLUE task: " + task_names());
  app.add_option("--dataset_name", a.dataset_name,
                 "the Hub's data set: glue (with --dataset_config_name TASK) is --task_name TASK; others need the "
                 "network (export them to files for --train_file)");
  app.add_option("--dataset_config_name", a.dataset_config_name, "with --dataset_name glue: the GLUE task");
  add_bool(app, "overwrite_cache", a.overwrite_cache, "no effect: tokenized data are not cached");
  app.add_option("--data_dir", a.data_dir, "folder with the task's original GLUE files (train.tsv, dev.tsv)");
  app.add_option("--train_file", a.train_file, "training data: .csv, .tsv, .json or .jsonl, label column 'label'");
  app.add_option("--validation_file", a.validation_file, "evaluation data, like --train_file");
  app.add_option("--test_file", a.test_file, "data to predict on, like --train_file but without labels");
  app.add_option("--max_seq_length", a.max_seq_length, "longest sequence after tokenization (default 128)")
      ->check(CLI::Range(int64_t{3}, int64_t{1} << 20));
  add_bool(app, "pad_to_max_length", a.pad_to_max_length,
           "pad every sample to max_seq_length (default true); false pads each batch to its longest");
  const auto sample_count = CLI::Range(int64_t{-1}, int64_t{1'000'000'000'000});
  app.add_option("--max_train_samples", a.max_train_samples, "train on the first N samples only")->check(sample_count);
  app.add_option("--max_eval_samples", a.max_eval_samples, "evaluate on the first N samples only")->check(sample_count);
  app.add_option("--max_predict_samples", a.max_predict_samples, "predict on the first N samples only")
      ->check(sample_count);
  add_bool(app, "do_train", a.do_train, "train");
  add_bool(app, "do_eval", a.do_eval, "evaluate on the validation data");
  add_bool(app, "do_predict", a.do_predict,
           "predict on the test data, writing predict_results_<task>.txt (index and predicted label)");
  app.add_flag("--cpu", a.cpu, "run on the CPU even if an accelerator is present (same as --use_cpu)");
}

void resolve_hub_names(GlueArguments& a) {
  if (!a.dataset_name.empty()) {
    const bool glue = a.dataset_name == "glue" || a.dataset_name == "nyu-mll/glue";
    HEARTH_CHECK(glue, hearth::ValueError, "--dataset_name ", a.dataset_name,
                 ": hearth has no network access to the Hub's data sets; on a connected machine save it to files "
                 "(datasets' to_csv or to_json) and pass --train_file and --validation_file");
    HEARTH_CHECK(!a.dataset_config_name.empty(), hearth::ValueError, "--dataset_name ", a.dataset_name,
                 ": expected --dataset_config_name with the GLUE task (", task_names(), ")");
    HEARTH_CHECK(a.task_name.empty() || a.task_name == a.dataset_config_name, hearth::ValueError,
                 "--task_name ", a.task_name, " and --dataset_config_name ", a.dataset_config_name,
                 " name different tasks");
    a.task_name = a.dataset_config_name;
  } else {
    HEARTH_CHECK(a.dataset_config_name.empty(), hearth::ValueError, "--dataset_config_name ",
                 a.dataset_config_name, ": expected --dataset_name with it (glue)");
  }
  // Before any data loads: a misspelled task is a bad argument like any other.
  if (!a.task_name.empty()) (void)hearth::data::glue_task(a.task_name);
  HEARTH_CHECK(a.model_revision == "main", hearth::ValueError, "--model_revision ", a.model_revision,
               ": hearth reads --model_name_or_path as it is and never downloads; fetch that revision on a connected "
               "machine (huggingface-cli download MODEL --revision ", a.model_revision,
               " --local-dir DIR) and pass DIR");
}

}  // namespace run_glue
