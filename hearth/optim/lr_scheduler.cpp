#include "hearth/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>

#include "hearth/core/errors.h"
#include "hearth/io/json_integer.h"

namespace hearth::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (ParamGroup& g : optimizer_.param_groups()) {
    g.options.emplace("initial_lr", g.lr());
    base_lrs_.push_back(g.get("initial_lr"));
  }
}

void LRScheduler::initialize() { step(); }

void LRScheduler::step() {
  ++last_epoch_;
  apply();
}

void LRScheduler::apply() {
  auto& groups = optimizer_.param_groups();
  HEARTH_CHECK(groups.size() == base_lrs_.size(), ValueError, "[lr_scheduler] the optimizer has ", groups.size(),
               " parameter groups but the scheduler was built for ", base_lrs_.size());
  last_lr_.clear();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double lr = lr_at(i, last_epoch_);
    groups[i].set_lr(lr);
    last_lr_.push_back(lr);
  }
}

nlohmann::json LRScheduler::state_dict() const {
  return {{"last_epoch", last_epoch_}, {"base_lrs", base_lrs_}, {"_last_lr", last_lr_}};
}

void LRScheduler::load_state_dict(const nlohmann::json& state) {
  // A schedule longer than any run (10^12 steps) means a corrupt state.
  constexpr int64_t kMaxLastEpoch = 1'000'000'000'000;
  HEARTH_CHECK(
      state.is_object() && state.contains("last_epoch") && io::json_integer_fits<int64_t>(state["last_epoch"]) &&
          state["last_epoch"].get<int64_t>() >= -1 && state["last_epoch"].get<int64_t>() <= kMaxLastEpoch,
      ValueError, "[lr_scheduler] load_state_dict: field \"last_epoch\": expected an integer in [-1, ", kMaxLastEpoch,
      "], got ", state.is_object() && state.contains("last_epoch") ? state["last_epoch"].dump() : "none");
  std::vector<double> base = base_lrs_;
  if (state.contains("base_lrs")) {
    const nlohmann::json& lrs = state["base_lrs"];
    bool numbers = lrs.is_array();
    for (const nlohmann::json& v : lrs)
      numbers = numbers && v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
    HEARTH_CHECK(numbers, ValueError,
                 "[lr_scheduler] load_state_dict: field \"base_lrs\": expected an array of "
                 "finite learning rates >= 0, got ",
                 lrs.dump());
    base = lrs.get<std::vector<double>>();
    HEARTH_CHECK(base.size() == base_lrs_.size(), ValueError, "[lr_scheduler] load_state_dict: the state has ",
                 base.size(), " base learning rates, the optimizer has ", base_lrs_.size(), " groups");
  }
  base_lrs_ = base;
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < base_lrs_.size(); ++i) groups[i].options["initial_lr"] = base_lrs_[i];
  last_epoch_ = state["last_epoch"].get<int64_t>();
  apply();
}

LambdaLR::LambdaLR(Optimizer& optimizer, Lambda lambda)
    : LambdaLR(optimizer, std::vector<Lambda>(optimizer.param_groups().size(), std::move(lambda))) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Lambda> lambdas)
    : LRScheduler(optimizer), lambdas_(std::move(lambdas)) {
  HEARTH_CHECK(lambdas_.size() == base_lrs().size(), ValueError, "[LambdaLR] expected ", base_lrs().size(),
               " lambdas (one per parameter group), got ", lambdas_.size());
  for (const Lambda& l : lambdas_) HEARTH_CHECK(static_cast<bool>(l), ValueError, "[LambdaLR] a lambda is empty");
  initialize();
}

double LambdaLR::factor(size_t group, int64_t step) const { return lambdas_.at(group)(step); }

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  HEARTH_CHECK(step_size > 0, ValueError, "[StepLR] step_size must be positive, got ", step_size);
  initialize();
}

double StepLR::factor(size_t, int64_t step) const {
  return std::pow(gamma_, static_cast<double>(std::max<int64_t>(step, 0) / step_size_));
}

namespace {

void check_steps(const char* fn, int64_t warmup, int64_t total) {
  HEARTH_CHECK(warmup >= 0, ValueError, "[", fn, "] num_warmup_steps must be non-negative, got ", warmup);
  HEARTH_CHECK(total >= 0, ValueError, "[", fn, "] num_training_steps must be non-negative, got ", total);
}

double warmup_factor(int64_t step, int64_t warmup) {
  return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
}

}  // namespace

std::unique_ptr<LRScheduler> get_constant_schedule(Optimizer& optimizer) {
  return std::make_unique<LambdaLR>(optimizer, [](int64_t) { return 1.0; });
}

