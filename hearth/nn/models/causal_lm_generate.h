// Text generation with a causal LM, as transformers' generate() does for one
// sequence: the prompt is read once, then each new token is chosen from the
// last position's logits and fed back alone through the key/value cache.
//
//   GenerationOptions o;
//   o.max_new_tokens = 32;
//   o.do_sample = true, o.temperature = 0.7, o.top_p = 0.9, o.seed = 42;
//   o.eos_token_ids = {2};
//   std::vector<int64_t> ids = generate(*model, prompt_ids, o);  // the new tokens only
//
// Greedy decoding (do_sample false, or temperature 0) takes the argmax (the
// first of equal maxima, as torch.argmax). Sampling applies transformers'
// logits warpers in its order (temperature, then top-k, then top-p) and
// draws from the remaining distribution with hearth's counter-based
// generator seeded by `seed`: the same seed gives the same tokens on every
// device.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hearth/nn/models/causal_lm.h"

namespace hearth::nn::models {

struct GenerationOptions {
  int64_t max_new_tokens = 20;
  bool do_sample = false;
  double temperature = 1.0;  // > 0 when sampling; 0 means greedy
  int64_t top_k = 50;        // transformers' default; 0 keeps every token
  double top_p = 1.0;        // in (0, 1]; 1 keeps every token
  uint64_t seed = 0;
  // Generation stops after any of these (config.json's eos_token_id).
  std::vector<int64_t> eos_token_ids;

  bool greedy() const { return !do_sample || temperature == 0.0; }
  // ValueError naming the field for a value out of range.
  void validate() const;
};

// The new token ids (the eos token that stopped generation included) after
// `prompt`, which must hold at least one token; stops early where the model's
// maximum sequence length is reached. `on_token` (may be empty) sees each
// token as it is chosen. The model is put in eval mode; runs without grad.
std::vector<int64_t> generate(CausalLM& model, const std::vector<int64_t>& prompt, const GenerationOptions& options,
                              const std::function<void(int64_t)>& on_token = {});

// The ids generation stops at for a model folder: generation_config.json's
// eos_token_id when that file gives one, else config.json's; an integer or a
// list of integers, none when absent or null. ValueError names the file for
// anything else.
std::vector<int64_t> read_eos_token_ids(const std::string& model_dir);

// Sets the fields a model folder's generation_config.json gives (do_sample,
// temperature, top_k, top_p, max_new_tokens), as transformers' generate()
// starts from that file; the others keep their values. ValueError names the
// file and the field for a value of the wrong type.
void read_generation_defaults(const std::string& model_dir, GenerationOptions& options);

// The logits warpers as transformers applies them before sampling: logits /
// temperature, then every token outside the top_k largest set to -inf, then
// (TopPLogitsWarper) the smallest tokens whose probabilities sum to at most
// 1 - top_p set to -inf, the most likely one always kept.
void warp_logits(std::vector<double>& logits, const GenerationOptions& options);

// A token drawn from softmax(logits) (-inf: never) with `uniform` in [0, 1):
// the first token whose cumulative probability exceeds it.
int64_t sample_from_logits(const std::vector<double>& logits, double uniform);

// The index of the largest logit, the first one on ties.
int64_t argmax_token(const std::vector<double>& logits);

}  // namespace hearth::nn::models
