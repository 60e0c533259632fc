#include "hearth/train/callbacks.h"

#include <cmath>
#include <sstream>

#include "hearth/core/errors.h"

namespace hearth::train {

double best_model_metric(const TrainingArguments& args, const Metrics& metrics) {
  std::string key = args.best_metric_key();
  auto it = metrics.find(key);
  if (it == metrics.end()) {
    std::string have;
    for (const auto& [k, v] : metrics) have += (have.empty() ? "" : ", ") + k;
    HEARTH_THROW(ValueError, "[trainer] metric_for_best_model is '", key, "', but evaluation reports only: ", have);
  }
  return it->second;
}

bool metric_improves(const TrainingArguments& args, double value, const std::optional<double>& best, double threshold) {
  if (std::isnan(value)) return false;
  if (!best.has_value()) return true;
  return args.best_metric_greater_is_better() ? value > *best + threshold : value < *best - threshold;
}

EarlyStoppingCallback::EarlyStoppingCallback(int64_t patience, double threshold)
    : patience_(patience), threshold_(threshold) {
  HEARTH_CHECK(patience >= 1, ValueError, "[EarlyStoppingCallback] patience must be >= 1, got ", patience);
  HEARTH_CHECK(threshold >= 0.0 && std::isfinite(threshold), ValueError,
               "[EarlyStoppingCallback] threshold must be a finite number >= 0, got ", threshold);
}

void EarlyStoppingCallback::on_train_begin(const TrainingArguments& args, TrainerState&, TrainerControl&) {
  HEARTH_CHECK(args.eval_strategy != "no", ValueError,
               "[EarlyStoppingCallback] early stopping needs evaluations, but eval_strategy is \"no\"; set "
               "eval_strategy to \"steps\" or \"epoch\"");
}

void EarlyStoppingCallback::on_evaluate(const TrainingArguments& args, TrainerState&, TrainerControl& control,
                                        const Metrics& metrics) {
  double value = best_model_metric(args, metrics);
  if (metric_improves(args, value, best_, threshold_)) {
    best_ = value;
    patience_counter_ = 0;
    return;
  }
  ++patience_counter_;
  if (patience_counter_ >= patience_) {
    control.should_training_stop = true;
    std::ostringstream os;
    os << "early stopping: " << args.best_metric_key() << " has not improved on " << *best_ << " for "
       << patience_counter_ << " evaluation" << (patience_counter_ == 1 ? "" : "s");
    control.stop_reason = os.str();
  }
}

nlohmann::json EarlyStoppingCallback::state_dict() const {
  return {{"patience_counter", patience_counter_}, {"best", best_.has_value() ? nlohmann::json(*best_) : nullptr}};
}

void EarlyStoppingCallback::load_state_dict(const nlohmann::json& state) {
  HEARTH_CHECK(state.is_object() && state.contains("patience_counter") && state.contains("best"), ValueError,
               "[EarlyStoppingCallback] saved state must hold patience_counter and best, got ", state.dump());
  patience_counter_ = state.at("patience_counter").get<int64_t>();
  const auto& b = state.at("best");
  best_ = b.is_null() ? std::nullopt : std::optional<double>(b.get<double>());
}

}  // namespace hearth::train
