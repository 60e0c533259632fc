#include "apps/common/user_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "hearth/core/device.h"
#include "hearth/core/env.h"
#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::cli {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& context, const std::string& allowed, const std::string& got) {
  HEARTH_THROW(ValueError, "[config] ", context, ": expected ", allowed, ", got \"", got, "\"");
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void set_device(UserConfig& c, const std::string& text, const std::string& context) {
  const std::string allowed = "auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th";
  const std::string v = lower(text);
  // "gpu" is kept as written: the accelerator present when a run starts
  // (hearth/train/device_select.h), whatever its kind.
  if (v != "auto" && v != "gpu" && v.rfind("gpu:", 0) != 0) {
    try {
      Device::parse(v);
    } catch (const ValueError&) {
      bad(context, allowed, text);
    }
  }
  c.device = v;
}

void set_num_processes(UserConfig& c, const std::string& text, const std::string& context) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 1024)
    bad(context, "an integer from 1 to 1024", text);
  c.num_processes = n;
}

void set_precision(UserConfig& c, const std::string& text, const std::string& context) {
  const auto& all = user_config_precisions();
  std::string v = lower(text);
  // The spellings --precision and --mixed_precision take too (Lightning's, Accelerate's).
  static const std::vector<std::pair<std::string, std::string>> kSpellings = {
      {"bf16", "bf16-mixed"}, {"fp16", "fp16-mixed"}, {"16-mixed", "fp16-mixed"}, {"16", "fp16-mixed"}, {"32", "fp32"},
      {"32-true", "fp32"},    {"no", "fp32"}};
  for (const auto& [spelling, name] : kSpellings)
    if (v == spelling) v = name;
  if (std::find(all.begin(), all.end(), v) == all.end()) bad(context, "fp32, bf16-mixed or fp16-mixed", text);
  c.precision = v;
}

void set_cpu_fallback(UserConfig& c, const std::string& text, const std::string& context) {
  std::string v = lower(text);
  if (v == "yes" || v == "y" || v == "true" || v == "on" || v == "1") {
    c.cpu_fallback = true;
  } else if (v == "no" || v == "n" || v == "false" || v == "off" || v == "0") {
    c.cpu_fallback = false;
  } else {
    bad(context, "yes or no", text);
  }
}

void set_output_dir(UserConfig& c, const std::string& text, const std::string& context) {
  if (text.empty()) bad(context, "a directory path", text);
  c.output_dir = text;
}

// "line 3, column 14: syntax error while parsing object - unexpected '}'; ..."
// from nlohmann's message, without its "[json.exception.parse_error.101]
// parse error at " prefix.
std::string parse_error_detail(const json::parse_error& e) {
  std::string what = e.what();
  for (std::string_view marker : {"parse error at ", "parse error: "}) {
    size_t at = what.find(marker);
    if (at != std::string::npos) return what.substr(at + marker.size());
  }
  return what;
}

// A JSON value of the file as the text a user would type for it; a value of
// another JSON type than the setting's is refused, saying which it is.
std::string as_text(const json& v, const UserConfigSetting& s, const std::string& context) {
  using Type = UserConfigSetting::Type;
  if (s.type == Type::string && v.is_string()) return v.get<std::string>();
  if (s.type == Type::integer && v.is_number_integer()) return v.dump();
  if (s.type == Type::boolean && v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  const std::string expected = s.type == Type::string    ? s.allowed + " as a JSON string"
                               : s.type == Type::integer ? s.allowed
                                                         : std::string("true or false");
  HEARTH_THROW(ValueError, "[config] ", context, ": expected ", expected, ", got ", v.dump(), ", a JSON ",
               v.type_name());
}

}  // namespace

const std::vector<std::string>& user_config_precisions() {
  static const std::vector<std::string> p = {"fp32", "bf16-mixed", "fp16-mixed"};
  return p;
}

json UserConfig::to_json() const {
  json j = {
      {"device", device}, {"num_processes", num_processes}, {"precision", precision}, {"cpu_fallback", cpu_fallback}};
  if (!output_dir.empty()) j["output_dir"] = output_dir;
  return j;
}

const std::vector<UserConfigSetting>& user_config_settings() {
  static const std::vector<UserConfigSetting> s = {
      {"device", "Which device should training use? (auto picks the GPU when there is one)",
       "auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th",
       [](const UserConfig& c) { return c.device; }, set_device, UserConfigSetting::Type::string},
      {"num_processes", "How many processes (one per GPU) should `hearth launch` start?", "an integer from 1 to 1024",
       [](const UserConfig& c) { return std::to_string(c.num_processes); }, set_num_processes,
       UserConfigSetting::Type::integer},
      {"precision", "Which precision? fp32, bf16-mixed (Ampere GPUs and newer) or fp16-mixed",
       "fp32, bf16-mixed or fp16-mixed", [](const UserConfig& c) { return c.precision; }, set_precision,
       UserConfigSetting::Type::string},
      {"cpu_fallback", "Run ops the GPU backend lacks on the CPU instead of failing? (slower)", "yes or no",
       [](const UserConfig& c) { return std::string(c.cpu_fallback ? "yes" : "no"); }, set_cpu_fallback,
       UserConfigSetting::Type::boolean},
      {"output_dir", "Output directory for every program's checkpoints and logs? (empty: each program's own)",
       "a directory path", [](const UserConfig& c) { return c.output_dir; }, set_output_dir,
       UserConfigSetting::Type::string},
  };
  return s;
}

