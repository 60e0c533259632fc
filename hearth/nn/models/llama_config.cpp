#include "hearth/nn/models/llama_config.h"

#include <cmath>
#include <set>

#include "hearth/io/atomic_file.h"
#include "hearth/nn/models/hf_config_reader.h"

namespace hearth::nn::models {
namespace {

using json = nlohmann::json;
constexpr const char* kTag = "[LlamaConfig]";

const std::set<std::string>& interpreted_fields() {
  static const std::set<std::string> names = {"model_type",
                                              "vocab_size",
                                              "hidden_size",
                                              "intermediate_size",
                                              "num_hidden_layers",
                                              "num_attention_heads",
                                              "num_key_value_heads",
                                              "head_dim",
                                              "hidden_act",
                                              "max_position_embeddings",
                                              "rms_norm_eps",
                                              "rope_theta",
                                              "rope_scaling",
                                              "rope_parameters",
                                              "attention_bias",
                                              "mlp_bias",
                                              "tie_word_embeddings",
                                              "initializer_range",
                                              "attention_dropout",
                                              "pad_token_id",
                                              "sliding_window",
                                              "use_sliding_window",
                                              "architectures",
                                              "torch_dtype",
                                              "dtype"};
  return names;
}

const std::vector<std::string>& supported_types() {
  static const std::vector<std::string> names = {"llama", "mistral", "qwen2"};
  return names;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? (i + 1 == names.size() ? " or " : ", ") : "") + ("\"" + names[i] + "\"");
  return s;
}

// rope_scaling (transformers 4) or rope_parameters (transformers 5, which also
// holds rope_theta): only the "default" and "llama3" rules exist here.
void read_rope(const HfConfigReader& r, const char* field, LlamaConfig& c) {
  const json& v = r.object().at(field);
  if (v.is_null()) return;
  if (!v.is_object()) r.fail(field, "expected null or an object with \"rope_type\", got " + v.dump());
  auto sub_fail = [&](const std::string& what) { r.fail(field, what); };
  std::string type = "default";
  for (const char* key : {"rope_type", "type"}) {
    if (!v.contains(key)) continue;
    if (!v[key].is_string()) sub_fail(std::string("\"") + key + "\": expected a string, got " + v[key].dump());
    type = v[key].get<std::string>();
    break;
  }
  if (v.contains("rope_theta")) {
    if (!v["rope_theta"].is_number()) sub_fail("\"rope_theta\": expected a number, got " + v["rope_theta"].dump());
    c.rope_theta = v["rope_theta"].get<double>();
  }
  if (type == "default") {
    c.rope_scaling.reset();
    return;
  }
  if (type != "llama3")
    sub_fail("rope type \"" + type +
             "\" is not supported; hearth computes \"default\" and \"llama3\" rotary embeddings");
  RopeScaling s;
  s.rope_type = type;
  auto number = [&](const char* key, double& out) {
    if (!v.contains(key) || !v[key].is_number())
      sub_fail(std::string("llama3 scaling needs \"") + key + "\" as a number, got " +
               (v.contains(key) ? v[key].dump() : std::string("none")));
    out = v[key].get<double>();
  };
  number("factor", s.factor);
  number("low_freq_factor", s.low_freq_factor);
  number("high_freq_factor", s.high_freq_factor);
  double original = 0;
  number("original_max_position_embeddings", original);
  if (!(original >= 1 && original <= static_cast<double>(LlamaConfig::kMaxSize) && original == std::floor(original)))
    sub_fail("\"original_max_position_embeddings\": expected a positive integer, got " + format_number(original));
  s.original_max_position_embeddings = static_cast<int64_t>(original);
  c.rope_scaling = s;
}

LlamaConfig parse_config(const json& j, const std::string& where) {
  const HfConfigReader r(j, kTag, where);
  if (!j.contains("model_type"))
    r.fail("model_type", "missing; expected " + quoted_list(supported_types()) + " (it names the architecture)");
  if (!j["model_type"].is_string()) r.fail("model_type", "expected a string, got " + j["model_type"].dump());
  const std::string type = j["model_type"].get<std::string>();
  bool known = false;
  for (const auto& t : supported_types()) known = known || t == type;
  if (!known)
    r.fail("model_type",
           "\"" + type + "\" is not an architecture this config builds; expected " + quoted_list(supported_types()));
  LlamaConfig c = LlamaConfig::defaults_for(type);
  r.read("vocab_size", c.vocab_size);
  r.read("hidden_size", c.hidden_size);
  r.read("intermediate_size", c.intermediate_size);
  r.read("num_hidden_layers", c.num_hidden_layers);
  r.read("num_attention_heads", c.num_attention_heads);
  r.read("num_key_value_heads", c.num_key_value_heads);
  r.read("head_dim", c.head_dim);
  r.read("hidden_act", c.hidden_act);
  r.read("max_position_embeddings", c.max_position_embeddings);
  r.read("rms_norm_eps", c.rms_norm_eps);
  r.read("rope_theta", c.rope_theta);
  if (j.contains("rope_scaling")) read_rope(r, "rope_scaling", c);
  if (j.contains("rope_parameters")) read_rope(r, "rope_parameters", c);
  r.read("attention_bias", c.attention_bias);
  r.read("mlp_bias", c.mlp_bias);
  r.read("tie_word_embeddings", c.tie_word_embeddings);
  r.read("initializer_range", c.initializer_range);
  r.read("attention_dropout", c.attention_dropout);
  r.read("pad_token_id", c.pad_token_id);
  r.read("sliding_window", c.sliding_window);
  r.read("use_sliding_window", c.use_sliding_window);
  c.extra_fields = r.extra_fields(interpreted_fields());
  c.validate(where);
  return c;
}

}  // namespace

