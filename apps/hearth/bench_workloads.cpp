#include "apps/hearth/bench_workloads.h"

#include <optional>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/distributed/gradient_reducer.h"
#include "hearth/nn/models/bert.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/nn/models/vgg.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/grad_scaler.h"
#include "hearth/optim/sgd.h"

namespace hearth::cli {
namespace {

int64_t count_parameters(const nn::Module& m) {
  int64_t n = 0;
  for (const Tensor& p : m.parameters()) n += p.numel();
  return n;
}

// How a step runs in its precision: forward and loss under autocast, and for
// float16 the loss scaled before backward and the step through the scaler, as
// the Trainer does.
class StepPrecision {
 public:
  StepPrecision(const std::string& precision, Device device) : device_(device) {
    if (precision == "bf16-mixed") dtype_ = DType::bfloat16;
    if (precision == "fp16-mixed") dtype_ = DType::float16;
    HEARTH_CHECK(precision == "fp32" || dtype_.has_value(), ValueError, "[bench] unknown precision \"", precision,
                 "\"; expected fp32, bf16-mixed or fp16-mixed");
    if (dtype_ == DType::float16) scaler_ = std::make_unique<optim::GradScaler>();
  }
  std::optional<AutocastGuard> autocast() const {
    if (!dtype_) return std::nullopt;
    return std::optional<AutocastGuard>(std::in_place, device_.kind, *dtype_);
  }
  void backward(const Tensor& loss) {
    if (reducer) reducer->prepare_for_backward(true);
    (scaler_ ? scaler_->scale(loss) : loss).backward();
    if (reducer) reducer->finish();
  }
  void step(optim::Optimizer& optimizer) {
    if (!scaler_) {
      optimizer.step();
      return;
    }
    scaler_->step(optimizer);
    scaler_->update();
  }
  // Gradients averaged over the group in buckets during backward, as the
  // Trainer does; the bench also reports how much of it backward left exposed.
  void enable_data_parallel(distributed::ProcessGroupPtr group, std::vector<Tensor> params) {
    reducer = std::make_unique<distributed::GradientReducer>(std::move(group), std::move(params));
    reducer->measure_exposed_communication(true);
  }
  double exposed_communication_ms() { return reducer ? reducer->exposed_communication_ms() : 0.0; }
  std::string graph_obstacle() const {
    if (scaler_) return "fp16-mixed scales the loss by a host value that changes between steps";
    if (reducer) return "data parallel: the gradient all-reduces are not recorded";
    return {};
  }
  std::pair<size_t, size_t> overlapped() const {
    return reducer ? std::make_pair(reducer->launched_during_backward(), reducer->num_buckets())
                   : std::make_pair(size_t{0}, size_t{0});
  }
  std::unique_ptr<distributed::GradientReducer> reducer;

