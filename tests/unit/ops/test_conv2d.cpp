#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/cpu_reference.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

std::vector<double> values(const Tensor& t) { return t.contiguous().to_vector<double>(); }

struct Spec {
  Shape x;  // [N, C, H, W]
  Shape w;  // [O, C/groups, kH, kW]
  Pair stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  bool bias = true;
};

// Direct float64 convolution, the definition itself.
std::vector<double> ref_conv(const Tensor& x, const Tensor& w, const Tensor& b, const Spec& s, Shape* shape) {
  const int64_t n = s.x[0], c = s.x[1], h = s.x[2], wd = s.x[3], o = s.w[0], cg = s.w[1], kh = s.w[2], kw = s.w[3];
  const int64_t oh = (h + 2 * s.padding[0] - s.dilation[0] * (kh - 1) - 1) / s.stride[0] + 1;
  const int64_t ow = (wd + 2 * s.padding[1] - s.dilation[1] * (kw - 1) - 1) / s.stride[1] + 1;
  const int64_t og = o / s.groups;
  std::vector<double> xv = values(x), wv = values(w), bv = b.defined() ? values(b) : std::vector<double>(o, 0.0);
  std::vector<double> out(static_cast<size_t>(n * o * oh * ow));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double acc = bv[oc];
          const int64_t g = oc / og;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = y * s.stride[0] - s.padding[0] + i * s.dilation[0];
                const int64_t ix = z * s.stride[1] - s.padding[1] + j * s.dilation[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += xv[((in * c + g * cg + ic) * h + iy) * wd + ix] * wv[((oc * cg + ic) * kh + i) * kw + j];
              }
          out[((in * o + oc) * oh + y) * ow + z] = acc;
        }
  *shape = {n, o, oh, ow};
  return out;
}

void expect_close(const Tensor& t, const std::vector<double>& ref, double tol) {
  std::vector<double> v = values(t);
  ASSERT_EQ(v.size(), ref.size());
  for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(v[i], ref[i], tol * (1 + std::abs(ref[i]))) << "element " << i;
}

Tensor run(const Tensor& x, const Tensor& w, const Tensor& b, const Spec& s) {
  return conv2d(x, w, b, s.stride, s.padding, s.dilation, s.groups);
}

void check_spec(const Spec& s, DType dt = DType::float32, double tol = 1e-4) {
  Tensor x = cast(randn(s.x), dt), w = cast(randn(s.w), dt), b = s.bias ? cast(randn({s.w[0]}), dt) : Tensor();
  Shape shape;
  std::vector<double> ref = ref_conv(x, w, b, s, &shape);
  Tensor y = run(x, w, b, s);
  EXPECT_EQ(y.shape(), shape);
  EXPECT_EQ(y.dtype(), dt);
  expect_close(y, ref, tol);
}

const std::vector<Spec>& specs() {
  static const std::vector<Spec> all = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}},                                      // plain 3x3
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}},                      // same padding
      {{2, 4, 9, 8}, {6, 4, 3, 2}, {2, 3}, {1, 0}},                      // stride, rectangular kernel
      {{1, 2, 9, 9}, {3, 2, 3, 3}, {1, 1}, {2, 2}, {2, 3}},              // dilation
      {{2, 6, 5, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},           // groups
      {{2, 4, 6, 6}, {4, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 4, false},    // depthwise
      {{3, 5, 4, 4}, {7, 5, 1, 1}},                                      // 1x1 pure GEMM
      {{2, 5, 5, 5}, {3, 5, 1, 1}, {2, 2}},                              // 1x1 strided
      {{1, 3, 11, 11}, {4, 3, 7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, false},  // a 7x7/2 stem
      {{2, 2, 3, 3}, {2, 2, 3, 3}, {1, 1}, {2, 2}},                      // padding wider than the taps reach
  };
  return all;
}

TEST(Conv2d, MatchesDirectReference) {
  for (const Spec& s : specs()) check_spec(s);
}

TEST(Conv2d, Float64AndHalfTypes) {
  for (const Spec& s : specs()) check_spec(s, DType::float64, 1e-10);
  check_spec(specs()[1], DType::bfloat16, 5e-2);
  check_spec(specs()[4], DType::float16, 1e-2);
}

TEST(Conv2d, NonContiguousInputs) {
  const Spec s{{2, 3, 6, 7}, {4, 3, 3, 3}, {1, 1}, {1, 1}};
  Tensor x = randn({2, 3, 7, 6}).transpose(2, 3);
  Tensor w = slice(randn({4, 6, 3, 3}), 1, 0, 6, 2);
  Tensor b = slice(randn({8}), 0, 0, 8, 2);
  Shape shape;
  std::vector<double> ref = ref_conv(x, w, b, s, &shape);
  expect_close(run(x, w, b, s), ref, 1e-4);
}

TEST(Conv2d, UnbatchedInput) {
  Tensor x = randn({3, 5, 5}), w = randn({2, 3, 3, 3});
  Tensor y = conv2d(x, w);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 3}));
  expect_close(y, values(conv2d(x.unsqueeze(0), w)), 1e-6);
}