LlamaConfig LlamaConfig::defaults_for(const std::string& model_type) {
  LlamaConfig c;
  c.model_type = model_type;
  if (model_type == "mistral") {
    c.intermediate_size = 14336;
    c.num_key_value_heads = 8;
    c.max_position_embeddings = 4096 * 32;
    c.sliding_window = 4096;
  } else if (model_type == "qwen2") {
    c.vocab_size = 151936;
    c.intermediate_size = 22016;
    c.num_key_value_heads = 32;
    c.max_position_embeddings = 32768;
    c.sliding_window = 4096;  // used only with use_sliding_window
  }
  return c;
}

int64_t LlamaConfig::max_sequence_length() const {
  const bool windowed = sliding_window && (model_type == "mistral" || use_sliding_window);
  return windowed ? std::min(max_position_embeddings, *sliding_window) : max_position_embeddings;
}

std::string LlamaConfig::architecture() const {
  if (model_type == "mistral") return "MistralForCausalLM";
  if (model_type == "qwen2") return "Qwen2ForCausalLM";
  return "LlamaForCausalLM";
}

double LlamaConfig::parameter_count() const {
  const double e = static_cast<double>(hidden_size), inner = static_cast<double>(intermediate_size);
  const double q = static_cast<double>(num_attention_heads) * static_cast<double>(head_size());
  const double kv = static_cast<double>(kv_heads()) * static_cast<double>(head_size());
  const double attention = e * q + 2 * e * kv + q * e + (qkv_bias() ? q + 2 * kv : 0) + (o_bias() ? e : 0);
  const double mlp = 3 * e * inner + (mlp_bias ? 2 * inner + e : 0);
  const double embeddings = static_cast<double>(vocab_size) * e * (tie_word_embeddings ? 1 : 2);
  return embeddings + static_cast<double>(num_hidden_layers) * (attention + mlp + 2 * e) + e;
}

void LlamaConfig::validate(const std::string& where) const {
  auto bad = [&](const char* field, const std::string& what) { hf_config_error(kTag, where, field, what); };
  auto size = [&](const char* field, int64_t v, int64_t limit) {
    if (v <= 0) bad(field, "expected a positive integer, got " + std::to_string(v));
    if (v > limit) bad(field, "expected at most " + std::to_string(limit) + ", got " + std::to_string(v));
  };
  if (model_type != "llama" && model_type != "mistral" && model_type != "qwen2")
    bad("model_type", "expected " + quoted_list(supported_types()) + ", got \"" + model_type + "\"");
  size("vocab_size", vocab_size, kMaxSize);
  size("hidden_size", hidden_size, kMaxSize);
  size("intermediate_size", intermediate_size, kMaxSize);
  if (num_hidden_layers < 0 || num_hidden_layers > kMaxLayers)
    bad("num_hidden_layers",
        "expected an integer in [0, " + std::to_string(kMaxLayers) + "], got " + std::to_string(num_hidden_layers));
  size("num_attention_heads", num_attention_heads, kMaxSize);
  if (num_key_value_heads) size("num_key_value_heads", *num_key_value_heads, kMaxSize);
  if (head_dim) {
    size("head_dim", *head_dim, kMaxSize);
  } else if (hidden_size % num_attention_heads != 0) {
    bad("num_attention_heads", "hidden_size " + std::to_string(hidden_size) +
                                   " is not a multiple of num_attention_heads " + std::to_string(num_attention_heads) +
                                   " (and head_dim is not given)");
  }
  if (num_attention_heads % kv_heads() != 0)
    bad("num_key_value_heads", "num_attention_heads " + std::to_string(num_attention_heads) +
                                   " is not a multiple of num_key_value_heads " + std::to_string(kv_heads()));
  // Rotary embeddings turn pairs of a head's dims (its two halves).
  if (head_size() % 2 != 0)
    bad(head_dim ? "head_dim" : "hidden_size",
        "the head size " + std::to_string(head_size()) + " is odd; rotary embeddings need an even one");
  if (static_cast<double>(num_attention_heads) * static_cast<double>(head_size()) > static_cast<double>(kMaxSize))
    bad("head_dim", "num_attention_heads * head_dim exceeds " + std::to_string(kMaxSize));
  size("max_position_embeddings", max_position_embeddings, kMaxSize);
  if (parameter_count() * 4.0 >= 9.2e18)
    bad("hidden_size", std::to_string(hidden_size) + " with vocab_size " + std::to_string(vocab_size) +
                           ", intermediate_size " + std::to_string(intermediate_size) + " and num_hidden_layers " +
                           std::to_string(num_hidden_layers) + " gives a model of more bytes than fit in int64");
  if (hidden_act != "silu" && hidden_act != "swish")
    bad("hidden_act", "expected \"silu\" (the SwiGLU MLP), got \"" + hidden_act + "\"");
  if (!(rms_norm_eps > 0.0) || rms_norm_eps > 1.0)
    bad("rms_norm_eps", "expected a number in (0, 1], got " + format_number(rms_norm_eps));
  if (!(rope_theta > 1.0) || !std::isfinite(rope_theta))
    bad("rope_theta", "expected a finite number > 1, got " + format_number(rope_theta));
  if (rope_scaling) {
    const RopeScaling& s = *rope_scaling;
    if (s.rope_type != "llama3")
      bad("rope_scaling", "rope type \"" + s.rope_type + "\" is not supported; expected \"default\" or \"llama3\"");
    if (!(s.factor > 0.0) || !std::isfinite(s.factor))
      bad("rope_scaling", "\"factor\": expected a finite number > 0, got " + format_number(s.factor));
    if (!(s.low_freq_factor > 0.0) || !std::isfinite(s.low_freq_factor))
      bad("rope_scaling", "\"low_freq_factor\": expected a finite number > 0, got " + format_number(s.low_freq_factor));
    if (!(s.high_freq_factor > s.low_freq_factor) || !std::isfinite(s.high_freq_factor))
      bad("rope_scaling", "\"high_freq_factor\": expected a finite number > low_freq_factor " +
                              format_number(s.low_freq_factor) + ", got " + format_number(s.high_freq_factor));
    if (s.original_max_position_embeddings <= 0 || s.original_max_position_embeddings > kMaxSize)
      bad("rope_scaling", "\"original_max_position_embeddings\": expected a positive integer, got " +
                              std::to_string(s.original_max_position_embeddings));
  }
  if (!(initializer_range >= 0.0) || initializer_range > 1e6)
    bad("initializer_range", "expected a number in [0, 1e6], got " + format_number(initializer_range));
  if (!(attention_dropout >= 0.0 && attention_dropout < 1.0))
    bad("attention_dropout", "expected a probability in [0, 1), got " + format_number(attention_dropout));
  if (pad_token_id && (*pad_token_id < 0 || *pad_token_id >= vocab_size))
    bad("pad_token_id", "expected null or an id in [0, vocab_size " + std::to_string(vocab_size) + "), got " +
                            std::to_string(*pad_token_id));
  if (sliding_window) size("sliding_window", *sliding_window, kMaxSize);
}

