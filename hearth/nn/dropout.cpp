#include "hearth/nn/dropout.h"

#include <sstream>

#include "hearth/ops/nn_functional.h"

namespace hearth::nn {

Dropout::Dropout(double p) : Module("Dropout"), p(p) {
  HEARTH_CHECK(p >= 0.0 && p <= 1.0, ValueError, "[Dropout] probability p must be in [0, 1], got ", p);
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p, is_training()); }

std::string Dropout::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p;
  return os.str();
}

}  // namespace hearth::nn
