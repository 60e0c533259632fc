#include "apps/hearth/bench_workloads.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/bert.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/nn/models/vgg.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/sgd.h"

namespace hearth::cli {
namespace {

int64_t count_parameters(const nn::Module& m) {
  int64_t n = 0;
  for (const Tensor& p : m.parameters()) n += p.numel();
  return n;
}

class ImageClassification final : public Workload {
 public:
  ImageClassification(std::shared_ptr<nn::Module> model, const WorkloadShape& s, Device device)
      : model_(std::move(model)), image_size_(s.image_size), device_(device) {
    model_->to(device);
    optimizer_ = std::make_unique<optim::SGD>(model_->parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
    make_batch(s.batch_size);
  }
  void make_batch(int64_t n) {
    x_ = randn({n, 3, image_size_, image_size_}, DType::float32, device_);
    y_ = randint(0, 1000, {n}, DType::int64, device_);
  }
  train::TrainingStepProbe memory_probe() override {
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
  void train_step() override {
    optimizer_->zero_grad();
    Tensor loss = cross_entropy(model_->forward(x_), y_);
    loss.backward();
    optimizer_->step();
  }
  void eval_step() override {
    NoGradGuard no_grad;
    model_->forward(x_);
  }
  void set_training(bool training) override { model_->train(training); }
  int64_t parameters() const override { return count_parameters(*model_); }

 private:
  std::shared_ptr<nn::Module> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  int64_t image_size_;
  Device device_;
  Tensor x_, y_;
};

class SequenceClassification final : public Workload {
 public:
  SequenceClassification(const WorkloadShape& s, Device device) : seq_len_(s.seq_len), device_(device) {
    nn::models::BertConfig config;  // bert-base-uncased, two labels
    model_ = std::make_shared<nn::models::BertForSequenceClassification>(config);
    model_->to(device);
    optimizer_ = std::make_unique<optim::AdamW>(model_->parameters(), optim::AdamWOptions{.lr = 2e-5});
    make_batch(s.batch_size);
  }
  void make_batch(int64_t n) {
    ids_ = randint(0, 28996, {n, seq_len_}, DType::int64, device_);
    types_ = zeros({n, seq_len_}, DType::int64, device_);
    mask_ = ones({n, seq_len_}, DType::int64, device_);
    labels_ = randint(0, 2, {n}, DType::int64, device_);
  }
  train::TrainingStepProbe memory_probe() override {
    return {[this](int64_t n) { make_batch(n); },
            [this] {
              for (Tensor* t : {&ids_, &types_, &mask_, &labels_}) *t = Tensor();
            },
            [this] { return model_->forward(ids_, types_, mask_, labels_).loss; },
            [this] { optimizer_->step(); },
            [this] { optimizer_->zero_grad(); },
            parameters()};
  }
  void train_step() override {
    optimizer_->zero_grad();
    Tensor loss = model_->forward(ids_, types_, mask_, labels_).loss;
    loss.backward();
    optimizer_->step();
  }
  void eval_step() override {
    NoGradGuard no_grad;
    model_->forward(ids_, types_, mask_);
  }
  void set_training(bool training) override { model_->train(training); }
  int64_t parameters() const override { return count_parameters(*model_); }

 private:
  std::shared_ptr<nn::models::BertForSequenceClassification> model_;
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

std::unique_ptr<Workload> make_workload(const std::string& model, const WorkloadShape& shape, Device device) {
  WorkloadShape s = shape;
  if (s.batch_size <= 0) s.batch_size = reference_batch_size(model);
  manual_seed(0);
  std::unique_ptr<Workload> w;
  if (model == "resnet50")
    w = std::make_unique<ImageClassification>(nn::models::resnet50(1000), s, device);
  else if (model == "vgg16")
    w = std::make_unique<ImageClassification>(nn::models::vgg16(1000), s, device);
  else if (model == "bert-base")
    w = std::make_unique<SequenceClassification>(s, device);
  else
    HEARTH_THROW(ValueError, "[bench] unknown model \"", model, "\"");
  w->batch_size = s.batch_size;
  return w;
}

}  // namespace hearth::cli
