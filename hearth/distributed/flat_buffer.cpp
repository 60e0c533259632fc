#include "hearth/distributed/flat_buffer.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/memory_format.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/view.h"

namespace hearth::distributed {

int64_t total_numel(const std::vector<Tensor>& tensors) {
  int64_t n = 0;
  for (const Tensor& t : tensors) n += t.numel();
  return n;
}

Tensor flatten_tensors(const std::vector<Tensor>& tensors) {
  NoGradGuard no_grad;
  std::vector<Tensor> rows;
  rows.reserve(tensors.size());
  for (const Tensor& t : tensors) rows.push_back(t.reshape({t.numel()}));
  return rows.size() == 1 ? rows[0].contiguous().clone() : cat(rows, 0);
}

void unflatten_into(const Tensor& flat, const std::vector<Tensor>& tensors) {
  NoGradGuard no_grad;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.shape()));
    offset += t.numel();
  }
}

Tensor flatten_in_memory_order(const std::vector<Tensor>& tensors) {
  NoGradGuard no_grad;
  std::vector<Tensor> rows;
  rows.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    const MemoryFormat fmt = t.suggest_memory_format();
    const Tensor dense = t.is_contiguous(fmt) ? t : contiguous(t, fmt);
    rows.push_back(dense.as_strided_view({dense.numel()}, {1}, dense.offset()));
  }
  return rows.size() == 1 ? rows[0].clone() : cat(rows, 0);
}

Tensor view_in_format(const Tensor& flat, int64_t offset, const Tensor& like) {
  return flat.as_strided_view(like.shape(), strides_for(like.shape(), like.suggest_memory_format()),
                              flat.offset() + offset);
}

}  // namespace hearth::distributed
