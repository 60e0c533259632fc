// cv_example: fine-tunes a ResNet to classify a folder of images, the hearth
// version of Hugging Face Accelerate's examples/cv_example.py (which trains on
// the Oxford-IIIT Pets images, files named "<breed>_<n>.jpg").
//
//   cv_example --data_dir images --model_path resnet50.safetensors --num_epochs 3
//
// The data: a folder of class sub-folders, or of files named <label>_<n>.jpg
// (hearth/data/image_folder.h), split 80/20 by a permutation fixed by --seed.
// Training images get RandomResizedCrop(image_size, scale 0.5..1) and a
// horizontal flip, evaluation images Resize(image_size) and
// CenterCrop(image_size); both are normalised with ImageNet's statistics.
// Decoding and augmentation run in --num_workers loader threads; on a GPU
// whose image decoder is there (nvJPEG), the threads only read the files and
// draw the crops, and the GPU decodes, crops, resizes and normalises
// (HEARTH_IMAGE_DECODER=cpu keeps it all on the CPU).
//
// The model: torchvision's ResNet-50 (or 18/34, or a tiny one for tests). With
// --model_path, the torchvision weights in that safetensors file are loaded
// except fc, which gets a new head for the data set's classes; as Accelerate's
// example does, only that head is trained then, unless --train_all_layers.
//
// The device, precision, CPU fallback and output directory come from the
// user's config (`hearth config`, or --config_file) where it sets them; the
// flags --device, --cpu, --mixed_precision and --output_dir override it.
//
// The loop is hearth's Trainer: Adam with a warm-up-then-cosine schedule that
// peaks at --learning_rate (close to the OneCycleLR Accelerate uses), an
// evaluation after every epoch, checkpoints every --checkpointing_steps steps or
// every epoch, exact resumption with --resume_from_checkpoint, and, with
// --with_tracking, metrics in output_dir/metrics.jsonl and TensorBoard event
// files (in --project_dir/cv_example where it is given, as Accelerate's
// trackers write them). Accelerate's --fp16 is --mixed_precision fp16.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "apps/common/default_differences.h"
#include "apps/common/json_config.h"
#include "apps/common/lightning_flags.h"
#include "apps/common/metric_names.h"
#include "apps/common/user_config_flag.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/input_error.h"
#include "hearth/core/switches.h"
#include "hearth/distributed/rendezvous.h"
#include "hearth/hearth.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/safetensors.h"
#include "hearth/train/checkpoint.h"

namespace {

using namespace hearth;

// A bad command line: printed with the usage hint, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string data_dir;
  std::string device = "auto";
  bool cpu = false;
  std::string mixed_precision = "no";
  std::string checkpointing_steps;
  std::string output_dir = "cv_example_output";
  std::string resume_from_checkpoint;
  bool overwrite_output_dir = false;
  bool dataloader_drop_last = false;
  bool with_tracking = false;
  std::string project_dir;  // Accelerate's: where the trackers write (TensorBoard here)
  bool fp16 = false;        // Accelerate's older spelling of --mixed_precision fp16
  std::string model = "resnet50";
  std::string model_path;
  bool train_all_layers = false;
  double num_epochs = 3;
  int64_t batch_size = 64;
  double learning_rate = 3e-2;
  int64_t image_size = 224;
  int64_t seed = 42;
  int64_t num_workers = 2;
  std::optional<int64_t> dataloader_prefetch_factor;  // unset: the Trainer's default
  int64_t logging_steps = 10;
  double train_fraction = 0.8;
  bool step_graphs = false, no_step_graphs = false;  // neither: the Trainer's default (on where available)
  // The flags given on the command line (of those the user's config also sets).
  std::set<std::string> given;
  // Every flag typed on the command line (not set by --config).
  std::set<std::string> command_line;
  hearth::cli::UserConfigFlag user_config;
  hearth::cli::LightningFlags lightning;
  hearth::cli::JsonConfigFlag config;
};

