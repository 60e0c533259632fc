// run_glue: fine-tunes BERT for sequence classification on a GLUE task or on
// text files, with the command line of Hugging Face's run_glue.py:
//
//   run_glue --model_name_or_path models/bert-base-uncased --task_name mrpc
//            --data_dir glue_data/MRPC --do_train --do_eval --max_seq_length 128
//            --per_device_train_batch_size 32 --learning_rate 2e-5 --num_train_epochs 3
//            --output_dir runs/mrpc --overwrite_output_dir
//
// It reads the data (glue_data.h), tokenises it with the model folder's
// tokenizer, loads the model (model_loading.h), trains and evaluates with the
// Trainer, and writes what the Python script writes into output_dir: the
// fine-tuned model folder (config.json, model.safetensors, tokenizer files),
// train_results.json, eval_results.json, all_results.json and
// trainer_state.json, and with --do_predict predict_results_<task>.txt.
// Every TrainingArguments field is a flag.
#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "apps/common/json_config.h"
#include "apps/common/lightning_flags.h"
#include "apps/common/metric_names.h"
#include "apps/common/resolved_training_arguments.h"
#include "apps/common/run_results.h"
#include "apps/common/training_argument_flags.h"
#include "examples/run_glue/glue_arguments.h"
#include "examples/run_glue/glue_data.h"
#include "examples/run_glue/glue_metrics.h"
#include "examples/run_glue/model_loading.h"
#include "examples/run_glue/predict.h"
#include "hearth/core/errors.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/input_error.h"
#include "hearth/core/generator.h"
#include "hearth/core/switches.h"
#include "hearth/data/tokenized_text_dataset.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/distributed/rendezvous.h"
#include "hearth/io/atomic_file.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/device_select.h"
#include "hearth/train/trainer.h"

