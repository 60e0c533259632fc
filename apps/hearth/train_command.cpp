// `hearth train`: trains a model on a data set with the Trainer. Every
// TrainingArguments field is a flag of the same name (generated from the
// field table, so none can be forgotten); --config reads the same names from a
// JSON file, and flags given on the command line win over it.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "apps/common/default_differences.h"
#include "apps/common/lightning_flags.h"
#include "apps/common/metric_names.h"
#include "apps/common/run_results.h"
#include "apps/common/training_argument_flags.h"
#include "apps/common/user_config.h"
#include "apps/hearth/commands.h"
#include "apps/hearth/launcher.h"
#include "apps/hearth/tasks.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/distributed/rendezvous.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"
#include "hearth/io/safetensors.h"
#include "hearth/train/callbacks.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/count_text.h"
#include "hearth/train/device_select.h"
#include "hearth/train/progress.h"
#include "hearth/train/trainer.h"

namespace hearth::cli {
namespace {

using train::TrainingArguments;

struct TrainFlags {
  std::string model = "small_cnn";
  std::string dataset = "fashion_mnist";
  std::string data_dir;
  std::string config;
  bool cpu = false;
  std::string max_train_samples = "-1";
  std::string max_eval_samples = "-1";
  std::string early_stopping_patience;
  std::string early_stopping_threshold = "0";
  std::string devices = "1";  // a count, or Lightning's "auto" (-1: the same)
  // One flag per TrainingArguments field, by name.
  TrainingArgumentFlags training_flags;
  LightningFlags lightning_flags;
  // The subcommand, to ask which flags the command line gave.
  CLI::App* command = nullptr;
  // The --config file's training arguments (its keys for the flags above taken out).
  nlohmann::json config_arguments;
};

void check_choice(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
    throw UsageError(flag + ": expected " + quoted_choices(allowed) + ", got \"" + value + "\"");
}

// Counts (samples, patience) beyond 10^12 are typing mistakes.
constexpr int64_t kMaxFlagCount = 1'000'000'000'000;

int64_t parse_int_flag(const std::string& flag, const std::string& text, int64_t min, int64_t max = kMaxFlagCount) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
    throw UsageError(flag + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got \"" + text + "\"");
  return v;
}

// A finite number in [0, 10^12] (nan and inf are refused).
double parse_number_flag(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v >= 0 && v <= 1e12))
    throw UsageError(flag + ": expected a finite number in [0, 1e12], got \"" + text + "\"");
  return v;
}

// Defaults of the task, then the user's config (`hearth config`), then the
// --config file of training arguments, then the flags.
// A checkpoint of another model would fail on its weights with a list of
// keys; its config.json names the model, so say that instead, before anything
// loads.
void check_resumed_model(const TrainingArguments& args, const TaskConfig& task) {
  if (!args.resume_from_checkpoint) return;
  const std::string& spec = *args.resume_from_checkpoint;
  std::optional<std::string> dir = spec == "latest" || spec == "true" || spec == "True"
                                       ? train::latest_checkpoint(args.output_dir)
                                       : std::optional<std::string>(*args.resume_from_checkpoint);
  if (!dir || !std::filesystem::is_regular_file(std::filesystem::path(*dir) / "config.json")) return;
  TaskConfig saved;
  try {
    saved = load_task_config(*dir);
  } catch (const Error&) {
    return;  // not one of hearth train's checkpoints: the Trainer says what is wrong with it
  }
  if (saved.model_type != task.model_type)
    throw UsageError("--resume_from_checkpoint " + *dir + ": the checkpoint holds a " + saved.model_type +
                     " (config.json model_type); --model is " + task.model_type + ". Pass --model " + saved.model_type +
                     ", or start a new run in another --output_dir.");
}

