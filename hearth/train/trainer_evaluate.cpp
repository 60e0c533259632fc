// Trainer::evaluate: the evaluation loop, over shards of the data set under
// data parallelism (or the whole set on every rank when compute_metrics needs
// all logits at once), with the metrics logged and handed to the callbacks.
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/data/shard_dataset.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/indexing.h"
#include "hearth/train/metrics.h"
#include "hearth/train/step_graph.h"
#include "hearth/train/step_timeline.h"
#include "hearth/train/trainer.h"

namespace hearth::train {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kEvaluationModelReplaced =
    "the model's parameters or buffers were replaced after its evaluation was recorded";

}  // namespace

// The evaluation's batches, and its forward passes timed as an epoch's steps
// are (step_timeline.h), with the host's wait for each batch after the first.
class Trainer::EvaluationPace {
 public:
  EvaluationPace(data::DataLoader& loader, Device device) : loader_(loader), timeline_(device) {}

  std::optional<data::Batch> next() {
    const auto asked = Clock::now();
    std::optional<data::Batch> b = loader_.next();
    // The first wait is the loader's start, not its pace.
    if (batches_++ > 0) timeline_.host_waited(std::chrono::duration<double>(Clock::now() - asked).count());
    return b;
  }
  void forward_begins() { timeline_.step_begins(); }
  void forward_ends(const data::Batch& b) { timeline_.step_ends(b.at(data::field::kLabels).size(0)); }

  // "hearth: evaluation: 40 evaluation steps, ..." (nothing where the device
  // has no timing events or the evaluation took fewer than two steps).
  std::string line() {
    std::optional<EpochTiming> t = timeline_.finish_epoch();
    if (!t || t->steps < 2) return "";
    return "hearth: evaluation: " + timing_text(*t, "evaluation steps");
  }

 private:
  data::DataLoader& loader_;
  StepTimeline timeline_;
  int64_t batches_ = 0;
};

Metrics Trainer::evaluate() {
  HEARTH_CHECK(eval_dataset_ != nullptr, ValueError, "[trainer] evaluate() needs an eval_dataset");
  return evaluate(eval_dataset_);
}

GraphedBatchStep* Trainer::evaluation_graph() {
  // A model whose tensors moved since the recording (weights put into new
  // ones, another memory layout) is recorded anew.
  if (eval_graph_ &&
      (eval_graph_->watched_memory_moved() || eval_graph_->fallback_reason() == kEvaluationModelReplaced))
    eval_graph_.reset();
  if (eval_graph_) return eval_graph_.get();
  const Device d = device_.device;
  if (!eval_graph_refused_.empty() || !args_.step_graphs.value_or(true) || args_.detect_anomaly || d.is_cpu() ||
      !device_runtime(d.kind).supports_step_graphs())
    return nullptr;
  // The forward under an autocast region of its own, inside the recording,
  // its weights' casts dropped when it ends (evaluation_forward() drops any
  // before it): an eager evaluation keeps them from batch to batch, but a
  // recorded forward must cast the weights itself, or read the low-precision
  // copies the optimizer writes in place, so that later evaluations see the
  // trained weights and no replay reads a cast freed since.
  auto forward = [this](const data::Batch& batch) {
    ForwardOutput out;
    {
      std::optional<AutocastGuard> autocast = autocast_scope();
      out = run_forward(batch);
    }
    clear_autocast_cache();
    return std::vector<Tensor>{out.loss.reshape({}), out.logits};
  };
  // The parameters and buffers (batch norm's running statistics) the
  // recorded forward reads, asked of the model at each replay.
  auto in_use = [this] {
    std::vector<const void*> out;
    for (const Tensor& p : model_->parameters()) out.push_back(p.data_ptr());
    for (const Tensor& b : model_->buffers()) out.push_back(b.defined() ? b.data_ptr() : nullptr);
    return out;
  };
  eval_graph_ = std::make_unique<GraphedBatchStep>(d, forward, model_->parameters(), in_use, kEvaluationModelReplaced);
  return eval_graph_.get();
}

ForwardOutput Trainer::evaluation_forward(GraphedBatchStep* graph, const data::Batch& batch) {
  if (graph == nullptr) return run_forward(batch);
  // The recorded shapes are a full batch's, never the smaller last one.
  const bool full = batch.at(data::field::kLabels).size(0) == args_.per_device_eval_batch_size;
  clear_autocast_cache();  // outside the step: a recorded step must not free what was made before it
  std::vector<Tensor> out = (*graph)(batch, full);
  return ForwardOutput{out[0], out[1]};
}

void Trainer::after_evaluation_graph(GraphedBatchStep* graph) {
  if (graph == nullptr) return;
  const std::string reason = graph->fallback_reason();  // a copy: the graph may go
  if (!reason.empty() && reason != kEvaluationModelReplaced) {
    // The rehearsal refused the forward (it reads the host, ...): evaluation
    // stays eager until train() starts again, and says so once.
    eval_graph_refused_ = reason;
    eval_graph_.reset();
    say("hearth: step_graphs: evaluation runs eagerly: " + reason);
  }
  // Outside train() no later evaluation of this run reuses the recording.
  if (!state_.is_training) eval_graph_.reset();
}

