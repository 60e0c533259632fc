// The user's defaults for every hearth program, written once by `hearth config`
// (like `accelerate config`) and read by `hearth train`, `hearth launch` and the
// example programs through load_user_config() + apply_user_config(), so they
// all agree. Command-line flags override what the file sets.
//
// The file: $XDG_CONFIG_HOME/hearth/config.json (default
// ~/.config/hearth/config.json), or the path a --config_file flag gives:
//   {"device": "auto", "num_processes": 1, "precision": "fp32",
//    "cpu_fallback": false, "output_dir": "trainer_output"}
// Keys may be left out (the built-in default applies); unknown keys and bad
// values are ValueErrors naming the file and the key.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/train/training_arguments.h"

namespace hearth::train {

struct UserConfig {
  std::string device = "auto";  // auto, cpu, cuda, cuda:N
  int64_t num_processes = 1;    // processes `hearth launch` starts (one per GPU)
  std::string precision = "fp32";
  bool cpu_fallback = false;  // run ops an accelerator lacks on the CPU (HEARTH_ENABLE_CPU_FALLBACK)
  std::string output_dir = "trainer_output";

  nlohmann::json to_json() const;
};

// One setting: its key, the question `hearth config` asks, and the check of an
// answer typed as text (also used for the values of the file).
struct UserConfigSetting {
  std::string key;
  std::string question;
  std::string allowed;  // "auto, cpu, cuda or cuda:N"
  std::function<std::string(const UserConfig&)> get;
  // Throws ValueError "[config] <context>: expected <allowed>, got <text>".
  std::function<void(UserConfig&, const std::string& text, const std::string& context)> set;
};
const std::vector<UserConfigSetting>& user_config_settings();

// The precisions a config may name.
const std::vector<std::string>& user_config_precisions();

// $XDG_CONFIG_HOME/hearth/config.json, or $HOME/.config/hearth/config.json.
std::string default_user_config_path();

struct LoadedUserConfig {
  std::string path;               // the file read, or the default path looked at
  bool found = false;             // whether a file was read
  UserConfig config;              // the file's values over the built-in defaults
  std::vector<std::string> keys;  // the keys the file set, in the order of user_config_settings()
};

// Reads `explicit_path`, which must exist (IoError otherwise); with an empty
// path, the default path, where a missing file just means no settings.
LoadedUserConfig load_user_config(const std::string& explicit_path = "");
// Parses a config object; `where` names it in messages.
LoadedUserConfig parse_user_config(const nlohmann::json& j, const std::string& where);
// Writes the config atomically, creating the directory.
void save_user_config(const UserConfig& config, const std::string& path);

// Sets the TrainingArguments fields the file set (device, precision,
// output_dir) and, when the file turns the CPU fallback on, sets
// HEARTH_ENABLE_CPU_FALLBACK unless the environment already says otherwise.
// Call it before the command-line flags are applied, so that they win.
void apply_user_config(const LoadedUserConfig& loaded, TrainingArguments& args);

// "device=cuda, precision=bf16-mixed" for the keys the file set; "nothing" for none.
std::string describe_user_config(const LoadedUserConfig& loaded);

}  // namespace hearth::train
