// The Trainer's steps as recorded graphs (TrainingArguments::step_graphs):
// what rules recording out, the forward and backward that is recorded, and
// the return to eager steps when the graph cannot be used.
#include <sstream>
#include <vector>

#include "hearth/core/device_runtime.h"
#include "hearth/train/count_text.h"
#include "hearth/train/step_graph.h"
#include "hearth/train/trainer.h"

namespace hearth::train {

std::string Trainer::step_graph_obstacles() const {
  std::vector<std::string> why;
  const Device d = device_.device;
  if (d.is_cpu() || !device_runtime(d.kind).supports_step_graphs())
    why.push_back(d.str() + " has no step graphs (they are a CUDA feature)");
  if (scaler_) why.push_back("fp16-mixed scales the loss by a host value that changes between steps (use bf16-mixed)");
  if (reducer_) why.push_back("data parallelism averages the gradients with collectives the graph does not record");
  if (args_.gradient_accumulation_steps > 1)
    why.push_back("gradient_accumulation_steps is " + std::to_string(args_.gradient_accumulation_steps) +
                  " (a step of several forward and backward passes)");
  if (args_.detect_anomaly) why.push_back("detect_anomaly reads every op's outputs on the host");
  if (args_.auto_find_batch_size)
    why.push_back("auto_find_batch_size retries a step that ran out of memory, which a recording cannot");
  std::string out;
  for (const std::string& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

void Trainer::setup_step_graphs() {
  step_graphs_.reset();
  step_graph_report_ = StepGraphReport{};
  // Evaluation is recorded anew for this run (trainer_evaluate.cpp).
  eval_graph_.reset();
  eval_graph_refused_.clear();
  if (!args_.step_graphs.value_or(true)) return;
  const std::string obstacles = step_graph_obstacles();
  if (!obstacles.empty()) {
    step_graph_report_.eager_reason = obstacles;
    // By default a device without step graphs (the CPU) trains eagerly without
    // a word; anything else that rules recording out is said once.
    const Device d = device_.device;
    const bool device_has_them = !d.is_cpu() && device_runtime(d.kind).supports_step_graphs();
    if (args_.step_graphs.has_value())
      say("hearth: step_graphs is on, but training runs eagerly: " + obstacles);
    else if (device_has_them)
      say("hearth: step_graphs (on by default on " + d.str() + "): training runs eagerly: " + obstacles +
          " (--no_step_graphs turns them off)");
    return;
  }
  // The eager step's forward and backward, with the gradients zeroed in place
  // at its start instead of dropped after the optimizer step: the graph
  // writes them where they were when it was recorded.
  step_graphs_ = std::make_unique<GraphedTrainingStep>(
      device_.device,
      [this](const data::Batch& batch) {
        optimizer_->zero_grad(/*set_to_none=*/false);
        Tensor loss;
        {
          std::optional<AutocastGuard> autocast = autocast_scope();
          loss = run_forward(batch).loss.reshape({});
        }
        loss.backward();
        return loss.detach();
      },
      params_);
}

Tensor Trainer::graphed_forward_backward(const data::Batch& batch) {
  // The recorded shapes are a full batch's, never an epoch's smaller last one.
  const bool full = batch.at(data::field::kLabels).size(0) == args_.per_device_train_batch_size;
  Tensor loss = (*step_graphs_)(batch, full);
  step_graph_report_.replayed_steps = step_graphs_->replayed_steps();
  step_graph_report_.other_shape_steps = step_graphs_->other_shape_steps();
  return loss;
}

void Trainer::stop_step_graphs(std::string reason) {
  step_graph_report_.eager_reason = reason;
  step_graphs_.reset();
  // Eager steps start without gradients (optimizer_step drops them again from now on).
  optimizer_->zero_grad();
  std::ostringstream os;
  os << "hearth: step_graphs: training runs eagerly after step " << state_.global_step << ": " << reason;
  say(os.str());
}

void Trainer::finish_step_graphs() {
  if (!step_graphs_) return;
  std::ostringstream os;
  os << "hearth: step_graphs: " << step_graph_report_.replayed_steps << " of "
     << count_of(state_.global_step - start_step_, "step") << " replayed from the recorded graph";
  if (step_graph_report_.other_shape_steps > 0)
    os << "; " << step_graph_report_.other_shape_steps
       << " batch(es) of other shapes than the recorded ones ran eagerly";
  say(os.str());
  // The graph's memory goes back, and the model ends as an eager run leaves
  // it: without gradients.
  step_graphs_.reset();
  optimizer_->zero_grad();
}

void Trainer::abandon_step_graphs() {
  eval_graph_.reset();
  if (!step_graphs_) return;
  // An error left the run (an out-of-memory error, a signal): release the
  // graph and leave the model as an eager step that failed leaves it, without
  // the gradients the graph kept allocated.
  step_graphs_.reset();
  optimizer_->zero_grad();
}

}  // namespace hearth::train
