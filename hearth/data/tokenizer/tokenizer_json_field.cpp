#include "hearth/data/tokenizer/tokenizer_json_field.h"

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/utf8_lossy.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {

using json = nlohmann::json;

std::string JsonField::where() const { return "[tokenizer] " + file_ + ": field '" + path_ + "'"; }

void JsonField::fail(const std::string& expected) const {
  // dump() replaces invalid UTF-8 rather than throwing; the excerpt keeps a huge value short.
  HEARTH_THROW(ValueError, where(), ": expected ", expected, ", got ",
               io::excerpt(value_->dump(-1, ' ', false, json::error_handler_t::replace)));
}

JsonField JsonField::at(const std::string& key, const std::string& expected) const {
  object();
  auto it = value_->find(key);
  const std::string path = path_.empty() ? key : path_ + "." + key;
  HEARTH_CHECK(it != value_->end() && !it->is_null(), ValueError, "[tokenizer] ", file_, ": field '", path,
               "' is missing: expected ", expected);
  return JsonField(*it, file_, path);
}

std::optional<JsonField> JsonField::find(const std::string& key) const {
  object();
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonField(*it, file_, path_.empty() ? key : path_ + "." + key);
}

JsonField JsonField::element(size_t i) const {
  array();
  return JsonField((*value_)[i], file_, path_ + "[" + std::to_string(i) + "]");
}

const json& JsonField::object(const std::string& expected) const {
  if (!value_->is_object()) fail(expected);
  return *value_;
}

const json& JsonField::array(const std::string& expected) const {
  if (!value_->is_array()) fail(expected);
  return *value_;
}

std::string JsonField::string(const std::string& expected) const {
  if (!value_->is_string()) fail(expected);
  return value_->get<std::string>();
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail("true or false");
  return value_->get<bool>();
}

uint64_t JsonField::count(uint64_t max) const {
  if (!io::json_integer_fits<uint64_t>(*value_) || value_->get<uint64_t>() > max)
    fail("an integer in [0, " + std::to_string(max) + "]");
  return value_->get<uint64_t>();
}

std::string JsonField::string_at(const std::string& key) const { return at(key, "a string").string(); }

std::optional<std::string> JsonField::optional_string(const std::string& key) const {
  std::optional<JsonField> f = find(key);
  if (!f) return std::nullopt;
  return f->string();
}

bool JsonField::bool_or(const std::string& key, bool fallback) const {
  std::optional<JsonField> f = find(key);
  return f ? f->boolean() : fallback;
}

char32_t JsonField::char_at(const std::string& key) const {
  const JsonField f = at(key, "a string of one character");
  const std::string s = f.string("a string of one character");
  const size_t n = s.empty() ? 0 : utf8::valid_sequence_length(s, 0);
  if (n == 0 || n != s.size()) f.fail("a string of one character");
  return utf8::code_point_at(s, 0, n);
}

}  // namespace hearth::data