LlamaConfig LlamaConfig::from_json_file(const std::string& path) {
  return parse_config(read_hf_config_file(path, kTag), path);
}

LlamaConfig LlamaConfig::from_json_string(const std::string& text, const std::string& where) {
  return parse_config(parse_hf_config_text(text, kTag, where), where);
}

std::string LlamaConfig::to_json_string(const std::vector<std::string>& architectures,
                                        const std::string& torch_dtype) const {
  json j;
  put_extra_fields(j, extra_fields);
  if (!architectures.empty()) j["architectures"] = architectures;
  if (!torch_dtype.empty()) j["torch_dtype"] = torch_dtype;
  j["model_type"] = model_type;
  j["vocab_size"] = vocab_size;
  j["hidden_size"] = hidden_size;
  j["intermediate_size"] = intermediate_size;
  j["num_hidden_layers"] = num_hidden_layers;
  j["num_attention_heads"] = num_attention_heads;
  j["num_key_value_heads"] = kv_heads();
  j["head_dim"] = head_size();
  j["hidden_act"] = hidden_act;
  j["max_position_embeddings"] = max_position_embeddings;
  j["rms_norm_eps"] = rms_norm_eps;
  j["rope_theta"] = rope_theta;
  if (rope_scaling) {
    j["rope_scaling"] = {{"rope_type", rope_scaling->rope_type},
                         {"factor", rope_scaling->factor},
                         {"low_freq_factor", rope_scaling->low_freq_factor},
                         {"high_freq_factor", rope_scaling->high_freq_factor},
                         {"original_max_position_embeddings", rope_scaling->original_max_position_embeddings}};
  } else {
    j["rope_scaling"] = nullptr;
  }
  if (model_type != "qwen2") j["attention_bias"] = attention_bias;
  j["mlp_bias"] = mlp_bias;
  j["tie_word_embeddings"] = tie_word_embeddings;
  j["initializer_range"] = initializer_range;
  j["attention_dropout"] = attention_dropout;
  j["pad_token_id"] = pad_token_id ? json(*pad_token_id) : json(nullptr);
  j["sliding_window"] = sliding_window ? json(*sliding_window) : json(nullptr);
  if (model_type == "qwen2") j["use_sliding_window"] = use_sliding_window;
  return j.dump(2) + "\n";
}

void LlamaConfig::save(const std::string& path, const std::vector<std::string>& architectures,
                       const std::string& torch_dtype) const {
  validate(path);
  io::write_file_atomic(path, to_json_string(architectures, torch_dtype));
}

}  // namespace hearth::nn::models