TEST(Conv2d, BatchLargerThanThreadsUsesSameNumbers) {
  // Batch 6 runs images on separate threads; each must equal the single-image result.
  const Spec s{{6, 3, 8, 8}, {5, 3, 3, 3}, {1, 1}, {1, 1}};
  Tensor x = randn(s.x), w = randn(s.w), b = randn({5});
  Tensor y = run(x, w, b, s);
  for (int64_t i = 0; i < 6; ++i) expect_close(y.select(0, i), values(run(x.narrow(0, i, 1), w, b, s)), 1e-5);
}

TEST(Conv2d, LargeImagesSpanSeveralBands) {
  // The kernels tile the output rows so the column matrix stays in cache; these
  // shapes need several tiles.
  check_spec({{1, 64, 20, 32}, {2, 64, 3, 3}, {1, 1}, {1, 1}});
  check_spec({{1, 32, 31, 80}, {2, 32, 3, 3}, {2, 1}, {1, 1}, {2, 1}});
}

TEST(Conv2d, BackwardIsTheAdjointOnLargeImages) {
  // conv is bilinear, so <conv(x, w), g> = <x, dx> = <w, dw> for the gradients
  // dx, dw of that inner product; a wrong element of dx or dw breaks it.
  const DType f64 = DType::float64;
  for (const Spec& s : {Spec{{1, 16, 20, 64}, {4, 16, 3, 3}, {1, 1}, {1, 1}},
                        Spec{{1, 24, 21, 50}, {6, 12, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 2}}) {
    Tensor x = randn(s.x, f64).requires_grad_(), w = randn(s.w, f64).requires_grad_();
    Tensor y = run(x, w, Tensor(), s);
    Tensor g = randn(y.shape(), f64);
    Tensor inner = sum(mul(y, g));
    inner.backward();
    const double ref = inner.item<double>();
    EXPECT_NEAR(sum(mul(x.detach(), x.grad())).item<double>(), ref, 1e-9 * (1 + std::abs(ref)));
    EXPECT_NEAR(sum(mul(w.detach(), w.grad())).item<double>(), ref, 1e-9 * (1 + std::abs(ref)));
  }
}

TEST(Conv2d, EmptyBatch) {
  Tensor y = conv2d(randn({0, 3, 5, 5}), randn({2, 3, 3, 3}));
  EXPECT_EQ(y.shape(), (Shape{0, 2, 3, 3}));
}

GradcheckResult grad_spec(const Spec& s, bool non_contiguous) {
  const DType f64 = DType::float64;
  Tensor x, w;
  if (non_contiguous) {
    x = randn({s.x[0], s.x[1], s.x[3], s.x[2]}, f64).transpose(2, 3);
    Shape wide = s.w;
    wide[1] *= 2;
    w = slice(randn(wide, f64), 1, 0, wide[1], 2);
  } else {
    x = randn(s.x, f64);
    w = randn(s.w, f64);
  }
  std::vector<Tensor> in = {x.requires_grad_(), w.requires_grad_()};
  if (s.bias) in.push_back(randn({s.w[0]}, f64).requires_grad_());
  return gradcheck([s](const std::vector<Tensor>& t) { return run(t[0], t[1], t.size() > 2 ? t[2] : Tensor(), s); },
                   in);
}

TEST(Conv2d, Gradcheck) {
  const std::vector<Spec> small = {
      {{2, 2, 5, 4}, {3, 2, 3, 3}, {1, 1}, {1, 1}},
      {{1, 2, 6, 6}, {2, 2, 3, 2}, {2, 1}, {1, 0}, {1, 2}},
      {{2, 4, 4, 4}, {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},
      {{2, 3, 3, 3}, {3, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 3, false},
      {{2, 3, 3, 4}, {2, 3, 1, 1}},
  };
  for (const Spec& s : small) {
    auto r = grad_spec(s, false);
    EXPECT_TRUE(r.ok) << r.message;
    r = grad_spec(s, true);
    EXPECT_TRUE(r.ok) << "non-contiguous: " << r.message;
  }
}

TEST(Conv2d, GradientsOfBatchedRunMatchPerImage) {
  // The batch-parallel weight gradient sums private accumulators; compare it
  // with the sum of single-image gradients.
  const Spec s{{6, 3, 6, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}};
  Tensor x = randn(s.x, DType::float64), w = randn(s.w, DType::float64).requires_grad_();
  Tensor g = randn({6, 4, 6, 6}, DType::float64);
  sum(mul(run(x, w, Tensor(), s), g)).backward();
  Tensor total = zeros(s.w, DType::float64);
  for (int64_t i = 0; i < 6; ++i) {
    Tensor wi = w.detach().requires_grad_();
    sum(mul(run(x.narrow(0, i, 1), wi, Tensor(), s), g.narrow(0, i, 1))).backward();
    total = add(total, wi.grad());
  }
  expect_close(w.grad(), values(total), 1e-10);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return amax(abs(sub(a.to(DType::float64), b.to(DType::float64)))).item<double>();
}

// conv2d_relu is relu(conv2d(...)) exactly: the ReLU applied to the rounded
// conv + bias, NaN kept, and its gradient masked by the output.
TEST(Conv2dRelu, EqualsReluOfConv2dForwardAndBackward) {
  for (DType dt : {DType::float32, DType::bfloat16}) {
    for (MemoryFormat fmt : {MemoryFormat::contiguous, MemoryFormat::channels_last}) {
      for (bool with_bias : {true, false}) {
        manual_seed(3);
        const Tensor x0 = contiguous(randn({2, 3, 7, 6}).to(dt), fmt);
        const Tensor w0 = randn({5, 3, 3, 3}).to(dt);
        const Tensor b0 = with_bias ? randn({5}).to(dt) : Tensor();
        auto leaves = [&] {
          std::vector<Tensor> v = {x0.detach().requires_grad_(), w0.detach().requires_grad_()};
          if (with_bias) v.push_back(b0.detach().requires_grad_());
          return v;
        };
        std::vector<Tensor> a = leaves(), b = leaves();
        const Tensor fused = conv2d_relu(a[0], a[1], with_bias ? a[2] : Tensor(), {1, 1}, {1, 1});
        const Tensor composite = relu(conv2d(b[0], b[1], with_bias ? b[2] : Tensor(), {1, 1}, {1, 1}));
        EXPECT_EQ(max_abs_diff(fused, composite), 0.0) << dtype_name(dt);
        EXPECT_TRUE(fused.is_contiguous(fmt));
        EXPECT_GT(sum(eq(fused, 0.0)).item<int64_t>(), 0) << "the ReLU never clipped: a weak test";
        const Tensor g = randn(fused.shape()).to(dt);
        sum(mul(fused, g)).backward();
        sum(mul(composite, g)).backward();
        for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(max_abs_diff(a[i].grad(), b[i].grad()), 0.0) << "input " << i;
      }
    }
  }
}

TEST(Conv2dRelu, KeepsNaNAsReluDoes) {
  Tensor x = zeros({1, 1, 3, 3});
  x.narrow(2, 1, 1).narrow(3, 1, 1).fill_(std::nan(""));
  const Tensor y = conv2d_relu(x, ones({1, 1, 1, 1}), tensor({-1.f}));
  const std::vector<float> v = y.to_vector<float>();
  EXPECT_TRUE(std::isnan(v[4]));
  EXPECT_EQ(v[0], 0.0f);
}

TEST(Conv2dRelu, Gradcheck) {
  manual_seed(5);
  // Inputs away from the kink: random values, and the bias shifts half the
  // outputs below zero.
  std::vector<Tensor> in = {randn({2, 2, 5, 4}, DType::float64).requires_grad_(),
                            randn({3, 2, 3, 3}, DType::float64).requires_grad_(),
                            randn({3}, DType::float64).requires_grad_()};
  auto r = gradcheck([](const std::vector<Tensor>& t) { return conv2d_relu(t[0], t[1], t[2], {1, 1}, {1, 1}); }, in);
  EXPECT_TRUE(r.ok) << r.message;
}

// conv2d_add_relu is relu(conv2d(...) + residual): exactly so in float32
// (the CPU reference kernel adds in the order the composition does; oneDNN may
// add the bias and the residual in its own order, which the oneDNN parity
// tests bound), within a rounding in bfloat16 (where it rounds once, the
// composition twice); the residual's gradient is the masked output gradient.
TEST(Conv2dAddRelu, EqualsReluOfConv2dPlusResidual) {
  ForceCpuReference exact_order;
  for (DType dt : {DType::float32, DType::bfloat16}) {
    for (MemoryFormat fmt : {MemoryFormat::contiguous, MemoryFormat::channels_last}) {
      for (bool with_bias : {true, false}) {
        manual_seed(7);
        const Tensor x0 = contiguous(randn({2, 3, 7, 6}).to(dt), fmt);
        const Tensor w0 = randn({5, 3, 3, 3}).to(dt);
        const Tensor b0 = with_bias ? randn({5}).to(dt) : Tensor();
        const Tensor r0 = contiguous(randn({2, 5, 4, 3}).to(dt), fmt);
        auto leaves = [&] {
          std::vector<Tensor> v = {x0.detach().requires_grad_(), w0.detach().requires_grad_(),
                                   r0.detach().requires_grad_()};
          if (with_bias) v.push_back(b0.detach().requires_grad_());
          return v;
        };
        std::vector<Tensor> a = leaves(), b = leaves();
        const Tensor fused = conv2d_add_relu(a[0], a[1], with_bias ? a[3] : Tensor(), a[2], {2, 2}, {1, 1});
        const Tensor composite = relu(add(conv2d(b[0], b[1], with_bias ? b[3] : Tensor(), {2, 2}, {1, 1}), b[2]));
        const double tol = dt == DType::float32 ? 0.0 : 0.07;
        EXPECT_LE(max_abs_diff(fused, composite), tol) << dtype_name(dt);
        EXPECT_TRUE(fused.is_contiguous(fmt));
        EXPECT_GT(sum(eq(fused, 0.0)).item<int64_t>(), 0) << "the ReLU never clipped: a weak test";
        if (dt != DType::float32) continue;
        const Tensor g = randn(fused.shape()).to(dt);
        sum(mul(fused, g)).backward();
        sum(mul(composite, g)).backward();
        for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(max_abs_diff(a[i].grad(), b[i].grad()), 0.0) << "input " << i;
      }
    }
  }
}

TEST(Conv2dAddRelu, Gradcheck) {
  manual_seed(9);
  std::vector<Tensor> in = {
      randn({2, 2, 5, 4}, DType::float64).requires_grad_(), randn({3, 2, 3, 3}, DType::float64).requires_grad_(),
      randn({3}, DType::float64).requires_grad_(), randn({2, 3, 5, 4}, DType::float64).requires_grad_()};
  auto r = gradcheck(
      [](const std::vector<Tensor>& t) {
        return conv2d_add_relu(t[0], t[1], t[2], t[3], {1, 1}, {1, 1});
      },
      in);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(Conv2dAddRelu, TheResidualMustHaveTheOutputsShape) {
  try {
    conv2d_add_relu(randn({1, 3, 5, 5}), randn({2, 3, 3, 3}), Tensor(), randn({1, 2, 5, 5}));
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[conv2d_add_relu] expected a residual of the output's shape [1, 2, 3, 3], got [1, 2, 5, 5]"),
              std::string::npos)
        << m;
  }
  EXPECT_THROW(conv2d_add_relu(randn({1, 3, 5, 5}), randn({2, 3, 3, 3}), Tensor(), Tensor()), ValueError);
}

void expect_message(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL() << "expected an exception";
  } catch (const Error& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Conv2d, BadInputs) {
  expect_message([] { conv2d(randn({1, 3, 5, 5}), randn({2, 4, 3, 3})); }, {"[conv2d]", "3 channels", "expects 4"});
  EXPECT_THROW(conv2d(randn({1, 3, 5, 5}), randn({2, 4, 3, 3})), ShapeError);
  expect_message([] { conv2d(randn({1, 3, 2, 2}), randn({2, 3, 3, 3})); }, {"[conv2d]", "larger than the padded"});
  EXPECT_THROW(conv2d(randn({1, 3, 2, 2}), randn({2, 3, 3, 3})), ShapeError);
  EXPECT_NO_THROW(conv2d(randn({1, 3, 2, 2}), randn({2, 3, 3, 3}), Tensor(), {1, 1}, {1, 1}));
  EXPECT_THROW(conv2d(randn({3, 5}), randn({2, 3, 3, 3})), ShapeError);
  EXPECT_THROW(conv2d(randn({1, 3, 5, 5}), randn({2, 3, 3})), ShapeError);
  EXPECT_THROW(conv2d(randn({1, 3, 5, 5}), randn({2, 3, 3, 3}), randn({3})), ShapeError);
  EXPECT_THROW(conv2d(randn({1, 4, 5, 5}), randn({3, 2, 3, 3}), Tensor(), {1, 1}, {0, 0}, {1, 1}, 2), ValueError);
  EXPECT_THROW(conv2d(randn({1, 3, 5, 5}), randn({2, 3, 3, 3}), Tensor(), {0, 1}), ValueError);
  EXPECT_THROW(conv2d(randn({1, 3, 5, 5}), randn({2, 3, 3, 3}, DType::float64)), TypeError);
  EXPECT_THROW(conv2d(ones({1, 3, 5, 5}, DType::int64), ones({2, 3, 3, 3}, DType::int64)), TypeError);
}

}  // namespace
}  // namespace hearth
