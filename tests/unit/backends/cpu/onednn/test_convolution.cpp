// The oneDNN convolutions against the reference kernels (im2col + OpenBLAS)
// on random inputs: forward with every epilogue, and the gradients of x, the
// weight, the bias and the residual, over strides, padding, dilation, groups
// (depthwise included), 1x1 and both memory formats. oneDNN sums in another
// order, so the comparison has a tolerance; the reference stays exact and
// keeps the tests of exact arithmetic (test_conv2d.cpp). Every call goes to
// oneDNN whatever its size (HEARTH_ONEDNN_ALWAYS): these check its arithmetic;
// test_size_rule.cpp checks which calls it takes by default.
#include "hearth/backends/cpu/onednn/onednn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hearth/core/generator.h"
#include "hearth/dispatch/cpu_reference.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/support/scoped_env.h"

namespace hearth {
namespace {

struct Case {
  std::string name;
  Shape x, w;  // [N, C, H, W], [O, C/groups, kH, kW]
  Pair stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  bool bias = true;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"3x3_pad1", {2, 8, 9, 9}, {16, 8, 3, 3}, {1, 1}, {1, 1}},
      {"3x3_stride2", {2, 6, 11, 10}, {12, 6, 3, 3}, {2, 2}, {1, 1}},
      {"1x1", {2, 16, 7, 7}, {8, 16, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false},
      {"1x1_stride2", {2, 16, 8, 8}, {32, 16, 1, 1}, {2, 2}},
      {"dilated", {1, 4, 12, 12}, {8, 4, 3, 3}, {1, 1}, {2, 2}, {2, 2}},
      {"groups2", {2, 8, 7, 7}, {12, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},
      {"depthwise", {2, 8, 9, 9}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 8, false},
      {"stem_7x7", {2, 3, 20, 20}, {8, 3, 7, 7}, {2, 2}, {3, 3}},
      {"uneven", {2, 4, 9, 11}, {6, 4, 1, 3}, {1, 2}, {0, 1}},
      {"ragged_stride3", {1, 5, 10, 10}, {7, 5, 3, 3}, {3, 3}},
  };
  return all;
}

enum class Epilogue { none, relu, add_relu };

struct Grads {
  Tensor y, gx, gw, gb, gr;
};

// One forward and backward from the seed; the same seed gives the same inputs.
Grads train_step(const Case& c, MemoryFormat fmt, Epilogue e, DType dt, uint64_t seed) {
  manual_seed(seed);
  Tensor x = contiguous(randn(c.x, dt), fmt).requires_grad_();
  Tensor w = contiguous(randn(c.w, dt), fmt).requires_grad_();
  Tensor b = c.bias || e == Epilogue::add_relu ? randn({c.w[0]}, dt).requires_grad_() : Tensor();
  Tensor y;
  Tensor r;
  if (e == Epilogue::none) y = conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  if (e == Epilogue::relu) y = conv2d_relu(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  if (e == Epilogue::add_relu) {
    Tensor plain = conv2d(x.detach(), w.detach(), Tensor(), c.stride, c.padding, c.dilation, c.groups);
    r = contiguous(randn(plain.shape(), dt), fmt).requires_grad_();
    y = conv2d_add_relu(x, w, b, r, c.stride, c.padding, c.dilation, c.groups);
  }
  Tensor g = randn(y.shape(), dt);
  sum(mul(y, g)).backward();
  return {y.detach(), x.grad(), w.grad(), b.defined() ? b.grad() : Tensor(), r.defined() ? r.grad() : Tensor()};
}

// max |a - ref| <= tol * (1 + max |ref|): a relative bound on the whole tensor,
// since oneDNN's error grows with the sums, not with each element.
void expect_near(const Tensor& a, const Tensor& ref, double tol, const std::string& what) {
  ASSERT_EQ(a.defined(), ref.defined()) << what;
  if (!ref.defined()) return;
  ASSERT_EQ(a.shape(), ref.shape()) << what;
  const std::vector<double> av = cast(contiguous(a), DType::float64).to_vector<double>();
  const std::vector<double> rv = cast(contiguous(ref), DType::float64).to_vector<double>();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < rv.size(); ++i) {
    diff = std::max(diff, std::abs(av[i] - rv[i]));
    scale = std::max(scale, std::abs(rv[i]));
  }
  EXPECT_LE(diff, tol * (1 + scale)) << what << ": max difference " << diff << " at scale " << scale;
}

std::string label(const Case& c, MemoryFormat fmt, Epilogue e) {
  return c.name + (fmt == MemoryFormat::channels_last ? " channels_last" : " nchw") +
         (e == Epilogue::none ? "" : e == Epilogue::relu ? " relu" : " add_relu");
}

void expect_parity(const Case& c, MemoryFormat fmt, Epilogue e, DType dt, double tol, bool backward) {
  const uint64_t before = cpu::onednn::calls_taken();
  Grads fast = train_step(c, fmt, e, dt, 7);
  const uint64_t taken = cpu::onednn::calls_taken() - before;
#if HEARTH_TEST_ONEDNN_BUILT
  if (dt == DType::float32) {
    EXPECT_GE(taken, 3u) << label(c, fmt, e) << ": forward and both backward passes";
  }
#else
  EXPECT_EQ(taken, 0u);
#endif
  Grads ref;
  {
    ForceCpuReference reference;
    ref = train_step(c, fmt, e, dt, 7);
  }
  const std::string what = label(c, fmt, e);
  expect_near(fast.y, ref.y, tol, what + " forward");
  EXPECT_EQ(fast.y.is_contiguous(fmt), ref.y.is_contiguous(fmt)) << what;
  if (!backward) return;
  expect_near(fast.gx, ref.gx, tol, what + " grad x");
  expect_near(fast.gw, ref.gw, tol, what + " grad weight");
  expect_near(fast.gb, ref.gb, tol, what + " grad bias");
  expect_near(fast.gr, ref.gr, tol, what + " grad residual");
}

TEST(OnednnConvolution, Float32MatchesTheReference) {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
  for (const Case& c : cases())
    for (MemoryFormat fmt : {MemoryFormat::contiguous, MemoryFormat::channels_last})
      for (Epilogue e : {Epilogue::none, Epilogue::relu, Epilogue::add_relu})
        expect_parity(c, fmt, e, DType::float32, 2e-5, true);
}

TEST(OnednnConvolution, Bfloat16MatchesTheReferenceWhereTheCpuHasIt) {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
  const uint64_t before = cpu::onednn::calls_taken();
  manual_seed(1);
  conv2d(randn({1, 4, 5, 5}, DType::bfloat16), randn({4, 4, 3, 3}, DType::bfloat16));
  if (cpu::onednn::calls_taken() == before) GTEST_SKIP() << "no native bfloat16 here: the float detour computes it";
  // Both round the float32 sum once; near zero a ReLU's mask may flip between
  // them, so the backward is compared without the epilogues.
  for (const Case& c : cases())
    for (MemoryFormat fmt : {MemoryFormat::contiguous, MemoryFormat::channels_last}) {
      expect_parity(c, fmt, Epilogue::none, DType::bfloat16, 2e-2, true);
      expect_parity(c, fmt, Epilogue::add_relu, DType::bfloat16, 2e-2, false);
    }
}

TEST(OnednnConvolution, Float64AndFloat16StayOnTheReference) {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
  for (DType dt : {DType::float64, DType::float16}) {
    const uint64_t before = cpu::onednn::calls_taken();
    train_step(cases()[0], MemoryFormat::contiguous, Epilogue::relu, dt, 3);
    EXPECT_EQ(cpu::onednn::calls_taken(), before) << dtype_name(dt);
  }
}

TEST(OnednnConvolution, TheReferenceSwitchRoutesAroundIt) {
  testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
  const Case& c = cases()[1];
  Grads guarded, by_variable;
  const uint64_t before = cpu::onednn::calls_taken();
  {
    ForceCpuReference reference;
    guarded = train_step(c, MemoryFormat::channels_last, Epilogue::add_relu, DType::float32, 5);
  }
  {
    testing::ScopedEnv on("HEARTH_CPU_REFERENCE", "1");
    by_variable = train_step(c, MemoryFormat::channels_last, Epilogue::add_relu, DType::float32, 5);
  }
  EXPECT_EQ(cpu::onednn::calls_taken(), before);
  // The same kernels: bit for bit.
  expect_near(guarded.y, by_variable.y, 0, "forward");
  expect_near(guarded.gw, by_variable.gw, 0, "grad weight");
}

// The relu op keeps NaN; so must the fused epilogues (oneDNN's own ReLU would not).
TEST(OnednnConvolution, NanInTheInputReachesTheOutputThroughEveryEpilogue) {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
  for (DType dt : {DType::float32, DType::bfloat16})
    for (MemoryFormat fmt : {MemoryFormat::contiguous, MemoryFormat::channels_last}) {
      manual_seed(2);
      Tensor x = randn({1, 2, 4, 4});
      x.data<float>()[5] = std::nanf("");
      x = contiguous(cast(x, dt), fmt);
      const Tensor w = contiguous(randn({3, 2, 3, 3}, dt), fmt), b = randn({3}, dt);
      const Tensor r = contiguous(randn({1, 3, 4, 4}, dt), fmt);
      const std::vector<Tensor> outs = {conv2d(x, w, b, {1, 1}, {1, 1}), conv2d_relu(x, w, b, {1, 1}, {1, 1}),
                                        conv2d_add_relu(x, w, b, r, {1, 1}, {1, 1})};
      for (size_t k = 0; k < outs.size(); ++k) {
        const std::vector<double> v = cast(outs[k], DType::float64).contiguous().to_vector<double>();
        EXPECT_EQ(std::count_if(v.begin(), v.end(), [](double f) { return std::isnan(f); }), 27)
            << dtype_name(dt) << " output " << k << ": the 3x3 outputs whose window holds the NaN, in 3 channels";
        if (k > 0) {
          EXPECT_TRUE(std::none_of(v.begin(), v.end(), [](double f) { return f < 0; })) << "output " << k;
        }
      }
    }
}

}  // namespace
}  // namespace hearth
