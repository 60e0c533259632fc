#include "hearth/train/trainer_state.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "hearth/core/errors.h"
#include "hearth/io/json_integer.h"

namespace hearth::train {
namespace {

using json = nlohmann::json;

const json& field(const json& j, const char* name, const std::string& where) {
  HEARTH_CHECK(j.contains(name), ValueError, "[trainer] ", where, ": field '", name, "' is missing");
  return j.at(name);
}

template <typename T>
T get(const json& j, const char* name, const std::string& where) {
  const json& v = field(j, name, where);
  if constexpr (std::is_integral_v<T>) {
    HEARTH_CHECK(io::json_integer_fits<T>(v), ValueError, "[trainer] ", where, ": field '", name,
                 "': expected an integer from ", std::numeric_limits<T>::min(), " to ", std::numeric_limits<T>::max(),
                 ", got ", v.dump());
  }
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    HEARTH_THROW(ValueError, "[trainer] ", where, ": field '", name, "' has the wrong type: ", v.dump());
  }
}

// Steps, epochs and batch counts beyond 10^12: no run gets there, so the file is corrupt.
constexpr int64_t kMaxCount = 1'000'000'000'000;

void check_count(int64_t v, const char* name, const std::string& where) {
  HEARTH_CHECK(v >= -1 && v <= kMaxCount, ValueError, "[trainer] ", where, ": field '", name,
               "': expected an integer from -1 to ", kMaxCount, ", got ", v);
}

void check_epochs(double v, const char* name, const std::string& where) {
  HEARTH_CHECK(v >= 0 && v <= static_cast<double>(kMaxCount), ValueError, "[trainer] ", where, ": field '", name,
               "': expected a number from 0 to ", kMaxCount, ", got ", v);
}

}  // namespace

nlohmann::json TrainerState::to_json() const {
  json j;
  j["global_step"] = global_step;
  j["epoch"] = epoch;
  j["max_steps"] = max_steps;
  j["num_train_epochs"] = num_train_epochs;
  j["steps_per_epoch"] = steps_per_epoch;
  j["train_batch_size"] = train_batch_size;
  j["logging_steps"] = logging_steps;
  j["eval_steps"] = eval_steps;
  j["save_steps"] = save_steps;
  j["best_metric"] = best_metric.has_value() ? json(*best_metric) : json(nullptr);
  j["best_global_step"] = best_global_step;
  j["best_model_checkpoint"] = best_model_checkpoint.empty() ? json(nullptr) : json(best_model_checkpoint);
  if (!run_id.empty()) j["run_id"] = run_id;
  j["log_history"] = log_history;
  j["rng_state"] = {{"seed", rng_seed}, {"offset", rng_offset}};
  j["data_position"] = {{"epoch", data_position.epoch}, {"batches_yielded", data_position.batches_yielded}};
  j["world_size"] = world_size;
  j["loss_window"] = loss_window;
  j["total_loss"] = total_loss;
  j["stateful_callbacks"] = stateful_callbacks;
  return j;
}

TrainerState TrainerState::from_json(const nlohmann::json& j, const std::string& where) {
  HEARTH_CHECK(j.is_object(), ValueError, "[trainer] ", where, ": expected a JSON object, got ", j.type_name());
  TrainerState s;
  s.global_step = get<int64_t>(j, "global_step", where);
  s.epoch = get<double>(j, "epoch", where);
  s.max_steps = get<int64_t>(j, "max_steps", where);
  s.num_train_epochs = get<double>(j, "num_train_epochs", where);
  s.steps_per_epoch = get<int64_t>(j, "steps_per_epoch", where);
  s.train_batch_size = get<int64_t>(j, "train_batch_size", where);
  s.logging_steps = get<int64_t>(j, "logging_steps", where);
  s.eval_steps = get<int64_t>(j, "eval_steps", where);
  s.save_steps = get<int64_t>(j, "save_steps", where);
  const json& best = field(j, "best_metric", where);
  if (!best.is_null()) s.best_metric = get<double>(j, "best_metric", where);
  s.best_global_step = get<int64_t>(j, "best_global_step", where);
  const json& best_ckpt = field(j, "best_model_checkpoint", where);
  if (!best_ckpt.is_null()) s.best_model_checkpoint = get<std::string>(j, "best_model_checkpoint", where);
  if (j.contains("run_id") && !j.at("run_id").is_null()) s.run_id = get<std::string>(j, "run_id", where);
  s.log_history = get<std::vector<json>>(j, "log_history", where);
  const json& rng = field(j, "rng_state", where);
  s.rng_seed = get<uint64_t>(rng, "seed", where + " rng_state");
  s.rng_offset = get<uint64_t>(rng, "offset", where + " rng_state");
  const json& pos = field(j, "data_position", where);
  s.data_position.epoch = get<int64_t>(pos, "epoch", where + " data_position");
  s.data_position.batches_yielded = get<int64_t>(pos, "batches_yielded", where + " data_position");
  if (j.contains("world_size")) s.world_size = get<int64_t>(j, "world_size", where);
  s.loss_window = get<std::vector<double>>(j, "loss_window", where);
  s.total_loss = get<double>(j, "total_loss", where);
  s.stateful_callbacks = field(j, "stateful_callbacks", where);
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
  HEARTH_CHECK(s.data_position.epoch <= std::max<int64_t>(s.global_step, 0) + 1, ValueError, "[trainer] ", where,
               ": field 'data_position.epoch': expected at most global_step + 1 (", s.global_step + 1, "), got ",
               s.data_position.epoch);
  // The sum of the steps' losses: beyond 1e30 per step on average it is no
  // loss a run reports (and adding to it soon overflows to infinity).
  const double max_total_loss = 1e30 * static_cast<double>(std::max<int64_t>(s.global_step, 1));
  HEARTH_CHECK(std::isfinite(s.total_loss) && std::abs(s.total_loss) <= max_total_loss, ValueError, "[trainer] ", where,
               ": field 'total_loss': expected a finite sum of at most 1e30 per step (", max_total_loss, " for ",
               s.global_step, " steps), got ", s.total_loss);
  return s;
}

}  // namespace hearth::train
