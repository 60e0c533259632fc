#include "hearth/ops/linear_grad_into.h"

#include <atomic>

#include "hearth/dispatch/schemas/matmul.h"
#include "hearth/ops/blas_operand.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::GradDestination;

std::atomic<bool>& fp32_weight_grads_flag() {
  // On: the other path stays as the reference tests compare this one with.
  static std::atomic<bool> on{true};
  return on;
}

// out [1, m, n] = a @ b, a and b bmm operands, written into out (a view of a
// destination), plus out's values when `accumulate` (the GEMM's C, beta = 1),
// and a's sums into `a_sums` when defined. False where the backend takes no
// such call (nothing ran).
bool product_into(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate,
                  const Tensor& a_sums = Tensor()) {
  static OpHandle op = detail::op_handle(OpId::bmm);
  std::vector<Tensor> inputs{a, b};
  if (accumulate) inputs.insert(inputs.end(), {Tensor(), out});
  std::vector<Tensor> outputs{out};
  if (a_sums.defined()) outputs.push_back(a_sums);
  if (!detail::accepts(op, inputs, outputs)) return false;
  detail::run(op, std::move(inputs), std::move(outputs));
  out.bump_version();  // storage-wide: the destination's own tensor sees it
  if (a_sums.defined()) a_sums.bump_version();
  return true;
}

// `value` (a gradient in another dtype) into the destination, cast on the way.
void write(const GradDestination& d, const Tensor& value) {
  if (d.accumulate)
    d.tensor.add_(value);
  else
    d.tensor.copy_(value);
}

}  // namespace

bool fp32_weight_grads_enabled() { return fp32_weight_grads_flag().load(std::memory_order_relaxed); }
void set_fp32_weight_grads_enabled(bool on) { fp32_weight_grads_flag().store(on, std::memory_order_relaxed); }

namespace detail {

bool linear_writes_float32_grads(DType dtype) {
  return fp32_weight_grads_enabled() && (dtype == DType::bfloat16 || dtype == DType::float16);
}

std::pair<Tensor, Tensor> linear_grads_into(const Tensor& g, const Tensor& x, const GradDestination& weight,
                                            const GradDestination& bias, bool bias_wanted) {
  const int64_t n = g.size(1), k = x.size(1);
  const Tensor a = blas_operand(unsqueeze(transpose(g, 0, 1), 0));  // g^T: its K is the rows
  const Tensor b = blas_operand(unsqueeze(x, 0));
  const Tensor out = weight.tensor.reshape({1, n, k});
  Tensor gb;
  bool done = false;
  // The bias gradient in the weight gradient's epilogue (in the output's
  // dtype: float32), only where the weight gradient overwrites (an epilogue
  // with a C operand is no bmm call) and the bias's destination, if any, does too.
  if (bias_wanted && fused_bias_grad_enabled() && !weight.accumulate) {
    const Tensor sums = bias.defined() && !bias.accumulate ? bias.tensor : Tensor::empty({n}, out.dtype(), out.device());
    if ((done = product_into(a, b, out, false, sums))) {
      note_fused_bias_grad();
      if (bias.defined() && bias.accumulate) write(bias, sums);
      gb = bias.defined() ? bias.tensor : sums;
    }
  }
  if (!done && !product_into(a, b, out, weight.accumulate)) write(weight, matmul(transpose(g, 0, 1), x));
  if (bias_wanted && !gb.defined() && bias.defined()) gb = bias_grad_into(g, bias);
  return {weight.tensor, gb};
}

Tensor bias_grad_into(const Tensor& g, const GradDestination& bias) {
  const int64_t rows = g.size(0), n = g.size(1);
  const Tensor ones_row = ones({1, 1, rows}, g.dtype(), g.device());
  if (!product_into(ones_row, blas_operand(unsqueeze(g, 0)), bias.tensor.reshape({1, 1, n}), bias.accumulate))
    write(bias, reshape(matmul(ones({1, rows}, g.dtype(), g.device()), g), {n}));
  return bias.tensor;
}

}  // namespace detail
}  // namespace hearth
