#include "hearth/nn/models/causal_lm.h"

#include <unistd.h>

#include <iomanip>
#include <sstream>

#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

std::string describe(const Tensor& t) {
  return t.defined() ? t.shape_string() + " " + dtype_name(t.dtype()) : std::string("undefined");
}

bool is_index_dtype(DType d) { return d == DType::int64 || d == DType::int32; }

size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page_size) : 0;
}

}  // namespace

void check_causal_lm_inputs(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& labels,
                            int64_t max_len, const char* max_len_field, const char* tag) {
  HEARTH_CHECK(input_ids.defined() && input_ids.dim() == 2 && is_index_dtype(input_ids.dtype()), ShapeError, "[", tag,
               "] expected input_ids [batch, seq_len] of int64, got ", describe(input_ids));
  const int64_t seq_len = input_ids.size(1);
  HEARTH_CHECK(seq_len >= 1, ShapeError, "[", tag, "] expected at least one token per sequence, got input_ids ",
               describe(input_ids));
  HEARTH_CHECK(seq_len <= max_len, ShapeError, "[", tag, "] sequence length ", seq_len, " exceeds ", max_len_field, " ",
               max_len, "; cut the inputs into blocks of at most that many tokens");
  if (attention_mask.defined())
    HEARTH_CHECK(attention_mask.shape() == input_ids.shape(), ShapeError, "[", tag, "] expected attention_mask ",
                 input_ids.shape_string(), " (input_ids' shape) of 1 = token, 0 = padding, got ",
                 describe(attention_mask));
  if (labels.defined())
    HEARTH_CHECK(labels.shape() == input_ids.shape() && is_index_dtype(labels.dtype()), ShapeError, "[", tag,
                 "] expected labels ", input_ids.shape_string(),
                 " (input_ids' shape) of int64 token ids, -100 where no loss is wanted, got ", describe(labels));
}

Tensor causal_attention_mask(const Tensor& attention_mask, int64_t batch, int64_t seq_len, DType dtype, Device device,
                             const char* tag) {
  HEARTH_CHECK(is_floating(dtype), TypeError, "[", tag, "] the additive attention mask needs a floating dtype, got ",
               dtype_name(dtype));
  const Tensor positions = arange(seq_len, device);
  // blocked[l, s]: key s comes after query l (and, below, or is padding).
  Tensor blocked = unsqueeze(unsqueeze(gt(unsqueeze(positions, 0), unsqueeze(positions, 1)), 0), 0);  // [1,1,S,S]
  if (attention_mask.defined()) {
    HEARTH_CHECK(attention_mask.dim() == 2 && attention_mask.size(0) == batch && attention_mask.size(1) == seq_len,
                 ShapeError, "[", tag, "] expected attention_mask [", batch, ", ", seq_len,
                 "] of 1 = token, 0 = padding, got ", describe(attention_mask));
    const Tensor padding = eq(attention_mask.to(device), 0);             // [B, S]
    blocked = logical_or(blocked, unsqueeze(unsqueeze(padding, 1), 1));  // [B, 1, S, S]
  }
  return where(blocked, full({1}, lowest_finite(dtype), dtype, device), 0);
}

std::pair<Tensor, Tensor> KVCache::append(size_t layer, const Tensor& key, const Tensor& value) {
  if (layers.size() <= layer) layers.resize(layer + 1);
  Layer& l = layers[layer];
  if (l.key.defined()) {
    HEARTH_CHECK(l.key.dim() == 4 && key.dim() == 4 && l.key.size(0) == key.size(0) && l.key.size(1) == key.size(1) &&
                     l.key.size(3) == key.size(3),
                 ShapeError, "[KVCache] layer ", layer, ": cached keys ", describe(l.key), " cannot take new keys ",
                 describe(key), " (batch, heads and head size must match)");
    l.key = cat({l.key, key}, 2);
    l.value = cat({l.value, value}, 2);
  } else {
    l.key = key;
    l.value = value;
  }
  return {l.key, l.value};
}

Tensor cached_causal_attention_mask(int64_t past_length, int64_t seq_len, DType dtype, Device device, const char* tag) {
  HEARTH_CHECK(is_floating(dtype), TypeError, "[", tag, "] the additive attention mask needs a floating dtype, got ",
               dtype_name(dtype));
  const int64_t total = past_length + seq_len;
  // Query l sits at position past_length + l; key s is blocked when it comes later.
  const Tensor query_positions = arange(past_length, total, 1, DType::int64, device);
  const Tensor key_positions = arange(total, device);
  const Tensor blocked = unsqueeze(unsqueeze(gt(unsqueeze(key_positions, 0), unsqueeze(query_positions, 1)), 0), 0);
  return where(blocked, full({1}, lowest_finite(dtype), dtype, device), 0);
}

Tensor causal_lm_loss(const Tensor& logits, const Tensor& labels, const char* tag) {
  HEARTH_CHECK(logits.defined() && logits.dim() == 3, ShapeError, "[", tag,
               "] expected logits [batch, seq_len, vocab], got ", describe(logits));
  const int64_t batch = logits.size(0), seq_len = logits.size(1), vocab = logits.size(2);
  HEARTH_CHECK(labels.defined() && labels.dim() == 2 && labels.size(0) == batch && labels.size(1) == seq_len &&
                   is_index_dtype(labels.dtype()),
               ShapeError, "[", tag, "] expected labels [", batch, ", ", seq_len, "] of int64, got ", describe(labels));
  // The logits at t are scored against the label at t + 1: the labels move
  // one step left and the last position gets -100, so the logits need no copy.
  Tensor on_device = cast(labels.to(logits.device()), DType::int64);
  Tensor shifted =
      cat({narrow(on_device, 1, 1, seq_len - 1), full({batch, 1}, -100, DType::int64, logits.device())}, 1);
  Tensor scores = logits.dtype() == DType::float64 ? logits : cast(logits, DType::float32);
  return cross_entropy(reshape(scores, {batch * seq_len, vocab}), reshape(shifted, {batch * seq_len}), Tensor(),
                       /*ignore_index=*/-100, "mean");
}

void check_parameters_fit_in_memory(double parameters, const std::string& what, const char* tag) {
  const double bytes = parameters * static_cast<double>(sizeof(float));
  const double available = static_cast<double>(physical_memory_bytes());
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (available > 0 && bytes > available) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(0) << "[" << tag << "] the model's " << parameters << " parameters (" << what
       << ") would take " << std::setprecision(1) << bytes / kGiB << " GiB as float32, more than this machine's "
       << available / kGiB << " GiB of memory";
    throw OutOfMemoryError(os.str());
  }
}

}  // namespace hearth::nn::models
