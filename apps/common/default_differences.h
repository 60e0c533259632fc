// Where a program's training arguments depart from Hugging Face's defaults.
// `hearth train` and the examples choose some defaults of their own (an
// evaluation every epoch, a larger batch); a user who knows Hugging Face's
// Trainer would otherwise be surprised by them, so each program says which,
// once, as it starts.
#pragma once

#include <string>

#include "hearth/train/training_arguments.h"

namespace hearth::cli {

// "name value (Hugging Face: value), ..." for each field whose value in
// `program_defaults` differs from TrainingArguments{}'s and that `args` still
// holds (a flag or a config file that changed it is the user's choice, not a
// surprise); empty when there is none.
std::string defaults_that_differ(const train::TrainingArguments& program_defaults,
                                 const train::TrainingArguments& args);

// The line a program prints: "<program>: defaults that differ from Hugging
// Face's TrainingArguments (flags of the same name change them): <list>\n",
// or "" when the list is empty.
std::string defaults_notice(const std::string& program, const train::TrainingArguments& program_defaults,
                            const train::TrainingArguments& args);

}  // namespace hearth::cli
