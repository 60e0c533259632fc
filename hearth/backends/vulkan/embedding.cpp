// embedding and its backward on Vulkan (shaders/embedding.comp), float32
// tables, int64 or int32 indices.
#include "hearth/dispatch/schemas/embedding.h"

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void run_embedding(uint32_t op, const Tensor& src, const Tensor& idx, const Tensor& dst, int64_t V, int64_t padding) {
  const int64_t K = idx.numel(), D = op == 0 ? src.size(1) : dst.size(1);
  if (K * D == 0) return;
  HEARTH_CHECK(idx.dtype() == DType::int64 || idx.dtype() == DType::int32, NotImplementedError,
               "[embedding] the Vulkan kernel takes int64 or int32 indices, got ", dtype_name(idx.dtype()));
  Dispatch d("embedding", dst.device().index);
  d.tensors = {src, idx, dst};
  d.spec = {op, idx.dtype() == DType::int64 ? 1u : 0u};
  d.params.u32(static_cast<uint32_t>(K)).u32(static_cast<uint32_t>(D)).u32(static_cast<uint32_t>(V));
  d.params.u64(static_cast<uint64_t>(padding));
  d.groups_x = d.groups_for(K * D);
  d.run();
}

void embedding_kernel(OpCall& call) {
  const Tensor& w = call.in(0);
  run_embedding(0, w, call.in(1), call.out(0), w.size(0), -1);
}

void embedding_backward_kernel(OpCall& call) {
  const Tensor& gw = call.out(0);
  run_elementwise(EW_FILL, gw, {}, false);
  run_embedding(1, call.in(0), call.in(1), gw, gw.size(0), call.attrs<EmbeddingAttrs>().padding_idx);
}

HEARTH_REGISTER_KERNEL(embedding, vulkan_kind(), embedding_kernel, {DType::float32});
HEARTH_REGISTER_KERNEL(embedding_backward, vulkan_kind(), embedding_backward_kernel, {DType::float32});

}  // namespace
}  // namespace hearth::vulkan
