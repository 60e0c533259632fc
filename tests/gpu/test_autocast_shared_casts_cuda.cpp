// Autocast's shared casts on CUDA (hearth/ops/autocast.h): a float32 hidden
// state read by three projections (BERT's query, key and value) under bf16
// autocast is cast once, the three cuBLASLt GEMMs read the same bf16 copy, and
// in backward the key's and value's input gradients add into the shared
// cast's partial sum in their epilogue (C = D). Compared with
// shared casts off (set_autocast_shared_casts_enabled(false)) (a cast per projection) in one process.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/generator.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

class SharedCasts {
 public:
  explicit SharedCasts(bool on) : before_(autocast_shared_casts_enabled()) { set_autocast_shared_casts_enabled(on); }
  ~SharedCasts() { set_autocast_shared_casts_enabled(before_); }

 private:
  bool before_;
};

struct Projections {
  std::vector<Tensor> outputs;      // on the CPU
  std::vector<Tensor> param_grads;  // on the CPU: w, b of each projection
  Tensor source_grad;               // on the CPU
  uint64_t casts = 0;
  uint64_t fused = 0;
  size_t held = 0;  // device bytes the forward leaves live
};

constexpr int64_t kBatch = 8, kSeq = 128, kHidden = 256;

Projections projections(bool shared) {
  SharedCasts mode(shared);
  const Device d = cuda0();
  DeviceRuntime& rt = device_runtime(d.kind);
  manual_seed(41);
  Tensor src = randn({kBatch, kSeq, kHidden}, DType::float32, d).requires_grad_();
  std::vector<Tensor> params, upstream;
  for (int i = 0; i < 3; ++i) {
    params.push_back(mul(randn({kHidden, kHidden}, DType::float32, d), 0.05).detach().requires_grad_());
    params.push_back(randn({kHidden}, DType::float32, d).requires_grad_());
    upstream.push_back(randn({kBatch, kSeq, kHidden}, DType::float32, d));
  }
  Projections r;
  Tensor loss;
  {
    AutocastGuard autocast(d.kind, DType::bfloat16);
    Tensor hidden = layer_norm(src, {kHidden});  // float32, requires grad
    const uint64_t casts = autocast_casts_made();
    const size_t before = rt.memory_stats(d.index).active;
    std::vector<Tensor> ys;
    for (int i = 0; i < 3; ++i) ys.push_back(linear(hidden, params[2 * i], params[2 * i + 1]));
    r.held = rt.memory_stats(d.index).active - before;
    r.casts = autocast_casts_made() - casts;
    loss = sum(mul(ys[0], upstream[0]));
    for (int i = 1; i < 3; ++i) loss = add(loss, sum(mul(ys[i], upstream[i])));
    for (const Tensor& y : ys) r.outputs.push_back(y.detach().to(Device()));
  }
  const uint64_t fused = autograd::fused_grad_accumulation_count();
  loss.backward();
  r.fused = autograd::fused_grad_accumulation_count() - fused;
  r.source_grad = src.grad().to(Device());
  for (const Tensor& p : params) r.param_grads.push_back(p.grad().to(Device()));
  return r;
}

TEST(CudaAutocastSharedCasts, ThreeProjectionsOfOneHiddenStateShareOneCast) {
  HEARTH_REQUIRE_CUDA();
  const Projections off = projections(false);
  const Projections on = projections(true);
  EXPECT_EQ(off.casts, 6u + 3u) << "3 weights, 3 biases, the hidden state per projection";
  EXPECT_EQ(on.casts, 6u + 1u) << "the hidden state once";
  // Apart, the second and third cast backward add into the first one's float32 sum (widening).
  EXPECT_EQ(off.fused, 2u);
  EXPECT_EQ(on.fused, 2u) << "the key's and value's input gradients in the GEMM's epilogue";
  // Two bf16 copies of the hidden state fewer (each kept for a weight gradient).
  EXPECT_GE(static_cast<int64_t>(off.held) - static_cast<int64_t>(on.held), 2 * kBatch * kSeq * kHidden * 2);
  // The same bf16 operands reach the same GEMMs: outputs and weight and bias
  // gradients are the same numbers.
  for (size_t i = 0; i < on.outputs.size(); ++i)
    EXPECT_EQ(max_abs_diff(on.outputs[i], off.outputs[i]), 0.0) << "output " << i;
  for (size_t i = 0; i < on.param_grads.size(); ++i)
    EXPECT_EQ(max_abs_diff(on.param_grads[i], off.param_grads[i]), 0.0) << "parameter " << i;
  // The hidden state's gradient: the three bf16 input gradients summed in
  // bfloat16 (the epilogue adds in float and rounds once per projection)
  // rather than cast to float32 and summed there: two roundings of 2^-8 at
  // most, well inside 1e-2 relative.
  const double err = relative_error(on.source_grad, off.source_grad);
  EXPECT_LT(err, 1e-2);
  RecordProperty("source_grad_relative_error", std::to_string(err));
}

}  // namespace
}  // namespace hearth::gpu_testing
