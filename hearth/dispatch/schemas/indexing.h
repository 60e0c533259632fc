// Index-based gathering and scattering as backends see them. Indices are int64
// and already checked to be in range by the functional layer.
//   index_select   inputs {x [outer, n, inner] contiguous, index [k] contiguous}
//                  outputs {out [outer, k, inner] contiguous}
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
