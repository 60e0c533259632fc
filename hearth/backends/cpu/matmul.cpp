// bmm on the CPU: one OpenBLAS GEMM per batch entry, whole entries spread over
// the OpenMP threads when that beats splitting each GEMM. The 16-bit types take
// a detour through float (and stay there for a float32 output).
#include "hearth/dispatch/schemas/matmul.h"

#include <type_traits>
#include <vector>

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/gemm.h"
#include "hearth/backends/cpu/half_convert.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

// One operand as BLAS sees it (see the layout rule in schemas/matmul.h).
struct Operand {
  int64_t batch_stride;
  bool trans;
  int64_t ld;
};

Operand operand_of(const Tensor& t) {
  const int64_t rs = t.stride(1), cs = t.stride(2);
  if (cs == 1 && rs >= std::max<int64_t>(t.size(2), 1)) return {t.stride(0), false, rs};
  return {t.stride(0), true, cs};
}

template <typename T>
void run_batched(const T* a, Operand oa, const T* b, Operand ob, T* out, int64_t batch, int64_t m, int64_t n,
                 int64_t k) {
  auto one = [&](int64_t i) {
    gemm(oa.trans, ob.trans, m, n, k, T(1), a + i * oa.batch_stride, oa.ld, b + i * ob.batch_stride, ob.ld, T(0),
         out + i * m * n, n);
  };
  if (prefer_batch_parallel(batch, 2.0 * m * n * k)) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < batch; ++i) one(i);
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// A 16-bit operand as float: only the distinct matrices are converted (one when
// the batch is broadcast), keeping the operand's layout.
std::vector<float> operand_to_float(const Tensor& t, Operand& op) {
  const int64_t batch = t.size(0);
  const bool shared = op.batch_stride == 0 || batch == 1;
  const int64_t rows = op.trans ? t.size(2) : t.size(1);  // rows as stored
  const int64_t len = op.ld * (rows - 1) + (op.trans ? t.size(1) : t.size(2));
  const int64_t copies = shared ? 1 : batch;
  std::vector<float> buf(static_cast<size_t>(copies * len));
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
      const T* src = static_cast<const T*>(t.data_ptr());
      parallel_for(copies, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t i = b0; i < b1; ++i) to_float(src + i * op.batch_stride, buf.data() + i * len, len);
      });
    }
  });
  op.batch_stride = shared ? 0 : len;
  return buf;
}

// out[r, j] += bias[j] for every row r of the dense [rows, n] result.
template <typename T, typename B>
void add_bias_rows(T* out, const B* bias, int64_t rows, int64_t n) {
  parallel_for(rows, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = 0; j < n; ++j) out[r * n + j] += static_cast<T>(bias[j]);
  });
}

// sums[i] = sum over k of a[0, i, k] for a [1, M, K] in any BLAS layout: the
// bias gradient of linear when a is g^T (schemas/matmul.h). Accumulated in
// Acc (float for the 16-bit types and float32, double for float64) and
// rounded once, as a GEMM with a row of ones would. Each thread takes a block
// of i and walks k, so a column-major a (g^T: unit stride along i) is read in
// order.
template <typename T, typename Acc, typename S>
void sums_over_k(const T* a, int64_t m, int64_t k, int64_t sm, int64_t sk, S* sums) {
  parallel_for(m, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(k, 1)), [&](int64_t i0, int64_t i1) {
    std::vector<Acc> acc(static_cast<size_t>(i1 - i0), Acc(0));
    if (sk == 1 && sm != 1) {  // row-major: each sum runs along a row
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t q = 0; q < k; ++q) acc[i - i0] += static_cast<Acc>(a[i * sm + q]);
    } else {
      for (int64_t q = 0; q < k; ++q)
        for (int64_t i = i0; i < i1; ++i) acc[i - i0] += static_cast<Acc>(a[i * sm + q * sk]);
    }
    for (int64_t i = i0; i < i1; ++i) sums[i] = static_cast<S>(acc[i - i0]);
  });
}

void sums_of_a(const Tensor& a, const Tensor& sums) {
  const int64_t m = a.size(1), k = a.size(2), sm = a.stride(1), sk = a.stride(2);
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* pa = static_cast<const T*>(a.data_ptr());
      if (sums.dtype() == DType::float32 && a.dtype() != DType::float32)  // float32 sums of 16-bit a
        sums_over_k<T, Acc>(pa, m, k, sm, sk, sums.data<float>());
      else
        sums_over_k<T, Acc>(pa, m, k, sm, sk, static_cast<T*>(sums.data_ptr()));
    }
  });
}

void product_kernel(OpCall& call) {
  const Tensor& a = call.in(0);
  const Tensor& b = call.in(1);
  const Tensor& out = call.out(0);
  const Tensor bias = call.inputs.size() > 2 ? call.in(2) : Tensor();
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  Operand oa = operand_of(a), ob = operand_of(b);
  if (call.outputs.size() > 1 && call.out(1).defined()) sums_of_a(a, call.out(1));
  if (out.dtype() == DType::float32 && a.dtype() != DType::float32) {
    // 16-bit operands, float32 output: the product in float, stored without
    // the rounding to the half type (a bias, if any, is float32 too).
    std::vector<float> fa = operand_to_float(a, oa), fb = operand_to_float(b, ob);
    run_batched(fa.data(), oa, fb.data(), ob, out.data<float>(), batch, m, n, k);
    if (bias.defined()) add_bias_rows(out.data<float>(), bias.data<float>(), batch * m, n);
    return;
  }
  switch (out.dtype()) {
    case DType::float32:
      run_batched(a.data<float>(), oa, b.data<float>(), ob, out.data<float>(), batch, m, n, k);
      if (bias.defined()) add_bias_rows(out.data<float>(), bias.data<float>(), batch * m, n);
      return;
    case DType::float64:
      run_batched(a.data<double>(), oa, b.data<double>(), ob, out.data<double>(), batch, m, n, k);
      if (bias.defined()) add_bias_rows(out.data<double>(), bias.data<double>(), batch * m, n);
      return;
    default: {
      std::vector<float> fa = operand_to_float(a, oa), fb = operand_to_float(b, ob);
      std::vector<float> fo(static_cast<size_t>(out.numel()));
      run_batched(fa.data(), oa, fb.data(), ob, fo.data(), batch, m, n, k);
      if (bias.defined()) {  // added before the one rounding to the half type, as an epilogue does
        const Tensor row = bias.reshape({1, 1, n});
        Operand dense = operand_of(row);
        std::vector<float> fbias = operand_to_float(row, dense);
        add_bias_rows(fo.data(), fbias.data(), batch * m, n);
      }
      from_float(fo.data(), out);
    }
  }
}

// With a partial sum to add into (input 3, usually the output itself): the
// product into a tensor of its own, then out = partial + it, rounded as the
// add op rounds. That is the definition, and the autograd engine's sum without
// the fused path, so on the CPU both paths give the same bits.
void bmm_kernel(OpCall& call) {
  if (call.inputs.size() < 4 || !call.in(3).defined()) return product_kernel(call);
  const Tensor& out = call.out(0);
  OpCall own = call;
  own.inputs.resize(3);
  own.outputs = {Tensor::empty(out.shape(), out.dtype(), out.device())};
  product_kernel(own);
  add_partial_sum(out, call.in(3), own.out(0));
}

HEARTH_REGISTER_KERNEL(bmm, kCpu, bmm_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
