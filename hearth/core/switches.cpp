#include "hearth/core/switches.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "hearth/core/errors.h"

namespace hearth {
namespace {

// Registered switches by name. A function-local static, so a switch declared
// in any translation unit's static initialiser finds it made.
struct Registry {
  std::mutex mutex;
  std::map<std::string, const Switch*, std::less<>> by_name;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: switches are read until the process ends
  return *r;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The value as a message shows it: at most 100 characters.
std::string shown(const std::string& value) {
  constexpr size_t kMax = 100;
  if (value.size() <= kMax) return value;
  return value.substr(0, kMax) + "...(" + std::to_string(value.size()) + " characters)";
}

// 604800, not 6.048e+05: whole numbers in full.
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<int64_t>(v));
  std::ostringstream os;
  os << v;
  return os.str();
}

// A size in bytes in the largest binary unit that holds it whole: "1024TiB".
std::string bytes_text(double v) {
  static const char* const kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  double scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  for (const char* unit : kUnits) {
    if (v >= scale && std::fmod(v, scale) == 0) return number_text(v / scale) + unit;
    scale /= 1024.0;
  }
  return number_text(v);
}

}  // namespace

namespace switch_detail {

bool parse_flag(const std::string& s, bool& out) {
  const std::string v = lower(s);
  if (v == "1" || v == "true" || v == "yes" || v == "on") {
    out = true;
    return true;
  }
  if (v == "0" || v == "false" || v == "no" || v == "off") {
    out = false;
    return true;
  }
  return false;
}

bool parse_integer(const std::string& s, int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return !s.empty() && ec == std::errc() && p == end;
}

bool parse_number(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

bool parse_bytes(const std::string& s, double& out) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB" || unit == "K")
    scale = 1024.0;
  else if (unit == "MiB" || unit == "M")
    scale = 1024.0 * 1024.0;
  else if (unit == "GiB" || unit == "G")
    scale = 1024.0 * 1024.0 * 1024.0;
  else if (unit == "TiB" || unit == "T")
    scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  if (scale == 0 || !std::isfinite(v)) return false;
  out = std::floor(v * scale);
  return true;
}

}  // namespace switch_detail

Switch::Switch(SwitchSpec spec) : spec_(std::move(spec)) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  // Two declarations of one name are a build mistake; the first stays, and
  // the test of the switch list finds the second by its source.
  r.by_name.emplace(spec_.name, this);
}

Switch::~Switch() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(spec_.name);
  if (it != r.by_name.end() && it->second == this) r.by_name.erase(it);
}

std::string Switch::text() const {
  const char* v = std::getenv(spec_.name);
  if (v != nullptr && *v != '\0') return v;
  std::lock_guard<std::mutex> lock(mutex_);
  return config_value_ ? *config_value_ : std::string(spec_.default_value);
}

SwitchSource Switch::source() const {
  const char* v = std::getenv(spec_.name);
  if (v != nullptr && *v != '\0') return SwitchSource::environment;
  std::lock_guard<std::mutex> lock(mutex_);
  return config_value_ ? SwitchSource::config_file : SwitchSource::default_value;
}

std::string Switch::allowed() const {
  switch (spec_.type) {
    case SwitchType::flag:
      return "1, true, yes or on to turn it on; 0, false, no or off to turn it off";
    case SwitchType::integer:
      return "a whole number from " + number_text(spec_.min) + " to " + number_text(spec_.max);
    case SwitchType::number:
      return "a number from " + number_text(spec_.min) + " to " + number_text(spec_.max);
    case SwitchType::bytes:
      return "a size in bytes from " + bytes_text(spec_.min) + " to " + bytes_text(spec_.max) +
             ", optionally with a KiB, MiB, GiB or TiB suffix (\"512MiB\")";
    case SwitchType::words: {
      std::string s = "one of ";
      for (size_t i = 0; i < spec_.words.size(); ++i)
        s += (i == 0 ? "" : i + 1 == spec_.words.size() ? " or " : ", ") + spec_.words[i];
      return s;
    }
    case SwitchType::text:
      return *spec_.allowed ? spec_.allowed : "any text";
  }
  return "";
}

