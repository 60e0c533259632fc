#include "hearth/dist/flat_buffer.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/indexing.h"

namespace hearth::dist {

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

}  // namespace hearth::dist
