// Out-of-range indices on CUDA. Checking an index tensor's range on the host
// would stall the stream on every call, so the ops layer leaves it to the
// kernels (unless HEARTH_CHECK_INDICES=1): every index is tested before use, an
// out-of-range one is skipped (a read yields NaN or 0, a scatter adds nothing)
// and recorded here. The record lives in mapped host memory, so the host reads
// it without synchronising: the next indexing call on that device raises it as
// a ValueError, the way CUDA reports asynchronous faults at a later call.
#pragma once

#include <cstdint>

namespace hearth::cuda {

enum class IndexOp : int32_t { index_select = 0, gather = 1, scatter_add = 2 };

struct IndexErrorSlot {
  int64_t value;  // the offending index
  int64_t size;   // the size of the indexed dimension
  int32_t dim;
  int32_t op;  // IndexOp
  int32_t set;
  int32_t pad;
};

// The device's slot, addressable from kernels and the host.
IndexErrorSlot* index_error_slot(int device);

// Raises (and clears) a bad index recorded on `device` by an earlier kernel;
// `op` is the call that noticed it.
void raise_recorded_index_error(int device, const char* op);

#ifdef __CUDACC__
// Records the first bad index; later ones in the same or later kernels are
// dropped until the host has raised it. Racing writers store whole fields, so
// the record always names a real offending value.
__device__ __forceinline__ void record_bad_index(IndexErrorSlot* slot, int64_t value, int64_t size, int dim,
                                                 IndexOp op) {
  volatile IndexErrorSlot* s = slot;
  if (s->set) return;
  s->value = value;
  s->size = size;
  s->dim = dim;
  s->op = static_cast<int32_t>(op);
  __threadfence_system();
  s->set = 1;
}

__device__ __forceinline__ bool index_in_range(int64_t v, int64_t size) {
  return static_cast<uint64_t>(v) < static_cast<uint64_t>(size);
}
#endif

}  // namespace hearth::cuda
