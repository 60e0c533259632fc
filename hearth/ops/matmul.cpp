// matmul, mm, bmm, linear. All of them reduce to one differentiable batched
// product over 3-D operands whose layouts the backend can hand to BLAS
// unchanged: transposed views and broadcast batches cost no copy.
#include "hearth/dispatch/schemas/matmul.h"

#include <algorithm>
#include <atomic>
#include <tuple>
#include <utility>

#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/blas_operand.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/linear_grad_into.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;
using detail::blas_operand;

// Whether the matrices of 3-D `t` are stored transposed (column-major).
bool column_major(const Tensor& t) { return t.stride(1) == 1 && t.stride(2) != 1 && t.size(1) > 1; }

// out[i] = a[i] @ b[i] for a [B, M, K], b [B, K, N] (already validated).
// accumulate_into: a contiguous [B, M, N] partial sum of gradients, of a's
// dtype and held by nobody else, that the product is added into, in its
// memory, and returned (backward formulas only: nothing is recorded).
Tensor batched_product(const Tensor& a, const Tensor& b, const Tensor& accumulate_into = Tensor()) {
  static OpHandle op = detail::op_handle(OpId::bmm);
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  if (accumulate_into.defined()) {
    HEARTH_CHECK(accumulate_into.shape() == Shape({batch, m, n}) && accumulate_into.dtype() == a.dtype() &&
                     accumulate_into.is_contiguous() && !autograd::any_requires_grad({a, b}),
                 AutogradError, "[matmul] a partial gradient to accumulate into must be a contiguous [", batch, ", ", m,
                 ", ", n, "] ", dtype_name(a.dtype()), " tensor, inside a backward formula; got ",
                 accumulate_into.shape_string(), " ", dtype_name(accumulate_into.dtype()));
    const Tensor& sum = accumulate_into;
    if (sum.numel() == 0 || k == 0) return sum;  // nothing to add
    const Tensor ao = blas_operand(a.detach()), bo = blas_operand(b.detach());
    if (detail::accepts(op, {ao, bo, Tensor(), sum}, {sum})) {
      detail::run(op, {ao, bo, Tensor(), sum}, {sum});
    } else {
      // A kernel that does not add into a partial sum (its check says so):
      // the product on its own, then the add.
      Tensor product = Tensor::empty({batch, m, n}, a.dtype(), a.device());
      detail::run(op, {ao, bo}, {product});
      NoGradGuard no_grad;
      copy_(sum, add(sum, product));
    }
    sum.bump_version();
    return sum;
  }
  Tensor out = Tensor::empty({batch, m, n}, a.dtype(), a.device());
  if (out.numel() > 0) {
    if (k == 0)
      fill_(out, 0);
    else
      detail::run(op, {blas_operand(a.detach()), blas_operand(b.detach())}, {out});
  }
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("BmmBackward", {a, b}, {out},
                     [sa = SavedTensor(a), sb = SavedTensor(b)](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Tensor ga, gb;
                       // Each gradient is produced in its operand's layout, so a
                       // transposed operand (linear's weight) gets a gradient
                       // that is contiguous once transposed back, not a copy.
                       if (c.needs(0)) {
                         const Tensor a = sa.unpack(c.name()), b = sb.unpack(c.name());
                         ga = column_major(a) ? transpose(batched_product(b, transpose(g, 1, 2)), 1, 2)
                                              : batched_product(g, transpose(b, 1, 2));
                       }
                       if (c.needs(1)) {
                         const Tensor a = sa.unpack(c.name()), b = sb.unpack(c.name());
                         gb = column_major(b) ? transpose(batched_product(transpose(g, 1, 2), a), 1, 2)
                                              : batched_product(transpose(a, 1, 2), g);
                       }
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

std::atomic<bool>& fused_bias_grad_flag() {
  // On: the other path stays as the reference tests compare this one with.
  static std::atomic<bool> on{true};
  return on;
}

std::atomic<uint64_t> g_fused_bias_grads{0};

// linear's weight and bias gradients from one product, g [rows, n] and x
// [rows, k] (detached, inside a backward formula): gw = g^T x, whose GEMM
// reduces over the rows, and gb = the sums of g over its rows, which are the
// sums of the product's first operand g^T over that same reduction (bmm's
// a_sums): a backend whose GEMM epilogue adds them up while it reads g reads g
// once instead of twice and makes no row of ones. Undefined tensors where the
// switch is off or the backend's bmm check refuses the call (a dtype or shape
// its epilogue does not take).
std::pair<Tensor, Tensor> weight_and_bias_grad(const Tensor& g, const Tensor& x) {
  if (!fused_bias_grad_enabled()) return {};
  static OpHandle op = detail::op_handle(OpId::bmm);
  const int64_t n = g.size(1), k = x.size(1);
  const Tensor a = blas_operand(unsqueeze(transpose(g, 0, 1), 0));
  const Tensor b = blas_operand(unsqueeze(x, 0));
  Tensor gw = Tensor::empty({1, n, k}, g.dtype(), g.device());
  Tensor gb = Tensor::empty({n}, g.dtype(), g.device());
  if (!detail::accepts(op, {a, b}, {gw, gb})) return {};
  detail::run(op, {a, b}, {gw, gb});
  g_fused_bias_grads.fetch_add(1, std::memory_order_relaxed);
  return {squeeze(gw, 0), gb};
}

void check_operands(const char* op, const Tensor& a, const Tensor& b) {
  detail::check_floating(op, a, "input");
  detail::check_floating(op, b, "other");
  detail::check_same_dtype(op, a, b);
  common_device(op, {a, b});
}

void check_inner(const char* op, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  HEARTH_CHECK(ka == kb, ShapeError, "[", op, "] shapes ", a.shape_string(), " and ", b.shape_string(),
               " cannot be multiplied: the first has ", ka, " columns but the second has ", kb, " rows");
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (auto ac = detail::autocast("mm", a, b)) return mm(ac[0], ac[1]);
  check_operands("mm", a, b);
  detail::check_dim("mm", a, 2, "input");
  detail::check_dim("mm", b, 2, "other");
  check_inner("mm", a, b, a.size(1), b.size(0));
  return squeeze(batched_product(unsqueeze(a, 0), unsqueeze(b, 0)), 0);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (auto ac = detail::autocast("bmm", a, b)) return bmm(ac[0], ac[1]);
  check_operands("bmm", a, b);
  detail::check_dim("bmm", a, 3, "input");
  detail::check_dim("bmm", b, 3, "other");
  HEARTH_CHECK(a.size(0) == b.size(0), ShapeError, "[bmm] batch sizes differ: ", a.shape_string(), " has ", a.size(0),
               " but ", b.shape_string(), " has ", b.size(0));
  check_inner("bmm", a, b, a.size(2), b.size(1));
  return batched_product(a, b);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (auto ac = detail::autocast("matmul", a, b)) return matmul(ac[0], ac[1]);
  check_operands("matmul", a, b);
  HEARTH_CHECK(a.dim() >= 1 && b.dim() >= 1, ShapeError,
               "[matmul] both arguments need at least 1 dimension, got shapes ", a.shape_string(), " and ",
               b.shape_string());
  const bool a_vec = a.dim() == 1, b_vec = b.dim() == 1;
  // Vectors become matrices (a row on the left, a column on the right) and the
  // added dim is dropped from the result, as in torch.matmul.
  Tensor am = a_vec ? unsqueeze(a, 0) : a;
  Tensor bm = b_vec ? unsqueeze(b, 1) : b;
  const int64_t m = am.size(-2), k = am.size(-1), n = bm.size(-1);
  check_inner("matmul", a, b, k, bm.size(-2));
  Shape batch_a(am.shape().begin(), am.shape().end() - 2);
  Shape batch_b(bm.shape().begin(), bm.shape().end() - 2);

  Tensor out;
  Shape batch;
  if (batch_b.empty() && !batch_a.empty()) {
    // [..., M, K] @ [K, N]: fold the batch into M for one large GEMM (this also
    // makes the weight gradient one GEMM instead of a batch of them plus a sum).
    batch = batch_a;
    const int64_t rows = numel_of(batch_a) * m;
    out = squeeze(batched_product(reshape(am, {1, rows, k}), unsqueeze(bm, 0)), 0);
  } else {
    batch = broadcast_shapes(batch_a, batch_b, "matmul");
    const int64_t nb = numel_of(batch);
    Shape sa = batch, sb = batch;
    sa.insert(sa.end(), {m, k});
    sb.insert(sb.end(), {k, n});
    out = batched_product(reshape(expand(am, sa), {nb, m, k}), reshape(expand(bm, sb), {nb, k, n}));
  }
  Shape result = batch;
  if (!a_vec) result.push_back(m);
  if (!b_vec) result.push_back(n);
  return reshape(out, result);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (auto ac = detail::autocast("linear", x, weight, bias)) return linear(ac[0], ac[1], ac[2]);
  check_operands("linear", x, weight);
  detail::check_dim("linear", weight, 2, "weight");
  HEARTH_CHECK(x.dim() >= 1, ShapeError, "[linear] input needs at least 1 dimension, got shape ", x.shape_string());
  HEARTH_CHECK(x.size(-1) == weight.size(1), ShapeError, "[linear] input has ", x.size(-1), " features (last dim of ",
               x.shape_string(), ") but weight ", weight.shape_string(), " expects ", weight.size(1));
  if (!bias.defined()) return matmul(x, transpose(weight, 0, 1));
  check_operands("linear", x, bias);
  HEARTH_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), ShapeError, "[linear] bias must have shape [",
               weight.size(0), "] to match weight ", weight.shape_string(), ", got ", bias.shape_string());
  const int64_t k = x.size(-1), n = weight.size(0);
  Shape lead(x.shape().begin(), x.shape().end() - 1);
  const int64_t rows = numel_of(lead);
  if (x.dim() < 2 || rows == 0 || k == 0 || n == 0 || bias.dtype() != x.dtype())
    return add(matmul(x, transpose(weight, 0, 1)), bias);
  // One GEMM whose epilogue adds the bias: [rows, K] @ [K, N] + bias.
  static OpHandle op = detail::op_handle(OpId::bmm);
  const Tensor x3 = reshape(x.detach(), {1, rows, k});
  const Tensor w3 = unsqueeze(transpose(weight.detach(), 0, 1), 0);
  Tensor out = Tensor::empty({1, rows, n}, x.dtype(), x.device());
  const Tensor xo = blas_operand(x3), wo = blas_operand(w3), bo = contiguous(bias.detach());
  // A kernel without the bias epilogue (its check refuses the bias operand):
  // the product and an add.
  if (!detail::accepts(op, {xo, wo, bo}, {out})) return add(matmul(x, transpose(weight, 0, 1)), bias);
  detail::run(op, {xo, wo, bo}, {out});
  Shape result = lead;
  result.push_back(n);
  out = reshape(out, result);
  if (autograd::any_requires_grad({x, weight, bias})) {
    autograd::record(
        "LinearBackward", {x, weight, bias}, {out},
        [sx = SavedTensor(x), sw = SavedTensor(weight), rows, k, n](const BackwardContext& c) {
          const Tensor g = reshape(c.grad(0), {rows, n});
          Tensor gx, gw, gb;
          if (c.needs(0)) {
            // Into the partial sum of x's gradient when the engine hands one
            // over (the GEMM adds it in its epilogue), else a tensor of its own.
            if (Tensor sum = c.take_accumulate_into(0); sum.defined()) {
              batched_product(unsqueeze(g, 0), unsqueeze(sw.unpack(c.name()), 0), reshape(sum, {1, rows, k}));
              gx = sum;
            } else {
              gx = reshape(matmul(g, sw.unpack(c.name())), sx.unpack(c.name()).shape());
            }
          }
          // Into the parameters' float32 .grad where the engine hands them
          // over (autocast's casts of float32 parameters; linear_grad_into.h).
          const autograd::GradDestination dw = c.take_gradient_destination(1);
          const autograd::GradDestination db = c.take_gradient_destination(2);
          if (c.needs(1)) {
            const Tensor x2 = reshape(sx.unpack(c.name()), {rows, k});
            if (dw.defined()) {
              std::tie(gw, gb) = detail::linear_grads_into(g, x2, dw, db, c.needs(2));
            } else {
              // With the bias gradient in the weight gradient's product, where
              // it can (unless the bias has a destination of its own, below).
              if (c.needs(2) && !db.defined()) std::tie(gw, gb) = weight_and_bias_grad(g, x2);
              if (!gw.defined()) gw = matmul(transpose(g, 0, 1), x2);
            }
          }
          if (c.needs(2) && !gb.defined() && db.defined()) gb = detail::bias_grad_into(g, db);
          // Otherwise the bias gradient sums g's rows as a product with a row
          // of ones, which reads g once in its own layout: sum over dim 0
          // would first copy g transposed (reductions see dense rows).
          if (c.needs(2) && !gb.defined()) gb = reshape(matmul(ones({1, rows}, g.dtype(), g.device()), g), {n});
          return std::vector<Tensor>{gx, gw, gb};
        },
        // x's gradient can be added into a partial sum of it (BERT's hidden
        // states feed the query, key and value projections and a residual).
        {autograd::AccumulatingInput{0, MemoryFormat::contiguous, x.dtype()}},
        // The weight's and bias's gradients can be written in float32 into a
        // float32 .grad (the parameters' under autocast).
        detail::linear_writes_float32_grads(x.dtype())
            ? std::vector<autograd::WritingInput>{{1, MemoryFormat::contiguous, DType::float32},
                                                  {2, MemoryFormat::contiguous, DType::float32}}
            : std::vector<autograd::WritingInput>{});
  }
  return out;
}

namespace detail {
void note_fused_bias_grad() { g_fused_bias_grads.fetch_add(1, std::memory_order_relaxed); }
}  // namespace detail

bool fused_bias_grad_enabled() { return fused_bias_grad_flag().load(std::memory_order_relaxed); }
void set_fused_bias_grad_enabled(bool on) { fused_bias_grad_flag().store(on, std::memory_order_relaxed); }
uint64_t fused_bias_grad_count() { return g_fused_bias_grads.load(std::memory_order_relaxed); }

Tensor Tensor::matmul(const Tensor& other) const { return hearth::matmul(*this, other); }

}  // namespace hearth
