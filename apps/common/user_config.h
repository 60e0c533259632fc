// The user's defaults for every hearth program, written once by `hearth config`
// (like `accelerate config`) and read by `hearth train`, `hearth launch` and the
// example programs through load_user_config() + apply_user_config(), so they
// all agree. Command-line flags override what the file sets.
//
// The file: the path a --config_file flag gives, else $HEARTH_CONFIG_FILE (how
// `hearth launch` hands its own file to the processes it starts), else
// $XDG_CONFIG_HOME/hearth/config.json (default ~/.config/hearth/config.json):
//   {"device": "auto", "num_processes": 1, "precision": "fp32",
//    "cpu_fallback": false}
// and "output_dir" only when one was asked for: every program has its own
// (hearth train's runs/<dataset>-<model>, cv_example's cv_example_output), so
// a shared default would make one run write into another's.
// Keys may be left out (the built-in default applies); invalid JSON, unknown
// keys and bad values are ValueErrors naming the file, the key and what was
// expected.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/train/training_arguments.h"

namespace hearth::cli {

struct UserConfig {
  std::string device = "auto";  // auto, cpu, cuda, cuda:N
  int64_t num_processes = 1;    // processes `hearth launch` starts (one per GPU)
  std::string precision = "fp32";
  bool cpu_fallback = false;  // run ops an accelerator lacks on the CPU (HEARTH_ENABLE_CPU_FALLBACK)
  std::string output_dir;     // empty: each program's own

  nlohmann::json to_json() const;
};

// One setting: its key, the question `hearth config` asks, and the check of an
// answer typed as text (also used for the values of the file).
struct UserConfigSetting {
  // The JSON type the file must hold it as (`hearth config` writes these).
  enum class Type { string, integer, boolean };

  std::string key;
  std::string question;
  std::string allowed;  // "auto, cpu, cuda or cuda:N"
  std::function<std::string(const UserConfig&)> get;
  // Throws ValueError "[config] <context>: expected <allowed>, got <text>".
  std::function<void(UserConfig&, const std::string& text, const std::string& context)> set;
  Type type;
};
const std::vector<UserConfigSetting>& user_config_settings();

// The precisions a config may name.
const std::vector<std::string>& user_config_precisions();

// $XDG_CONFIG_HOME/hearth/config.json, or $HOME/.config/hearth/config.json.
std::string default_user_config_path();

// The variable naming the file for processes started by another hearth
// program (`hearth launch`), so that every rank reads the launcher's file.
inline constexpr const char* kUserConfigFileVariable = "HEARTH_CONFIG_FILE";

// The file load_user_config(explicit_path) reads: explicit_path, else the
// one $HEARTH_CONFIG_FILE names, else the default path. `hearth config`
// writes there, so that what it writes is what the programs read.
std::string user_config_path(const std::string& explicit_path = "");

struct LoadedUserConfig {
  std::string path;               // the file read, or the default path looked at
  bool found = false;             // whether a file was read
  UserConfig config;              // the file's values over the built-in defaults
  std::vector<std::string> keys;  // the keys the file set, in the order of user_config_settings()

  bool has(const std::string& key) const;
};

// Reads `explicit_path`, which must exist (IoError otherwise); with an empty
// path, the file $HEARTH_CONFIG_FILE names, which must exist too; else the
// default path, where a missing file just means no settings.
LoadedUserConfig load_user_config(const std::string& explicit_path = "");
// Parses a config object; `where` names it in messages.
LoadedUserConfig parse_user_config(const nlohmann::json& j, const std::string& where);
// Writes the config atomically, creating the directory.
void save_user_config(const UserConfig& config, const std::string& path);

// Sets the TrainingArguments fields the file set (device, precision,
// output_dir) and, when the file turns the CPU fallback on, sets
// HEARTH_ENABLE_CPU_FALLBACK unless the environment already says otherwise.
// Call it before the command-line flags are applied, so that they win.
void apply_user_config(const LoadedUserConfig& loaded, train::TrainingArguments& args);

// "device=cuda, precision=bf16-mixed" for the keys the file set; "nothing" for none.
std::string describe_user_config(const LoadedUserConfig& loaded);

// What a program that starts other hearth programs (`hearth launch`) adds to
// their environment so that they read the same file: HEARTH_CONFIG_FILE with
// its absolute path (from the current directory, which must be the one it
// was loaded from), when a file was read. (HEARTH_ENABLE_CPU_FALLBACK, which
// apply_user_config may set, is inherited like any variable.)
std::vector<std::pair<std::string, std::string>> user_config_environment(const LoadedUserConfig& loaded);

}  // namespace hearth::cli
