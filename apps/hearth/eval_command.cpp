// `hearth eval --checkpoint DIR`: rebuilds the model a checkpoint belongs to
// (config.json), loads its weights (model.safetensors) and the run's
// arguments (training_args.json), and evaluates it on the test split.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

#include "apps/common/run_results.h"
#include "apps/hearth/commands.h"
#include "apps/hearth/tasks.h"
#include "hearth/core/errors.h"
#include "hearth/nn/init.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/device_select.h"
#include "hearth/train/trainer.h"

namespace hearth::cli {
namespace {

struct EvalFlags {
  std::string checkpoint;
  std::string data_dir;
  std::string device;
  bool cpu = false;
  std::string max_eval_samples = "-1";
  std::string batch_size;
  std::string output_dir;  // where eval_results.json goes; empty: the checkpoint's directory
};

int64_t parse_int(const std::string& flag, const std::string& text, int64_t min) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  constexpr int64_t kMax = 1'000'000'000'000;  // counts beyond any data set
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > kMax)
    throw UsageError(flag + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(kMax) +
                     "], got \"" + text + "\"");
  return v;
}

int run_eval(const EvalFlags& f) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(f.checkpoint))
    throw UsageError("--checkpoint: expected a checkpoint directory (output_dir/checkpoint-<step>), got '" +
                     f.checkpoint + "'");
  const int64_t max_eval = parse_int("--max_eval_samples", f.max_eval_samples, -1);
  // Where the results go must take them before the evaluation runs, not after.
  const std::string results_dir = f.output_dir.empty() ? f.checkpoint : f.output_dir;
  if (fs::is_directory(results_dir) && ::access(results_dir.c_str(), W_OK) != 0)
    throw UsageError("cannot write eval_results.json into '" + results_dir + "': " + std::strerror(errno) +
                     (f.output_dir.empty() ? "; pass --output_dir to write the results elsewhere" : ""));
  TaskConfig task = load_task_config(f.checkpoint);
  train::TrainingArguments args =
      train::TrainingArguments::load((fs::path(f.checkpoint) / train::kTrainingArgsFile).string());
  // Evaluation writes nothing into the training run's directory.
  args.report_to = {"none"};
  args.resume_from_checkpoint.reset();
  if (!f.device.empty()) args.device = f.device;
  if (f.cpu) args.use_cpu = true;
  if (!f.batch_size.empty())
    args.per_device_eval_batch_size = parse_int("--per_device_eval_batch_size", f.batch_size, 1);
  try {
    train::select_device(args.device, args.use_cpu);
  } catch (const DeviceError& e) {
    throw UsageError(e.what());
  }

  std::shared_ptr<nn::Module> model;
  {
    // The checkpoint's weights replace the initial ones: drawing them would
    // only cost time (seconds for VGG16).
    nn::init::SkipInitGuard skip;
    model = build_model(task);
  }
  train::load_model_weights(f.checkpoint, *model);
  auto eval_set = load_split(task, /*train=*/false, f.data_dir, max_eval);
  train::TrainerOptions opts;
  opts.console = nullptr;  // the metrics are printed below, as a table
  opts.handle_signals = false;
  train::Trainer trainer(model, args, nullptr, eval_set, {}, opts);
  std::cout << "hearth: evaluating " << f.checkpoint << " (" << task.model_type << " on " << task.dataset << " test, "
            << eval_set->size() << " samples) on " << trainer.device_choice().description << "\n";
  train::Metrics m = trainer.evaluate();
  for (const char* key : {"eval_loss", "eval_accuracy", "eval_f1"}) {
    auto it = m.find(key);
    if (it != m.end())
      std::cout << "  " << std::left << std::setw(17) << key << std::fixed << std::setprecision(4) << it->second
                << "\n";
  }
  std::cout << "  " << std::left << std::setw(17) << "eval_runtime" << std::fixed << std::setprecision(2)
            << m.at("eval_runtime") << " s\n";
  // eval_results.json (and all_results.json), as Hugging Face's save_metrics("eval") writes them.
  MetricMap results(m.begin(), m.end());
  results["eval_samples"] = static_cast<double>(eval_set->size());
  const std::string out_dir = f.output_dir.empty() ? f.checkpoint : f.output_dir;
  save_metrics(out_dir, "eval", results);
  std::cout << "  results:         " << (fs::path(out_dir) / "eval_results.json").string() << "\n";
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* sub = app.add_subcommand("eval", "Evaluate a checkpoint written by `hearth train` on the test split");
  auto f = std::make_shared<EvalFlags>();
  sub->add_option("--checkpoint", f->checkpoint, "checkpoint directory (output_dir/checkpoint-<step>)")->required();
  sub->add_option("--data_dir", f->data_dir, "directory of the data set's files (default: where Debian installs them)");
  sub->add_option("--device", f->device, "auto, cpu or a device kind such as cuda or vulkan, with :N for the N-th (default: the training run's setting)");
  sub->add_flag("--cpu", f->cpu, "evaluate on the CPU");
  sub->add_option("--max_eval_samples", f->max_eval_samples, "evaluate on the first N samples only (-1: all)");
  sub->add_option("--per_device_eval_batch_size", f->batch_size, "samples per batch (default: the run's)");
  sub->add_option("--output_dir", f->output_dir,
                  "where eval_results.json and all_results.json go (default: the checkpoint's directory)");
  on_run(sub, [f] { return run_eval(*f); });
}

}  // namespace hearth::cli
