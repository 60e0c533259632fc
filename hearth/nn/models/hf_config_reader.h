// Reading the config.json of a Hugging Face model strictly: every field hearth
// interprets must have the right JSON type, and errors name the file and the
// field ("[LlamaConfig] out/config.json: field \"hidden_size\": expected a
// positive integer, got 0"). Fields hearth does not interpret are kept as
// JSON text (bounded in depth and size) so that a saved config.json still
// carries them. Shared by the configs of the causal language models.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace hearth::nn::models {

// Unknown fields are kept while nested at most this deep and this many bytes
// in all (compact JSON); the rest are dropped. A config.json larger than
// kMaxHfConfigBytes is refused.
inline constexpr int kMaxHfExtraFieldDepth = 8;
inline constexpr size_t kMaxHfExtraBytes = size_t{64} << 10;
inline constexpr size_t kMaxHfConfigBytes = size_t{16} << 20;

class HfConfigReader {
 public:
  // `tag` names the config class ("[GPT2Config]"), `where` the file.
  HfConfigReader(const nlohmann::json& j, std::string tag, std::string where);

  // Each reads the field when present (and not null, for the optional ones)
  // and leaves `out` alone otherwise; a value of the wrong type is an error.
  void read(const char* name, int64_t& out) const;
  void read(const char* name, double& out) const;
  void read(const char* name, bool& out) const;
  void read(const char* name, std::string& out) const;
  void read(const char* name, std::optional<int64_t>& out) const;  // null resets it
  void read(const char* name, std::optional<double>& out) const;   // null resets it

  bool has(const char* name) const { return j_.contains(name); }
  const nlohmann::json& object() const { return j_; }

  // The fields not in `interpreted`, as compact JSON text by name, within the
  // bounds above.
  std::map<std::string, std::string> extra_fields(const std::set<std::string>& interpreted) const;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const;

 private:
  const nlohmann::json& j_;
  std::string tag_, where_;
};

// ValueError "<tag> <where>: field \"<field>\": <what>".
[[noreturn]] void hf_config_error(const std::string& tag, const std::string& where, const std::string& field,
                                  const std::string& what);

// Parses config.json text into a JSON object, within io's JSON limits and
// kMaxHfConfigBytes; ValueError naming `where` when it is not one.
nlohmann::json parse_hf_config_text(const std::string& text, const std::string& tag, const std::string& where);
// Reads the file at `path` (IoError when it cannot be read) and parses it so.
nlohmann::json read_hf_config_file(const std::string& path, const std::string& tag);

// The extra fields written back into `j` (each parsed back from its text).
void put_extra_fields(nlohmann::json& j, const std::map<std::string, std::string>& extra);

// A number for a message: "0.1", "1e-05", "inf".
std::string format_number(double v);

}  // namespace hearth::nn::models
