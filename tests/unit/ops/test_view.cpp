#include "hearth/ops/view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "hearth/autograd/gradcheck.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"

namespace hearth {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// 0, 1, 2, ... in `shape`, contiguous.
Tensor iota(const Shape& shape, DType dtype = DType::float32) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  std::iota(v.begin(), v.end(), 0.0);
  return tensor(v, shape).to(dtype);
}

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

void expect_view(const Tensor& v, const Tensor& base, const Shape& shape, const Strides& strides, int64_t offset) {
  EXPECT_EQ(v.storage().get(), base.storage().get()) << "a view shares its base's storage";
  EXPECT_EQ(v.shape(), shape);
  EXPECT_EQ(v.strides(), strides);
  EXPECT_EQ(v.offset(), offset);
}

template <typename F>
void expect_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << part << "'";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), part)) << e.what();
  }
}

// A float64 leaf of `shape`, either contiguous or laid out in memory with the
// dims reversed (or, for 1-D, every other element), so views start from strides
// that are not row-major.
Tensor leaf(const Shape& shape, bool contiguous) {
  Tensor x;
  if (!contiguous && shape.size() >= 2) {
    Shape reversed(shape.rbegin(), shape.rend());
    std::vector<int64_t> order(shape.size());
    std::iota(order.rbegin(), order.rend(), 0);
    x = permute(randn(reversed, DType::float64), order);
  }
  if (!contiguous && (!x.defined() || x.is_contiguous())) {  // e.g. 1-D, or only one dim above 1
    auto d = std::find_if(shape.begin(), shape.end(), [](int64_t n) { return n > 1; });
    if (d != shape.end()) {
      int64_t dim = d - shape.begin();
      Shape doubled = shape;
      doubled[dim] *= 2;
      x = slice(randn(doubled, DType::float64), dim, 0, doubled[dim], 2);
    }
  }
  if (!x.defined()) x = randn(shape, DType::float64);
  EXPECT_EQ(x.shape(), shape);
  if (!contiguous && numel_of(shape) > 1) {
    EXPECT_FALSE(x.is_contiguous());
  }
  return x.detach().requires_grad_();
}

void expect_gradcheck(const char* what, const Shape& shape, const std::function<Tensor(const Tensor&)>& f) {
  for (bool contiguous : {true, false}) {
    Tensor x = leaf(shape, contiguous);
    GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return f(in[0]); }, {x});
    EXPECT_TRUE(r.ok) << what << (contiguous ? " (contiguous input): " : " (non-contiguous input): ") << r.message;
  }
}

// ---- each view op: layout, shared storage, values ---------------------------------

TEST(View, ViewReshapesCompatibleLayouts) {
  Tensor x = iota({2, 3, 4});
  expect_view(view(x, {6, 4}), x, {6, 4}, {4, 1}, 0);
  expect_view(view(x, {-1}), x, {24}, {1}, 0);
  expect_view(view(x, {2, -1, 3}), x, {2, 4, 3}, {12, 3, 1}, 0);
  expect_view(x.view({4, 1, 6}), x, {4, 1, 6}, {6, 6, 1}, 0);
  // A transposed tensor can still be split along a dim, or merged where dims stay adjacent.
  Tensor t = transpose(iota({4, 6}), 0, 1);  // [6, 4], strides (1, 6)
  expect_view(view(t, {2, 3, 4}), t, {2, 3, 4}, {3, 1, 6}, 0);
  EXPECT_EQ(values(view(t, {2, 3, 4})), values(reshape(t.contiguous(), {2, 3, 4})));
  Tensor s = iota({}, DType::float64);
  expect_view(view(s, {1, 1}), s, {1, 1}, {1, 1}, 0);
  Tensor one = iota({1});
  expect_view(view(one, {}), one, {}, {}, 0);
  Tensor e = iota({0, 3});
  EXPECT_EQ(view(e, {3, 0, 5}).shape(), (Shape{3, 0, 5}));
  EXPECT_EQ(view(e, {3, 0, 5}).strides(), (Strides{5, 5, 1}));
}

