// The minimal op set: what a backend of primitives alone needs to train the
// MLP, the small CNN, ResNet, VGG and BERT. Each model takes one training step
// (forward, cross entropy, backward, gradient clipping, an AdamW step, and an
// evaluation forward with its argmax) on the CPU with every fusion's CPU kernel
// removed for the time of the trace, so that the functional layer takes the
// paths a backend without fusions takes and dispatch composes the fusions it
// reaches; the dispatch trace (hearth/dispatch/dispatch_trace.h) then names
// the primitives that ran (the models' construction and inputs, made on the
// CPU before a program moves them to its device, are not traced). Small configurations run the same ops as the full
// models (an op's kernel does not depend on the sizes).
#include "apps/hearth/ops_minimal.h"

#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch_trace.h"
#include "hearth/dispatch/registry.h"
#include "hearth/nn/models/bert.h"
#include "hearth/nn/models/mlp.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/nn/models/small_cnn.h"
#include "hearth/nn/models/vgg.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/clip_grad.h"

namespace hearth::cli {
namespace {

// One training step and one evaluation forward of `model` (whose `forward`
// gives the logits) with class `labels`, traced: the model and its inputs are
// made before, as a program makes them before moving them to its device.
void train_one_step(nn::Module& model, const Tensor& labels, const std::function<Tensor()>& forward) {
  set_dispatch_trace(true);
  optim::AdamW opt(model.parameters());
  model.train();
  Tensor loss = cross_entropy(forward(), labels);
  loss.backward();
  optim::clip_grad_norm_(model.parameters(), 1.0);
  opt.step();
  opt.zero_grad();
  model.eval();
  {
    NoGradGuard no_grad;
    argmax(forward(), 1);
  }
  set_dispatch_trace(false);
}

Tensor images(int64_t n, int64_t channels, int64_t side) { return randn({n, channels, side, side}); }

using Workload = std::pair<std::string, std::function<void()>>;

// The models, small, each with its step.
std::vector<Workload> workloads() {
  std::vector<Workload> w;
  w.emplace_back("mlp", [] {
    auto m = std::make_shared<nn::models::MLP>(16, std::vector<int64_t>{8}, 3, 0.1);
    const Tensor x = randn({4, 16});
    train_one_step(*m, randint(0, 3, {4}), [&] { return m->forward(x); });
  });
  w.emplace_back("small_cnn", [] {
    auto m = std::make_shared<nn::models::SmallCNN>(nn::models::SmallCNNConfig{
        .num_classes = 3, .image_size = 8, .channels1 = 4, .channels2 = 8, .hidden = 8, .dropout = 0.1});
    const Tensor x = images(2, 1, 8);
    train_one_step(*m, randint(0, 3, {2}), [&] { return m->forward(x); });
  });
  for (auto block : {nn::models::ResNetBlock::basic, nn::models::ResNetBlock::bottleneck}) {
    w.emplace_back(block == nn::models::ResNetBlock::basic ? "resnet18" : "resnet50", [block] {
      auto m = std::make_shared<nn::models::ResNet>(
          nn::models::ResNetConfig{.block = block, .layers = {1, 1, 1, 1}, .num_classes = 3, .base_width = 4});
      const Tensor x = images(2, 3, 32);
      train_one_step(*m, randint(0, 3, {2}), [&] { return m->forward(x); });
    });
  }
  for (bool bn : {false, true}) {
    w.emplace_back(bn ? "vgg16_bn" : "vgg16", [bn] {
      nn::models::VGGConfig c;
      const int64_t M = nn::models::kVggPool;
      c.features = {4, 4, M, 8, M, 8, M, 8, M, 8, M};
      c.batch_norm = bn;
      c.num_classes = 3;
      c.classifier_width = 8;
      auto m = std::make_shared<nn::models::VGG>(c);
      const Tensor x = images(2, 3, 32);
      train_one_step(*m, randint(0, 3, {2}), [&] { return m->forward(x); });
    });
  }
  w.emplace_back("bert", [] {
    nn::models::BertConfig c;
    c.vocab_size = 40;
    c.hidden_size = 8;
    c.num_hidden_layers = 1;
    c.num_attention_heads = 2;
    c.intermediate_size = 16;
    c.max_position_embeddings = 16;
    c.num_labels = 3;
    auto m = std::make_shared<nn::models::BertForSequenceClassification>(c);
    const Tensor ids = randint(1, 40, {2, 6});
    // The second sequence padded: the attention mask's path.
    const Tensor mask = tensor(std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 6});
    const Tensor types = zeros({2, 6}, DType::int64);
    train_one_step(*m, randint(0, 3, {2}), [&] { return m->forward(ids, types, mask); });
  });
  return w;
}

// The CPU without its fused kernels for a scope: dispatch composes the fusions.
class CpuWithoutFusions {
 public:
  CpuWithoutFusions() {
    for (const OpInfo& info : all_op_infos()) {
      if (!info.is_fusion) continue;
      saved_.emplace_back(info.id, find_op(info.id)->kernels[kCpu.id]);
      unregister_kernel(info.id, kCpu);
    }
  }
  ~CpuWithoutFusions() {
    for (const auto& [op, k] : saved_) {
      if (k.fn) register_kernel(op, kCpu, k.fn, k.dtypes, k.file);
      if (k.check) register_kernel_check(op, kCpu, k.check);
    }
  }
  CpuWithoutFusions(const CpuWithoutFusions&) = delete;
  CpuWithoutFusions& operator=(const CpuWithoutFusions&) = delete;

 private:
  std::vector<std::pair<OpId, KernelEntry>> saved_;
};

}  // namespace

int print_minimal_op_set() {
  // op -> the models whose step ran it.
  std::map<std::string, std::vector<std::string>> users;
  std::vector<std::string> models;
  {
    CpuWithoutFusions without;
    for (const auto& [name, step] : workloads()) {
      manual_seed(0);
      step();
      models.push_back(name);
      for (const std::string& op : traced_ops()) users[op].push_back(name);
    }
  }
  std::cout << "# The minimal op set of a backend\n\n"
            << "The primitive ops (hearth/dispatch/op_list.h) a backend must implement to train ";
  for (size_t i = 0; i < models.size(); ++i)
    std::cout << models[i] << (i + 2 < models.size() ? ", " : i + 1 < models.size() ? " and " : "");
  std::cout << " in float32: what one training step of each (forward, cross entropy, backward, gradient clipping, "
               "an AdamW step, and an evaluation forward with its argmax) dispatches when the device has no fused "
               "kernel, every fusion then composed of these primitives on the device. Generated by "
               "`hearth ops --minimal`; a test checks that this file is its output.\n\n";
  std::cout << "| op | family |";
  for (const std::string& m : models) std::cout << " " << m << " |";
  std::cout << "\n|---|---|";
  for (size_t i = 0; i < models.size(); ++i) std::cout << "---|";
  std::cout << "\n";
  size_t count = 0;
  for (const OpInfo& info : all_op_infos()) {
    auto it = users.find(info.name);
    if (it == users.end() || info.is_fusion) continue;
    ++count;
    std::cout << "| " << info.name << " | " << family_name(info.family) << " |";
    const std::set<std::string> by(it->second.begin(), it->second.end());
    for (const std::string& m : models) std::cout << " " << (by.count(m) ? "x" : "") << " |";
    std::cout << "\n";
  }
  std::cout << "\n" << count << " primitive ops of " << kNumOps << " listed ops.\n";
  return 0;
}

}  // namespace hearth::cli
