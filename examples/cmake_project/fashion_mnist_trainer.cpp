// Fashion-MNIST with hearth's Trainer: a small CNN, one epoch, then the test
// accuracy (about 89%).
//   fashion_mnist_trainer [max_steps [test_samples]]
#include <cstdlib>
#include <iostream>
#include <memory>

#include "hearth/core/switches.h"
#include "hearth/data/fashion_mnist.h"
#include "hearth/data/transforms.h"
#include "hearth/nn/models/small_cnn.h"
#include "hearth/train/trainer.h"

using namespace hearth;

// Pixels in [0, 1], normalised with the training set's mean and spread.
std::shared_ptr<const data::Dataset> fashion_mnist(data::FashionMnist::Split split, int64_t max_samples) {
  auto images = std::make_shared<data::FashionMnist>(split, "", max_samples);
  auto normalize = std::make_shared<data::Normalize>(std::vector<double>{0.2860}, std::vector<double>{0.3530});
  return std::make_shared<data::TransformDataset>(images, normalize, /*seed=*/0);
}

int main(int argc, char** argv) {
  // A bad HEARTH_* value stops the program here: one line naming it, status 2.
  validate_switches_or_exit("fashion_mnist_trainer");
  train::TrainingArguments args;
  args.output_dir = "runs/fashion_mnist_trainer";
  args.overwrite_output_dir = true;
  args.num_train_epochs = 1;
  args.max_steps = argc > 1 ? std::atoll(argv[1]) : -1;
  args.per_device_train_batch_size = 64;
  args.learning_rate = 2e-3;
  args.logging_steps = 100;
  args.save_strategy = "no";

  auto train_set = fashion_mnist(data::FashionMnist::Split::train, -1);
  auto test_set = fashion_mnist(data::FashionMnist::Split::test, argc > 2 ? std::atoll(argv[2]) : -1);
  train::Trainer trainer(std::make_shared<nn::models::SmallCNN>(), args, train_set, test_set);
  trainer.train();
  train::Metrics metrics = trainer.evaluate();
  std::cout << "test accuracy: " << metrics["eval_accuracy"] << "\n";
  return 0;
}
