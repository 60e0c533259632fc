#include "apps/common/json_config.h"

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::cli {
namespace {

using json = nlohmann::json;

const char* flag_name() { return "--config"; }

std::string flag_value(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string JsonConfig::to_config(const CLI::App*, bool, bool, std::string) const {
  return "{}\n";  // writing a config is not offered
}

std::vector<CLI::ConfigItem> JsonConfig::from_config(std::istream& input) const {
  std::string text;
  try {
    text = io::read_json_text(input, "--config");
  } catch (const Error& e) {
    throw CLI::ConfigError(e.what());
  }
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw CLI::ConfigError("--config: expected a JSON object of flag names and values");
  std::vector<CLI::ConfigItem> items;
  for (const auto& [key, value] : j.items()) {
    if (value.is_null()) continue;  // unset: the flag's default
    if (value.is_object())
      throw CLI::ConfigError("--config: field '" + key + "': expected a value or a list, got a JSON object");
    CLI::ConfigItem item;
    item.name = key;
    if (value.is_array()) {
      for (const json& e : value) item.inputs.push_back(flag_value(e));
    } else {
      item.inputs.push_back(flag_value(value));
    }
    items.push_back(std::move(item));
  }
  return items;
}

void add_json_config(CLI::App& app, const std::string& flag) {
  app.config_formatter(std::make_shared<JsonConfig>());
  app.set_config(flag, "",
                 "JSON file of this command's flags by name (its own and the training arguments); "
                 "flags on the command line win")
      // Checked before the file is opened: a FIFO would block the read forever.
      ->check(CLI::Validator(
          [](std::string& path) -> std::string {
            try {
              io::check_regular_file(path, flag_name());
            } catch (const Error& e) {
              return e.what();
            }
            return "";
          },
          "FILE"));
}

}  // namespace hearth::cli
