// The TrainingArguments an example program runs with, in the order its
// sources win: the defaults, then the user's `hearth config`, then --config's
// training arguments, then the TrainingArguments flags, then Lightning's; the
// result validated. Shared by run_glue and run_clm.
#pragma once

#include "apps/common/json_config.h"
#include "apps/common/lightning_flags.h"
#include "apps/common/training_argument_flags.h"
#include "hearth/train/training_arguments.h"

namespace hearth::cli {

// Throws hearth::Error naming the flag, file or field that is wrong: the
// caller answers it as a bad argument (exit status 2).
train::TrainingArguments resolved_training_arguments(const TrainingArgumentFlags& flags,
                                                     const LightningFlags& lightning, const JsonConfigFlag& config);

}  // namespace hearth::cli