TEST(View, ViewErrors) {
  Tensor x = iota({3, 4});
  EXPECT_THROW(view(x, {5, -1}), ShapeError);
  expect_error([&] { view(x, {5, 3}); }, "[view] shape [5, 3] is invalid for input of size 12");
  expect_error([&] { view(x, {-1, -1}); }, "only one dimension can be inferred");
  expect_error([&] { view(x, {-2, 6}); }, "invalid size -2");
  expect_error([&] { view(transpose(x, 0, 1), {12}); }, "use reshape()");
  expect_error([&] { view(iota({0, 3}), {-1, 0}); }, "is invalid for input of size 0");
  EXPECT_THROW(view(Tensor(), {1}), ValueError);
}

TEST(View, ReshapeCopiesOnlyWhenNoViewIsPossible) {
  Tensor x = iota({2, 3, 4});
  expect_view(reshape(x, {4, 6}), x, {4, 6}, {6, 1}, 0);
  Tensor t = transpose(iota({4, 6}), 0, 1);
  expect_view(reshape(t, {2, 3, 4}), t, {2, 3, 4}, {3, 1, 6}, 0);  // splitting a dim needs no copy
  Tensor flat = reshape(t, {24});                                  // merging across the transpose does
  EXPECT_NE(flat.storage().get(), t.storage().get());
  EXPECT_TRUE(flat.is_contiguous());
  EXPECT_EQ(values(flat), values(t.contiguous()));
  std::vector<float> expected;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) expected.push_back(static_cast<float>(j * 6 + i));
  EXPECT_EQ(values(flat), expected);
  Tensor stepped = slice(iota({8}), 0, 0, 8, 2);  // strided 1-D: any reshape keeps the stride
  expect_view(reshape(stepped, {2, 2}), stepped, {2, 2}, {4, 2}, 0);
  expect_error([&] { reshape(x, {7, -1}); }, "[reshape] shape [7, -1] is invalid for input of size 24");
}

