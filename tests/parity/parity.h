// The parity harness: every op registered for a device kind (testdev, cuda,
// vulkan: each available one) runs against the CPU kernel on the same random
// inputs (several shapes, odd sizes, non-contiguous views, each dtype the
// kind supports), forward and backward. Each op family adds cases in its own
// parity_<family>.cpp with a static ParityRegistrar; test_parity.cpp runs them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::parity {

struct ParityCase {
  std::string name;                 // what this case exercises, e.g. "add broadcast [7,1] + [3]"
  std::vector<std::string> covers;  // registry op names it runs (forward and backward kernels)
  std::vector<DType> dtypes;
  // Random CPU inputs for a dtype; the harness seeds the generator before the call.
  std::function<std::vector<Tensor>(DType)> inputs;
  // Runs the op on `device` (inputs already there, contiguous); returns the
  // outputs to compare. Non-contiguous cases make their views here (transpose,
  // slice), so both devices see the same layout.
  std::function<std::vector<Tensor>(const std::vector<Tensor>&, Device)> run;
  bool backward = true;  // floating inputs get gradients, compared too
  double tolerance = 0;  // relative error bound, raised to the dtype's default where that is looser
  // Sized for an accelerator's launch geometry (grids, chunks, long rows):
  // testdev, whose kernels are the CPU's own, skips it (see accelerator_scale).
  bool accelerator_scale = false;
};

// The case, marked as sized for an accelerator (above): millions of elements
// that take testdev, on the CPU's kernels, seconds and test nothing the small
// cases do not.
inline ParityCase accelerator_scale(ParityCase c) {
  c.accelerator_scale = true;
  return c;
}

void register_parity_case(ParityCase c);
const std::vector<ParityCase>& parity_cases();

struct ParityRegistrar {
  explicit ParityRegistrar(ParityCase c) { register_parity_case(std::move(c)); }
};

// Default relative-error bound per dtype.
double default_tolerance(DType t);

// Builders and inputs the family files share.
// A unary op on a [23, 41] input, once dense and once through a transposed view.
ParityCase unary(const std::string& op, std::vector<std::string> covers, std::vector<DType> dtypes,
                 std::function<Tensor(const Tensor&)> f, bool positive = false, bool backward = true);
// A binary op on [19, 33] operands sharing some rows (so eq/ne and ties see
// equal elements): as they are, both transposed, and against a broadcast [33].
ParityCase binary(const std::string& name, std::vector<std::string> covers, std::vector<DType> dtypes,
                  std::function<Tensor(const Tensor&, const Tensor&)> f, bool backward = true);
// Both comparisons in one bool tensor (as bytes), so one output checks them all.
Tensor cat_bools(const Tensor& a, const Tensor& b);
// One random input of `shape`; `fn` applies the op to it in several ways.
ParityCase one_input(std::string name, std::vector<std::string> covers, std::vector<DType> dtypes, Shape shape,
                     std::function<std::vector<Tensor>(const Tensor&)> fn, bool backward = true, double tolerance = 0);
// Values in [0.5, 1.5): variances and class weights.
Tensor positive(const Shape& shape, DType dt);
// The channels_last (NHWC) copy of an image tensor.
Tensor nhwc(const Tensor& t);

// Random helpers for case inputs: values in [-1, 1) (never all zeros), cast to dtype.
Tensor random_input(const Shape& shape, DType dtype);
// Inputs of a convolution followed by a ReLU whose outputs are exact in every
// floating dtype and never zero: x and w small random integers, the bias a
// random integer plus one half. A ReLU's mask then cannot differ between the
// devices (an output rounded to either side of zero would flip it, and the
// gradient with it), while the gradients flowing back stay random.
std::vector<Tensor> relu_safe_conv_inputs(const Shape& x, const Shape& w, bool bias, DType dtype);
// A non-contiguous view with the given logical shape (a transpose of a fresh tensor).
Tensor random_transposed(const Shape& shape, DType dtype);

}  // namespace hearth::parity
