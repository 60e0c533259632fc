#include "hearth/nn/models/gpt2_config.h"

#include <set>

#include "hearth/io/atomic_file.h"
#include "hearth/nn/models/hf_config_reader.h"

namespace hearth::nn::models {
namespace {

using json = nlohmann::json;
constexpr const char* kTag = "[GPT2Config]";

const std::set<std::string>& interpreted_fields() {
  static const std::set<std::string> names = {"vocab_size",
                                              "n_positions",
                                              "n_embd",
                                              "n_layer",
                                              "n_head",
                                              "n_inner",
                                              "activation_function",
                                              "resid_pdrop",
                                              "embd_pdrop",
                                              "attn_pdrop",
                                              "layer_norm_epsilon",
                                              "initializer_range",
                                              "scale_attn_weights",
                                              "scale_attn_by_inverse_layer_idx",
                                              "reorder_and_upcast_attn",
                                              "tie_word_embeddings",
                                              "model_type",
                                              "architectures",
                                              "torch_dtype",
                                              "dtype"};
  return names;
}

bool known_activation(const std::string& a) {
  return a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu" || a == "relu" || a == "silu" || a == "swish" ||
         a == "tanh";
}

}  // namespace

double GPT2Config::parameter_count() const {
  const double e = static_cast<double>(n_embd), inner = static_cast<double>(inner_size());
  const double embeddings = static_cast<double>(vocab_size + n_positions) * e;
  const double block = 2 * 2 * e + (e * 3 * e + 3 * e) + (e * e + e) + (e * inner + inner) + (inner * e + e);
  const double head = tie_word_embeddings ? 0.0 : static_cast<double>(vocab_size) * e;
  return embeddings + static_cast<double>(n_layer) * block + 2 * e + head;
}

void GPT2Config::validate(const std::string& where) const {
  auto bad = [&](const char* field, const std::string& what) { hf_config_error(kTag, where, field, what); };
  // Every size becomes a tensor dimension: beyond these, products of sizes
  // wrap and allocations are absurd.
  auto size = [&](const char* field, int64_t v, int64_t limit) {
    if (v <= 0) bad(field, "expected a positive integer, got " + std::to_string(v));
    if (v > limit) bad(field, "expected at most " + std::to_string(limit) + ", got " + std::to_string(v));
  };
  auto probability = [&](const char* field, double p) {
    if (!(p >= 0.0 && p < 1.0)) bad(field, "expected a probability in [0, 1), got " + format_number(p));
  };
  size("vocab_size", vocab_size, kMaxSize);
  size("n_positions", n_positions, kMaxSize);
  size("n_embd", n_embd, kMaxSize);
  size("n_head", n_head, kMaxSize);
  if (n_layer < 0 || n_layer > kMaxLayers)
    bad("n_layer", "expected an integer in [0, " + std::to_string(kMaxLayers) + "], got " + std::to_string(n_layer));
  if (n_inner) size("n_inner", *n_inner, kMaxSize);
  if (n_embd % n_head != 0)
    bad("n_head", "n_embd " + std::to_string(n_embd) + " is not a multiple of n_head " + std::to_string(n_head));
  if (parameter_count() * 4.0 >= 9.2e18)
    bad("n_embd", std::to_string(n_embd) + " with vocab_size " + std::to_string(vocab_size) + ", n_inner " +
                      std::to_string(inner_size()) + " and n_layer " + std::to_string(n_layer) +
                      " gives a model of more bytes than fit in int64");
  if (!known_activation(activation_function))
    bad("activation_function",
        "expected \"gelu_new\", \"gelu_pytorch_tanh\", \"gelu\", \"relu\", \"silu\", \"swish\" or \"tanh\", got \"" +
            activation_function + "\"");
  probability("resid_pdrop", resid_pdrop);
  probability("embd_pdrop", embd_pdrop);
  probability("attn_pdrop", attn_pdrop);
  if (!(layer_norm_epsilon > 0.0) || layer_norm_epsilon > 1.0)
    bad("layer_norm_epsilon", "expected a number in (0, 1], got " + format_number(layer_norm_epsilon));
  if (!(initializer_range >= 0.0) || initializer_range > 1e6)
    bad("initializer_range", "expected a number in [0, 1e6], got " + format_number(initializer_range));
}

namespace {

GPT2Config parse_config(const json& j, const std::string& where) {
  const HfConfigReader r(j, kTag, where);
  if (j.contains("model_type") && !(j["model_type"].is_string() && j["model_type"] == "gpt2"))
    r.fail("model_type", "expected \"gpt2\", got " + j["model_type"].dump() + " (this config builds GPT-2 only)");
  // Cross-attention adds weights and inputs a causal LM does not have.
  if (j.contains("add_cross_attention") && !(j["add_cross_attention"].is_boolean() && !j["add_cross_attention"]))
    r.fail("add_cross_attention",
           "expected false (hearth's GPT-2 has no cross-attention), got " + j["add_cross_attention"].dump());
  GPT2Config c;
  r.read("vocab_size", c.vocab_size);
  r.read("n_positions", c.n_positions);
  r.read("n_embd", c.n_embd);
  r.read("n_layer", c.n_layer);
  r.read("n_head", c.n_head);
  r.read("n_inner", c.n_inner);
  r.read("activation_function", c.activation_function);
  r.read("resid_pdrop", c.resid_pdrop);
  r.read("embd_pdrop", c.embd_pdrop);
  r.read("attn_pdrop", c.attn_pdrop);
  r.read("layer_norm_epsilon", c.layer_norm_epsilon);
  r.read("initializer_range", c.initializer_range);
  r.read("scale_attn_weights", c.scale_attn_weights);
  r.read("scale_attn_by_inverse_layer_idx", c.scale_attn_by_inverse_layer_idx);
  r.read("reorder_and_upcast_attn", c.reorder_and_upcast_attn);
  r.read("tie_word_embeddings", c.tie_word_embeddings);
  c.extra_fields = r.extra_fields(interpreted_fields());
  c.validate(where);
  return c;
}

}  // namespace

GPT2Config GPT2Config::from_json_file(const std::string& path) {
  return parse_config(read_hf_config_file(path, kTag), path);
}

GPT2Config GPT2Config::from_json_string(const std::string& text, const std::string& where) {
  return parse_config(parse_hf_config_text(text, kTag, where), where);
}

std::string GPT2Config::to_json_string(const std::vector<std::string>& architectures,
                                       const std::string& torch_dtype) const {
  json j;
  put_extra_fields(j, extra_fields);
  if (!architectures.empty()) j["architectures"] = architectures;
  if (!torch_dtype.empty()) j["torch_dtype"] = torch_dtype;
  j["model_type"] = "gpt2";
  j["vocab_size"] = vocab_size;
  j["n_positions"] = n_positions;
  j["n_embd"] = n_embd;
  j["n_layer"] = n_layer;
  j["n_head"] = n_head;
  j["n_inner"] = n_inner ? json(*n_inner) : json(nullptr);
  j["activation_function"] = activation_function;
  j["resid_pdrop"] = resid_pdrop;
  j["embd_pdrop"] = embd_pdrop;
  j["attn_pdrop"] = attn_pdrop;
  j["layer_norm_epsilon"] = layer_norm_epsilon;
  j["initializer_range"] = initializer_range;
  j["scale_attn_weights"] = scale_attn_weights;
  j["scale_attn_by_inverse_layer_idx"] = scale_attn_by_inverse_layer_idx;
  j["reorder_and_upcast_attn"] = reorder_and_upcast_attn;
  j["tie_word_embeddings"] = tie_word_embeddings;
  return j.dump(2) + "\n";
}

void GPT2Config::save(const std::string& path, const std::vector<std::string>& architectures,
                      const std::string& torch_dtype) const {
  validate(path);
  io::write_file_atomic(path, to_json_string(architectures, torch_dtype));
}

}  // namespace hearth::nn::models
