#include "hearth/backends/cpu/strided_loop.h"

namespace hearth::cpu {

std::vector<int64_t> broadcast_byte_strides(const Tensor& t, const Shape& shape) {
  std::vector<int64_t> out(shape.size(), 0);
  int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
  int64_t es = static_cast<int64_t>(t.element_size());
  for (int64_t d = 0; d < t.dim(); ++d) {
    out[lead + d] = t.shape()[d] == 1 && shape[lead + d] != 1 ? 0 : t.strides()[d] * es;
  }
  return out;
}

}  // namespace hearth::cpu