TrainingArguments resolve_arguments(const TrainFlags& f, const TaskConfig& task) {
  TrainingArguments args = default_arguments(task);
  try {
    f.training_flags.apply_user_config(args, &std::cout);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (!f.config_arguments.is_null()) {
    try {
      args = TrainingArguments::from_json(f.config_arguments, f.config, args);
    } catch (const ValueError& e) {
      throw UsageError(e.what());
    }
  }
  try {
    f.training_flags.apply(args);
    f.lightning_flags.apply(args);
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  if (f.cpu) args.use_cpu = true;
  try {
    args.validate("command line");
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  return args;
}

std::string fmt_metric(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

// The metrics of the last evaluation of the final model, if the log has them.
std::optional<train::Metrics> final_eval_from_log(const train::TrainerState& state) {
  for (auto it = state.log_history.rbegin(); it != state.log_history.rend(); ++it) {
    if (!it->contains("eval_loss")) continue;
    if (it->value("step", int64_t{-1}) != state.global_step) return std::nullopt;
    train::Metrics m;
    for (const auto& [k, v] : it->items())
      if (k.rfind("eval_", 0) == 0 && v.is_number()) m[k] = v.get<double>();
    return m;
  }
  return std::nullopt;
}

// What Hugging Face's Trainer leaves in output_dir at the end of a run
// (save_model, save_metrics, save_state): the final model (model.safetensors,
// config.json, and training_args.json so that `hearth eval --checkpoint
// output_dir` reads it), train_results.json, eval_results.json,
// all_results.json and trainer_state.json. Rank 0 writes them.
void write_final_outputs(train::Trainer& trainer, const nn::Module& model, const TaskConfig& task,
                         const TrainingArguments& args, const train::TrainOutput& out, const train::Metrics& final_eval,
                         int64_t train_samples, int64_t eval_samples) {
  if (auto r = distributed::rendezvous_from_environment(); r && r->rank != 0) return;
  namespace fs = std::filesystem;
  fs::create_directories(args.output_dir);
  io::save_safetensors((fs::path(args.output_dir) / train::kModelFile).string(), model.state_dict(),
                       {{"format", "pt"}});
  save_task_config(task, args.output_dir);
  TrainingArguments saved = args;
  saved.resume_from_checkpoint.reset();  // the file describes the run, as in a checkpoint
  saved.save((fs::path(args.output_dir) / train::kTrainingArgsFile).string());
  MetricMap train_metrics(out.metrics.begin(), out.metrics.end());
  train_metrics["train_samples"] = static_cast<double>(train_samples);
  save_metrics(args.output_dir, "train", train_metrics);
  MetricMap eval_metrics(final_eval.begin(), final_eval.end());
  eval_metrics["eval_samples"] = static_cast<double>(eval_samples);
  eval_metrics["epoch"] = trainer.state().epoch;
  save_metrics(args.output_dir, "eval", eval_metrics);
  trainer.save_state();
}

// Reads --config: the keys naming this command's own flags (model, dataset,
// max_train_samples, ...) set them where the command line did not; the rest
// are training arguments, kept for resolve_arguments.
void read_config_file(TrainFlags& f) {
  if (f.config.empty()) return;
  try {
    hearth::io::check_regular_file(f.config, "--config:");  // a FIFO would block the read
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  std::ifstream in(f.config);
  if (!in.good()) throw UsageError("--config: cannot read '" + f.config + "'");
  std::string text;
  try {
    text = hearth::io::read_json_text(in, "--config: '" + f.config + "'");
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw UsageError("--config: '" + f.config + "' is not valid JSON");
  if (!j.is_object()) throw UsageError("--config: '" + f.config + "': expected a JSON object");
  const std::map<std::string, std::string*> text_flags = {
      {"model", &f.model},
      {"dataset", &f.dataset},
      {"data_dir", &f.data_dir},
      {"max_train_samples", &f.max_train_samples},
      {"max_eval_samples", &f.max_eval_samples},
      {"early_stopping_patience", &f.early_stopping_patience},
      {"early_stopping_threshold", &f.early_stopping_threshold}};
  auto on_command_line = [&](const std::string& key) { return f.command && f.command->count("--" + key) > 0; };
  for (const auto& [key, slot] : text_flags) {
    if (!j.contains(key)) continue;
    const nlohmann::json v = j[key];
    j.erase(key);
    if (v.is_null() || on_command_line(key)) continue;
    if (!v.is_string() && !v.is_number())
      throw UsageError("--config: '" + f.config + "': field '" + key + "': expected a string or a number, got " +
                       v.dump());
    *slot = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (j.contains("cpu")) {
    const nlohmann::json v = j["cpu"];
    j.erase("cpu");
    if (!v.is_boolean())
      throw UsageError("--config: '" + f.config + "': field 'cpu': expected true or false, got " + v.dump());
    if (!on_command_line("cpu")) f.cpu = v.get<bool>();
  }
  f.config_arguments = std::move(j);
}

// `--devices N` outside a launch: start this same command as N ranks under
// the launcher, without --devices (each rank then trains normally).
// --devices as a process count: a number from 1 to 4096, or Lightning's
// "auto" (and -1): one process per accelerator present, one on the CPU.
int device_count_flag(const TrainFlags& f) {
  if (f.devices == "auto" || f.devices == "-1") {
    if (f.cpu) return 1;
    const Device d = resolve_device("auto");
    return d.is_cpu() ? 1 : std::max(1, device_runtime(d.kind).device_count());
  }
  return static_cast<int>(parse_int_flag("--devices", f.devices, 1, 4096));
}

std::optional<int> relaunch_on_devices(const TrainFlags& f) {
  const int devices = device_count_flag(f);
  if (devices <= 1 || distributed::rendezvous_from_environment().has_value()) return std::nullopt;
  std::vector<std::string> cmd = {"/proc/self/exe"};
  const std::vector<std::string>& argv = command_line();
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--devices") {
      ++i;  // and its value
      continue;
    }
    if (argv[i].rfind("--devices=", 0) == 0) continue;
    cmd.push_back(argv[i]);
  }
  LaunchOptions o;
  o.nproc_per_node = devices;
  return launch(o, cmd);
}

int run_train(TrainFlags& f) {
  if (std::optional<int> rc = relaunch_on_devices(f)) return *rc;
  read_config_file(f);
  // Under a launch, rank 0 reports for all; the others print only errors.
  if (auto r = distributed::rendezvous_from_environment(); r && r->rank != 0) std::cout.setstate(std::ios::failbit);
  const auto t0 = std::chrono::steady_clock::now();
  check_choice("--model", f.model, model_names());
  check_choice("--dataset", f.dataset, dataset_names());
  TaskConfig task;
  try {
    task = make_task(f.model, f.dataset);
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  TrainingArguments args = resolve_arguments(f, task);
  std::cout << defaults_notice("hearth train", default_arguments(task), args);
  check_resumed_model(args, task);
  // A misspelled metric_for_best_model: now, not at the first evaluation.
  try {
    check_metric_for_best_model(
        args, task.num_labels == 2 ? std::vector<std::string>{"accuracy", "f1"} : std::vector<std::string>{"accuracy"});
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  // Before the data loads: a checkpoint that is not there is a bad argument.
  if (args.resume_from_checkpoint) {
    try {
      (void)train::resolve_checkpoint(*args.resume_from_checkpoint, args.output_dir);
    } catch (const ValueError& e) {
      throw UsageError(e.what());
    }
  }
  const int64_t max_train = parse_int_flag("--max_train_samples", f.max_train_samples, -1);
  const int64_t max_eval = parse_int_flag("--max_eval_samples", f.max_eval_samples, -1);
  std::vector<train::CallbackPtr> callbacks;
  const double threshold = parse_number_flag("--early_stopping_threshold", f.early_stopping_threshold);
  if (!f.early_stopping_patience.empty()) {
    int64_t patience = parse_int_flag("--early_stopping_patience", f.early_stopping_patience, 1);
    if (args.eval_strategy == "no")
      throw UsageError(
          "--early_stopping_patience: early stopping needs evaluations; set --eval_strategy steps or epoch");
    callbacks.push_back(std::make_shared<train::EarlyStoppingCallback>(patience, threshold));
  }
  // The device before the data: an absent accelerator fails at once.
  try {
    train::select_device(args.device, args.use_cpu);
  } catch (const DeviceError& e) {
    throw UsageError(e.what());
  }

  manual_seed(static_cast<uint64_t>(args.seed));
  std::shared_ptr<nn::Module> model = build_model(task);
  std::string data_from;
  auto train_set = load_split(task, /*train=*/true, f.data_dir, max_train, &data_from);
  auto eval_set = load_split(task, /*train=*/false, f.data_dir, max_eval, nullptr);
  int64_t num_params = 0;
  for (const Tensor& p : model->parameters()) num_params += p.numel();
  std::cout << "hearth: model " << task.model_type << " (" << num_params << " parameters); data " << task.dataset
            << " from " << data_from << " (" << train_set->size() << " training, " << eval_set->size()
            << " evaluation samples)\n";

  train::TrainerOptions opts;
  opts.console = &std::cout;
  opts.checkpoint_extra_files = [task](const std::string& dir) { save_task_config(task, dir); };
  train::Trainer trainer(model, args, train_set, eval_set, callbacks, opts);
  train::TrainOutput out = trainer.train();
  if (out.interrupted_by_signal != 0)
    return out.interrupted_by_signal == SIGINT ? 130 : 128 + out.interrupted_by_signal;

  std::optional<train::Metrics> final_eval;
  bool best_loaded =
      args.load_best_model_at_end && !out.best_checkpoint.empty() && out.best_checkpoint != out.last_checkpoint;
  if (!best_loaded) final_eval = final_eval_from_log(trainer.state());
  if (!final_eval) final_eval = trainer.evaluate();

  write_final_outputs(trainer, *model, task, args, out, *final_eval, static_cast<int64_t>(train_set->size()),
                      static_cast<int64_t>(eval_set->size()));

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "\nhearth: finished " << train::count_of(out.global_step, "step") << " (" << std::fixed << std::setprecision(2)
            << trainer.state().epoch << " epochs) in " << train::format_duration(wall) << " wall time on "
            << trainer.device_choice().device.str() << "\n";  // why this device: said once, at the start
  std::cout << "  train_loss       " << fmt_metric(out.training_loss) << "\n";
  for (const char* key : {"eval_loss", "eval_accuracy", "eval_f1"}) {
    auto it = final_eval->find(key);
    if (it != final_eval->end())
      std::cout << "  " << std::left << std::setw(17) << key << fmt_metric(it->second) << "\n";
  }
  if (!out.stop_reason.empty()) std::cout << "  stopped early: " << out.stop_reason << "\n";
  if (!out.last_checkpoint.empty()) std::cout << "  checkpoint:      " << out.last_checkpoint << "\n";
  if (!out.best_checkpoint.empty() && out.best_checkpoint != out.last_checkpoint)
    std::cout << "  best checkpoint: " << out.best_checkpoint << "\n";
  if (args.writes_jsonl()) std::cout << "  metrics:         " << trainer.metrics_path() << "\n";
  std::cout << "  final model:     " << args.output_dir << " (with train_results.json, eval_results.json)\n";
  std::string fallback = fallback_report();
  if (!fallback.empty()) std::cout << "hearth: these ops fell back to the CPU (slower):\n" << fallback;
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto* sub = app.add_subcommand("train", "Train a model; every Hugging Face TrainingArguments name is a flag");
  auto f = std::make_shared<TrainFlags>();
  sub->add_option("--model", f->model, "model to train: " + quoted_choices(model_names()) + " (default small_cnn)");
  sub->add_option("--dataset", f->dataset, "data set: " + quoted_choices(dataset_names()));
  sub->add_option("--data_dir", f->data_dir, "directory of the data set's files (default: where Debian installs them)");
  sub->add_option("--config", f->config,
                  "JSON file of this command's flags by name (model, dataset, max_train_samples, ..., and every "
                  "TrainingArguments name); flags on the command line win");
  sub->add_flag("--cpu", f->cpu, "train on the CPU (same as --use_cpu)");
  sub->add_option("--devices", f->devices,
                  "data-parallel processes on this machine: one per GPU, or CPU processes with --cpu (default 1); "
                  "auto (or -1, as Lightning's): one per accelerator present, one on the CPU")
      ->type_name("INT|auto");
  // Read as text and checked after --config (apply order); --help shows the type.
  sub->add_option("--max_train_samples", f->max_train_samples, "train on the first N samples only (-1: all)")
      ->type_name("INT");
  sub->add_option("--max_eval_samples", f->max_eval_samples, "evaluate on the first N samples only (-1: all)")
      ->type_name("INT");
  sub->add_option("--early_stopping_patience", f->early_stopping_patience,
                  "stop after this many evaluations without improvement of metric_for_best_model")
      ->type_name("INT");
  sub->add_option("--early_stopping_threshold", f->early_stopping_threshold,
                  "how much metric_for_best_model must improve to count (default 0)")
      ->type_name("FLOAT");
  f->training_flags.add_to(*sub, {}, default_arguments(make_task("small_cnn", "fashion_mnist")));
  f->lightning_flags.add_to(*sub, /*with_devices=*/false);  // --devices is this command's own
  f->command = sub;
  on_run(sub, [f] { return run_train(*f); });
}

}  // namespace hearth::cli
