#include "hearth/nn/models/hf_config_reader.h"

#include <fstream>
#include <sstream>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"

namespace hearth::nn::models {

using json = nlohmann::json;

void hf_config_error(const std::string& tag, const std::string& where, const std::string& field,
                     const std::string& what) {
  HEARTH_THROW(ValueError, tag, " ", where, ": field \"", field, "\": ", what);
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

HfConfigReader::HfConfigReader(const json& j, std::string tag, std::string where)
    : j_(j), tag_(std::move(tag)), where_(std::move(where)) {}

void HfConfigReader::fail(const std::string& field, const std::string& what) const {
  hf_config_error(tag_, where_, field, what);
}

void HfConfigReader::read(const char* name, int64_t& out) const {
  if (!j_.contains(name)) return;
  const json& v = j_.at(name);
  if (!v.is_number_integer()) fail(name, "expected an integer, got " + io::excerpt(v.dump()));
  // 2^64-1 read as int64 would wrap to -1 and be reported as "got -1".
  if (!io::json_integer_fits<int64_t>(v)) fail(name, "expected an integer of at most 2^63-1, got " + v.dump());
  out = v.get<int64_t>();
}

void HfConfigReader::read(const char* name, double& out) const {
  if (!j_.contains(name)) return;
  const json& v = j_.at(name);
  if (!v.is_number()) fail(name, "expected a number, got " + io::excerpt(v.dump()));
  out = v.get<double>();
}

void HfConfigReader::read(const char* name, bool& out) const {
  if (!j_.contains(name)) return;
  const json& v = j_.at(name);
  if (!v.is_boolean()) fail(name, "expected true or false, got " + io::excerpt(v.dump()));
  out = v.get<bool>();
}

void HfConfigReader::read(const char* name, std::string& out) const {
  if (!j_.contains(name)) return;
  const json& v = j_.at(name);
  if (!v.is_string()) fail(name, "expected a string, got " + io::excerpt(v.dump()));
  out = v.get<std::string>();
}

void HfConfigReader::read(const char* name, std::optional<int64_t>& out) const {
  if (!j_.contains(name)) return;
  if (j_.at(name).is_null()) {
    out.reset();
    return;
  }
  int64_t v = 0;
  read(name, v);
  out = v;
}

void HfConfigReader::read(const char* name, std::optional<double>& out) const {
  if (!j_.contains(name)) return;
  if (j_.at(name).is_null()) {
    out.reset();
    return;
  }
  double v = 0;
  read(name, v);
  out = v;
}

std::map<std::string, std::string> HfConfigReader::extra_fields(const std::set<std::string>& interpreted) const {
  // Unknown fields are written back re-indented: keep only shallow ones up to
  // a total size, so that a crafted field cannot grow every saved config.json.
  std::map<std::string, std::string> kept;
  size_t kept_bytes = 0;
  for (const auto& [key, value] : j_.items()) {
    if (interpreted.count(key)) continue;
    std::string text = value.dump();
    if (io::json_nesting_depth(text) > kMaxHfExtraFieldDepth ||
        kept_bytes + key.size() + text.size() > kMaxHfExtraBytes)
      continue;
    kept_bytes += key.size() + text.size();
    kept[key] = std::move(text);
  }
  return kept;
}

json parse_hf_config_text(const std::string& text, const std::string& tag, const std::string& where) {
  io::check_json_limits(text, tag + " " + where, kMaxHfConfigBytes);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    HEARTH_THROW(ValueError, tag, " ", where, ": not valid JSON: ", e.what());
  }
  HEARTH_CHECK(j.is_object(), ValueError, tag, " ", where, ": expected a JSON object, got ", j.type_name());
  return j;
}

json read_hf_config_file(const std::string& path, const std::string& tag) {
  io::check_regular_file(path, tag);
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, tag, " cannot open ", path);
  return parse_hf_config_text(io::read_json_text(in, tag + " " + path, kMaxHfConfigBytes), tag, path);
}

void put_extra_fields(json& j, const std::map<std::string, std::string>& extra) {
  for (const auto& [key, text] : extra) j[key] = json::parse(text);
}

}  // namespace hearth::nn::models
