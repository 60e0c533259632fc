#include "hearth/train/trainer_state.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "hearth/core/errors.h"
#include "hearth/core/input_error.h"
#include "hearth/io/json_integer.h"

namespace hearth::train {
namespace {

using json = nlohmann::json;

const json& field(const json& j, const char* name, const std::string& where) {
  HEARTH_CHECK(j.contains(name), InputError, "[trainer] ", where, ": field '", name, "' is missing");
  return j.at(name);
}

template <typename T>
T get(const json& j, const char* name, const std::string& where) {
  const json& v = field(j, name, where);
  if constexpr (std::is_integral_v<T>) {
    // A count written as 1e15 or 2.0 is a number JSON stores as a float: say
    // that, rather than quote a range it may well lie inside.
    HEARTH_CHECK(!v.is_number_float(), InputError, "[trainer] ", where, ": field '", name,
                 "': expected an integer (digits only, no fraction or exponent), got ", v.dump());
    HEARTH_CHECK(io::json_integer_fits<T>(v), InputError, "[trainer] ", where, ": field '", name,
                 "': expected an integer from ", std::numeric_limits<T>::min(), " to ", std::numeric_limits<T>::max(),
                 ", got ", v.dump());
  }
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    HEARTH_THROW(InputError, "[trainer] ", where, ": field '", name, "' has the wrong type: ", v.dump());
  }
}

// Steps, epochs and batch counts beyond 10^12: no run gets there, so the file is corrupt.
constexpr int64_t kMaxCount = 1'000'000'000'000;

void check_count(int64_t v, const char* name, const std::string& where) {
  HEARTH_CHECK(v >= -1 && v <= kMaxCount, InputError, "[trainer] ", where, ": field '", name,
               "': expected an integer from -1 to ", kMaxCount, ", got ", v);
}

void check_epochs(double v, const char* name, const std::string& where) {
  HEARTH_CHECK(v >= 0 && v <= static_cast<double>(kMaxCount), InputError, "[trainer] ", where, ": field '", name,
               "': expected a number from 0 to ", kMaxCount, ", got ", v);
}

}  // namespace

nlohmann::json TrainerState::to_json() const {
  // Hugging Face's TrainerState fields, in its order.
  json j;
  j["epoch"] = epoch;
  j["global_step"] = global_step;
  j["max_steps"] = max_steps;
  j["logging_steps"] = logging_steps;
  j["eval_steps"] = eval_steps;
  j["save_steps"] = save_steps;
  j["train_batch_size"] = train_batch_size;
  j["num_train_epochs"] = num_train_epochs;
  j["num_input_tokens_seen"] = 0;  // hearth does not count them
  j["total_flos"] = total_flos;
  j["log_history"] = log_history;
  j["best_metric"] = best_metric.has_value() ? json(*best_metric) : json(nullptr);
  j["best_global_step"] = best_metric.has_value() ? json(best_global_step) : json(nullptr);
  j["best_model_checkpoint"] = best_model_checkpoint.empty() ? json(nullptr) : json(best_model_checkpoint);
  // The state is written by rank 0 alone, for the whole run.
  j["is_local_process_zero"] = true;
  j["is_world_process_zero"] = true;
  j["is_hyper_param_search"] = false;
  j["trial_name"] = nullptr;
  j["trial_params"] = nullptr;
  json resume;
  resume["steps_per_epoch"] = steps_per_epoch;
  if (!run_id.empty()) resume["run_id"] = run_id;
  resume["rng_state"] = {{"seed", rng_seed}, {"offset", rng_offset}};
  resume["data_position"] = {{"epoch", data_position.epoch}, {"batches_yielded", data_position.batches_yielded}};
  resume["world_size"] = world_size;
  resume["loss_window"] = loss_window;
  resume["total_loss"] = total_loss;
  j["stateful_callbacks"] = stateful_callbacks;
  j["stateful_callbacks"][kResumeStateKey] = std::move(resume);
  return j;
}