TEST(View, TransposeAndPermuteSwapStrides) {
  Tensor x = iota({2, 3, 4});
  expect_view(transpose(x, 0, 2), x, {4, 3, 2}, {1, 4, 12}, 0);
  expect_view(transpose(x, -1, -2), x, {2, 4, 3}, {12, 1, 4}, 0);
  expect_view(transpose(x, 1, 1), x, {2, 3, 4}, {12, 4, 1}, 0);
  EXPECT_EQ(values(transpose(iota({2, 3}), 0, 1)), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Tensor m = iota({2, 3});
  expect_view(m.t(), m, {3, 2}, {1, 3}, 0);
  Tensor v = iota({3});
  EXPECT_TRUE(v.t().is_same(v));  // 1-D: nothing to transpose
  expect_view(permute(x, {2, 0, 1}), x, {4, 2, 3}, {1, 12, 4}, 0);
  expect_view(permute(x, {-1, 1, 0}), x, {4, 3, 2}, {1, 4, 12}, 0);
  EXPECT_EQ(values(permute(x, {2, 0, 1})), values(transpose(transpose(x, 0, 2), 1, 2)));
  Tensor s = iota({});
  EXPECT_EQ(transpose(s, 0, -1).shape(), Shape{});
  EXPECT_EQ(permute(s, {}).shape(), Shape{});
}

TEST(View, TransposeAndPermuteErrors) {
  Tensor x = iota({2, 3, 4});
  expect_error([&] { transpose(x, 0, 3); }, "[transpose] dimension out of range");
  expect_error([&] { permute(x, {0, 1}); }, "[permute] number of dims (2) does not match the input's 3 dimensions");
  EXPECT_THROW(permute(x, {0, 1, 1}), ValueError);
  expect_error([&] { permute(x, {0, 1, -3}); }, "repeated");
  expect_error([&] { permute(x, {0, 1, 5}); }, "[permute] dimension out of range");
  expect_error([&] { iota({2, 2, 2}).t(); }, "[t] expects a tensor with <= 2 dimensions");
}

TEST(View, NarrowAndSliceSelectRanges) {
  Tensor x = iota({4, 5});
  expect_view(narrow(x, 1, 1, 3), x, {4, 3}, {5, 1}, 1);
  expect_view(narrow(x, 0, -2, 2), x, {2, 5}, {5, 1}, 10);
  expect_view(narrow(x, 0, 4, 0), x, {0, 5}, {5, 1}, 20);
  EXPECT_EQ(values(narrow(x, 1, 3, 2)), (std::vector<float>{3, 4, 8, 9, 13, 14, 18, 19}));
  expect_view(slice(x, 1, 1, 5, 2), x, {4, 2}, {5, 2}, 1);
  EXPECT_EQ(values(slice(x, 0, -3, -1)), values(narrow(x, 0, 1, 2)));  // negative bounds wrap
  EXPECT_EQ(slice(x, 0, -100, 100).shape(), (Shape{4, 5}));            // and clamp
  EXPECT_EQ(slice(x, 0, 3, 1).shape(), (Shape{0, 5}));                 // empty when end <= start
  EXPECT_EQ(slice(x, 1, 0, 5, 7).shape(), (Shape{4, 1}));
  EXPECT_EQ(values(slice(iota({7}), 0, 1, 7, 3)), (std::vector<float>{1, 4}));
  // Slicing a strided view composes strides and offsets.
  Tensor t = slice(transpose(x, 0, 1), 0, 1, 5, 2);  // rows 1 and 3 of x^T
  expect_view(t, x, {2, 4}, {2, 5}, 1);
  EXPECT_EQ(values(t), (std::vector<float>{1, 6, 11, 16, 3, 8, 13, 18}));
}

TEST(View, NarrowAndSliceErrors) {
  Tensor x = iota({4, 5});
  expect_error([&] { narrow(x, 1, 3, 3); }, "[narrow] start (3) + length (3) exceeds dimension size (5)");
  EXPECT_THROW(narrow(x, 0, 0, -1), ShapeError);
  EXPECT_THROW(narrow(x, 2, 0, 1), ShapeError);
  expect_error([&] { slice(x, 0, 0, 4, 0); }, "[slice] step must be positive, got 0");
  EXPECT_THROW(slice(x, 0, 0, 4, -1), ValueError);
  expect_error([&] { slice(iota({}), 0, 0, 1); }, "[slice] cannot slice a zero-dim tensor");
  EXPECT_THROW(slice(x, -3, 0, 1), ShapeError);
}

TEST(View, SelectDropsTheDim) {
  Tensor x = iota({3, 4});
  expect_view(select(x, 0, 1), x, {4}, {1}, 4);
  expect_view(select(x, 1, -1), x, {3}, {4}, 3);
  expect_view(select(select(x, 0, 2), 0, 3), x, {}, {}, 11);
  EXPECT_EQ(select(select(x, 0, 2), 0, 3).item<float>(), 11.f);
  EXPECT_EQ(values(x.select(1, 2)), (std::vector<float>{2, 6, 10}));
  expect_error([&] { select(x, 0, 3); }, "[select] index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_THROW(select(x, 1, -5), ShapeError);
  EXPECT_THROW(select(x, 2, 0), ShapeError);
  expect_error([&] { select(iota({}), 0, 0); }, "[select] cannot select from a zero-dim tensor");
}

TEST(View, ExpandBroadcastsWithZeroStrides) {
  Tensor x = iota({3, 1});
  expect_view(expand(x, {2, 3, 4}), x, {2, 3, 4}, {0, 1, 0}, 0);
  expect_view(expand(x, {-1, 5}), x, {3, 5}, {1, 0}, 0);
  EXPECT_TRUE(expand(x, {3, 1}).is_same(x));
  EXPECT_EQ(values(expand(x, {3, 2})), (std::vector<float>{0, 0, 1, 1, 2, 2}));
  Tensor s = iota({});
  expect_view(expand(s, {2, 2}), s, {2, 2}, {0, 0}, 0);
  EXPECT_EQ(expand(x, {0, 3, 0}).numel(), 0);
  expect_error([&] { expand(x, {4, 4}); }, "[expand] the expanded size 4 must match the existing size 3");
  expect_error([&] { expand(x, {4}); }, "must be at least the tensor's dimensions");
  expect_error([&] { expand(x, {-1, 3, 1}); }, "size -1 not allowed in a new leading dimension");
}

TEST(View, SqueezeAndUnsqueeze) {
  Tensor x = iota({1, 3, 1, 2});
  expect_view(squeeze(x), x, {3, 2}, {2, 1}, 0);
  expect_view(squeeze(x, 2), x, {1, 3, 2}, {6, 2, 1}, 0);
  expect_view(squeeze(x, -4), x, {3, 1, 2}, {2, 2, 1}, 0);
  EXPECT_TRUE(squeeze(x, 1).is_same(x));  // not size 1: unchanged
  Tensor full_rank = iota({2, 3});
  EXPECT_TRUE(squeeze(full_rank).is_same(full_rank));
  Tensor one = iota({1, 1});
  EXPECT_EQ(squeeze(one).shape(), Shape{});
  EXPECT_EQ(squeeze(one).item<float>(), 0.f);
  Tensor y = iota({2, 3});
  expect_view(unsqueeze(y, 0), y, {1, 2, 3}, {6, 3, 1}, 0);
  expect_view(unsqueeze(y, 1), y, {2, 1, 3}, {3, 3, 1}, 0);
  expect_view(unsqueeze(y, -1), y, {2, 3, 1}, {3, 1, 1}, 0);
  Tensor s = iota({});
  expect_view(unsqueeze(s, 0), s, {1}, {1}, 0);
  Tensor t = transpose(y, 0, 1);  // [3, 2], strides (1, 3)
  expect_view(unsqueeze(t, 1), t, {3, 1, 2}, {1, 6, 3}, 0);
  EXPECT_EQ(values(squeeze(unsqueeze(t, 1), 1)), values(t));
  EXPECT_THROW(unsqueeze(y, 3), ShapeError);
  EXPECT_THROW(squeeze(y, 2), ShapeError);
}

TEST(View, FlattenAndUnflatten) {
  Tensor x = iota({2, 3, 4});
  expect_view(flatten(x), x, {24}, {1}, 0);
  expect_view(flatten(x, 1), x, {2, 12}, {12, 1}, 0);
  expect_view(flatten(x, 0, 1), x, {6, 4}, {4, 1}, 0);
  expect_view(flatten(x, -1), x, {2, 3, 4}, {12, 4, 1}, 0);
  EXPECT_EQ(flatten(iota({})).shape(), (Shape{1}));
  Tensor t = transpose(x, 0, 2);  // flattening across a transpose copies
  Tensor f = flatten(t);
  EXPECT_NE(f.storage().get(), x.storage().get());
  EXPECT_EQ(values(f), values(t.contiguous()));
  expect_error([&] { flatten(x, 2, 1); }, "[flatten] start_dim (2) must not exceed end_dim (1)");
  expect_view(unflatten(x, 2, {2, 2}), x, {2, 3, 2, 2}, {12, 4, 2, 1}, 0);
  expect_view(unflatten(x, 0, {-1, 1}), x, {2, 1, 3, 4}, {12, 12, 4, 1}, 0);
  expect_error([&] { unflatten(x, 1, {2, 2}); }, "[unflatten] shape [2, 2] is invalid for input of size 3");
}

TEST(View, UnfoldMakesSlidingWindows) {
  Tensor x = iota({7});
  Tensor w = unfold(x, 0, 3, 2);
  expect_view(w, x, {3, 3}, {2, 1}, 0);
  EXPECT_EQ(values(w), (std::vector<float>{0, 1, 2, 2, 3, 4, 4, 5, 6}));
  EXPECT_EQ(values(unfold(x, 0, 2, 3)), (std::vector<float>{0, 1, 3, 4}));  // the tail that fits no window is dropped
  EXPECT_EQ(unfold(x, 0, 7, 1).shape(), (Shape{1, 7}));
  EXPECT_EQ(unfold(x, 0, 0, 2).shape(), (Shape{4, 0}));

  Tensor m = iota({5, 2});
  Tensor u = unfold(m, 0, 2, 1);  // u[w, j, k] = m[w + k, j]
  expect_view(u, m, {4, 2, 2}, {2, 1, 2}, 0);
  std::vector<float> uv = values(u);
  for (int64_t wi = 0; wi < 4; ++wi)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(uv[wi * 4 + j * 2 + k], static_cast<float>((wi + k) * 2 + j));
  expect_view(unfold(m, -1, 1, 1), m, {5, 2, 1}, {2, 1, 1}, 0);
  Tensor s = iota({});
  expect_view(unfold(s, 0, 1, 1), s, {1}, {1}, 0);

  expect_error([&] { unfold(x, 0, 8, 1); }, "[unfold] size 8 exceeds dimension 0 of size 7");
  EXPECT_THROW(unfold(x, 0, 2, 0), ValueError);
  EXPECT_THROW(unfold(x, 0, -1, 1), ValueError);
  EXPECT_THROW(unfold(x, 1, 2, 1), ShapeError);
  EXPECT_THROW(unfold(s, 1, 1, 1), ShapeError);
}

TEST(View, AsStridedChecksBoundsAndRefusesGradients) {
  Tensor x = iota({6});
  Tensor a = as_strided(x, {2, 2}, {1, 2}, 1);
  expect_view(a, x, {2, 2}, {1, 2}, 1);
  EXPECT_EQ(values(a), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_THROW(as_strided(x, {2, 3}, {3, 1}, 1), ShapeError);
  Tensor g = randn({6}, DType::float64).requires_grad_();
  expect_error([&] { as_strided(g, {3}, {2}, 0); }, "[as_strided] is not differentiable");
}

TEST(View, ContiguousCopiesOnlyNonContiguous) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(contiguous(x).is_same(x));
  Tensor c = contiguous(transpose(x, 0, 1));
  EXPECT_NE(c.storage().get(), x.storage().get());
  EXPECT_EQ(c.strides(), (Strides{2, 1}));
  EXPECT_EQ(values(c), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(View, WritesThroughAViewReachTheBase) {
  Tensor x = zeros({3, 4});
  select(x, 0, 1).fill_(1);
  slice(x, 1, 0, 4, 3).fill_(2);
  transpose(x, 0, 1).select(0, 2).fill_(5);  // column 2
  EXPECT_EQ(values(x), (std::vector<float>{2, 0, 5, 2, 2, 1, 5, 2, 2, 0, 5, 2}));
  uint32_t v = x.version();
  narrow(x, 0, 0, 1).zero_();
  EXPECT_GT(x.version(), v);
}

TEST(View, WorkForEveryDtype) {
  for (DType dt : {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32,
                   DType::uint8, DType::bool_}) {
    Tensor x = iota({2, 3}, dt);
    Tensor t = transpose(x, 0, 1);
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_EQ(t.storage().get(), x.storage().get());
    if (dt != DType::bool_) {
      EXPECT_EQ(values(t), (std::vector<float>{0, 3, 1, 4, 2, 5})) << dtype_name(dt);
    }
    EXPECT_EQ(reshape(t, {6}).dtype(), dt);
    EXPECT_EQ(unfold(x, 1, 2, 1).shape(), (Shape{2, 2, 2}));
  }
}

TEST(View, UndefinedInputsAreRejected) {
  Tensor u;
  EXPECT_THROW(reshape(u, {1}), ValueError);
  EXPECT_THROW(transpose(u, 0, 1), ValueError);
  EXPECT_THROW(permute(u, {}), ValueError);
  EXPECT_THROW(narrow(u, 0, 0, 1), ValueError);
  EXPECT_THROW(slice(u, 0, 0, 1), ValueError);
  EXPECT_THROW(select(u, 0, 0), ValueError);
  EXPECT_THROW(expand(u, {1}), ValueError);
  EXPECT_THROW(squeeze(u), ValueError);
  EXPECT_THROW(unsqueeze(u, 0), ValueError);
  EXPECT_THROW(flatten(u), ValueError);
  EXPECT_THROW(unfold(u, 0, 1, 1), ValueError);
}

// ---- gradients through every view, from contiguous and non-contiguous inputs ------

TEST(ViewGrad, ViewAndReshape) {
  expect_gradcheck("view", {6, 4}, [](const Tensor& x) { return view(x, {2, 3, 4}); });
  expect_gradcheck("reshape", {2, 3, 4}, [](const Tensor& x) { return reshape(x, {4, 6}); });
  expect_gradcheck("reshape to 0-dim", {1, 1}, [](const Tensor& x) { return reshape(x, {}); });
}

TEST(ViewGrad, TransposePermuteAndT) {
  expect_gradcheck("transpose", {2, 3, 4}, [](const Tensor& x) { return transpose(x, 0, 2); });
  expect_gradcheck("permute", {2, 3, 4}, [](const Tensor& x) { return permute(x, {1, 2, 0}); });
  expect_gradcheck("t", {3, 4}, [](const Tensor& x) { return x.t(); });
}

TEST(ViewGrad, NarrowSliceAndSelect) {
  expect_gradcheck("narrow", {4, 5}, [](const Tensor& x) { return narrow(x, 1, 1, 3); });
  expect_gradcheck("slice", {5, 4}, [](const Tensor& x) { return slice(x, 0, -4, 5, 2); });
  expect_gradcheck("select", {3, 4}, [](const Tensor& x) { return select(x, 1, -1); });
}

TEST(ViewGrad, ExpandSqueezeUnsqueeze) {
  expect_gradcheck("expand", {3, 1}, [](const Tensor& x) { return expand(x, {2, 3, 4}); });
  expect_gradcheck("expand 0-dim", {}, [](const Tensor& x) { return expand(x, {2, 3}); });
  expect_gradcheck("squeeze", {1, 3, 1}, [](const Tensor& x) { return squeeze(x); });
  expect_gradcheck("squeeze dim", {3, 1, 2}, [](const Tensor& x) { return squeeze(x, 1); });
  expect_gradcheck("unsqueeze", {3, 2}, [](const Tensor& x) { return unsqueeze(x, 1); });
}

TEST(ViewGrad, FlattenUnflattenAndUnfold) {
  expect_gradcheck("flatten", {2, 3, 2}, [](const Tensor& x) { return flatten(x, 1); });
  expect_gradcheck("unflatten", {2, 6}, [](const Tensor& x) { return unflatten(x, 1, {3, 2}); });
  expect_gradcheck("unfold overlapping", {7}, [](const Tensor& x) { return unfold(x, 0, 3, 1); });
  expect_gradcheck("unfold with gaps", {2, 7}, [](const Tensor& x) { return unfold(x, 1, 2, 3); });
  expect_gradcheck("unfold dim 0", {5, 2}, [](const Tensor& x) { return unfold(x, 0, 2, 2); });
  expect_gradcheck("unfold 0-dim", {}, [](const Tensor& x) { return unfold(x, 0, 1, 1); });
}

TEST(ViewGrad, ChainsOfViewsAndContiguous) {
  expect_gradcheck("chain", {2, 3, 4}, [](const Tensor& x) {
    return unsqueeze(select(slice(transpose(x, 0, 2), 0, 0, 4, 2), 2, 1), 0);
  });
  expect_gradcheck("contiguous", {3, 4}, [](const Tensor& x) { return contiguous(transpose(x, 0, 1)); });
}

TEST(ViewGrad, OverlappingWindowsAccumulate) {
  Tensor x = zeros({5}, DType::float64).requires_grad_();
  sum(unfold(x, 0, 3, 1)).backward();  // element i appears in min(i + 1, 3, 5 - i) windows
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 2, 3, 2, 1}));
  Tensor y = zeros({4}, DType::float64).requires_grad_();
  sum(expand(y, {3, 4})).backward();
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{3, 3, 3, 3}));
}

}  // namespace
}  // namespace hearth