const std::vector<std::string> kModels = {"resnet50", "resnet34", "resnet18", "resnet_tiny"};

std::shared_ptr<nn::models::ResNet> build_model(const std::string& name, int64_t num_classes) {
  if (name == "resnet50") return nn::models::resnet50(num_classes);
  if (name == "resnet34") return nn::models::resnet34(num_classes);
  if (name == "resnet18") return nn::models::resnet18(num_classes);
  // Basic blocks, one per stage, 8 stem channels: a ResNet that trains on the
  // CPU in seconds, for tests.
  nn::models::ResNetConfig tiny;
  tiny.block = nn::models::ResNetBlock::basic;
  tiny.layers = {1, 1, 1, 1};
  tiny.base_width = 8;
  tiny.num_classes = num_classes;
  return std::make_shared<nn::models::ResNet>(tiny);
}

// Loads a torchvision state dict, all but the classifier (fc), whose shape
// depends on the number of classes. Any other missing or extra key is an error.
void load_backbone(nn::Module& model, const std::string& path, const std::string& model_name) {
  io::SafetensorsFile file(path);
  nn::StateDict state;
  for (const std::string& name : file.names())
    if (name.rfind("fc.", 0) != 0) state[name] = file.get(name);
  nn::LoadStateDictResult r;
  try {
    r = model.load_state_dict(state, /*strict=*/false);
  } catch (const ShapeError& e) {
    throw UsageError("--model_path: " + path + ": " + e.what());
  } catch (const TypeError& e) {
    throw UsageError("--model_path: " + path + ": " + e.what());
  }
  std::vector<std::string> missing;
  for (const std::string& k : r.missing_keys)
    if (k.rfind("fc.", 0) != 0) missing.push_back(k);
  if (missing.empty() && r.unexpected_keys.empty()) return;
  std::string msg = "--model_path: " + path + " does not hold " + model_name + " weights:";
  auto list = [&](const char* what, const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    msg += std::string(" ") + what + " " + std::to_string(keys.size()) + " (" + keys.front() +
           (keys.size() > 1 ? ", ...)" : ")");
  };
  list("missing", missing);
  list("unexpected", r.unexpected_keys);
  throw UsageError(msg);
}

// Sets the training arguments this example's flags stand for, those for
// which take(flag) holds (the option names as on the command line).
void set_from_flags(train::TrainingArguments& args, const Options& o,
                    const std::function<bool(const std::string&)>& take) {
  if (take("--output_dir")) args.output_dir = o.output_dir;
  if (take("--batch_size")) {
    args.per_device_train_batch_size = o.batch_size;
    args.per_device_eval_batch_size = o.batch_size;
  }
  if (take("--num_epochs")) args.num_train_epochs = o.num_epochs;
  if (take("--learning_rate")) args.learning_rate = o.learning_rate;
  if (take("--seed")) args.seed = o.seed;
  if (take("--num_workers")) args.dataloader_num_workers = o.num_workers;
  if (take("--dataloader_prefetch_factor")) args.dataloader_prefetch_factor = o.dataloader_prefetch_factor;
  if (take("--logging_steps")) args.logging_steps = o.logging_steps;
  // Accelerate's --with_tracking logs to every tracker it has: here the
  // metrics file and TensorBoard's event files.
  if (take("--with_tracking"))
    args.report_to =
        o.with_tracking ? std::vector<std::string>{"jsonl", "tensorboard"} : std::vector<std::string>{"none"};
  // Accelerate's trackers write under project_dir, in a folder named after the run.
  if (take("--project_dir") && !o.project_dir.empty()) args.logging_dir = o.project_dir + "/cv_example";
  if (take("--no_step_graphs") && o.no_step_graphs)
    args.step_graphs = false;
  else if (take("--step_graphs") && o.step_graphs)
    args.step_graphs = true;
  if (take("--overwrite_output_dir")) args.overwrite_output_dir = o.overwrite_output_dir;
  if (take("--dataloader_drop_last")) args.dataloader_drop_last = o.dataloader_drop_last;
  if (take("--checkpointing_steps")) {
    if (o.checkpointing_steps.empty()) {
      args.save_strategy = "no";
    } else if (o.checkpointing_steps == "epoch") {
      args.save_strategy = "epoch";
    } else {
      args.save_strategy = "steps";
      size_t used = 0;
      int64_t n = -1;
      try {
        n = std::stoll(o.checkpointing_steps, &used);
      } catch (const std::exception&) {
      }
      if (used != o.checkpointing_steps.size() || n < 1)
        throw UsageError("--checkpointing_steps: expected a number of steps >= 1 or \"epoch\", got \"" +
                         o.checkpointing_steps + "\"");
      args.save_steps = n;
    }
  }
  if (take("--resume_from_checkpoint") && !o.resume_from_checkpoint.empty())
    args.resume_from_checkpoint = o.resume_from_checkpoint;
}

