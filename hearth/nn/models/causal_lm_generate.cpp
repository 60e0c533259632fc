#include "hearth/nn/models/causal_lm_generate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The last position's logits [V] as float64 on the host.
std::vector<double> last_logits(const Tensor& logits) {
  const Tensor row = select(select(logits, 0, 0), 0, logits.size(1) - 1);
  return row.to(Device(), DType::float64).contiguous().to_vector<double>();
}

// One uniform draw in [0, 1) per step: counter `step` of a generator keyed by
// the seed, so a run's tokens depend on the seed alone.
double uniform_draw(Generator& gen) {
  const uint64_t counter = gen.reserve(1);
  const auto bits = philox4x32(counter, 0, gen.seed());
  return uints_to_unit_double(bits[0], bits[1]);
}

// A JSON object file; nullopt when there is no such file.
std::optional<nlohmann::json> read_object(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, "[generate] cannot read ", path.string());
  nlohmann::json j = nlohmann::json::parse(io::read_json_text(in, "[generate] " + path.string()), nullptr, false);
  HEARTH_CHECK(!j.is_discarded() && j.is_object(), ValueError, "[generate] ", path.string(),
               ": expected a JSON object");
  return j;
}

// eos_token_id of one JSON file; nullopt when the file or the field is absent.
std::optional<std::vector<int64_t>> eos_ids_in(const std::filesystem::path& path) {
  const std::optional<nlohmann::json> file = read_object(path);
  if (!file || !file->contains("eos_token_id")) return std::nullopt;
  const nlohmann::json& j = *file;
  const nlohmann::json& v = j.at("eos_token_id");
  std::vector<int64_t> ids;
  if (v.is_null()) return ids;
  auto take = [&](const nlohmann::json& x) {
    HEARTH_CHECK(io::json_integer_fits<int64_t>(x) && x.get<int64_t>() >= 0, ValueError, "[generate] ", path.string(),
                 ": field 'eos_token_id': expected a token id or a list of them, got ", io::excerpt(v.dump()));
    ids.push_back(x.get<int64_t>());
  };
  if (v.is_array()) {
    for (const nlohmann::json& x : v) take(x);
  } else {
    take(v);
  }
  return ids;
}

}  // namespace

std::vector<int64_t> read_eos_token_ids(const std::string& model_dir) {
  const std::filesystem::path dir(model_dir);
  if (auto ids = eos_ids_in(dir / "generation_config.json")) return *ids;
  if (auto ids = eos_ids_in(dir / "config.json")) return *ids;
  return {};
}

void read_generation_defaults(const std::string& model_dir, GenerationOptions& options) {
  const std::filesystem::path path = std::filesystem::path(model_dir) / "generation_config.json";
  const std::optional<nlohmann::json> file = read_object(path);
  if (!file) return;
  auto present = [&](const char* name) { return file->contains(name) && !file->at(name).is_null(); };
  auto bad = [&](const char* name, const char* expected) {
    HEARTH_THROW(ValueError, "[generate] ", path.string(), ": field '", name, "': expected ", expected, ", got ",
                 io::excerpt(file->at(name).dump()));
  };
  if (present("do_sample")) {
    if (!file->at("do_sample").is_boolean()) bad("do_sample", "true or false");
    options.do_sample = file->at("do_sample").get<bool>();
  }
  for (auto [name, slot] : {std::pair<const char*, double*>{"temperature", &options.temperature},
                            std::pair<const char*, double*>{"top_p", &options.top_p}}) {
    if (!present(name)) continue;
    if (!file->at(name).is_number()) bad(name, "a number");
    *slot = file->at(name).get<double>();
  }
  if (present("top_k")) {
    if (!io::json_integer_fits<int64_t>(file->at("top_k"))) bad("top_k", "an integer");
    options.top_k = file->at("top_k").get<int64_t>();
  }
  if (present("max_new_tokens")) {
    if (!io::json_integer_fits<int64_t>(file->at("max_new_tokens"))) bad("max_new_tokens", "an integer");
    options.max_new_tokens = file->at("max_new_tokens").get<int64_t>();
  }
}

void GenerationOptions::validate() const {
  HEARTH_CHECK(max_new_tokens >= 0, ValueError, "[generate] max_new_tokens: expected a count >= 0, got ",
               max_new_tokens);
  HEARTH_CHECK(std::isfinite(temperature) && temperature >= 0, ValueError,
               "[generate] temperature: expected a number >= 0 (0: greedy), got ", temperature);
  HEARTH_CHECK(top_k >= 0, ValueError, "[generate] top_k: expected a count >= 0 (0: no limit), got ", top_k);
  HEARTH_CHECK(top_p > 0 && top_p <= 1, ValueError, "[generate] top_p: expected a number in (0, 1], got ", top_p);
}

