#include "apps/common/resolved_training_arguments.h"

#include <iostream>

namespace hearth::cli {

train::TrainingArguments resolved_training_arguments(const TrainingArgumentFlags& flags,
                                                     const LightningFlags& lightning, const JsonConfigFlag& config) {
  train::TrainingArguments args;
  flags.apply_user_config(args, &std::cout);
  args = config.apply(args);
  flags.apply(args);
  lightning.apply(args);
  args.validate("command line");
  return args;
}

}  // namespace hearth::cli
