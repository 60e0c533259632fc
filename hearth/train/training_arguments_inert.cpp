// Hugging Face's TrainingArguments fields that mean nothing to hearth's
// Trainer: each is accepted (so a command line or training_args.json written
// for transformers runs unchanged) and kept as given, with the reason it has
// no effect. A value that would need what hearth lacks (DeepSpeed, the Hub,
// a scheduler's extra arguments, ...) is refused instead, saying why, since
// ignoring it would silently train something else than the user asked for.
// docs/training_arguments.md lists the same fields and reasons.
#include <functional>

#include "hearth/core/errors.h"
#include "hearth/train/training_arguments.h"

namespace hearth::train {
namespace {

using json = nlohmann::json;
using Kind = TrainingArgumentField::Kind;

// What a value must be. `any` takes what Hugging Face takes as a dict or a
// list: a JSON object or array, or a string (a file name or JSON text).
enum class Type { boolean, integer, number, string, any };

bool has_type(const json& v, Type t) {
  switch (t) {
    case Type::boolean:
      return v.is_boolean();
    case Type::integer:
      return v.is_number_integer();
    case Type::number:
      return v.is_number();
    case Type::string:
      return v.is_string();
    case Type::any:
      return v.is_string() || v.is_object() || v.is_array();
  }
  return false;
}

const char* type_text(Type t) {
  switch (t) {
    case Type::boolean:
      return "true or false";
    case Type::integer:
      return "an integer";
    case Type::number:
      return "a number";
    case Type::string:
      return "a string";
    case Type::any:
      return "a JSON object, list or string";
  }
  return "";
}

// Whether a value is one the field can take without changing anything; when
// not, the field refuses it, giving `refusal`.
using Harmless = std::function<bool(const json&)>;

struct Inert {
  const char* name;
  Type type;
  json default_value;  // Hugging Face's; null: unset
  const char* why;     // why it has no effect here
  Harmless harmless = nullptr;
  const char* refusal = "";  // what to do instead, when a value is refused
};

bool is_false(const json& v) { return v.is_boolean() && !v.get<bool>(); }
bool is_true(const json& v) { return v.is_boolean() && v.get<bool>(); }
bool is_empty(const json& v) {
  return v.is_null() || (v.is_string() && v.get<std::string>().empty()) || (v.is_object() && v.empty()) ||
         (v.is_array() && v.empty());
}
bool is_zero(const json& v) { return v.is_number() && v.get<double>() == 0.0; }
// Empty, or an object of settings that all say off (false, 0, null, empty):
// what Hugging Face fills fsdp_config with when FSDP is not used
// ({"min_num_params": 0, "xla": false, ...}).
bool nothing_enabled(const json& v) {
  if (is_empty(v)) return true;
  if (!v.is_object()) return false;
  for (const auto& [key, value] : v.items())
    if (!(is_false(value) || is_zero(value) || is_empty(value))) return false;
  return true;
}

TrainingArgumentField make_field(const Inert& f) {
  TrainingArgumentField field;
  field.name = f.name;
  field.kind = f.type == Type::boolean   ? Kind::boolean
               : f.type == Type::integer ? Kind::integer
               : f.type == Type::number  ? Kind::number
                                         : Kind::string;
  field.optional = true;
  field.no_effect = f.why;
  field.help = std::string("no effect: ") + f.why;
  const std::string name = f.name;
  const json default_value = f.default_value;
  field.get = [name, default_value](const TrainingArguments& a) {
    auto it = a.inert.find(name);
    return it == a.inert.end() ? default_value : it->second;
  };
  const Type type = f.type;
  const Harmless harmless = f.harmless;
  const std::string refusal = f.refusal;
  const std::string why = f.why;
  field.set = [name, type, harmless, refusal, why](TrainingArguments& a, const json& v, const std::string& c) {
    HEARTH_CHECK(v.is_null() || has_type(v, type), ValueError, "[trainer] ", c, ": expected ", type_text(type),
                 ", got ", v.dump());
    HEARTH_CHECK(v.is_null() || !harmless || harmless(v), ValueError, "[trainer] ", c, ": ", v.dump(),
                 " is not supported: ", why, "; ", refusal);
    if (v.is_null()) {
      a.inert.erase(name);
    } else {
      a.inert[name] = v;
    }
  };
  return field;
}

const std::vector<Inert>& inert_fields() {
  static const std::vector<Inert> fields = {
      {"lr_scheduler_kwargs", Type::any, nullptr, "hearth's schedules take no extra arguments", is_empty,
       "leave it unset"},
      {"optim_args", Type::string, nullptr, "hearth's optimizers take no extra arguments", is_empty, "leave it unset"},
      {"optim_target_modules", Type::any, nullptr, "it selects modules for GaLore and APOLLO, which hearth lacks",
       is_empty, "leave it unset"},
      {"average_tokens_across_devices", Type::boolean, true,
       "hearth's losses are means over each batch, averaged over the processes"},
      {"bf16_full_eval", Type::boolean, false, "evaluation runs in the training precision", is_false,
       "use --bf16, which also evaluates under bfloat16 autocast"},
      {"fp16_full_eval", Type::boolean, false, "evaluation runs in the training precision", is_false,
       "use --fp16, which also evaluates under float16 autocast"},
      {"gradient_checkpointing_kwargs", Type::any, nullptr, "hearth's activation checkpointing takes no options"},
      {"torch_compile_backend", Type::string, nullptr,
       "hearth's step graphs (--torch_compile) have no backends to choose from"},
      {"torch_compile_mode", Type::string, nullptr,
       "hearth's step graphs (--torch_compile) have no modes to choose from"},
      {"use_liger_kernel", Type::boolean, false, "hearth has its own fused kernels and no Liger kernels"},
      {"liger_kernel_config", Type::any, nullptr, "hearth has no Liger kernels"},
      {"use_cache", Type::boolean, false, "hearth's models keep no key/value cache"},
      {"neftune_noise_alpha", Type::number, nullptr, "hearth has no NEFTune noise embeddings", is_empty,
       "leave it unset"},
      {"torch_empty_cache_steps", Type::integer, nullptr,
       "hearth's caching allocator gives memory back on out-of-memory by itself"},
      {"log_on_each_node", Type::boolean, true, "rank 0 alone logs, on every node count"},
      {"logging_nan_inf_filter", Type::boolean, true,
       "a NaN or Inf loss stops training with the step that made it, so none is ever logged"},
      {"include_num_input_tokens_seen", Type::any, "no", "hearth does not count input tokens"},
      {"log_level", Type::string, "passive", "hearth's console output has no levels"},
      {"log_level_replica", Type::string, "warning", "ranks other than 0 print only errors"},
      {"run_name", Type::string, nullptr, "it names the run in trackers (wandb, mlflow), which hearth has none of"},
      {"project", Type::string, "huggingface", "it names the project in Trackio, which hearth lacks"},
      {"trackio_space_id", Type::string, "trackio", "hearth has no Trackio"},
      {"eval_delay", Type::number, 0, "evaluations start as eval_strategy says", is_zero,
       "set eval_strategy and eval_steps instead"},
      {"prediction_loss_only", Type::boolean, false,
       "evaluation always computes the loss and the metrics from the logits"},
      {"eval_do_concat_batches", Type::boolean, true, "metrics are accumulated batch by batch, never concatenated"},
      {"eval_use_gather_object", Type::boolean, false, "hearth gathers metrics as numbers, never as objects"},
      {"eval_accumulation_steps", Type::integer, nullptr,
       "metrics are accumulated batch by batch; no predictions pile up on the accelerator"},
      {"include_for_metrics", Type::any, json::array(), "hearth's metrics read the logits and labels only"},
      {"batch_eval_metrics", Type::boolean, false, "metrics are always computed batch by batch"},
      {"save_on_each_node", Type::boolean, false, "rank 0 saves, to the output_dir it owns"},
      {"enable_jit_checkpoint", Type::boolean, false,
       "hearth saves a checkpoint on SIGTERM and SIGINT whatever this says"},
      {"push_to_hub", Type::boolean, false, "hearth has no network access, so it cannot push to the Hugging Face Hub",
       is_false, "upload output_dir yourself, e.g. with huggingface-cli upload"},
      {"hub_token", Type::string, nullptr, "hearth does not push to the Hub"},
      {"hub_private_repo", Type::boolean, nullptr, "hearth does not push to the Hub"},
      {"hub_model_id", Type::string, nullptr, "hearth does not push to the Hub"},
      {"hub_strategy", Type::string, "every_save", "hearth does not push to the Hub"},
      {"hub_always_push", Type::boolean, false, "hearth does not push to the Hub"},
      {"hub_revision", Type::string, nullptr, "hearth does not push to the Hub"},
      {"ignore_data_skip", Type::boolean, false, "a resumed run restores its data order exactly, at no cost", is_false,
       "leave it false"},
      {"restore_callback_states_from_checkpoint", Type::boolean, false,
       "stateful callbacks (early stopping) are always restored from the checkpoint"},
      {"full_determinism", Type::boolean, false,
       "hearth's random numbers and kernels are deterministic already (counter-based Philox, fixed reductions)"},
      {"accelerator_config", Type::any, nullptr, "hearth has no Accelerate; its data parallelism needs no options"},
      {"parallelism_config", Type::any, nullptr, "hearth has data parallelism only", is_empty,
       "use hearth launch --nproc_per_node N"},
      {"dataloader_persistent_workers", Type::boolean, false,
       "hearth's loader threads live as long as the run already"},
      {"use_mps_device", Type::boolean, false,
       "the accelerator is used by default (transformers 4.x deprecated this field for the same reason); Apple's GPUs "
       "have no backend in this build"},
      {"remove_unused_columns", Type::boolean, true, "hearth's data sets hold only the columns the model reads"},
      {"label_names", Type::any, nullptr, "the labels are always the batch's \"labels\" field"},
      {"train_sampling_strategy", Type::string, "random", "training batches are always drawn in a random order",
       [](const json& v) { return v == "random"; }, "leave it \"random\""},
      {"length_column_name", Type::string, "length", "hearth does not group samples by length"},
      {"ddp_find_unused_parameters", Type::boolean, nullptr,
       "hearth's gradient reducer handles parameters without gradients by itself"},
      {"ddp_bucket_cap_mb", Type::integer, nullptr, "hearth's gradient reducer sizes its buckets by itself"},
      {"ddp_broadcast_buffers", Type::boolean, nullptr, "buffers are broadcast from rank 0 at the start"},
      {"ddp_backend", Type::string, nullptr, "hearth picks its process-group backend by device (Gloo on the CPU)"},
      {"fsdp", Type::any, json::array(), "hearth has data parallelism only, no sharding", is_empty,
       "use hearth launch --nproc_per_node N"},
      {"fsdp_config", Type::any, nullptr, "hearth has data parallelism only, no sharding", nothing_enabled,
       "use hearth launch --nproc_per_node N"},
      {"deepspeed", Type::any, nullptr, "hearth has no DeepSpeed", is_empty, "use hearth launch --nproc_per_node N"},
      {"debug", Type::any, json::array(), "hearth's check for NaN and Inf is detect_anomaly"},
      {"skip_memory_metrics", Type::boolean, true, "hearth reports no memory metrics"},
      {"do_train", Type::boolean, false, "the Trainer does not read it; run_glue does, hearth train always trains"},
      {"do_eval", Type::boolean, false,
       "the Trainer does not read it; run_glue does, hearth train always evaluates at the end"},
      {"do_predict", Type::boolean, false, "the Trainer does not read it; run_glue does"},
      {"local_rank", Type::integer, -1, "hearth launch gives each process its rank in the environment"},
      // transformers 4.x, removed in 5.x; old command lines still name it.
      {"save_safetensors", Type::boolean, true, "hearth always saves safetensors", is_true, "leave it true"},
  };
  return fields;
}

}  // namespace

std::vector<TrainingArgumentField> inert_training_argument_fields() {
  std::vector<TrainingArgumentField> out;
  for (const Inert& f : inert_fields()) out.push_back(make_field(f));
  return out;
}

}  // namespace hearth::train
