#include "hearth/autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"

namespace hearth {
namespace {

// Pointer to element `linear` (row-major over the shape) of a strided CPU tensor.
double* element(const Tensor& t, int64_t linear) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    int64_t n = t.shape()[d];
    off += (linear % n) * t.strides()[d];
    linear /= n;
  }
  return static_cast<double*>(t.data_ptr()) + off;
}

double projected(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                 const Tensor& v) {
  NoGradGuard no_grad;
  Tensor y = fn(inputs);
  return sum(mul(cast(y, DType::float64), v)).item<double>();
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  for (const Tensor& t : inputs) {
    if (!t.defined() || !t.requires_grad()) continue;
    HEARTH_CHECK(t.dtype() == DType::float64 && t.device().is_cpu(), ValueError,
                 "[gradcheck] inputs that require grad must be float64 CPU tensors, got ", dtype_name(t.dtype()),
                 " on ", t.device().str());
  }
  for (const Tensor& t : inputs)
    if (t.defined()) t.zero_grad_();
  Tensor y = fn(inputs);
  HEARTH_CHECK(y.requires_grad(), ValueError, "[gradcheck] the function's output does not require grad");
  Tensor v = randn(y.shape(), DType::float64);
  sum(mul(cast(y, DType::float64), v)).backward();

  GradcheckResult result;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined() || !x.requires_grad()) continue;
    Tensor g = x.grad().defined() ? x.grad().contiguous() : Tensor();
    for (int64_t e = 0; e < x.numel(); ++e) {
      double* p = element(x, e);
      double orig = *p;
      *p = orig + opt.eps;
      double fp = projected(fn, inputs, v);
      *p = orig - opt.eps;
      double fm = projected(fn, inputs, v);
      *p = orig;
      double numeric = (fp - fm) / (2 * opt.eps);
      double analytic = g.defined() ? *element(g, e) : 0.0;
      if (!(std::abs(analytic - numeric) <= opt.atol + opt.rtol * std::abs(numeric))) {
        std::ostringstream os;
        os << "input " << i << " (shape " << x.shape_string() << ") element " << e << ": analytic " << analytic
           << " vs numeric " << numeric;
        result.ok = false;
        result.message = os.str();
        return result;
      }
    }
  }
  return result;
}

}  // namespace hearth