Metrics Trainer::evaluate(const std::shared_ptr<const data::Dataset>& dataset, const std::string& prefix) {
  HEARTH_CHECK(dataset != nullptr, ValueError, "[trainer] evaluate() was given a null dataset");
  const bool was_training = model_->is_training();
  model_->eval();
  const auto t0 = Clock::now();
  Metrics metrics;
  std::string pace_line;
  GraphedBatchStep* graph = nullptr;
  {
    NoGradGuard no_grad;
    graph = evaluation_graph();
    // Eagerly, one region for the whole evaluation: each parameter is cast
    // once. A recorded forward has its own (evaluation_graph()).
    std::optional<AutocastGuard> autocast = graph ? std::nullopt : autocast_scope();
    const data::DataLoaderOptions lo = loader_options(args_.per_device_eval_batch_size);
    std::shared_ptr<const data::Dataset> share = dataset;
    if (group_) {
      copy_model_from_main_process(/*parameters_too=*/false);  // e.g. batch-norm statistics
      // compute_metrics needs every sample's logits at once: rather than
      // gathering shards, each rank evaluates the whole set.
      if (!options_.compute_metrics) share = std::make_shared<data::ShardDataset>(dataset, world_size(), rank());
    }
    data::DataLoader loader(share, lo);
    EvaluationPace pace(loader, device_.device);
    if (options_.compute_metrics) {
      metrics = evaluate_with_compute_metrics(pace, graph, prefix);
    } else {
      ClassificationMetrics acc;
      while (std::optional<data::Batch> b = pace.next()) {
        pace.forward_begins();
        ForwardOutput out = evaluation_forward(graph, *b);
        acc.update(out.logits, b->at(data::field::kLabels).to(device_.device));
        pace.forward_ends(*b);
      }
      if (group_) {
        acc.sum_across_ranks([&](const Tensor& t) { group_->all_reduce({t}, distributed::ReduceOp::sum)->wait(); },
                             device_.device);
      }
      HEARTH_CHECK(acc.num_samples() > 0, ValueError, "[trainer] the evaluation dataset is empty");
      metrics = acc.compute(prefix);
    }
    pace_line = pace.line();
  }
  after_evaluation_graph(graph);
  if (!pace_line.empty()) say(pace_line);
  model_->train(was_training);
  const double runtime = std::chrono::duration<double>(Clock::now() - t0).count();
  metrics[prefix + "runtime"] = runtime;
  metrics[prefix + "samples_per_second"] = runtime > 0 ? static_cast<double>(dataset->size()) / runtime : 0.0;
  // Batches of all processes together, as Hugging Face counts evaluation steps.
  const auto global_batch = static_cast<double>(args_.per_device_eval_batch_size * world_size());
  const double eval_steps = std::ceil(static_cast<double>(dataset->size()) / global_batch);
  metrics[prefix + "steps_per_second"] = runtime > 0 ? eval_steps / runtime : 0.0;

  if (state_.is_training) {
    last_eval_step_ = state_.global_step;
    // As Hugging Face's: the best model is tracked only when something asks for it.
    if (args_.tracks_best_model()) {
      double value = best_model_metric(args_, metrics);
      if (metric_improves(args_, value, state_.best_metric)) {
        state_.best_metric = value;
        state_.best_global_step = state_.global_step;
      }
    }
  }
  json entry(metrics);
  entry.update(entry_at_step());
  log(std::move(entry));
  for (CallbackPtr& cb : callbacks_) cb->on_evaluate(args_, state_, control_, metrics);
  return metrics;
}

Metrics Trainer::evaluate_with_compute_metrics(EvaluationPace& pace, GraphedBatchStep* graph,
                                               const std::string& prefix) {
  // Losses stay on the device until the end; logits and labels come to the
  // CPU batch by batch, since compute_metrics needs them all at once.
  Tensor loss_sum;
  int64_t samples = 0;
  std::vector<Tensor> logits, labels;
  while (std::optional<data::Batch> b = pace.next()) {
    pace.forward_begins();
    ForwardOutput out = evaluation_forward(graph, *b);
    const Tensor& y = b->at(data::field::kLabels);
    const int64_t n = y.size(0);
    Tensor weighted = mul(out.loss.reshape({}).to(DType::float64), static_cast<double>(n));
    loss_sum = loss_sum.defined() ? add(loss_sum, weighted) : weighted;
    samples += n;
    logits.push_back(out.logits.detach().to(DType::float32).cpu());
    labels.push_back(y.cpu());
    pace.forward_ends(*b);  // the logits' copy to the host is part of the step
  }
  HEARTH_CHECK(samples > 0, ValueError, "[trainer] the evaluation dataset is empty");
  Metrics metrics;
  metrics[prefix + "loss"] = loss_sum.item<double>() / static_cast<double>(samples);
  for (const auto& [name, value] : options_.compute_metrics(cat(logits, 0), cat(labels, 0)))
    metrics[prefix + name] = value;
  return metrics;
}

}  // namespace hearth::train
