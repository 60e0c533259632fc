#include "hearth/nn/models/llama_rope.h"

#include <cmath>

#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The table of [cos | sin] angles for positions 0 .. seq_len - 1, in T.
template <typename T>
std::pair<Tensor, Tensor> tables(const std::vector<double>& inv_freq, int64_t seq_len, Device device) {
  const int64_t half = static_cast<int64_t>(inv_freq.size()), dim = 2 * half;
  std::vector<T> cos_values(static_cast<size_t>(seq_len * dim)), sin_values(cos_values.size());
  for (int64_t p = 0; p < seq_len; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      // The angle rounded to T, as a product of T operands; its cosine and
      // sine computed exactly and rounded once.
      const T angle = static_cast<T>(static_cast<T>(p) * static_cast<T>(inv_freq[static_cast<size_t>(i)]));
      const T c = static_cast<T>(std::cos(static_cast<double>(angle)));
      const T s = static_cast<T>(std::sin(static_cast<double>(angle)));
      for (int64_t k : {i, i + half}) {
        cos_values[static_cast<size_t>(p * dim + k)] = c;
        sin_values[static_cast<size_t>(p * dim + k)] = s;
      }
    }
  }
  return {tensor(cos_values, {seq_len, dim}, device), tensor(sin_values, {seq_len, dim}, device)};
}

}  // namespace

std::vector<double> llama_inverse_frequencies(const LlamaConfig& config) {
  const int64_t dim = config.head_size();
  std::vector<double> inv(static_cast<size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i)
    inv[static_cast<size_t>(i)] =
        1.0 / std::pow(config.rope_theta, static_cast<double>(2 * i) / static_cast<double>(dim));
  if (!config.rope_scaling) return inv;
  const RopeScaling& s = *config.rope_scaling;
  HEARTH_CHECK(s.rope_type == "llama3", ValueError, "[llama] rope type \"", s.rope_type,
               "\" is not supported; expected \"default\" or \"llama3\"");
  const double context = static_cast<double>(s.original_max_position_embeddings);
  const double shortest_scaled = context / s.low_freq_factor;  // longer wavelengths: divided by factor
  const double longest_kept = context / s.high_freq_factor;    // shorter wavelengths: kept
  for (double& f : inv) {
    const double wavelength = 2.0 * kPi / f;
    if (wavelength < longest_kept) continue;
    if (wavelength > shortest_scaled) {
      f /= s.factor;
      continue;
    }
    const double blend = (context / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
    f = (1.0 - blend) * f / s.factor + blend * f;
  }
  return inv;
}

std::pair<Tensor, Tensor> rotary_cos_sin(const std::vector<double>& inv_freq, int64_t seq_len, DType dtype,
                                         Device device) {
  HEARTH_CHECK(is_floating(dtype), TypeError, "[llama] rotary embeddings need a floating dtype, got ",
               dtype_name(dtype));
  if (dtype == DType::float64) return tables<double>(inv_freq, seq_len, device);
  auto [c, s] = tables<float>(inv_freq, seq_len, device);
  if (dtype == DType::float32) return {c, s};
  return {cast(c, dtype), cast(s, dtype)};
}

Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  const int64_t last = x.dim() - 1, half = x.size(last) / 2;
  const Tensor rotated = cat({neg(narrow(x, last, half, half)), narrow(x, last, 0, half)}, last);
  return add(mul(x, cos), mul(rotated, sin));
}

}  // namespace hearth::nn::models