TrainerState TrainerState::from_json(const nlohmann::json& j, const std::string& where) {
  HEARTH_CHECK(j.is_object(), InputError, "[trainer] ", where, ": expected a JSON object, got ", j.type_name());
  TrainerState s;
  s.global_step = get<int64_t>(j, "global_step", where);
  s.epoch = get<double>(j, "epoch", where);
  s.max_steps = get<int64_t>(j, "max_steps", where);
  s.num_train_epochs = get<double>(j, "num_train_epochs", where);
  s.train_batch_size = get<int64_t>(j, "train_batch_size", where);
  s.logging_steps = get<int64_t>(j, "logging_steps", where);
  s.eval_steps = get<int64_t>(j, "eval_steps", where);
  s.save_steps = get<int64_t>(j, "save_steps", where);
  if (j.contains("total_flos")) s.total_flos = get<double>(j, "total_flos", where);  // absent in older files
  const json& best = field(j, "best_metric", where);
  if (!best.is_null()) s.best_metric = get<double>(j, "best_metric", where);
  const json& best_step = field(j, "best_global_step", where);
  if (!best_step.is_null()) s.best_global_step = get<int64_t>(j, "best_global_step", where);
  const json& best_ckpt = field(j, "best_model_checkpoint", where);
  if (!best_ckpt.is_null()) s.best_model_checkpoint = get<std::string>(j, "best_model_checkpoint", where);
  s.log_history = get<std::vector<json>>(j, "log_history", where);
  s.stateful_callbacks = field(j, "stateful_callbacks", where);
  HEARTH_CHECK(s.stateful_callbacks.is_object(), InputError, "[trainer] ", where,
               ": field 'stateful_callbacks': expected a JSON object, got ", s.stateful_callbacks.dump());
  // The resumption state: in stateful_callbacks, or at the top in older files.
  json resume = j;
  if (s.stateful_callbacks.contains(kResumeStateKey)) {
    resume = s.stateful_callbacks.at(kResumeStateKey);
    s.stateful_callbacks.erase(kResumeStateKey);
  }
  s.steps_per_epoch = get<int64_t>(resume, "steps_per_epoch", where);
  if (resume.contains("run_id") && !resume.at("run_id").is_null()) s.run_id = get<std::string>(resume, "run_id", where);
  const json& rng = field(resume, "rng_state", where);
  s.rng_seed = get<uint64_t>(rng, "seed", where + " rng_state");
  s.rng_offset = get<uint64_t>(rng, "offset", where + " rng_state");
  const json& pos = field(resume, "data_position", where);
  s.data_position.epoch = get<int64_t>(pos, "epoch", where + " data_position");
  s.data_position.batches_yielded = get<int64_t>(pos, "batches_yielded", where + " data_position");
  if (resume.contains("world_size")) s.world_size = get<int64_t>(resume, "world_size", where);
  s.loss_window = get<std::vector<double>>(resume, "loss_window", where);
  s.total_loss = get<double>(resume, "total_loss", where);
  check_count(s.global_step, "global_step", where);
  check_epochs(s.epoch, "epoch", where);
  check_count(s.max_steps, "max_steps", where);
  check_epochs(s.num_train_epochs, "num_train_epochs", where);
  check_count(s.steps_per_epoch, "steps_per_epoch", where);
  check_count(s.train_batch_size, "train_batch_size", where);
  check_count(s.logging_steps, "logging_steps", where);
  check_count(s.eval_steps, "eval_steps", where);
  check_count(s.save_steps, "save_steps", where);
  check_count(s.best_global_step, "best_global_step", where);
  check_count(s.data_position.epoch, "data_position.epoch", where);
  check_count(s.data_position.batches_yielded, "data_position.batches_yielded", where);
  check_count(s.world_size, "world_size", where);
  // A step never spans two epochs of the data (a step's batches stop at the
  // epoch's end), so the data cannot be further than one epoch per step.
  HEARTH_CHECK(s.data_position.epoch <= std::max<int64_t>(s.global_step, 0) + 1, InputError, "[trainer] ", where,
               ": field 'data_position.epoch': expected at most global_step + 1 (", s.global_step + 1, "), got ",
               s.data_position.epoch);
  // The sum of the steps' losses: beyond 1e30 per step on average it is no
  // loss a run reports (and adding to it soon overflows to infinity).
  const double max_total_loss = 1e30 * static_cast<double>(std::max<int64_t>(s.global_step, 1));
  HEARTH_CHECK(std::isfinite(s.total_loss) && std::abs(s.total_loss) <= max_total_loss, InputError, "[trainer] ", where,
               ": field 'total_loss': expected a finite sum of at most 1e30 per step (", max_total_loss, " for ",
               s.global_step, " steps), got ", s.total_loss);
  return s;
}

}  // namespace hearth::train
