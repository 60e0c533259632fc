// uniform_, normal_ and randint_ on Vulkan (shaders/random.comp): Philox with
// the element-to-counter mapping of hearth/dispatch/schemas/random.h, so the
// numbers are the CPU's and CUDA's. Dense tensors are written in place; a
// strided one is filled through a dense temporary.
#include "hearth/dispatch/schemas/random.h"

#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"

namespace hearth::vulkan {
namespace {

template <uint32_t Op>
void random_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  const RandomAttrs& a = call.attrs<RandomAttrs>();
  const int64_t n = t.numel();
  if (n == 0) return;
  HEARTH_CHECK(n <= 0xffffffffLL, NotImplementedError, "[random] the Vulkan kernel takes at most 2^32 - 1 elements");
  const Tensor dense = t.is_contiguous() ? t : empty(t.shape(), t.dtype(), t.device());
  Dispatch d("random", t.device().index);
  d.tensors = {dense};
  d.spec = {Op, static_cast<uint32_t>(t.dtype())};
  d.params.u32(static_cast<uint32_t>(n)).u64(a.seed).u64(a.offset);
  d.params.f32(static_cast<float>(Op == 1 ? a.a : a.a)).f32(static_cast<float>(Op == 1 ? a.b : a.b - a.a));
  const int64_t low = static_cast<int64_t>(a.a);
  d.params.u64(static_cast<uint64_t>(low)).u64(static_cast<uint64_t>(static_cast<int64_t>(a.b) - low));
  d.groups_x = d.groups_for((n + (Op == 0 ? 3 : 1)) / (Op == 0 ? 4 : 2));
  d.run();
  if (!t.is_same(dense)) t.copy_(dense);
}

HEARTH_REGISTER_KERNEL(uniform_, vulkan_kind(), random_kernel<0>, {DType::float32});
HEARTH_REGISTER_KERNEL(normal_, vulkan_kind(), random_kernel<1>, {DType::float32});
HEARTH_REGISTER_KERNEL(randint_, vulkan_kind(), random_kernel<2>, {DType::float32, DType::int64, DType::int32});

}  // namespace
}  // namespace hearth::vulkan