 private:
  Device device_;
  std::optional<DType> dtype_;
  std::unique_ptr<optim::GradScaler> scaler_;
};

class ImageClassification final : public Workload {
 public:
  ImageClassification(std::shared_ptr<nn::Module> model, const WorkloadShape& s, Device device,
                      const std::string& precision)
      : model_(std::move(model)), precision_(precision, device), image_size_(s.image_size), device_(device) {
    model_->to(device);
    optimizer_ = std::make_unique<optim::SGD>(model_->parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
    channels_last_ = s.channels_last;
    if (channels_last_) nn::to_channels_last(*model_);
    HEARTH_CHECK(!s.gradient_checkpointing, ValueError,
                 "[bench] --gradient-checkpointing: the CNNs have no blocks that recompute their activations (BERT's "
                 "layers do)");
    make_batch(s.batch_size);
  }
  void make_batch(int64_t n) {
    x_ = randn({n, 3, image_size_, image_size_}, DType::float32, device_);
    if (channels_last_) x_ = x_.contiguous(MemoryFormat::channels_last);
    y_ = randint(0, 1000, {n}, DType::int64, device_);
  }
  TrainingStepProbe memory_probe() override {
    return {[this](int64_t n) { make_batch(n); },
            [this] {
              x_ = Tensor();
              y_ = Tensor();
            },
            [this] { return cross_entropy(model_->forward(x_), y_); },
            [this] { optimizer_->step(); },
            [this] { optimizer_->zero_grad(); },
            parameters()};
  }
  void forward_backward(bool keep_grads) override {
    optimizer_->zero_grad(!keep_grads);
    Tensor loss;
    {
      std::optional<AutocastGuard> autocast = precision_.autocast();
      loss = cross_entropy(model_->forward(x_), y_);
    }
    precision_.backward(loss);
  }
  void update() override { precision_.step(*optimizer_); }
  std::string graph_obstacle() const override { return precision_.graph_obstacle(); }
  void eval_step() override {
    NoGradGuard no_grad;
    std::optional<AutocastGuard> autocast = precision_.autocast();
    model_->forward(x_);
  }
  void set_training(bool training) override { model_->train(training); }
  int64_t parameters() const override { return count_parameters(*model_); }
  void enable_data_parallel(distributed::ProcessGroupPtr group) override {
    precision_.enable_data_parallel(std::move(group), model_->parameters());
  }
  std::pair<size_t, size_t> overlapped_buckets() const override { return precision_.overlapped(); }
  double exposed_communication_ms() override { return precision_.exposed_communication_ms(); }

 private:
  std::shared_ptr<nn::Module> model_;
  StepPrecision precision_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  int64_t image_size_;
  Device device_;
  bool channels_last_ = false;
  Tensor x_, y_;
};

class SequenceClassification final : public Workload {
 public:
  SequenceClassification(const WorkloadShape& s, Device device, const std::string& precision)
      : precision_(precision, device), seq_len_(s.seq_len), device_(device) {
    nn::models::BertConfig config;  // bert-base-uncased, two labels
    model_ = std::make_shared<nn::models::BertForSequenceClassification>(config);
    model_->to(device);
    model_->gradient_checkpointing_enable(s.gradient_checkpointing);
    optimizer_ = std::make_unique<optim::AdamW>(model_->parameters(), optim::AdamWOptions{.lr = 2e-5});
    make_batch(s.batch_size);
  }
  void make_batch(int64_t n) {
    ids_ = randint(0, 28996, {n, seq_len_}, DType::int64, device_);
    types_ = zeros({n, seq_len_}, DType::int64, device_);
    mask_ = ones({n, seq_len_}, DType::int64, device_);
    labels_ = randint(0, 2, {n}, DType::int64, device_);
  }
  TrainingStepProbe memory_probe() override {
    return {[this](int64_t n) { make_batch(n); },
            [this] {
              for (Tensor* t : {&ids_, &types_, &mask_, &labels_}) *t = Tensor();
            },
            [this] { return model_->forward(ids_, types_, mask_, labels_).loss; },
            [this] { optimizer_->step(); },
            [this] { optimizer_->zero_grad(); },
            parameters()};
  }
  void forward_backward(bool keep_grads) override {
    optimizer_->zero_grad(!keep_grads);
    Tensor loss;
    {
      std::optional<AutocastGuard> autocast = precision_.autocast();
      loss = model_->forward(ids_, types_, mask_, labels_).loss;
    }
    precision_.backward(loss);
  }
  void update() override { precision_.step(*optimizer_); }
  std::string graph_obstacle() const override { return precision_.graph_obstacle(); }
  void eval_step() override {
    NoGradGuard no_grad;
    std::optional<AutocastGuard> autocast = precision_.autocast();
    model_->forward(ids_, types_, mask_);
  }
  void set_training(bool training) override { model_->train(training); }
  int64_t parameters() const override { return count_parameters(*model_); }
  void enable_data_parallel(distributed::ProcessGroupPtr group) override {
    precision_.enable_data_parallel(std::move(group), model_->parameters());
  }
  std::pair<size_t, size_t> overlapped_buckets() const override { return precision_.overlapped(); }
  double exposed_communication_ms() override { return precision_.exposed_communication_ms(); }

 private:
  std::shared_ptr<nn::models::BertForSequenceClassification> model_;
  StepPrecision precision_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  int64_t seq_len_;
  Device device_;
  Tensor ids_, types_, mask_, labels_;
};

}  // namespace

const std::vector<std::string>& bench_model_names() {
  static const std::vector<std::string> names = {"resnet50", "vgg16", "bert-base"};
  return names;
}

int64_t reference_batch_size(const std::string& model) { return model == "resnet50" ? 128 : 64; }

std::unique_ptr<Workload> make_workload(const std::string& model, const WorkloadShape& shape, Device device,
                                        const std::string& precision) {
  WorkloadShape s = shape;
  if (s.batch_size <= 0) s.batch_size = reference_batch_size(model);
  manual_seed(0);
  std::unique_ptr<Workload> w;
  if (model == "resnet50")
    w = std::make_unique<ImageClassification>(nn::models::resnet50(1000), s, device, precision);
  else if (model == "vgg16")
    w = std::make_unique<ImageClassification>(nn::models::vgg16(1000), s, device, precision);
  else if (model == "bert-base")
    w = std::make_unique<SequenceClassification>(s, device, precision);
  else
    HEARTH_THROW(ValueError, "[bench] unknown model \"", model, "\"");
  w->batch_size = s.batch_size;
  return w;
}

}  // namespace hearth::cli