int64_t argmax_token(const std::vector<double>& logits) {
  HEARTH_CHECK(!logits.empty(), ValueError, "[generate] no logits to choose a token from");
  return static_cast<int64_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

void warp_logits(std::vector<double>& logits, const GenerationOptions& o) {
  if (o.temperature != 1.0)
    for (double& v : logits) v /= o.temperature;
  const size_t vocab = logits.size();
  if (o.top_k > 0 && static_cast<size_t>(o.top_k) < vocab) {
    // TopKLogitsWarper: below the k-th largest value is removed (ties with it stay).
    std::vector<double> sorted = logits;
    std::nth_element(sorted.begin(), sorted.begin() + (o.top_k - 1), sorted.end(), std::greater<double>());
    const double kth = sorted[static_cast<size_t>(o.top_k - 1)];
    for (double& v : logits)
      if (v < kth) v = kNegInf;
  }
  if (o.top_p < 1.0) {
    // TopPLogitsWarper: sort ascending, accumulate the softmax; the tokens
    // whose cumulative probability stays <= 1 - top_p are removed, the
    // largest always kept.
    std::vector<size_t> order(vocab);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] < logits[b]; });
    const double top = logits[order.back()];
    double total = 0;
    for (double v : logits) total += std::exp(v - top);
    double cumulative = 0;
    for (size_t i = 0; i + 1 < vocab; ++i) {
      cumulative += std::exp(logits[order[i]] - top) / total;
      if (cumulative > 1.0 - o.top_p) break;
      logits[order[i]] = kNegInf;
    }
  }
}

int64_t sample_from_logits(const std::vector<double>& logits, double uniform) {
  const int64_t best = argmax_token(logits);
  const double top = logits[static_cast<size_t>(best)];
  HEARTH_CHECK(std::isfinite(top), ValueError, "[generate] every logit is -inf or not a number; nothing to sample");
  std::vector<double> weights(logits.size());
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) total += weights[i] = std::exp(logits[i] - top);
  const double target = uniform * total;
  double cumulative = 0;
  int64_t last_possible = best;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    cumulative += weights[i];
    last_possible = static_cast<int64_t>(i);
    if (cumulative > target) return last_possible;
  }
  return last_possible;  // rounding left the target at the very end
}

std::vector<int64_t> generate(CausalLM& model, const std::vector<int64_t>& prompt, const GenerationOptions& options,
                              const std::function<void(int64_t)>& on_token) {
  options.validate();
  HEARTH_CHECK(!prompt.empty(), ValueError, "[generate] the prompt holds no token; give at least one");
  const int64_t vocab = model.vocab_size();
  for (int64_t id : prompt)
    HEARTH_CHECK(id >= 0 && id < vocab, ValueError, "[generate] prompt token id ", id,
                 " is outside the vocabulary [0, ", vocab, ")");
  HEARTH_CHECK(static_cast<int64_t>(prompt.size()) <= model.max_sequence_length(), ValueError,
               "[generate] the prompt's ", prompt.size(), " tokens exceed the model's maximum sequence length ",
               model.max_sequence_length());
  NoGradGuard no_grad;
  model.eval();
  const Device device = model.parameters().empty() ? Device() : model.parameters().front().device();
  Generator gen(options.seed);
  KVCache cache;
  std::vector<int64_t> produced;
  Tensor next = tensor(prompt, {1, static_cast<int64_t>(prompt.size())}, device);
  int64_t length = static_cast<int64_t>(prompt.size());
  while (static_cast<int64_t>(produced.size()) < options.max_new_tokens) {
    std::vector<double> logits = last_logits(model.forward_cached(next, cache));
    int64_t token = 0;
    if (options.greedy()) {
      token = argmax_token(logits);
    } else {
      warp_logits(logits, options);
      token = sample_from_logits(logits, uniform_draw(gen));
    }
    produced.push_back(token);
    if (on_token) on_token(token);
    if (std::find(options.eos_token_ids.begin(), options.eos_token_ids.end(), token) != options.eos_token_ids.end())
      break;
    if (++length >= model.max_sequence_length()) break;
    next = tensor(std::vector<int64_t>{token}, {1, 1}, device);
  }
  return produced;
}

}  // namespace hearth::nn::models
