#include "hearth/distributed/process_group.h"

namespace hearth::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
  }
  return "?";
}

void check_collective_tensors(const std::string& what, const std::vector<Tensor>& tensors) {
  HEARTH_CHECK(!tensors.empty(), ValueError, "[", what, "] was given no tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    HEARTH_CHECK(t.defined(), ValueError, "[", what, "] tensor ", i, " is undefined");
    HEARTH_CHECK(t.is_contiguous(), ValueError, "[", what, "] tensor ", i,
                 " is not contiguous; collectives work in place on contiguous tensors");
    HEARTH_CHECK(t.dtype() == tensors[0].dtype(), ValueError, "[", what, "] tensor ", i, " has dtype ",
                 dtype_name(t.dtype()), " but tensor 0 has ", dtype_name(tensors[0].dtype()));
    HEARTH_CHECK(t.device() == tensors[0].device(), ValueError, "[", what, "] tensor ", i, " is on ", t.device().str(),
                 " but tensor 0 is on ", tensors[0].device().str());
  }
}

}  // namespace hearth::distributed