std::unique_ptr<LRScheduler> get_constant_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps) {
  check_steps("get_constant_schedule_with_warmup", num_warmup_steps, 0);
  return std::make_unique<LambdaLR>(
      optimizer, [w = num_warmup_steps](int64_t step) { return step < w ? warmup_factor(step, w) : 1.0; });
}

std::unique_ptr<LRScheduler> get_linear_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps,
                                                             int64_t num_training_steps) {
  check_steps("get_linear_schedule_with_warmup", num_warmup_steps, num_training_steps);
  return std::make_unique<LambdaLR>(optimizer, [w = num_warmup_steps, t = num_training_steps](int64_t step) {
    if (step < w) return warmup_factor(step, w);
    return std::max(0.0, static_cast<double>(t - step) / static_cast<double>(std::max<int64_t>(1, t - w)));
  });
}

std::unique_ptr<LRScheduler> get_cosine_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps,
                                                             int64_t num_training_steps, double num_cycles) {
  check_steps("get_cosine_schedule_with_warmup", num_warmup_steps, num_training_steps);
  return std::make_unique<LambdaLR>(
      optimizer, [w = num_warmup_steps, t = num_training_steps, num_cycles](int64_t step) {
        if (step < w) return warmup_factor(step, w);
        const double progress = static_cast<double>(step - w) / static_cast<double>(std::max<int64_t>(1, t - w));
        return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * num_cycles * 2.0 * progress)));
      });
}

std::unique_ptr<LRScheduler> get_cosine_with_hard_restarts_schedule_with_warmup(Optimizer& optimizer,
                                                                                int64_t num_warmup_steps,
                                                                                int64_t num_training_steps,
                                                                                int64_t num_cycles) {
  check_steps("get_cosine_with_hard_restarts_schedule_with_warmup", num_warmup_steps, num_training_steps);
  HEARTH_CHECK(num_cycles >= 1, ValueError,
               "[get_cosine_with_hard_restarts_schedule_with_warmup] num_cycles must be at least 1, got ", num_cycles);
  return std::make_unique<LambdaLR>(
      optimizer, [w = num_warmup_steps, t = num_training_steps, num_cycles](int64_t step) {
        if (step < w) return warmup_factor(step, w);
        const double progress = static_cast<double>(step - w) / static_cast<double>(std::max<int64_t>(1, t - w));
        if (progress >= 1.0) return 0.0;
        // The position within the current cycle, from 0 to 1.
        const double within = std::fmod(static_cast<double>(num_cycles) * progress, 1.0);
        return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * within)));
      });
}

std::unique_ptr<LRScheduler> get_polynomial_decay_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps,
                                                                       int64_t num_training_steps, double lr_end,
                                                                       double power) {
  check_steps("get_polynomial_decay_schedule_with_warmup", num_warmup_steps, num_training_steps);
  const double lr_init = optimizer.param_groups().empty() ? 0.0 : optimizer.param_groups().front().lr();
  HEARTH_CHECK(lr_init > lr_end, ValueError, "[get_polynomial_decay_schedule_with_warmup] the learning rate ", lr_init,
               " must be above lr_end ", lr_end, " to decay to it");
  return std::make_unique<LambdaLR>(
      optimizer, [w = num_warmup_steps, t = num_training_steps, lr_init, lr_end, power](int64_t step) {
        if (step < w) return warmup_factor(step, w);
        if (step > t) return lr_end / lr_init;
        const double remaining = 1.0 - static_cast<double>(step - w) / static_cast<double>(std::max<int64_t>(1, t - w));
        return ((lr_init - lr_end) * std::pow(remaining, power) + lr_end) / lr_init;
      });
}

std::unique_ptr<LRScheduler> get_scheduler(const std::string& name, Optimizer& optimizer, int64_t num_warmup_steps,
                                           int64_t num_training_steps) {
  if (name == "constant") return get_constant_schedule(optimizer);
  if (name == "constant_with_warmup") return get_constant_schedule_with_warmup(optimizer, num_warmup_steps);
  if (name == "linear") return get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps);
  if (name == "cosine") return get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps);
  if (name == "cosine_with_restarts")
    return get_cosine_with_hard_restarts_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps);
  if (name == "polynomial")
    return get_polynomial_decay_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps);
  HEARTH_THROW(ValueError, "[lr_scheduler] unknown scheduler type \"", name,
               "\"; expected one of: constant, constant_with_warmup, linear, cosine, cosine_with_restarts, "
               "polynomial");
}

}  // namespace hearth::optim
