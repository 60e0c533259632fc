// Scans as backends see them: the functional layer makes the input contiguous,
// x [outer, n, inner], scanned along the middle dim.
//   cumsum              inputs {x} outputs {out [outer, n, inner]}  ScanAttrs   floating or int64 (others arrive as
//   int64)
#pragma once

namespace hearth {

struct ScanAttrs {
  bool reverse = false;  // out[j] = sum of x[j..n) instead of x[0..j]
};

}  // namespace hearth
