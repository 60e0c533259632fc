#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

std::vector<double> values(const Tensor& t) { return t.contiguous().to_vector<double>(); }

void expect_close(const Tensor& t, const std::vector<double>& ref, double tol) {
  std::vector<double> v = values(t);
  ASSERT_EQ(v.size(), ref.size());
  for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(v[i], ref[i], tol * (1 + std::abs(ref[i]))) << "element " << i;
}

struct PoolSpec {
  Shape x;
  Pair k, s{0, 0}, p{0, 0}, d{1, 1};
  bool ceil = false;
  bool count_pad = true;
};

// Output extent the way PyTorch documents it.
int64_t extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  const double v = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  int64_t out = static_cast<int64_t>(ceil ? std::ceil(v) : std::floor(v)) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

// Reference pooling over [planes, H, W] in float64; mode 0 = max, 1 = avg.
std::vector<double> ref_pool(const Tensor& x, PoolSpec s, int mode, Shape* shape) {
  if (s.s[0] == 0) s.s = s.k;
  const int64_t h = x.size(-2), w = x.size(-1), planes = x.numel() / (h * w);
  const int64_t oh = extent(h, s.k[0], s.s[0], s.p[0], s.d[0], s.ceil);
  const int64_t ow = extent(w, s.k[1], s.s[1], s.p[1], s.d[1], s.ceil);
  std::vector<double> xv = values(x), out;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t z = 0; z < ow; ++z) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t inside = 0;
        for (int64_t i = 0; i < s.k[0]; ++i)
          for (int64_t j = 0; j < s.k[1]; ++j) {
            const int64_t iy = y * s.s[0] - s.p[0] + i * s.d[0], ix = z * s.s[1] - s.p[1] + j * s.d[1];
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const double v = xv[(pl * h + iy) * w + ix];
            best = std::max(best, v);
            sum += v;
            ++inside;
          }
        if (mode == 0) {
          out.push_back(best);
        } else {
          // Divisor: the window clipped to the padded input (count_include_pad) or to the input.
          auto clipped = [](int64_t start, int64_t k, int64_t in, int64_t pad) {
            return std::min(start + k, in + pad) - start;
          };
          const int64_t div = s.count_pad ? clipped(y * s.s[0] - s.p[0], s.k[0], h, s.p[0]) *
                                                clipped(z * s.s[1] - s.p[1], s.k[1], w, s.p[1])
                                          : inside;
          out.push_back(inside == 0 ? 0.0 : sum / static_cast<double>(div));
        }
      }
  *shape = x.shape();
  shape->at(shape->size() - 2) = oh;
  shape->back() = ow;
  return out;
}

const std::vector<PoolSpec>& max_specs() {
  static const std::vector<PoolSpec> all = {
      {{2, 3, 6, 6}, {2, 2}},
      {{2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1}},                // ResNet's stem pool
      {{1, 2, 8, 7}, {3, 2}, {2, 1}, {1, 1}, {2, 1}},        // dilation, rectangular
      {{2, 2, 7, 6}, {3, 3}, {2, 2}, {0, 1}, {1, 1}, true},  // ceil_mode
      {{1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true},  // ceil_mode drops a window starting in padding
      {{3, 4, 4}, {2, 2}},                                   // unbatched
  };
  return all;
}

TEST(MaxPool2d, MatchesReference) {
  for (const PoolSpec& s : max_specs())
    for (DType dt : {DType::float32, DType::float64}) {
      Tensor x = randn(s.x, dt);
      Shape shape;
      std::vector<double> ref = ref_pool(x, s, 0, &shape);
      Tensor y = max_pool2d(x, s.k, s.s, s.p, s.d, s.ceil);
      EXPECT_EQ(y.shape(), shape);
      expect_close(y, ref, 0);
    }
}

TEST(MaxPool2d, HalfTypesAndNonContiguous) {
  const PoolSpec& s = max_specs()[1];
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor x = cast(randn(s.x), dt);
    Shape shape;
    expect_close(max_pool2d(x, s.k, s.s, s.p), ref_pool(x, s, 0, &shape), 0);
  }
  Tensor x = randn({2, 3, 7, 7}).transpose(2, 3);
  Shape shape;
  expect_close(max_pool2d(x, s.k, s.s, s.p), ref_pool(x, s, 0, &shape), 0);
}