std::string default_user_config_path() {
  std::string base = outside_env("XDG_CONFIG_HOME");
  if (base.empty()) {
    std::string home = outside_env("HOME");
    base = home.empty() ? ".config" : home + "/.config";
  }
  return (std::filesystem::path(base) / "hearth" / "config.json").string();
}

LoadedUserConfig parse_user_config(const json& j, const std::string& where) {
  HEARTH_CHECK(j.is_object(), ValueError, "[config] ", where, ": expected a JSON object of settings (",
               UserConfig{}.to_json().dump(), "), got ", j.type_name());
  LoadedUserConfig out;
  out.path = where;
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const UserConfigSetting& s : user_config_settings()) known = known || s.key == key;
    if (known) continue;
    std::string keys;
    for (const UserConfigSetting& s : user_config_settings()) keys += (keys.empty() ? "" : ", ") + s.key;
    HEARTH_THROW(ValueError, "[config] ", where, ": unknown key '", key, "'; the keys are ", keys);
  }
  for (const UserConfigSetting& s : user_config_settings()) {
    if (!j.contains(s.key)) continue;
    const std::string context = where + ": key '" + s.key + "'";
    s.set(out.config, as_text(j[s.key], s, context), context);
    out.keys.push_back(s.key);
  }
  return out;
}

std::string user_config_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  std::string named = switches::config_file().get();
  return named.empty() ? default_user_config_path() : named;
}

LoadedUserConfig load_user_config(const std::string& explicit_path) {
  const std::string path = user_config_path(explicit_path);
  // A path someone gave must name a file; the default path may name none.
  const bool named_by_variable = explicit_path.empty() && switches::config_file().is_set();
  const bool must_exist = !explicit_path.empty() || named_by_variable;
  const std::string named_by = named_by_variable ? std::string(" (named by ") + kUserConfigFileVariable + ")" : "";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    HEARTH_CHECK(!must_exist, IoError, "[config] ", path, ": no such config file", named_by,
                 "; write one with `hearth config --config_file ", path, "`");
    LoadedUserConfig none;
    none.path = path;
    return none;
  }
  io::check_regular_file(path, "[config]");
  std::ifstream in(path);
  HEARTH_CHECK(in.good(), IoError, "[config] ", path, ": cannot be read");
  json j;
  try {
    j = json::parse(io::read_json_text(in, "[config] " + path));
  } catch (const json::parse_error& e) {
    HEARTH_THROW(ValueError, "[config] ", path, ": is not valid JSON (", parse_error_detail(e),
                 "); rewrite it with `hearth config` or fix it by hand");
  } catch (const json::exception& e) {
    // Well-formed but unreadable, e.g. a number beyond double's range (1e309).
    HEARTH_THROW(ValueError, "[config] ", path, ": cannot be read as JSON (", e.what(),
                 "); rewrite it with `hearth config` or fix it by hand");
  }
  LoadedUserConfig out = parse_user_config(j, path);
  out.found = true;
  return out;
}

void save_user_config(const UserConfig& config, const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  io::write_file_atomic(path, config.to_json().dump(2) + "\n");
}

bool LoadedUserConfig::has(const std::string& key) const {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

void apply_user_config(const LoadedUserConfig& loaded, train::TrainingArguments& args) {
  auto has = [&](const char* key) { return loaded.has(key); };
  // Through the TrainingArguments field table, so a value the Trainer cannot
  // run (a precision it lacks) is refused with the file's name in the message.
  for (const char* key : {"device", "precision", "output_dir"}) {
    if (!has(key)) continue;
    const train::TrainingArgumentField* field = train::find_training_argument_field(key);
    json value = key == std::string("device")      ? json(loaded.config.device)
                 : key == std::string("precision") ? json(loaded.config.precision)
                                                   : json(loaded.config.output_dir);
    field->set(args, value, loaded.path + ": key '" + key + "'");
  }
  // Below the environment: HEARTH_ENABLE_CPU_FALLBACK, when set, decides.
  if (has("cpu_fallback") && loaded.config.cpu_fallback) switches::enable_cpu_fallback().set_config_value("1");
}

std::string describe_user_config(const LoadedUserConfig& loaded) {
  std::string s;
  for (const UserConfigSetting& setting : user_config_settings()) {
    if (!loaded.has(setting.key)) continue;
    if (!s.empty()) s += ", ";
    s += setting.key + "=" + setting.get(loaded.config);
  }
  return s.empty() ? "nothing" : s;
}

std::vector<std::pair<std::string, std::string>> user_config_environment(const LoadedUserConfig& loaded) {
  if (!loaded.found) return {};
  // Absolute, so that a rank started in another directory finds it too.
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(loaded.path, ec);
  return {{kUserConfigFileVariable, ec ? loaded.path : absolute.lexically_normal().string()}};
}

}  // namespace hearth::cli
