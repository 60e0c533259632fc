// Index-based gathering and scattering as backends see them. Indices are int64.
// The functional layer checks their range only when the index is on the CPU
// (or HEARTH_CHECK_INDICES=1), so a kernel must test every index before using
// it: an out-of-range one never touches memory. CPU kernels then raise the
// functional layer's ValueError; device kernels, which cannot raise without a
// synchronisation, skip the entry (a read yields NaN for floating dtypes, 0
// otherwise; an addition is dropped) and record it for a later call to raise.
//   index_select   inputs {x [outer, n, inner] contiguous, index [k] contiguous}
//                  outputs {out [outer, k, inner] contiguous}   IndexDimAttrs (the user's dim, for messages)
//                  out[o, j, i] = x[o, index[j], i]
//   gather         inputs {x, index} outputs {out (index's shape, contiguous)}   IndexDimAttrs
//                  x and index have the same rank and may be strided (index may be expanded);
//                  out[c] = x[c with c[dim] = index[c]]
//   scatter_add    inputs {self, index, src} outputs {out (self's shape)}     IndexDimAttrs
//                  out = self, then out[c with c[dim] = index[c]] += src[c] for every c in index's
//                  shape. All operands may be strided; out may be self itself (the in-place op).
// Joining (cat, stack, split, chunk) needs no kernel: it is copy_ into views.
#pragma once

#include <cstdint>

namespace hearth {

struct IndexDimAttrs {
  int64_t dim = 0;
};

}  // namespace hearth