// Accelerate's example's settings with the flags' values (their defaults
// where not given).
train::TrainingArguments example_arguments(const Options& o) {
  train::TrainingArguments args;
  args.optim = "adam";
  args.lr_scheduler_type = "cosine";
  args.warmup_ratio = 0.3;
  args.max_grad_norm = 0.0;
  args.eval_strategy = "epoch";
  set_from_flags(args, o, [](const std::string&) { return true; });
  return args;
}

// This example's defaults and flags, then the user's config, then --config's
// training arguments, then the flags typed on the command line again (they
// win over both files).
train::TrainingArguments training_arguments(const Options& o) {
  if (o.num_workers > data::max_num_workers())
    throw UsageError("--num_workers: expected at most " + std::to_string(data::max_num_workers()) +
                     " (4 per CPU core), got " + std::to_string(o.num_workers));
  train::TrainingArguments args = example_arguments(o);

  try {
    o.user_config.apply(args, &std::cout);
    if (!o.config.training_arguments().empty()) {
      args = o.config.apply(args);
      set_from_flags(args, o, [&](const std::string& flag) { return o.command_line.count(flag) > 0; });
    }
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  auto given = [&](const char* flag) { return o.given.count(flag) > 0; };
  if (given("--output_dir")) args.output_dir = o.output_dir;
  if (given("--device")) {
    try {
      train::set_training_argument(args, "device", o.device, "--device");
    } catch (const ValueError& e) {
      throw UsageError(e.what());
    }
  }
  if (o.cpu) args.use_cpu = true;
  try {
    o.lightning.apply(args);
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  if (given("--mixed_precision") && o.mixed_precision == "fp8")
    throw UsageError(
        "--mixed_precision fp8: hearth trains in bf16 or fp16 mixed precision; float8 training (Transformer "
        "Engine's, which Accelerate uses for fp8) is not available; use --mixed_precision bf16");
  if (given("--mixed_precision")) {
    const std::string precision = o.mixed_precision == "no" ? "fp32" : o.mixed_precision + "-mixed";
    try {
      train::set_training_argument(args, "precision", precision, "--mixed_precision");
    } catch (const ValueError& e) {
      throw UsageError("--mixed_precision " + o.mixed_precision +
                       ": this build's Trainer does not support mixed precision yet (" + e.what() +
                       "); use --mixed_precision no");
    }
  }
  try {
    args.validate("command line");
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  return args;
}

// A check of a number flag: finite, within lo and hi (open or closed at
// each end), its message naming the bounds as people write them (CLI11's
// PositiveNumber prints the largest double, 309 digits).
CLI::Validator number_in(double lo, double hi, bool low_open, bool high_open) {
  std::ostringstream os;
  os << (low_open ? "(" : "[") << lo << ", " << hi << (high_open ? ")" : "]");
  const std::string range = os.str();
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(v) &&
                        (low_open ? v > lo : v >= lo) && (high_open ? v < hi : v <= hi);
        return ok ? std::string() : "expected a number in " + range + ", got " + text;
      },
      "NUMBER in " + range);
}

// Accelerate's example prints "epoch N: <accuracy in %>" after each evaluation.
class EpochAccuracyPrinter : public train::TrainerCallback {
 public:
  std::string name() const override { return "EpochAccuracyPrinter"; }
  void on_evaluate(const train::TrainingArguments&, train::TrainerState& state, train::TrainerControl&,
                   const train::Metrics& metrics) override {
    auto it = metrics.find("eval_accuracy");
    if (it == metrics.end()) return;
    std::cout << "cv_example: epoch " << std::fixed << std::setprecision(2) << state.epoch << ": accuracy "
              << 100.0 * it->second << "%" << std::endl;
  }
};

int run(const Options& o) {
  // Under a launcher, rank 0 speaks for all, as Accelerate's main process does.
  if (auto r = distributed::rendezvous_from_environment(); r && r->rank != 0) std::cout.setstate(std::ios::failbit);
  train::TrainingArguments args = training_arguments(o);
  // Before the images load: a checkpoint that is not there is a bad argument.
  if (args.resume_from_checkpoint) {
    try {
      (void)train::resolve_checkpoint(*args.resume_from_checkpoint, args.output_dir);
    } catch (const ValueError& e) {
      throw UsageError(e.what());
    }
  }
  // The example's own defaults (Accelerate's settings), not the values the
  // flags or files chose, which are the user's and no surprise.
  std::cout << hearth::cli::defaults_notice("cv_example", example_arguments(Options()), args);
  // The device first: an absent accelerator fails before any work.
  train::select_device(args.device, args.use_cpu);

  data::ImageFolder folder(o.data_dir);
  auto [train_files, eval_files] = folder.split(o.train_fraction, static_cast<uint64_t>(o.seed));
  const auto num_classes = static_cast<int64_t>(folder.classes().size());
  // A misspelled metric_for_best_model (from --config): now, not after the first epoch.
  try {
    hearth::cli::check_metric_for_best_model(
        args, num_classes == 2 ? std::vector<std::string>{"accuracy", "f1"} : std::vector<std::string>{"accuracy"});
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  std::cout << "cv_example: " << folder.size() << " images of " << num_classes << " classes (" << folder.layout()
            << " layout) in " << o.data_dir << ": " << train_files->size() << " for training, " << eval_files->size()
            << " for evaluation\n";

  using data::TransformPtr;
  auto normalize = std::make_shared<data::Normalize>(data::kImageNetMean, data::kImageNetStd);
  // The resizing transforms read the decoded uint8 image and give float pixels.
  auto train_tf = std::make_shared<data::Compose>(std::vector<TransformPtr>{
      std::make_shared<data::RandomResizedCrop>(o.image_size, std::pair<double, double>{0.5, 1.0}),
      std::make_shared<data::RandomHorizontalFlip>(), normalize});
  auto eval_tf = std::make_shared<data::Compose>(std::vector<TransformPtr>{
      std::make_shared<data::Resize>(o.image_size), std::make_shared<data::CenterCrop>(o.image_size), normalize});
  const auto seed = static_cast<uint64_t>(o.seed);
  auto train_set = std::make_shared<data::TransformDataset>(train_files, train_tf, seed);
  auto eval_set = std::make_shared<data::TransformDataset>(eval_files, eval_tf, seed);

  manual_seed(seed);
  std::shared_ptr<nn::models::ResNet> model = build_model(o.model, num_classes);
  if (!o.model_path.empty()) {
    load_backbone(*model, o.model_path, o.model);
    if (!o.train_all_layers) {
      model->requires_grad_(false);
      model->fc->requires_grad_(true);
    }
  }
  int64_t total = 0, trained = 0;
  for (const Tensor& p : model->parameters()) {
    total += p.numel();
    if (p.requires_grad()) trained += p.numel();
  }
  std::cout << "cv_example: model " << o.model << " (" << total << " parameters, " << trained << " trained)"
            << (o.model_path.empty() ? ", randomly initialised" : ", weights from " + o.model_path) << "\n";

  train::TrainerOptions topts;
  // Every checkpoint names the classes its fc outputs stand for.
  std::vector<std::string> classes = folder.classes();
  topts.checkpoint_extra_files = [classes](const std::string& dir) {
    io::write_file_atomic(dir + "/classes.json", nlohmann::json(classes).dump() + "\n");
  };
  train::Trainer trainer(model, args, train_set, eval_set, {std::make_shared<EpochAccuracyPrinter>()}, topts);
  // On an accelerator the convolutions run NHWC (cuDNN's fastest layout for
  // bfloat16, as `hearth bench` runs them); the Trainer then hands the model
  // its images channels_last too. The parameters keep their identity.
  if (!trainer.device_choice().device.is_cpu()) {
    nn::to_channels_last(*model);
    std::cout << "cv_example: convolutions in channels_last (NHWC) on " << trainer.device_choice().device.str() << "\n";
  }
  train::TrainOutput out = trainer.train();
  if (out.interrupted_by_signal != 0) return 128 + out.interrupted_by_signal;

  std::cout << "cv_example: finished " << train::count_of(out.global_step, "step") << " on "
            << trainer.device_choice().device.str() << "; train_loss " << std::setprecision(4) << out.training_loss
            << "\n";
  if (!out.last_checkpoint.empty()) std::cout << "cv_example: last checkpoint " << out.last_checkpoint << "\n";
  if (args.writes_jsonl()) std::cout << "cv_example: metrics " << trainer.metrics_path() << "\n";
  const std::vector<std::string> skipped = folder.skipped_files();
  if (!skipped.empty()) std::cout << "cv_example: " << skipped.size() << " unreadable image(s) skipped\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  hearth::validate_switches_or_exit("cv_example");  // a bad HEARTH_* value: one line, status 2
  Options o;
  CLI::App app{"Fine-tune a ResNet on a folder of images with hearth's Trainer"};
  // A flag given twice takes its last value, as Python's argparse does.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // --help shows each flag's default.
  app.option_defaults()->always_capture_default();
  // Required, but checked after --config, which may give it.
  app.add_option("--data_dir", o.data_dir,
                 "folder of class sub-folders, or of images named <label>_<n>.jpg (required)");
  app.add_option(
      "--device", o.device,
      "auto, cpu or a device kind such as cuda or vulkan, with :N for the N-th (default: your config's, else auto)");
  app.add_flag("--cpu", o.cpu, "train on the CPU even if an accelerator is present");
  app.add_option("--mixed_precision", o.mixed_precision, "no, bf16 or fp16 (default: your config's, else no)")
      ->check(CLI::IsMember({"no", "bf16", "fp16", "fp8"}));
  app.add_flag("--fp16", o.fp16, "Accelerate's older spelling of --mixed_precision fp16");
  app.add_option("--checkpointing_steps", o.checkpointing_steps,
                 "save a checkpoint every N steps, or \"epoch\" after each epoch (default: none)");
  app.add_option("--output_dir", o.output_dir,
                 "where checkpoints and metrics go (default: your config's, else cv_example_output)");
  app.add_option("--resume_from_checkpoint", o.resume_from_checkpoint,
                 "continue from a checkpoint directory, or \"latest\" in output_dir");
  app.add_flag("--overwrite_output_dir", o.overwrite_output_dir,
               "train into an output_dir that already holds checkpoints, replacing them");
  app.add_flag("--dataloader_drop_last", o.dataloader_drop_last,
               "drop each epoch's last, smaller training batch (a batch of one is dropped anyway)");
  app.add_flag("--with_tracking", o.with_tracking,
               "log metrics to output_dir/metrics.jsonl and TensorBoard event files (output_dir/runs, or "
               "--project_dir)");
  app.add_option("--project_dir,--logging_dir", o.project_dir,
                 "with --with_tracking, TensorBoard's event files go to <project_dir>/cv_example, as Accelerate's "
                 "trackers write them (default: output_dir/runs)");
  app.add_option("--model", o.model, "resnet50, resnet34, resnet18 or resnet_tiny")->check(CLI::IsMember(kModels));
  app.add_option("--model_path", o.model_path, "torchvision weights of --model as safetensors (fc is replaced)");
  app.add_flag("--train_all_layers", o.train_all_layers, "with --model_path, train every layer, not only fc");
  app.add_flag("--step_graphs,--cuda_graphs", o.step_graphs,
               "record each training step's forward and backward as a step graph (a CUDA graph on the GPU) and "
               "replay it (the default where the device has step graphs)");
  app.add_flag("--no_step_graphs", o.no_step_graphs, "run every training step eagerly");
  // Every number has a range: beyond it a value is a typing mistake (1e19 epochs, 10^5-pixel images).
  app.add_option("--num_epochs", o.num_epochs, "epochs to train (at most 10^6)")
      ->check(number_in(0.0, 1e6, /*low_open=*/true, /*high_open=*/false));
  app.add_option("--batch_size", o.batch_size, "images per batch (at most 2^24)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  app.add_option("--learning_rate", o.learning_rate, "peak learning rate")
      ->check(number_in(0.0, 1e6, /*low_open=*/true, /*high_open=*/false));
  app.add_option("--image_size", o.image_size, "side of the square images the model sees (at most 8192)")
      ->check(CLI::Range(int64_t{1}, int64_t{8192}));
  app.add_option("--seed", o.seed, "seed of the split, initialisation, shuffling and augmentation (>= 0)")
      ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()));
  app.add_option("--num_workers", o.num_workers, "threads that decode and augment images")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000}));
  app.add_option("--dataloader_prefetch_factor", o.dataloader_prefetch_factor,
                 "batches each loader thread builds ahead (default 2; at most 64)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  app.add_option("--logging_steps", o.logging_steps, "log the training loss every N steps")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000'000}));
  // Both sides need images: the rest is for evaluation.
  app.add_option("--train_fraction", o.train_fraction, "share of the images used for training, above 0 and below 1")
      ->check(number_in(0.0, 1.0, /*low_open=*/true, /*high_open=*/true));
  o.user_config.add_to(app);
  o.lightning.add_to(app);
  o.config.add_to(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // A bad flag or value: one line naming the flag, exit code 2.
    std::cerr << "cv_example: error: " << e.what() << " (see 'cv_example --help')\n";
    return 2;
  }
  for (const CLI::Option* opt : app.get_options())
    if (opt->count() > 0)
      for (const std::string& name : opt->get_lnames()) o.command_line.insert("--" + name);
  try {
    o.config.read(app, nullptr);
    if (o.data_dir.empty()) throw UsageError("--data_dir is required");
  } catch (const UsageError& e) {
    std::cerr << "cv_example: error: " << e.what() << " (see 'cv_example --help')\n";
    return 2;
  } catch (const hearth::Error& e) {
    std::cerr << "cv_example: error: " << e.what() << "\n";
    return 2;
  }
  for (const char* flag : {"--device", "--mixed_precision", "--output_dir"})
    if (app.count(flag) > 0) o.given.insert(flag);
  if (o.fp16 && o.given.count("--mixed_precision") == 0) {
    o.mixed_precision = "fp16";
    o.given.insert("--mixed_precision");
  }
  try {
    return run(o);
  } catch (const UsageError& e) {
    std::cerr << "cv_example: error: " << e.what() << "\n";
    return 2;
  } catch (const hearth::DeviceError& e) {
    std::cerr << "cv_example: error: " << e.what() << "\n";
    return 2;
  } catch (const hearth::InputError& e) {
    std::cerr << "cv_example: error: " << e.what() << "\n";
    return 2;
  } catch (...) {
    std::cerr << "cv_example: error: " << describe_current_exception() << "\n";
    return 1;
  }
}
