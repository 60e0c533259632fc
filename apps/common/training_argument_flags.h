// Every TrainingArguments field as a command-line flag of the same name
// (--learning_rate, --eval_strategy, ...), generated from the field table
// (hearth/train/training_arguments.h) so no program can forget one. Shared
// by `hearth train` and the example programs (run_glue).
//
//   TrainingArgumentFlags flags;
//   flags.add_to(app);            // before parsing
//   app.parse(argc, argv);
//   flags.apply_user_config(args, &std::cout);  // the user's `hearth config` file
//   flags.apply(args);            // sets the fields given, over args' values
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/common/user_config_flag.h"
#include "hearth/train/training_arguments.h"

namespace hearth::cli {

class TrainingArgumentFlags {
 public:
  TrainingArgumentFlags() = default;
  // The options point into this object, so it must not move once added.
  TrainingArgumentFlags(const TrainingArgumentFlags&) = delete;
  TrainingArgumentFlags& operator=(const TrainingArgumentFlags&) = delete;

  // Adds --<field> for every field, and --config_file (the user's config,
  // apps/common/user_config_flag.h); a boolean may be given bare (--use_cpu).
  // Fields named in `skip` are left out (a program that defines its own flag).
  // --help shows each field's type and its value in `defaults` (the
  // program's defaults).
  void add_to(CLI::App& app, const std::vector<std::string>& skip = {},
              const train::TrainingArguments& defaults = train::TrainingArguments());
  // Whether --<name> is one of the flags added (a field's name, not an alias).
  bool defines(const std::string& name) const { return options_.count(name) > 0; }
  // Whether --<name> was on the command line.
  bool given(const std::string& name) const;
  // Sets every field given on the command line into `args`. A bad value is a
  // ValueError "[trainer] --<name>: expected ..., got ...". The precision
  // flags (--precision, --bf16, --fp16) choose the precision together, so
  // --bf16 replaces a precision set earlier (by the config file) instead of
  // clashing with it; --bf16 --fp16 still clash.
  void apply(train::TrainingArguments& args) const;
  // Sets what the user's config file (--config_file, else the default path)
  // names, saying so on `say` when a file was read. Call before apply(), so
  // that flags win. IoError or ValueError naming the file when it is unusable.
  LoadedUserConfig apply_user_config(train::TrainingArguments& args, std::ostream* say) const;

 private:
  // The precision the precision flags select on their own; empty when they
  // select none (absent, or only --bf16 false / --fp16 false).
  std::string precision_from_flags() const;
  // Sets the field from its flag's text.
  void set_given(train::TrainingArguments& args, const train::TrainingArgumentField& field) const;

  UserConfigFlag user_config_;
  std::map<std::string, std::string> values_;
  std::map<std::string, CLI::Option*> options_;
  // --no_<name> for the boolean fields that default to on (argparse's
  // BooleanOptionalAction): given, it sets the field to false.
  std::map<std::string, CLI::Option*> negations_;
  // The names transformers 5 removed (--per_gpu_train_batch_size, ...), refused by apply().
  std::map<std::string, CLI::Option*> removed_;
  std::map<std::string, std::string> removed_values_;
};

}  // namespace hearth::cli
