#include "hearth/train/training_arguments.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "hearth/core/edit_distance.h"
#include "hearth/core/errors.h"
#include "hearth/data/dataloader.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::train {
namespace {

using json = nlohmann::json;
using Field = TrainingArgumentField;
using Kind = TrainingArgumentField::Kind;

[[noreturn]] void bad(const std::string& context, const std::string& expected, const json& got) {
  HEARTH_THROW(ValueError, "[trainer] ", context, ": expected ", expected, ", got ", got.dump());
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += "\"" + names[i] + "\"";
  }
  return s;
}

// Counts beyond this (steps, samples) are typing mistakes or corrupt files:
// no run takes 10^12 steps, and the products of such counts still fit int64.
constexpr int64_t kMaxCount = 1'000'000'000'000;

int64_t read_int(const json& v, int64_t min, const std::string& context, int64_t max = kMaxCount) {
  std::string expected = "an integer >= " + std::to_string(min);
  if (!v.is_number_integer()) bad(context, expected, v);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) bad(context, expected, v);
  int64_t x = v.get<int64_t>();
  if (x < min) bad(context, expected, v);
  if (x > max) bad(context, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]", v);
  return x;
}

double read_number(const json& v, double lo, double hi, bool hi_open, const std::string& context) {
  std::ostringstream os;
  if (std::isinf(hi)) {
    os << "a number >= " << lo;
  } else {
    os << "a number in [" << lo << ", " << hi << (hi_open ? ")" : "]");
  }
  if (!v.is_number()) bad(context, os.str(), v);
  double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi || (hi_open && x == hi)) bad(context, os.str(), v);
  return x;
}

bool read_bool(const json& v, const std::string& context) {
  if (!v.is_boolean()) bad(context, "true or false", v);
  return v.get<bool>();
}

std::string read_string(const json& v, bool nonempty, const std::string& context) {
  if (!v.is_string() || (nonempty && v.get<std::string>().empty())) bad(context, "a non-empty string", v);
  return v.get<std::string>();
}

std::string read_choice(const json& v, const std::vector<std::string>& allowed, const std::string& context) {
  if (!v.is_string() || std::find(allowed.begin(), allowed.end(), v.get<std::string>()) == allowed.end())
    bad(context, "one of " + quoted_list(allowed), v);
  return v.get<std::string>();
}

constexpr double kInf = HUGE_VAL;

// ---- field builders: each ties a name to a member and its rule ----

template <typename M>
Field boolean(const char* name, M TrainingArguments::*m, const char* help) {
  return {name,
          Kind::boolean,
          false,
          help,
          [m](const TrainingArguments& a) { return json(a.*m); },
          [m](TrainingArguments& a, const json& v, const std::string& c) { a.*m = read_bool(v, c); }};
}

Field integer(const char* name, int64_t TrainingArguments::*m, int64_t min, int64_t max, const char* help) {
  return {
      name,
      Kind::integer,
      false,
      help,
      [m](const TrainingArguments& a) { return json(a.*m); },
      [m, min, max](TrainingArguments& a, const json& v, const std::string& c) { a.*m = read_int(v, min, c, max); }};
}

Field integer(const char* name, int64_t TrainingArguments::*m, int64_t min, const char* help) {
  return integer(name, m, min, kMaxCount, help);
}

Field optional_integer(const char* name, std::optional<int64_t> TrainingArguments::*m, int64_t min, int64_t max,
                       const char* help) {
  return {name,
          Kind::integer,
          true,
          help,
          [m](const TrainingArguments& a) { return (a.*m).has_value() ? json(*(a.*m)) : json(nullptr); },
          [m, min, max](TrainingArguments& a, const json& v, const std::string& c) {
            if (v.is_null()) {
              a.*m = std::nullopt;
            } else {
              a.*m = read_int(v, min, c, max);
            }
          }};
}

Field optional_integer(const char* name, std::optional<int64_t> TrainingArguments::*m, int64_t min, const char* help) {
  return optional_integer(name, m, min, kMaxCount, help);
}

