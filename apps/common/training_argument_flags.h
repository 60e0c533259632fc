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

#include "hearth/train/training_arguments.h"

namespace hearth::cli {

class TrainingArgumentFlags {
 public:
  TrainingArgumentFlags() = default;
  // The options point into this object, so it must not move once added.
  TrainingArgumentFlags(const TrainingArgumentFlags&) = delete;
  TrainingArgumentFlags& operator=(const TrainingArgumentFlags&) = delete;

  // Adds --<field> for every field, and --config_file (the user's config,
  // hearth/train/user_config.h); a boolean may be given bare (--use_cpu).
  // Fields named in `skip` are left out (a program that defines its own flag).
  void add_to(CLI::App& app, const std::vector<std::string>& skip = {});
  // Whether --<name> was on the command line.
  bool given(const std::string& name) const;
  // Sets every field given on the command line into `args`. A bad value is a
  // ValueError "[trainer] --<name>: expected ..., got ...".
  void apply(train::TrainingArguments& args) const;
  // Sets what the user's config file (--config_file, else the default path)
  // names, saying so on `say` when a file was read. Call before apply(), so
  // that flags win. IoError or ValueError naming the file when it is unusable.
  void apply_user_config(train::TrainingArguments& args, std::ostream* say) const;

 private:
  std::string config_file_;
  std::map<std::string, std::string> values_;
  std::map<std::string, CLI::Option*> options_;
};

}  // namespace hearth::cli
