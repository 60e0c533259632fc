// The same small CNN on Fashion-MNIST without the Trainer: batches from a
// DataLoader, forward, cross entropy, backward and an AdamW step, written out.
//   fashion_mnist_loop [max_steps [test_samples]]
#include <cstdlib>
#include <iostream>
#include <memory>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/switches.h"
#include "hearth/data/dataloader.h"
#include "hearth/data/fashion_mnist.h"
#include "hearth/data/transforms.h"
#include "hearth/nn/models/small_cnn.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/optim/adam.h"

using namespace hearth;

std::shared_ptr<const data::Dataset> fashion_mnist(data::FashionMnist::Split split, int64_t max_samples) {
  auto images = std::make_shared<data::FashionMnist>(split, "", max_samples);
  auto normalize = std::make_shared<data::Normalize>(std::vector<double>{0.2860}, std::vector<double>{0.3530});
  return std::make_shared<data::TransformDataset>(images, normalize, /*seed=*/0);
}

int main(int argc, char** argv) {
  // A bad HEARTH_* value stops the program here: one line naming it, status 2.
  validate_switches_or_exit("fashion_mnist_loop");
  const int64_t max_steps = argc > 1 ? std::atoll(argv[1]) : -1;
  const Device device = resolve_device("auto");  // the accelerator if there is one
  auto model = std::make_shared<nn::models::SmallCNN>();
  model->to(device);
  optim::AdamW optimizer(model->parameters(), {.lr = 2e-3});

  data::DataLoader train_loader(fashion_mnist(data::FashionMnist::Split::train, -1), {.batch_size = 64, .shuffle = true});
  int64_t step = 0;
  for (const data::Batch& batch : train_loader) {
    if (max_steps >= 0 && step == max_steps) break;
    Tensor logits = model->forward(batch.at("pixel_values").to(device));
    Tensor loss = cross_entropy(logits, batch.at("labels").to(device));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (++step % 100 == 0) std::cout << "step " << step << " loss " << loss.item<double>() << "\n";
  }

  model->eval();
  NoGradGuard no_grad;
  int64_t correct = 0, seen = 0;
  data::DataLoader test_loader(fashion_mnist(data::FashionMnist::Split::test, argc > 2 ? std::atoll(argv[2]) : -1),
                               {.batch_size = 256});
  for (const data::Batch& batch : test_loader) {
    Tensor predicted = model->forward(batch.at("pixel_values").to(device)).argmax(1);
    correct += eq(predicted, batch.at("labels").to(device)).sum().item<int64_t>();
    seen += batch.at("labels").size(0);
  }
  std::cout << "test accuracy: " << static_cast<double>(correct) / static_cast<double>(seen) << "\n";
  return 0;
}