Field number(const char* name, double TrainingArguments::*m, double lo, double hi, bool hi_open, const char* help) {
  return {
      name,
      Kind::number,
      false,
      help,
      [m](const TrainingArguments& a) { return json(a.*m); },
      [=](TrainingArguments& a, const json& v, const std::string& c) { a.*m = read_number(v, lo, hi, hi_open, c); }};
}

Field choice(const char* name, std::string TrainingArguments::*m, std::vector<std::string> allowed, const char* help) {
  return {
      name,
      Kind::string,
      false,
      help,
      [m](const TrainingArguments& a) { return json(a.*m); },
      [m, allowed](TrainingArguments& a, const json& v, const std::string& c) { a.*m = read_choice(v, allowed, c); }};
}

Field string(const char* name, std::string TrainingArguments::*m, const char* help) {
  return {name,
          Kind::string,
          false,
          help,
          [m](const TrainingArguments& a) { return json(a.*m); },
          [m](TrainingArguments& a, const json& v, const std::string& c) { a.*m = read_string(v, true, c); }};
}

Field optional_string(const char* name, std::optional<std::string> TrainingArguments::*m, const char* help) {
  return {name,
          Kind::string,
          true,
          help,
          [m](const TrainingArguments& a) { return (a.*m).has_value() ? json(*(a.*m)) : json(nullptr); },
          [m](TrainingArguments& a, const json& v, const std::string& c) {
            if (v.is_null()) {
              a.*m = std::nullopt;
            } else {
              a.*m = read_string(v, true, c);
            }
          }};
}

Field optional_boolean(const char* name, std::optional<bool> TrainingArguments::*m, const char* help) {
  return {name,
          Kind::boolean,
          true,
          help,
          [m](const TrainingArguments& a) { return (a.*m).has_value() ? json(*(a.*m)) : json(nullptr); },
          [m](TrainingArguments& a, const json& v, const std::string& c) {
            if (v.is_null()) {
              a.*m = std::nullopt;
            } else {
              a.*m = read_bool(v, c);
            }
          }};
}

// `f`, also read by `aliases` (former names).
Field also_named(Field f, std::vector<std::string> aliases) {
  f.aliases = std::move(aliases);
  return f;
}

// Canonical names first, then the other spellings Lightning accepts for them.
const std::vector<std::pair<std::string, std::string>> kPrecisionNames = {
    {"fp32", "fp32"},    {"bf16-mixed", "bf16-mixed"}, {"fp16-mixed", "fp16-mixed"}, {"32", "fp32"},
    {"32-true", "fp32"}, {"bf16", "bf16-mixed"},       {"16-mixed", "fp16-mixed"},   {"16", "fp16-mixed"},
};

Field precision() {
  return {"precision",
          Kind::string,
          false,
          "fp32, bf16-mixed or fp16-mixed (float16 with loss scaling); also Lightning's 32-true, bf16, 16-mixed, 16",
          [](const TrainingArguments& a) { return json(a.precision); },
          [](TrainingArguments& a, const json& v, const std::string& c) {
            std::vector<std::string> names;
            for (const auto& [name, canonical] : kPrecisionNames) names.push_back(name);
            a.precision = read_choice(v, names, c);
            for (const auto& [name, canonical] : kPrecisionNames)
              if (name == a.precision) a.precision = canonical;
          }};
}

// Hugging Face's --bf16 / --fp16: true selects `mode`; false turns it off if it
// was on. Both true at once is refused, as Hugging Face refuses it.
Field precision_flag(const char* name, const char* mode, const char* other_flag, const char* other_mode,
                     const char* help) {
  return {name,
          Kind::boolean,
          false,
          help,
          [mode](const TrainingArguments& a) { return json(a.precision == mode); },
          [mode, other_flag, other_mode](TrainingArguments& a, const json& v, const std::string& c) {
            if (read_bool(v, c)) {
              HEARTH_CHECK(a.precision != other_mode, ValueError, "[trainer] ", c,
                           ": expected at most one of bf16 and ", "fp16 to be true, but precision is already ",
                           other_mode, " (from ", other_flag, " or precision); pick one");
              a.precision = mode;
            } else if (a.precision == mode) {
              a.precision = "fp32";
            }
          }};
}