TEST(MaxPool2d, NanPropagates) {
  Tensor x = tensor({1.f, std::nanf(""), 3.f, 4.f}).view({1, 1, 2, 2});
  EXPECT_TRUE(std::isnan(max_pool2d(x, {2, 2}).item<float>()));
}

TEST(MaxPool2d, GradientGoesToTheMaximum) {
  Tensor x = tensor({1.f, 5.f, 2.f, 0.f, 3.f, 4.f, 9.f, 8.f, 7.f}).view({1, 1, 3, 3}).requires_grad_();
  // Overlapping 2x2 windows, stride 1: maxima 5, 5, 9, 8 -> 5 collects from two windows.
  sum(max_pool2d(x, {2, 2}, {1, 1})).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 2, 0, 0, 0, 0, 1, 1, 0}));
}

// Backward finds each window's argmax again in the input: among equal maxima
// the first in window order (row by row) takes the gradient, and a NaN takes
// it from the maxima, as the forward chose them.
TEST(MaxPool2d, GradientGoesToTheFirstMaximumAndToNaN) {
  Tensor x = tensor({2.f, 2.f, 2.f, 2.f, 2.f, 2.f, 1.f, 2.f, 0.f}).view({1, 1, 3, 3}).requires_grad_();
  // 2x2 windows at stride 1: every window's first cell is a 2, so each window
  // gives its gradient to its top-left cell.
  sum(max_pool2d(x, {2, 2}, {1, 1})).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{1, 1, 0, 1, 1, 0, 0, 0, 0}));
  Tensor z = tensor({1.f, 7.f, std::nanf(""), 3.f}).view({1, 1, 2, 2}).requires_grad_();
  sum(max_pool2d(z, {2, 2})).backward();
  EXPECT_EQ(z.grad().to_vector<float>(), (std::vector<float>{0, 0, 1, 0}));
}

TEST(MaxPool2d, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = nc ? randn({2, 2, 7, 6}, DType::float64).transpose(2, 3) : randn({2, 2, 6, 7}, DType::float64);
    x.requires_grad_();
    auto r = gradcheck(
        [](const std::vector<Tensor>& in) {
          return max_pool2d(in[0], {3, 2}, {2, 2}, {1, 1}, {1, 2}, true);
        },
        {x});
    EXPECT_TRUE(r.ok) << r.message;
  }
}

const std::vector<PoolSpec>& avg_specs() {
  static const std::vector<PoolSpec> all = {
      {{2, 3, 6, 6}, {2, 2}},
      {{2, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}},
      {{2, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, false},  // count_include_pad = false
      {{1, 2, 6, 7}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true, true},    // ceil_mode
      {{1, 2, 6, 7}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true, false},
      {{2, 5, 5}, {2, 3}, {1, 2}},  // unbatched, stride != kernel
  };
  return all;
}

TEST(AvgPool2d, MatchesReference) {
  for (const PoolSpec& s : avg_specs()) {
    Tensor x = randn(s.x, DType::float64);
    Shape shape;
    std::vector<double> ref = ref_pool(x, s, 1, &shape);
    Tensor y = avg_pool2d(x, s.k, s.s, s.p, s.ceil, s.count_pad);
    EXPECT_EQ(y.shape(), shape);
    expect_close(y, ref, 1e-12);
    Tensor yf = avg_pool2d(cast(x, DType::float32), s.k, s.s, s.p, s.ceil, s.count_pad);
    expect_close(yf, ref, 1e-5);
    Tensor yb = avg_pool2d(cast(x, DType::bfloat16), s.k, s.s, s.p, s.ceil, s.count_pad);
    expect_close(yb, ref, 3e-2);
  }
}

TEST(AvgPool2d, Gradcheck) {
  for (const PoolSpec& s : {avg_specs()[3], avg_specs()[4]})
    for (bool nc : {false, true}) {
      Tensor x = nc ? randn({1, 2, 7, 6}, DType::float64).transpose(2, 3) : randn(s.x, DType::float64);
      x.requires_grad_();
      auto r = gradcheck(
          [s](const std::vector<Tensor>& in) { return avg_pool2d(in[0], s.k, s.s, s.p, s.ceil, s.count_pad); }, {x});
      EXPECT_TRUE(r.ok) << r.message;
    }
}

std::vector<double> ref_adaptive(const Tensor& x, int64_t oh, int64_t ow) {
  const int64_t h = x.size(-2), w = x.size(-1), planes = x.numel() / (h * w);
  std::vector<double> xv = values(x), out;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t z = 0; z < ow; ++z) {
        const int64_t y0 = static_cast<int64_t>(std::floor(double(y) * h / oh));
        const int64_t y1 = static_cast<int64_t>(std::ceil(double(y + 1) * h / oh));
        const int64_t x0 = static_cast<int64_t>(std::floor(double(z) * w / ow));
        const int64_t x1 = static_cast<int64_t>(std::ceil(double(z + 1) * w / ow));
        double s = 0;
        for (int64_t i = y0; i < y1; ++i)
          for (int64_t j = x0; j < x1; ++j) s += xv[(pl * h + i) * w + j];
        out.push_back(s / double((y1 - y0) * (x1 - x0)));
      }
  return out;
}