namespace run_glue {
namespace {

namespace fs = std::filesystem;
using hearth::nn::models::BertForSequenceClassification;
using hearth::train::TrainingArguments;

constexpr int kUsageExitCode = 2;

// Rank 0 of a launch, or a process on its own.
bool is_main_process() {
  const std::optional<hearth::distributed::Rendezvous> r = hearth::distributed::rendezvous_from_environment();
  return !r || r->rank == 0;
}

// A bad flag or combination: one line and exit code 2, as for parse errors.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The arguments of the flags and files (apps/common/resolved_training_arguments.h);
// anything wrong with them is a bad argument.
TrainingArguments resolve_training_arguments(const hearth::cli::TrainingArgumentFlags& flags,
                                             const hearth::cli::LightningFlags& lightning,
                                             const hearth::cli::JsonConfigFlag& config) {
  try {
    return hearth::cli::resolved_training_arguments(flags, lightning, config);
  } catch (const hearth::Error& e) {
    throw UsageError(e.what());
  }
}

// The tokenizer files of the model folder, copied beside the saved model so
// that output_dir is a complete model folder. Written as every output file
// is: atomically, replacing a symlink at the name rather than writing through it.
void copy_tokenizer_files(const std::string& from, const std::string& to) {
  for (const char* name : {"vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) {
    const fs::path src = fs::path(from) / name;
    if (fs::exists(src) && fs::path(from) != fs::path(to))
      hearth::io::copy_file_atomic(src.string(), (fs::path(to) / name).string());
  }
}

std::shared_ptr<hearth::data::TokenizedTextDataset> tokenize(const hearth::data::LabeledTexts& texts,
                                                             const hearth::data::LabelSpace& labels,
                                                             const hearth::data::BertTokenizer& tokenizer,
                                                             const hearth::data::EncodeOptions& options) {
  return std::make_shared<hearth::data::TokenizedTextDataset>(texts, hearth::data::encode_labels(texts, labels),
                                                              labels.is_regression, tokenizer, options);
}

int run(const GlueArguments& given, const hearth::cli::TrainingArgumentFlags& flags,
        const hearth::cli::LightningFlags& lightning, const hearth::cli::JsonConfigFlag& config) {
  GlueArguments a = given;
  // Under a launcher, rank 0 reports for all and writes the results; the
  // others print only errors (warnings go to stderr).
  const bool main_process = is_main_process();
  if (!main_process) std::cout.setstate(std::ios::failbit);
  std::ostream* notices = main_process ? &std::cerr : nullptr;  // warnings said once, not once per rank
  TrainingArguments args = resolve_training_arguments(flags, lightning, config);
  if (a.cpu) args.use_cpu = true;
  // As Hugging Face's TrainingArguments: evaluations during training mean do_eval.
  if (args.eval_strategy != "no") a.do_eval = true;
  if (!a.do_train && !a.do_eval && !a.do_predict)
    throw UsageError("nothing to do: pass --do_train, --do_eval, --do_predict or several");
  // Before the data and the model load: a checkpoint that is not there.
  if (args.resume_from_checkpoint && a.do_train) {
    try {
      (void)hearth::train::resolve_checkpoint(*args.resume_from_checkpoint, args.output_dir);
    } catch (const hearth::ValueError& e) {
      throw UsageError(e.what());
    }
  }
  try {
    hearth::train::select_device(args.device, args.use_cpu);
  } catch (const hearth::DeviceError& e) {
    throw UsageError(e.what());
  }
  if (a.model_name_or_path.empty() && a.config_name.empty())
    throw UsageError("--model_name_or_path: expected a local model folder (or --config_name for a new model)");
  if (a.config_name.empty()) require_local_model_folder(a.model_name_or_path);
  // The tokenizer: --tokenizer_name, else the model's folder, else a model
  // folder given as --config_name (Hugging Face's scripts take a folder there).
  std::string tokenizer_dir = a.tokenizer_name.empty() ? a.model_name_or_path : a.tokenizer_name;
  if (tokenizer_dir.empty() && fs::is_directory(a.config_name)) tokenizer_dir = a.config_name;
  if (tokenizer_dir.empty())
    throw UsageError("--tokenizer_name: expected the folder of the tokenizer files (vocab.txt) for --config_name");
  require_local_model_folder(tokenizer_dir);

  GlueData data = load_glue_data(a);
  // A misspelled metric_for_best_model: now, not at the first evaluation.
  try {
    hearth::cli::check_metric_for_best_model(
        args, glue_metric_names(data.task ? data.task->name : "", data.labels.is_regression));
  } catch (const hearth::ValueError& e) {
    throw UsageError(e.what());
  }
  const hearth::data::BertTokenizer tokenizer = hearth::data::BertTokenizer::from_pretrained(tokenizer_dir);
  hearth::manual_seed(static_cast<uint64_t>(args.seed));
  // --config_name: a new model of that shape (from_config), else the folder's weights (from_pretrained).
  std::shared_ptr<BertForSequenceClassification> model =
      a.config_name.empty() ? load_classifier(a.model_name_or_path, data.labels, a.ignore_mismatched_sizes, notices)
                            : classifier_from_config(a.config_name, data.labels);
  const std::string config_source =
      a.config_name.empty() ? a.model_name_or_path + "/config.json" : a.config_name;
  // Token ids at or beyond vocab_size would index past the word embeddings.
  HEARTH_CHECK(tokenizer.vocab().size() <= model->config.vocab_size, hearth::ValueError, "[run_glue] ", tokenizer_dir,
               ": the tokenizer's vocabulary has ", tokenizer.vocab().size(), " tokens, more than the vocab_size ",
               model->config.vocab_size, " of ", config_source);

  int64_t max_length = a.max_seq_length;
  if (max_length > model->config.max_position_embeddings) {
    if (notices)
      *notices << "[run_glue] --max_seq_length " << max_length << " is longer than the model takes ("
               << model->config.max_position_embeddings << " positions); using "
               << model->config.max_position_embeddings << "\n";
    max_length = model->config.max_position_embeddings;
  }
  hearth::data::EncodeOptions encode;
  encode.max_length = max_length;
  encode.padding = a.pad_to_max_length ? hearth::data::Padding::max_length : hearth::data::Padding::none;
  std::shared_ptr<hearth::data::TokenizedTextDataset> train_set;
  if (data.train) train_set = tokenize(*data.train, data.labels, tokenizer, encode);
  std::vector<std::pair<std::string, std::shared_ptr<hearth::data::TokenizedTextDataset>>> eval_sets;
  for (const auto& [name, texts] : data.eval)
    eval_sets.emplace_back(name, tokenize(texts, data.labels, tokenizer, encode));
  std::vector<std::pair<std::string, std::shared_ptr<hearth::data::TokenizedTextDataset>>> predict_sets;
  for (const auto& [name, texts] : data.predict) {
    predict_sets.emplace_back(name, std::make_shared<hearth::data::TokenizedTextDataset>(
                                        texts, std::vector<double>{}, data.labels.is_regression, tokenizer, encode));
  }

  std::cout << "run_glue: " << (data.task ? "GLUE task " + data.task->name : std::string("text files")) << ", "
            << (data.labels.is_regression ? std::string("regression")
                                          : std::to_string(data.labels.num_labels()) + " labels")
            << "; " << (train_set ? train_set->size() : 0) << " training and "
            << (eval_sets.empty() ? 0 : eval_sets.front().second->size()) << " evaluation samples\n";

  hearth::train::TrainerOptions opts;
  opts.console = &std::cout;
  opts.forward = [](hearth::nn::Module& m, const hearth::data::Batch& b) {
    auto& bert = static_cast<BertForSequenceClassification&>(m);
    hearth::nn::models::SequenceClassifierOutput out =
        bert.forward(b.at(hearth::data::field::kInputIds), b.at(hearth::data::field::kTokenTypeIds),
                     b.at(hearth::data::field::kAttentionMask), b.at(hearth::data::field::kLabels));
    return hearth::train::ForwardOutput{out.loss, out.logits};
  };
  const std::string metric_task = data.task ? data.task->name : "";
  const bool regression = data.labels.is_regression;
  opts.compute_metrics = [metric_task, regression](const hearth::Tensor& logits, const hearth::Tensor& labels) {
    return glue_metrics(metric_task, regression, logits, labels);
  };
  opts.collate = hearth::data::padding_collate(tokenizer.pad_token_id());
  // Each checkpoint is a model folder Hugging Face can load too.
  opts.checkpoint_extra_files = [model, tokenizer_dir](const std::string& dir) {
    model->config.save((fs::path(dir) / "config.json").string(), {"BertForSequenceClassification"});
    copy_tokenizer_files(tokenizer_dir, dir);
  };
  std::shared_ptr<const hearth::data::Dataset> eval_for_trainer;
  if (!eval_sets.empty()) eval_for_trainer = eval_sets.front().second;
  hearth::train::Trainer trainer(model, args, train_set, eval_for_trainer, {}, opts);

  if (a.do_train) {
    hearth::train::TrainOutput out = trainer.train();
    if (out.interrupted_by_signal != 0)
      return out.interrupted_by_signal == SIGINT ? 130 : 128 + out.interrupted_by_signal;
    hearth::cli::MetricMap metrics = out.metrics;
    metrics["train_samples"] = static_cast<double>(train_set->size());
    if (main_process) {
      model->save_pretrained(args.output_dir);
      copy_tokenizer_files(tokenizer_dir, args.output_dir);
      hearth::cli::save_metrics(args.output_dir, "train", metrics);
    }
    hearth::cli::log_metrics(std::cout, "train", metrics);
    trainer.save_state();
  }
  if (a.do_eval) {
    hearth::cli::MetricMap combined;
    for (const auto& [name, set] : eval_sets) {
      hearth::cli::MetricMap metrics = trainer.evaluate(set, "eval_");
      metrics["eval_samples"] = static_cast<double>(set->size());
      if (trainer.state().global_step > 0) metrics["epoch"] = trainer.state().epoch;
      if (name == "validation_mismatched") {
        hearth::cli::MetricMap suffixed;
        for (const auto& [k, v] : metrics) suffixed[k + "_mm"] = v;
        metrics = std::move(suffixed);
      }
      combined.insert(metrics.begin(), metrics.end());
      hearth::cli::log_metrics(std::cout, "eval", metrics);
    }
    if (main_process) hearth::cli::save_metrics(args.output_dir, "eval", combined);
  }
  // The predictions need no other rank: rank 0 alone makes and writes them.
  if (!main_process) predict_sets.clear();
  for (const auto& [name, set] : predict_sets) {
    const std::string file = name.empty() ? "predict_results.txt" : "predict_results_" + name + ".txt";
    const std::string path = (fs::path(args.output_dir) / file).string();
    fs::create_directories(args.output_dir);
    write_predictions(*model, trainer.device(), *set, opts.collate, args.per_device_eval_batch_size, data.labels, path);
    std::cout << "run_glue: " << set->size() << " predictions in " << path << "\n";
  }
  const std::string fallback = hearth::fallback_report();
  if (!fallback.empty()) std::cout << "run_glue: these ops fell back to the CPU (slower):\n" << fallback;
  return 0;
}

}  // namespace
}  // namespace run_glue

int main(int argc, char** argv) {
  hearth::validate_switches_or_exit("run_glue");  // a bad HEARTH_* value: one line, status 2
  CLI::App app{"run_glue: fine-tune BERT on a GLUE task or on CSV/JSON text files (Hugging Face's run_glue.py)"};
  // A flag given twice takes its last value, as Python's argparse does.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  run_glue::GlueArguments glue_args;
  run_glue::add_glue_flags(app, glue_args);
  hearth::cli::TrainingArgumentFlags training_flags;
  training_flags.add_to(app, /*skip=*/{"do_train", "do_eval", "do_predict"});  // run_glue's own
  hearth::cli::LightningFlags lightning_flags;
  lightning_flags.add_to(app);
  hearth::cli::JsonConfigFlag config;
  config.add_to(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "run_glue: error: " << e.what() << " (see 'run_glue --help')\n";
    return run_glue::kUsageExitCode;
  }
  try {
    config.read(app, &training_flags);
    run_glue::resolve_hub_names(glue_args);
  } catch (const hearth::Error& e) {
    std::cerr << "run_glue: error: " << e.what() << "\n";
    return run_glue::kUsageExitCode;
  }
  try {
    return run_glue::run(glue_args, training_flags, lightning_flags, config);
  } catch (const run_glue::UsageError& e) {
    std::cerr << "run_glue: error: " << e.what() << "\n";
    return run_glue::kUsageExitCode;
  } catch (const hearth::InputError& e) {
    std::cerr << "run_glue: error: " << e.what() << "\n";
    return run_glue::kUsageExitCode;
  } catch (const hearth::Error& e) {
    std::cerr << "run_glue: error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "run_glue: error: " << hearth::describe_current_exception() << "\n";
    return 1;
  }
}
