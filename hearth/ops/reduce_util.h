// The plan shared by reductions: which dims go, the rows view a kernel reduces.
#pragma once

#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::detail {

struct ReducePlan {
  Tensor rows;         // contiguous [outer, inner], detached from the graph
  int64_t outer = 1;   // number of results
  int64_t inner = 1;   // elements reduced into each result
  Shape out_shape;     // kept dims only
  Shape keep_shape;    // reduced dims as 1
  Shape result_shape;  // what the op returns (keep_shape or out_shape)
};

// Empty dims reduce everything. Throws on out-of-range or repeated dims.
ReducePlan plan_reduction(const char* op, const Tensor& a, const std::vector<int64_t>& dims, bool keepdim);

}  // namespace hearth::detail
