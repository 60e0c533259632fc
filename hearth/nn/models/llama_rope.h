// Rotary position embeddings (Su et al. 2021) as transformers' Llama computes
// them: each head's two halves turned together by position * frequency,
//   rope(x) = x * cos + rotate_half(x) * sin,   rotate_half([x1, x2]) = [-x2, x1],
// with cos and sin [S, D] = cos/sin of [freqs, freqs], freqs[p, i] = p * inv_freq[i].
#pragma once

#include <utility>
#include <vector>

#include "hearth/core/tensor.h"
#include "hearth/nn/models/llama_config.h"

namespace hearth::nn::models {

// inv_freq [head_size / 2]: 1 / rope_theta^(2i / head_size), adapted by
// rope_scaling's llama3 rule when given: wavelengths 2 pi / f shorter than
// original_max_position_embeddings / high_freq_factor keep their frequency,
// those longer than original_max_position_embeddings / low_freq_factor are
// divided by factor, and those between blend the two linearly in
// original_max_position_embeddings / wavelength.
std::vector<double> llama_inverse_frequencies(const LlamaConfig& config);

// cos and sin [seq_len, 2 * inv_freq.size()] for positions 0 .. seq_len - 1,
// in `dtype` on `device`. As in transformers, the angles and their cosines
// are computed in float32 (rounded there) for every dtype but float64, which
// gets them in float64.
std::pair<Tensor, Tensor> rotary_cos_sin(const std::vector<double>& inv_freq, int64_t seq_len, DType dtype,
                                         Device device);

// x [..., S, D] with cos, sin [S, D] (broadcast over the leading dims).
Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin);

}  // namespace hearth::nn::models
