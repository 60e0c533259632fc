// embedding: rows of a [num_embeddings, dim] table picked by integer indices.
// padding_idx -1 means no padding row (PyTorch's None); any other value must
// name a row, whose gradient then stays zero.
#include "hearth/dispatch/schemas/embedding.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {

Tensor embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx) {
  static OpHandle op = detail::op_handle(OpId::embedding);
  static OpHandle bw_op = detail::op_handle(OpId::embedding_backward);
  detail::check_defined("embedding", indices, "indices");
  detail::check_dim("embedding", weight, 2, "weight");
  HEARTH_CHECK(indices.dtype() == DType::int64 || indices.dtype() == DType::int32, TypeError,
               "[embedding] expected indices of dtype int64 or int32, got ", dtype_name(indices.dtype()));
  const int64_t V = weight.size(0), D = weight.size(1);
  HEARTH_CHECK(padding_idx == -1 || (padding_idx >= 0 && padding_idx < V), ValueError,
               "[embedding] padding_idx must be -1 (none) or in [0, ", V, ") for num_embeddings ", V, ", got ",
               padding_idx);
  common_device("embedding", {weight, indices});

  const int64_t K = indices.numel();
  Tensor idx = detail::dense_detached(indices).reshape({K});
  Shape out_shape = indices.shape();
  out_shape.push_back(D);
  Tensor out = Tensor::empty({K, D}, weight.dtype(), weight.device());
  if (K > 0 && D > 0) detail::run(op, {detail::dense_detached(weight), idx}, {out});
  out = out.view(out_shape);

  if (autograd::any_requires_grad({weight})) {
    autograd::record("EmbeddingBackward", {weight}, {out},
                     [si = autograd::SavedTensor(idx), V, D, K, padding_idx, dtype = weight.dtype(),
                      dev = weight.device()](const autograd::BackwardContext& c) {
                       Tensor gw = Tensor::empty({V, D}, dtype, dev);
                       Tensor g = c.grad(0).dtype() == dtype ? c.grad(0) : cast(c.grad(0), dtype);
                       if (V > 0 && D > 0)
                         detail::run(bw_op, {detail::dense_detached(g).reshape({K, D}), si.unpack(c.name())}, {gw},
                                     EmbeddingAttrs{padding_idx});
                       return std::vector<Tensor>{gw};
                     });
  }
  return out;
}

}  // namespace hearth