// Hugging Face's torch_compile: hearth's nearest thing is recording each step
// as a step graph (one launch instead of hundreds), so true also asks for
// step graphs; false leaves step_graphs as it is.
Field torch_compile() {
  return {"torch_compile",
          Kind::boolean,
          false,
          "true: record each step as a step graph (step_graphs true), hearth's counterpart of torch.compile",
          [](const TrainingArguments& a) { return json(a.torch_compile); },
          [](TrainingArguments& a, const json& v, const std::string& c) {
            a.torch_compile = read_bool(v, c);
            if (a.torch_compile) a.step_graphs = true;
          }};
}

const std::vector<std::string> kReportTo = {"all", "jsonl", "tensorboard", "none"};

// The trackers Hugging Face's report_to also names: refused saying what hearth
// writes instead, rather than only that the name is unknown.
void refuse_foreign_tracker(const std::string& context, const std::string& name) {
  static const std::vector<std::string> kForeign = {"azure_ml", "clearml", "codecarbon", "comet_ml", "dagshub",
                                                    "dvclive", "flyte", "mlflow", "neptune", "swanlab", "trackio",
                                                    "wandb"};
  HEARTH_CHECK(std::find(kForeign.begin(), kForeign.end(), name) == kForeign.end(), ValueError, "[trainer] ",
               context, ": \"", name,
               "\" is a tracker integration of Hugging Face's that hearth does not have (nor network access); hearth "
               "writes \"jsonl\" (output_dir/metrics.jsonl) and \"tensorboard\" event files (\"all\": both), which "
               "`tensorboard --logdir` and `hearth plot` read");
}

Field report_to() {
  return {"report_to",
          Kind::string_list,
          false,
          "where logs go besides the console: \"jsonl\" (output_dir/metrics.jsonl), \"tensorboard\" "
          "(output_dir/runs/), \"all\" (both) or \"none\"",
          [](const TrainingArguments& a) { return json(a.report_to); },
          [](TrainingArguments& a, const json& v, const std::string& c) {
            std::string expected = "one of " + quoted_list(kReportTo) + ", or a list of them";
            std::vector<std::string> out;
            if (v.is_string()) {
              refuse_foreign_tracker(c, v.get<std::string>());
              out.push_back(read_choice(v, kReportTo, c));
            } else if (v.is_array() && v.empty()) {
              out.push_back("none");  // Hugging Face writes "none" as []
            } else if (v.is_array()) {
              for (const json& e : v) {
                if (e.is_string()) refuse_foreign_tracker(c, e.get<std::string>());
                if (!e.is_string() ||
                    std::find(kReportTo.begin(), kReportTo.end(), e.get<std::string>()) == kReportTo.end())
                  bad(c, expected, v);
                out.push_back(e.get<std::string>());
              }
            } else {
              bad(c, expected, v);
            }
            a.report_to = std::move(out);
          }};
}

// Batch sizes and accumulation: 2^24 samples; epochs: 10^6; ddp_timeout: a week.
constexpr int64_t kMaxBatch = int64_t{1} << 24;
constexpr double kMaxEpochs = 1e6;
// Beyond any learning rate that trains (1e308 was accepted, and overflowed
// the first update to infinity).
constexpr double kMaxLearningRate = 1e3;
constexpr int64_t kMaxTimeoutSeconds = 7 * 24 * 3600;
// Batches a loader worker builds ahead: each is a whole batch in memory.
constexpr int64_t kMaxPrefetchFactor = 64;

