// PyTorch Lightning's Trainer flags where they map cleanly onto training
// arguments, so that a Lightning user's command line runs unchanged:
//   --accelerator auto|cpu|gpu|<kind> device (gpu: the first available
//                                     accelerator, as device=auto picks it;
//                                     any registered device kind by name)
//   --devices N                       processes; above 1 one process cannot
//                                     hold them: `hearth launch --nproc_per_node N`
//   --max_epochs N                    num_train_epochs
//   --accumulate_grad_batches N       gradient_accumulation_steps
// (--precision bf16-mixed and Lightning's other precisions are a training
// argument already.)
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "hearth/train/training_arguments.h"

namespace hearth::cli {

class LightningFlags {
 public:
  // `with_devices` false for a program that defines --devices itself.
  void add_to(CLI::App& app, bool with_devices = true);
  // Sets the fields the flags given name, over `args`. ValueError naming the
  // flag for a bad value, or for --devices above 1.
  void apply(train::TrainingArguments& args) const;

 private:
  std::string accelerator_;
  std::string devices_;
  std::string max_epochs_;
  std::string accumulate_grad_batches_;
};

}  // namespace hearth::cli
