// --config FILE.json for a CLI11 program: every key is one of the program's
// flags by its name (its own, such as model or max_train_samples, and every
// training argument), and flags given on the command line win over the file,
// as Hugging Face's scripts read a single JSON file of all their arguments.
//
//   add_json_config(app, "--config");   // before parsing
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace hearth::cli {

// Adds `flag` (reading a JSON object of flag names to values) to `app`.
void add_json_config(CLI::App& app, const std::string& flag);

// The JSON reader behind it: each key becomes a flag; a boolean, number or
// string its value, a list its values. Throws CLI::ConfigError naming the file
// for what is not a JSON object of those.
class JsonConfig : public CLI::Config {
 public:
  std::string to_config(const CLI::App*, bool, bool, std::string) const override;
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;
};

}  // namespace hearth::cli