std::string Switch::problem(const std::string& value) const {
  if (value.empty()) return "";  // unset: the default
  bool ok = false;
  switch (spec_.type) {
    case SwitchType::flag: {
      bool b = false;
      ok = switch_detail::parse_flag(value, b);
      break;
    }
    case SwitchType::integer: {
      int64_t v = 0;
      ok = switch_detail::parse_integer(value, v) && v >= spec_.min && v <= spec_.max;
      break;
    }
    case SwitchType::number: {
      double v = 0;
      ok = switch_detail::parse_number(value, v) && v >= spec_.min && v <= spec_.max;
      break;
    }
    case SwitchType::bytes: {
      double v = 0;
      ok = switch_detail::parse_bytes(value, v) && v >= spec_.min && v <= spec_.max;
      break;
    }
    case SwitchType::words:
      ok = std::find(spec_.words.begin(), spec_.words.end(), value) != spec_.words.end();
      break;
    case SwitchType::text:
      if (spec_.check == nullptr) return "";
      return spec_.check(value);
  }
  return ok ? "" : "expected " + allowed();
}

void Switch::refuse(const std::string& value) const {
  std::string why = problem(value);
  if (why.empty()) why = "expected " + allowed();
  // A secret is not repeated in a message that may end up in a log.
  const std::string v = spec_.secret ? "<" + std::to_string(value.size()) + " characters>" : "'" + shown(value) + "'";
  HEARTH_THROW(ValueError, "[env] ", spec_.name, "=", v, " is not allowed: ", why);
}

void Switch::validate() const {
  const std::string value = text();
  if (!problem(value).empty()) refuse(value);
}

void Switch::set_config_value(const std::string& value) const {
  if (!problem(value).empty()) refuse(value);
  std::lock_guard<std::mutex> lock(mutex_);
  config_value_ = value;
}

void Switch::clear_config_value() const {
  std::lock_guard<std::mutex> lock(mutex_);
  config_value_.reset();
}

template <>
bool TypedSwitch<bool, SwitchType::flag>::parse(const std::string& text) const {
  bool v = false;
  if (text.empty()) return false;
  if (!switch_detail::parse_flag(text, v)) refuse(text);
  return v;
}

template <>
int64_t TypedSwitch<int64_t, SwitchType::integer>::parse(const std::string& text) const {
  if (text.empty()) return 0;
  if (!problem(text).empty()) refuse(text);
  int64_t v = 0;
  switch_detail::parse_integer(text, v);
  return v;
}

template <>
double TypedSwitch<double, SwitchType::number>::parse(const std::string& text) const {
  if (text.empty()) return 0;
  if (!problem(text).empty()) refuse(text);
  double v = 0;
  switch_detail::parse_number(text, v);
  return v;
}

template <>
uint64_t TypedSwitch<uint64_t, SwitchType::bytes>::parse(const std::string& text) const {
  if (text.empty()) return 0;
  if (!problem(text).empty()) refuse(text);
  double v = 0;
  switch_detail::parse_bytes(text, v);
  return static_cast<uint64_t>(v);
}

template <>
std::string TypedSwitch<std::string, SwitchType::words>::parse(const std::string& text) const {
  if (!problem(text).empty()) refuse(text);
  return text;
}

template <>
std::string TypedSwitch<std::string, SwitchType::text>::parse(const std::string& text) const {
  if (!problem(text).empty()) refuse(text);
  return text;
}

std::vector<const Switch*> all_switches() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const Switch*> out;
  out.reserve(r.by_name.size());
  for (const auto& [name, s] : r.by_name) out.push_back(s);
  return out;
}

const Switch* find_switch(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

void validate_switches() {
  for (const Switch* s : all_switches()) s->validate();
}

void validate_switches_or_exit(const char* program) {
  try {
    validate_switches();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    std::fflush(stderr);
    std::exit(kBadSwitchExitCode);
  }
}

}  // namespace hearth
