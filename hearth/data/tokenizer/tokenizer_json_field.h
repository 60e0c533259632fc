// Reading the fields of a Hugging Face tokenizer.json with every value
// checked: a missing field, or one of the wrong type, is a ValueError that
// names the file, the field's path ("model.merges[3]") and what was
// expected, never one of nlohmann's own exceptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace hearth::data {

class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string file, std::string path)
      : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

  const nlohmann::json& value() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  // "[tokenizer] <file>: field '<path>'", to start a message.
  std::string where() const;
  // ValueError "<where>: expected <expected>, got <the value, shortened>".
  [[noreturn]] void fail(const std::string& expected) const;

  // The member `key` of this object; it must be there and not null.
  JsonField at(const std::string& key, const std::string& expected) const;
  // The member `key`, or nullopt when absent or null.
  std::optional<JsonField> find(const std::string& key) const;
  // Element i of this array.
  JsonField element(size_t i) const;

  // This value as the type named, else fail(expected).
  const nlohmann::json& object(const std::string& expected = "an object") const;
  const nlohmann::json& array(const std::string& expected = "an array") const;
  std::string string(const std::string& expected = "a string") const;
  bool boolean() const;
  // A non-negative integer no larger than `max`.
  uint64_t count(uint64_t max) const;

  // Members of the common types: the value, or `fallback` when absent or null.
  std::string string_at(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  bool bool_or(const std::string& key, bool fallback) const;
  // A string of exactly one character (Metaspace's replacement, Strip's content).
  char32_t char_at(const std::string& key) const;

 private:
  const nlohmann::json* value_;
  std::string file_;
  std::string path_;
};

}  // namespace hearth::data
