// Learning-rate schedules (torch.optim.lr_scheduler and Hugging Face's
// get_*_schedule_with_warmup). A scheduler sets each group's "lr" to
// base_lr * factor(step); construction applies step 0, and each step()
// advances one (call it after optimizer.step(), once per optimizer update).
//
// State: last_epoch (the step count) and the base learning rates. To resume,
// build the same scheduler on the restored optimizer and load_state_dict():
// it sets the learning rates for the restored step.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/optim/optimizer.h"

namespace hearth::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  void step();
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  // The learning rates the last step set, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  // The learning rate of group `group` at step `step` (no side effects).
  double lr_at(size_t group, int64_t step) const { return base_lrs_.at(group) * factor(group, step); }

  nlohmann::json state_dict() const;
  void load_state_dict(const nlohmann::json& state);

 protected:
  // The scheduler keeps a reference: the optimizer must outlive it. A group
  // that has no "initial_lr" gets its current lr as one (PyTorch's rule), and
  // base_lrs are the initial_lrs.
  explicit LRScheduler(Optimizer& optimizer);
  // Applies step 0; derived constructors call it last, once factor() works.
  void initialize();
  virtual double factor(size_t group, int64_t step) const = 0;

 private:
  void apply();
  Optimizer& optimizer_;
  int64_t last_epoch_ = -1;
  std::vector<double> base_lrs_, last_lr_;
};

// lr = base_lr * lambda(step), the same lambda for every group, or one per group.
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, Lambda lambda);
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lambdas);

 protected:
  double factor(size_t group, int64_t step) const override;

 private:
  std::vector<Lambda> lambdas_;
};

// lr = base_lr * gamma^(step / step_size) (integer division): decays every step_size steps.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double factor(size_t group, int64_t step) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// Hugging Face's schedules, as LambdaLR over the step count:
// constant: 1.
std::unique_ptr<LRScheduler> get_constant_schedule(Optimizer& optimizer);
// step / warmup during warm-up, then 1.
std::unique_ptr<LRScheduler> get_constant_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps);
// Warm-up, then linear decay to 0 at num_training_steps.
std::unique_ptr<LRScheduler> get_linear_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps,
                                                             int64_t num_training_steps);
// Warm-up, then a cosine from 1 to 0 (num_cycles = 0.5 is half a period).
std::unique_ptr<LRScheduler> get_cosine_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps,
                                                             int64_t num_training_steps, double num_cycles = 0.5);
// Warm-up, then num_cycles cosines from 1 to 0, each restarting at 1 (hard restarts).
std::unique_ptr<LRScheduler> get_cosine_with_hard_restarts_schedule_with_warmup(Optimizer& optimizer,
                                                                                int64_t num_warmup_steps,
                                                                                int64_t num_training_steps,
                                                                                int64_t num_cycles = 1);
// Warm-up, then a polynomial decay of the given power from the optimizer's
// learning rate to lr_end at num_training_steps, and lr_end after. lr_end
// must be below the learning rate (ValueError).
std::unique_ptr<LRScheduler> get_polynomial_decay_schedule_with_warmup(Optimizer& optimizer, int64_t num_warmup_steps,
                                                                       int64_t num_training_steps, double lr_end = 1e-7,
                                                                       double power = 1.0);
// By name, as TrainingArguments.lr_scheduler_type: "constant",
// "constant_with_warmup", "linear", "cosine", "cosine_with_restarts" (one
// cycle), "polynomial" (power 1 down to 1e-7). Other names: ValueError listing these.
std::unique_ptr<LRScheduler> get_scheduler(const std::string& name, Optimizer& optimizer, int64_t num_warmup_steps,
                                           int64_t num_training_steps);

}  // namespace hearth::optim
