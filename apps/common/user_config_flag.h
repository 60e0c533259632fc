// --config_file, and what every program does with the user's config
// (apps/common/user_config.h): read the file that flag names (else
// $HEARTH_CONFIG_FILE, else $XDG_CONFIG_HOME/hearth/config.json), say which
// file set what, and set those values before the program's own flags are
// applied, so that flags win. Shared by `hearth train`, `hearth launch` and
// the example programs, so that they all read the same file the same way.
//
//   UserConfigFlag config;
//   config.add_to(app);                           // before parsing
//   app.parse(argc, argv);
//   LoadedUserConfig user = config.apply(args, &std::cout);
//   ... then the program's flags, over args' values
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/common/user_config.h"
#include "hearth/train/training_arguments.h"

namespace hearth::cli {

class UserConfigFlag {
 public:
  UserConfigFlag() = default;
  // The option points into this object, so it must not move once added.
  UserConfigFlag(const UserConfigFlag&) = delete;
  UserConfigFlag& operator=(const UserConfigFlag&) = delete;

  void add_to(CLI::App& app);
  // The path --config_file gave; empty when it was not given.
  const std::string& path() const { return path_; }

  // Reads the file, saying on `say` which file it is and what it sets when
  // one was read. IoError (a named file that is missing) or ValueError (bad
  // JSON, an unknown key, a bad value), each naming the file.
  LoadedUserConfig load(std::ostream* say) const;
  // load(), then the TrainingArguments fields the file sets (and the CPU
  // fallback); a value the Trainer cannot run is a ValueError naming the file.
  LoadedUserConfig apply(train::TrainingArguments& args, std::ostream* say) const;

 private:
  std::string path_;
};

}  // namespace hearth::cli