TEST(AdaptiveAvgPool2d, MatchesReference) {
  for (auto [shape, o] : std::vector<std::pair<Shape, Pair>>{{{2, 3, 7, 7}, {1, 1}},
                                                             {{2, 3, 7, 5}, {3, 2}},
                                                             {{1, 2, 4, 4}, {4, 4}},
                                                             {{1, 2, 3, 3}, {5, 4}},
                                                             {{3, 5, 6}, {2, 4}}}) {
    Tensor x = randn(shape, DType::float64);
    Tensor y = adaptive_avg_pool2d(x, o);
    Shape expect = shape;
    expect[expect.size() - 2] = o[0];
    expect.back() = o[1];
    EXPECT_EQ(y.shape(), expect);
    expect_close(y, ref_adaptive(x, o[0], o[1]), 1e-12);
    expect_close(adaptive_avg_pool2d(cast(x, DType::float16), o), ref_adaptive(x, o[0], o[1]), 1e-2);
  }
  Tensor x = randn({2, 3, 5, 6}).transpose(2, 3);
  expect_close(adaptive_avg_pool2d(x, {2, 3}), ref_adaptive(x, 2, 3), 1e-5);
}

TEST(AdaptiveAvgPool2d, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = nc ? randn({2, 2, 5, 7}, DType::float64).transpose(2, 3) : randn({2, 2, 7, 5}, DType::float64);
    x.requires_grad_();
    auto r = gradcheck([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], {3, 2}); }, {x});
    EXPECT_TRUE(r.ok) << r.message;
  }
}

TEST(Pooling, EmptyBatch) {
  EXPECT_EQ(max_pool2d(randn({0, 3, 4, 4}), {2, 2}).shape(), (Shape{0, 3, 2, 2}));
  EXPECT_EQ(avg_pool2d(randn({0, 3, 4, 4}), {2, 2}).shape(), (Shape{0, 3, 2, 2}));
  EXPECT_EQ(adaptive_avg_pool2d(randn({0, 3, 4, 4}), {1, 1}).shape(), (Shape{0, 3, 1, 1}));
}

void expect_message(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL() << "expected an exception";
  } catch (const Error& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Pooling, BadInputs) {
  expect_message([] { max_pool2d(randn({1, 1, 2, 2}), {3, 3}); }, {"[max_pool2d]", "larger than the padded input"});
  EXPECT_THROW(max_pool2d(randn({1, 1, 2, 2}), {3, 3}), ShapeError);
  EXPECT_THROW(avg_pool2d(randn({1, 1, 2, 2}), {3, 3}), ShapeError);
  EXPECT_THROW(max_pool2d(randn({4, 4}), {2, 2}), ShapeError);
  EXPECT_THROW(avg_pool2d(randn({1, 1, 1, 4, 4}), {2, 2}), ShapeError);
  EXPECT_THROW(max_pool2d(randn({1, 1, 4, 4}), {2, 2}, {2, 2}, {2, 2}), ValueError);  // padding > kernel / 2
  EXPECT_THROW(max_pool2d(randn({1, 1, 4, 4}), {0, 2}), ValueError);
  EXPECT_THROW(max_pool2d(ones({1, 1, 4, 4}, DType::int64), {2, 2}), TypeError);
  EXPECT_THROW(adaptive_avg_pool2d(randn({1, 1, 4, 4}), {0, 2}), ValueError);
  EXPECT_THROW(adaptive_avg_pool2d(randn({1, 1, 0, 4}), {2, 2}), ShapeError);
}

}  // namespace
}  // namespace hearth
