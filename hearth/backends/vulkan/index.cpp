// index_select, gather and scatter_add on Vulkan (shaders/index.comp), float32
// values and int64 indices. Checking indices on the host would wait for the
// device at every call, so (as on CUDA) the kernels test each index, skip an
// out-of-range one and record it in the device's error slot, and the next
// indexing call on that device raises it: at once where the host can read
// the slot's memory (unified memory), else when nothing is queued.
#include "hearth/dispatch/schemas/index.h"

#include <array>
#include <cstring>
#include <mutex>

#include "hearth/backends/vulkan/device_context.h"
#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"

namespace hearth::vulkan {
namespace {

enum IndexOp : uint32_t { kIndexSelect = 0, kGather = 1, kScatterAdd = 2 };
const char* op_name(uint32_t op) {
  return op == kIndexSelect ? "index_select" : op == kGather ? "gather" : "scatter_add";
}

// The device's slot: uint32 words {state (2: written), op, value lo, value hi,
// size, dim, 0, 0}. Never freed (it would outlive the runtime at exit).
const Tensor& error_slot(int device) {
  static std::mutex mutex;
  static std::array<Tensor*, 16> slots{};
  std::lock_guard<std::mutex> lock(mutex);
  if (!slots[device]) slots[device] = new Tensor(zeros({8}, DType::int32, Device(vulkan_kind(), device)));
  return *slots[device];
}

// Raises (and clears) an out-of-range index an earlier kernel recorded.
void raise_recorded(int device, const char* op) {
  const Tensor& slot = error_slot(device);
  DeviceContext& ctx = device_context(device);
  std::array<uint32_t, 8> w{};
  {
    std::lock_guard<std::recursive_mutex> lock(ctx.mutex);
    const BufferRef ref = ctx.memory->locate(slot.data_ptr());
    if (ref.mapped) {
      std::memcpy(w.data(), ref.mapped, sizeof w);  // racing a kernel at worst misses a record until the next call
    } else if (ctx.stream->idle()) {
      device_runtime(vulkan_kind()).copy_to_host(w.data(), slot.data_ptr(), sizeof w, device);
    }
    if (w[0] != 2) return;
    const std::array<uint32_t, 8> cleared{};
    if (ref.mapped)
      std::memcpy(ref.mapped, cleared.data(), sizeof cleared);
    else
      device_runtime(vulkan_kind()).copy_from_host(slot.data_ptr(), cleared.data(), sizeof cleared, device);
  }
  const int64_t value = static_cast<int64_t>(static_cast<uint64_t>(w[2]) | static_cast<uint64_t>(w[3]) << 32);
  HEARTH_THROW(ValueError, "[", op, "] an earlier ", op_name(w[1]), " on vulkan:", device, " met index ", value,
               ", which is out of bounds for dimension ", w[5], " with size ", w[4],
               "; the kernel skipped it (reads gave NaN, additions were dropped). Set HEARTH_CHECK_INDICES=1 to check "
               "indices on the host and raise at the call that passes them.");
}

void push_dims(KernelParams& p, const Tensor& t, int64_t ndim) {
  for (int64_t d = 0; d < 8; ++d) {
    const int64_t src = ndim - 1 - d;  // innermost first
    p.i32(d < ndim && t.defined() ? static_cast<int32_t>(t.stride(src)) : 0);
  }
}

// gather and scatter_add: `base` is x (gather) or out (scatter_add).
void run_strided(uint32_t op, const Tensor& base, const Tensor& index, const Tensor& values, int64_t dim) {
  const int64_t ndim = index.dim();
  HEARTH_CHECK(ndim <= 8, NotImplementedError, "[", op_name(op), "] the Vulkan kernel takes at most 8 dims");
  const int device = base.device().index;
  Dispatch d("index", device);
  d.tensors = {base, index, values, error_slot(device)};
  d.spec = {op};
  d.params.u32(static_cast<uint32_t>(index.numel()))
      .u32(static_cast<uint32_t>(ndim))
      .u32(static_cast<uint32_t>(ndim - 1 - dim))
      .u32(static_cast<uint32_t>(base.size(dim)))
      .u32(0)
      .u32(0)
      .u32(static_cast<uint32_t>(dim));
  for (int64_t dd = 0; dd < 8; ++dd) d.params.u32(dd < ndim ? static_cast<uint32_t>(index.size(ndim - 1 - dd)) : 1);
  push_dims(d.params, base, ndim);
  push_dims(d.params, index, ndim);
  push_dims(d.params, op == kScatterAdd ? values : Tensor(), ndim);
  d.groups_x = d.groups_for(index.numel());
  d.run();
}

void index_select_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &index = call.in(1), &out = call.out(0);
  const int device = out.device().index;
  raise_recorded(device, "index_select");
  if (out.numel() == 0) return;
  const int64_t n = x.size(1), k = index.numel(), inner = x.size(2);
  Dispatch d("index", device);
  d.tensors = {x, index, out, error_slot(device)};
  d.spec = {kIndexSelect};
  d.params.u32(static_cast<uint32_t>(out.numel()))
      .u32(0)
      .u32(0)
      .u32(static_cast<uint32_t>(n))
      .u32(static_cast<uint32_t>(inner))
      .u32(static_cast<uint32_t>(k))
      .u32(static_cast<uint32_t>(call.attrs<IndexDimAttrs>().dim));
  for (int i = 0; i < 32; ++i) d.params.u32(0);
  d.groups_x = d.groups_for(out.numel());
  d.run();
}

void gather_kernel(OpCall& call) {
  const int device = call.out(0).device().index;
  raise_recorded(device, "gather");
  if (call.out(0).numel() == 0) return;
  run_strided(kGather, call.in(0), call.in(1), call.out(0), call.attrs<IndexDimAttrs>().dim);
}

void scatter_add_kernel(OpCall& call) {
  const Tensor &self = call.in(0), &index = call.in(1), &src = call.in(2), &out = call.out(0);
  const int device = out.device().index;
  raise_recorded(device, "scatter_add");
  if (!out.is_same(self) && out.numel() > 0) run_elementwise(EW_COPY, out, {self}, false);
  if (index.numel() == 0) return;
  run_strided(kScatterAdd, out, index, src, call.attrs<IndexDimAttrs>().dim);
}

HEARTH_REGISTER_KERNEL(index_select, vulkan_kind(), index_select_kernel, {DType::float32});
HEARTH_REGISTER_KERNEL(gather, vulkan_kind(), gather_kernel, {DType::float32});
HEARTH_REGISTER_KERNEL(scatter_add, vulkan_kind(), scatter_add_kernel, {DType::float32});

}  // namespace
}  // namespace hearth::vulkan
