#include "hearth/ops/elementwise.h"
namespace hearth {
Tensor neg(const Tensor& a) { return mul(a, -1); }
}