std::vector<Field> make_fields() {
  using A = TrainingArguments;
  return {
      string("output_dir", &A::output_dir, "where checkpoints, metrics.jsonl and the final model go"),
      boolean("overwrite_output_dir", &A::overwrite_output_dir,
              "train anew into an output_dir that holds checkpoints, deleting them"),
      integer("per_device_train_batch_size", &A::per_device_train_batch_size, 1, kMaxBatch,
              "samples per training batch (>= 1)"),
      integer("per_device_eval_batch_size", &A::per_device_eval_batch_size, 1, kMaxBatch,
              "samples per evaluation batch (>= 1)"),
      integer("gradient_accumulation_steps", &A::gradient_accumulation_steps, 1, kMaxBatch,
              "batches whose gradients add up to one optimizer step (>= 1)"),
      boolean("dataloader_drop_last", &A::dataloader_drop_last, "drop the last, smaller batch of each epoch"),
      integer("dataloader_num_workers", &A::dataloader_num_workers, 0, data::max_num_workers(),
              "threads that build batches ahead (>= 0, at most 4 per CPU core)"),
      optional_integer("dataloader_prefetch_factor", &A::dataloader_prefetch_factor, 1, kMaxPrefetchFactor,
                       "batches each loader worker builds ahead (1 to 64; default 2; needs dataloader_num_workers)"),
      integer("ddp_timeout", &A::ddp_timeout, 1, kMaxTimeoutSeconds,
              "seconds a data-parallel collective waits for the other processes before failing (default 1800)"),
      boolean("dataloader_pin_memory", &A::dataloader_pin_memory,
              "batches in page-locked memory when training on an accelerator (asynchronous copies)"),
      // adamw_torch_fused (transformers 5's default) is PyTorch's AdamW with
      // its fused step: the same update as adamw_torch, which hearth already
      // runs as one step over all parameters.
      choice("optim", &A::optim, {"adamw_torch", "adamw_torch_fused", "adam", "sgd"},
             "optimizer: adamw_torch (or adamw_torch_fused, the same update), adam or sgd (momentum 0.9)"),
      number("learning_rate", &A::learning_rate, 0.0, kMaxLearningRate, false, "peak learning rate (0 to 1000)"),
      number("weight_decay", &A::weight_decay, 0.0, kInf, false,
             "weight decay (>= 0; not applied to biases and norm weights)"),
      number("adam_beta1", &A::adam_beta1, 0.0, 1.0, true, "Adam's beta1, in [0, 1)"),
      number("adam_beta2", &A::adam_beta2, 0.0, 1.0, true, "Adam's beta2, in [0, 1)"),
      number("adam_epsilon", &A::adam_epsilon, 0.0, kInf, false, "Adam's epsilon (>= 0)"),
      number("max_grad_norm", &A::max_grad_norm, 0.0, kInf, false, "clip the global gradient norm to this; 0: off"),
      number("num_train_epochs", &A::num_train_epochs, 0.0, kMaxEpochs, false,
             "epochs to train (may be fractional); used when max_steps <= 0"),
      integer("max_steps", &A::max_steps, -1, "optimizer steps to train; overrides num_train_epochs when > 0"),
      choice("lr_scheduler_type", &A::lr_scheduler_type,
             {"linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup"},
             "learning-rate schedule after warm-up: linear, cosine, cosine_with_restarts, polynomial, constant, "
             "constant_with_warmup"),
      integer("warmup_steps", &A::warmup_steps, 0, "linear warm-up steps; overrides warmup_ratio when > 0"),
      number("warmup_ratio", &A::warmup_ratio, 0.0, 1.0, false, "warm-up as a fraction of the total steps, in [0, 1]"),
      number("label_smoothing_factor", &A::label_smoothing_factor, 0.0, 1.0, true,
             "label smoothing of the classification loss, in [0, 1) (0: off)"),
      integer("seed", &A::seed, 0, INT64_MAX, "seed of the initialisation, dropout and data order (>= 0)"),
      optional_integer("data_seed", &A::data_seed, 0, "seed of the training data order alone (default: seed)"),
      choice("logging_strategy", &A::logging_strategy, {"no", "steps", "epoch"},
             "when to log the training loss: steps (every logging_steps), epoch, no"),
      integer("logging_steps", &A::logging_steps, 1, "log the loss every this many optimizer steps (>= 1)"),
      boolean("logging_first_step", &A::logging_first_step, "also log the loss of the first step"),
      optional_string("logging_dir", &A::logging_dir, "where TensorBoard's event files go (default: output_dir/runs)"),
      also_named(
          choice("eval_strategy", &A::eval_strategy, {"no", "steps", "epoch"}, "when to evaluate: no, steps, epoch"),
          {"evaluation_strategy"}),
      optional_integer("eval_steps", &A::eval_steps, 1, "evaluate every this many steps (default: logging_steps)"),
      boolean("eval_on_start", &A::eval_on_start, "evaluate once before the first training step"),
      choice("save_strategy", &A::save_strategy, {"no", "steps", "epoch", "best"},
             "when to save a checkpoint: no, steps, epoch, best (after each evaluation that finds a new best model)"),
      integer("save_steps", &A::save_steps, 1, "save a checkpoint every this many steps (>= 1)"),
      optional_integer("save_total_limit", &A::save_total_limit, 1,
                       "keep at most this many checkpoints, never deleting the best (default: all)"),
      boolean("save_only_model", &A::save_only_model,
              "checkpoints without optimizer, scheduler and loss-scaler state (smaller; cannot be resumed)"),
      boolean("load_best_model_at_end", &A::load_best_model_at_end,
              "load the best checkpoint's weights when training ends"),
      optional_string("metric_for_best_model", &A::metric_for_best_model,
                      "metric that picks the best checkpoint: loss, accuracy, f1 (default: loss)"),
      optional_boolean("greater_is_better", &A::greater_is_better,
                       "whether a larger metric is better (default: false for losses, true otherwise)"),
      optional_string("resume_from_checkpoint", &A::resume_from_checkpoint,
                      "a checkpoint directory to continue from, or \"latest\""),
      string("device", &A::device, "auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th (auto: the best accelerator present, else the CPU; gpu: the accelerator auto would pick, never the CPU)"),
      also_named(boolean("use_cpu", &A::use_cpu, "train on the CPU whatever device says"), {"no_cuda"}),
      precision(),
      precision_flag("bf16", "bf16-mixed", "fp16", "fp16-mixed", "mixed precision in bfloat16: precision bf16-mixed"),
      precision_flag("fp16", "fp16-mixed", "bf16", "bf16-mixed",
                     "mixed precision in float16 with loss scaling: precision fp16-mixed"),
      boolean("disable_tqdm", &A::disable_tqdm, "print plain periodic lines instead of a progress bar"),
      boolean("detect_anomaly", &A::detect_anomaly,
              "stop at the first op, forward or backward, that produces NaN or Inf, naming it (slow: for debugging)"),
      report_to(),
      boolean("auto_find_batch_size", &A::auto_find_batch_size,
              "on out-of-memory, halve the batch and raise gradient accumulation (same samples per step)"),
      also_named(optional_boolean("step_graphs", &A::step_graphs,
                                  "record each training step's forward and backward, and evaluation's forward, as "
                                  "step graphs (CUDA graphs on CUDA) and replay them; default: on where the device has "
                                  "step graphs (eager where a step cannot be recorded, saying why); false or "
                                  "--no_step_graphs: always eager"),
                 {"cuda_graphs"}),
      boolean("gradient_checkpointing", &A::gradient_checkpointing,
              "keep only each block's input in training and recompute the rest in backward (less memory, more "
              "compute)"),
      torch_compile(),
      optional_boolean("tf32", &A::tf32,
                       "TF32 tensor cores for float32 products on the accelerator (the float32 matmul "
                       "precision high, or highest when off; default: on)"),
  };
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// " (did you mean 'learning_rate'?)" for a near miss, else "".
std::string suggestion(const std::string& name) {
  const Field* best = nullptr;
  size_t best_d = 4;
  for (const Field& f : training_argument_fields()) {
    size_t d = edit_distance(name, f.name);
    if (d < best_d) {
      best_d = d;
      best = &f;
    }
  }
  return best ? " (did you mean '" + best->name + "'?)" : "";
}

json text_to_json(const Field& f, const std::string& text) {
  if (f.optional && (text == "none" || text == "null")) return nullptr;
  switch (f.kind) {
    case Kind::boolean: {
      std::string t = text;
      std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
      // The spellings of Hugging Face's strtobool.
      if (t == "true" || t == "t" || t == "1" || t == "yes" || t == "y" || t == "on") return true;
      if (t == "false" || t == "f" || t == "0" || t == "no" || t == "n" || t == "off") return false;
      return text;
    }
    case Kind::integer: {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && end == text.data() + text.size()) return v;
      return text;
    }
    case Kind::number: {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (!text.empty() && end == text.c_str() + text.size()) return v;
      return text;
    }
    case Kind::string:
      return text;
    case Kind::string_list: {
      json list = json::array();
      std::stringstream ss(text);
      std::string item;
      while (std::getline(ss, item, ',')) list.push_back(item);
      return list;
    }
  }
  return text;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& removed_training_arguments() {
  static const std::vector<std::pair<std::string, std::string>> removed = {
      {"per_gpu_train_batch_size", "use per_device_train_batch_size"},
      {"per_gpu_eval_batch_size", "use per_device_eval_batch_size"},
      {"group_by_length",
       "its replacement is train_sampling_strategy \"group_by_length\", which hearth does not have: training "
       "batches are drawn in a random order"},
  };
  return removed;
}

void refuse_removed_field(const std::string& name, const std::string& context) {
  for (const auto& [removed, instead] : removed_training_arguments())
    HEARTH_CHECK(name != removed, ValueError, "[trainer] ", context, ": ", name,
                 " was removed from Hugging Face's TrainingArguments (transformers 5); ", instead);
}

const std::vector<TrainingArgumentField>& training_argument_fields() {
  static const std::vector<TrainingArgumentField> fields = [] {
    std::vector<TrainingArgumentField> all = make_fields();
    for (TrainingArgumentField& f : inert_training_argument_fields()) all.push_back(std::move(f));
    return all;
  }();
  return fields;
}

const TrainingArgumentField* find_training_argument_field(const std::string& name) {
  for (const Field& f : training_argument_fields())
    if (f.name == name || std::find(f.aliases.begin(), f.aliases.end(), name) != f.aliases.end()) return &f;
  return nullptr;
}

void set_training_argument(TrainingArguments& args, const std::string& name, const std::string& text,
                           const std::string& context) {
  refuse_removed_field(name, context);
  const Field* f = find_training_argument_field(name);
  HEARTH_CHECK(f != nullptr, ValueError, "[trainer] ", context, ": unknown training argument '", name, "'",
               suggestion(name));
  f->set(args, text_to_json(*f, text), context);
}

std::string TrainingArguments::best_metric_key() const {
  std::string m = metric_for_best_model.value_or("loss");
  return m.rfind("eval_", 0) == 0 ? m : "eval_" + m;
}

bool TrainingArguments::best_metric_greater_is_better() const {
  return greater_is_better.value_or(!ends_with(best_metric_key(), "loss"));
}

bool TrainingArguments::writes_tensorboard() const {
  return std::find(report_to.begin(), report_to.end(), "all") != report_to.end() ||
         std::find(report_to.begin(), report_to.end(), "tensorboard") != report_to.end();
}

bool TrainingArguments::draws_curves() const {
  return std::find(report_to.begin(), report_to.end(), "none") == report_to.end();
}

std::optional<DType> TrainingArguments::autocast_dtype() const {
  if (precision == "bf16-mixed") return DType::bfloat16;
  if (precision == "fp16-mixed") return DType::float16;
  return std::nullopt;
}

bool TrainingArguments::writes_jsonl() const {
  return std::find(report_to.begin(), report_to.end(), "all") != report_to.end() ||
         std::find(report_to.begin(), report_to.end(), "jsonl") != report_to.end();
}

void TrainingArguments::validate(const std::string& where) const {
  HEARTH_CHECK(max_steps > 0 || num_train_epochs > 0, ValueError, "[trainer] ", where,
               ": nothing to train: max_steps is ", max_steps, " and num_train_epochs is ", num_train_epochs,
               "; set one of them above 0");
  if (load_best_model_at_end) {
    HEARTH_CHECK(eval_strategy != "no", ValueError, "[trainer] ", where,
                 ": load_best_model_at_end needs evaluations to pick the best model, but eval_strategy is \"no\"; "
                 "set eval_strategy to \"steps\" or \"epoch\"");
    HEARTH_CHECK(save_strategy == eval_strategy || save_strategy == "best", ValueError, "[trainer] ", where,
                 ": load_best_model_at_end needs save_strategy to match eval_strategy (so every evaluated model is "
                 "saved), got save_strategy \"",
                 save_strategy, "\" and eval_strategy \"", eval_strategy, "\"");
    HEARTH_CHECK(eval_strategy != "steps" || save_strategy == "best" || save_steps % effective_eval_steps() == 0,
                 ValueError, "[trainer] ", where,
                 ": load_best_model_at_end needs save_steps to be a multiple of eval_steps, got save_steps ",
                 save_steps, " and eval_steps ", effective_eval_steps());
  }
  // As Hugging Face's check: without workers no batch is built ahead.
  HEARTH_CHECK(!dataloader_prefetch_factor.has_value() || dataloader_num_workers > 0, ValueError, "[trainer] ", where,
               ": dataloader_prefetch_factor is ", dataloader_prefetch_factor.value_or(0),
               " but dataloader_num_workers is 0, and batches are built ahead only by loader workers; set "
               "dataloader_num_workers to 1 or more, or leave dataloader_prefetch_factor unset");
  HEARTH_CHECK(!(report_to.size() > 1 && std::find(report_to.begin(), report_to.end(), "none") != report_to.end()),
               ValueError, "[trainer] ", where, ": field 'report_to': \"none\" cannot be combined with other values");
}

nlohmann::json TrainingArguments::to_json() const {
  json j = json::object();
  for (const Field& f : training_argument_fields()) j[f.name] = f.get(*this);
  return j;
}

TrainingArguments TrainingArguments::from_json(const nlohmann::json& j, const std::string& where,
                                               const TrainingArguments& base) {
  HEARTH_CHECK(j.is_object(), ValueError, "[trainer] ", where, ": expected a JSON object of training arguments, got ",
               j.type_name());
  TrainingArguments args = base;
  for (const auto& [key, value] : j.items()) {
    refuse_removed_field(key, where + ": field '" + key + "'");
    const Field* f = find_training_argument_field(key);
    HEARTH_CHECK(f != nullptr, ValueError, "[trainer] ", where, ": field '", key, "': expected a TrainingArguments ",
                 "name", suggestion(key), ", got an unknown field");
    // Hugging Face writes an unset field as null (transformers 5's
    // warmup_ratio): the field keeps its value.
    if (value.is_null() && !f->optional) continue;
    f->set(args, value, where + ": field '" + key + "'");
  }
  return args;
}

TrainingArguments TrainingArguments::from_json(const nlohmann::json& j, const std::string& where) {
  return from_json(j, where, TrainingArguments());
}

TrainingArguments TrainingArguments::load(const std::string& path) { return load(path, TrainingArguments()); }

TrainingArguments TrainingArguments::load(const std::string& path, const TrainingArguments& base) {
  io::check_regular_file(path, "[trainer]");
  std::ifstream in(path);
  HEARTH_CHECK(in.good(), IoError, "[trainer] ", path, ": cannot open the training arguments file");
  json j = json::parse(io::read_json_text(in, "[trainer] " + path), nullptr, /*allow_exceptions=*/false);
  HEARTH_CHECK(!j.is_discarded(), ValueError, "[trainer] ", path, ": not valid JSON");
  TrainingArguments args = from_json(j, path, base);
  args.validate(path);
  return args;
}

void TrainingArguments::save(const std::string& path) const { io::write_file_atomic(path, to_json().dump(2) + "\n"); }

}  // namespace hearth::train
