#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "hearth/dispatch/dispatch.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/reduction.h"
#include "tests/support/test_device.h"
#include "tests/unit/ops/reduction_testing.h"

namespace hearth {
namespace {

using red_test::grad_ok;
using red_test::ints;
using red_test::near;
using red_test::random_leaf;
using red_test::throws_with;

Tensor idx(const std::vector<int64_t>& v, const Shape& shape) { return tensor(v, shape); }
Tensor idx(const std::vector<int64_t>& v) { return tensor(v); }

// [[0, 1, 2], [3, 4, 5]]
Tensor sample(DType dt = DType::float32) { return red_test::seq({2, 3}, dt); }

TEST(IndexSelect, AlongEachDim) {
  EXPECT_TRUE(near(index_select(sample(), 1, idx({2, 0, 2})), {2, 0, 2, 5, 3, 5}));
  EXPECT_TRUE(near(index_select(sample(), 0, idx({1})), {3, 4, 5}));
  EXPECT_EQ(index_select(sample(), 0, idx({1, 1, 0})).shape(), (Shape{3, 3}));
  EXPECT_EQ(index_select(sample(), 1, idx({}, {0})).shape(), (Shape{2, 0}));
  Tensor zero_dim_index = tensor(std::vector<int64_t>{1}, Shape{});
  EXPECT_EQ(index_select(sample(), 1, zero_dim_index).shape(), (Shape{2, 1}));
}

TEST(IndexSelect, DtypesAndLayouts) {
  for (DType dt : {DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32, DType::uint8}) {
    Tensor r = index_select(sample(dt), -1, idx({1}));
    EXPECT_EQ(r.dtype(), dt);
    EXPECT_TRUE(near(r, {1, 4})) << dtype_name(dt);
  }
  EXPECT_TRUE(near(index_select(transpose(sample(), 0, 1), 0, idx({2, 1})), {2, 5, 1, 4}));
  EXPECT_TRUE(near(index_select(sample(), 1, red_test::strided_copy(idx({0, 2}))), {0, 2, 3, 5}));
}

TEST(IndexSelect, BadInput) {
  EXPECT_TRUE(throws_with<ValueError>(
      [] {
        index_select(sample(), 1, idx({0, 3}));
      },
      "index 3 is out of bounds for dimension 1 with size 3"));
  EXPECT_TRUE(throws_with<ValueError>([] { index_select(sample(), 0, idx({-1})); }, "index -1 is out of bounds"));
  EXPECT_TRUE(throws_with<TypeError>([] { index_select(sample(), 0, tensor({0.f})); }, "int64"));
  EXPECT_TRUE(throws_with<ShapeError>([] { index_select(sample(), 0, idx({0, 0}, {1, 2})); }, "1-D"));
  EXPECT_TRUE(throws_with<ShapeError>([] { index_select(sample(), 2, idx({0})); }, "dimension out of range"));
}

TEST(IndexSelect, GradientAccumulatesRepeats) {
  Tensor x = tensor(std::vector<double>{1, 2, 3}, {3}).requires_grad_();
  sum(index_select(x, 0, idx({2, 0, 2}))).backward();
  EXPECT_TRUE(near(x.grad(), {1, 0, 2}));
}

TEST(IndexSelect, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return index_select(in[0], 0, idx({2, 0, 2, 1})); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return index_select(in[0], 1, idx({3, 3})); }, {x}));
  }
}

TEST(Gather, AlongEachDim) {
  Tensor g1 = gather(sample(), 1, idx({2, 0, 1, 1}, {2, 2}));
  EXPECT_EQ(g1.shape(), (Shape{2, 2}));
  EXPECT_TRUE(near(g1, {2, 0, 4, 4}));
  Tensor g0 = gather(sample(), 0, idx({1, 0, 1}, {1, 3}));
  EXPECT_TRUE(near(g0, {3, 1, 5}));
  // The index may be longer than the input along dim and smaller elsewhere.
  EXPECT_TRUE(near(gather(sample(), 1, idx({0, 0, 2, 2}, {1, 4})), {0, 0, 2, 2}));
  EXPECT_EQ(gather(sample(), 0, idx({}, {0, 3})).shape(), (Shape{0, 3}));
}

TEST(Gather, DtypesLayoutsAndExpandedIndex) {
  for (DType dt : {DType::float64, DType::bfloat16, DType::int32, DType::uint8}) {
    EXPECT_TRUE(near(gather(sample(dt), 1, idx({1, 2}, {2, 1})), {1, 5})) << dtype_name(dt);
  }
  EXPECT_TRUE(near(gather(transpose(sample(), 0, 1), 1, idx({1, 0, 1}, {3, 1})), {3, 1, 5}));
  Tensor expanded = expand(idx({2, 0}, {1, 2}), {2, 2});  // stride 0 along dim 0
  EXPECT_TRUE(near(gather(sample(), 1, expanded), {2, 0, 5, 3}));
  Tensor a3 = red_test::seq({2, 3, 4});
  Tensor i3 = idx({3, 0, 1, 2, 2, 1}, {2, 3, 1});
  EXPECT_TRUE(near(gather(a3, 2, i3), {3, 4, 9, 14, 18, 21}));
}

TEST(Gather, BadInput) {
  EXPECT_TRUE(throws_with<ValueError>(
      [] {
        gather(sample(), 1, idx({0, 5}, {2, 1}));
      },
      "index 5 is out of bounds for dimension 1 with size 3"));
  EXPECT_TRUE(throws_with<ShapeError>([] { gather(sample(), 1, idx({0, 1})); }, "as many dims"));
  EXPECT_TRUE(throws_with<ShapeError>(
      [] {
        gather(sample(), 1, idx({0, 0, 0}, {3, 1}));
      },
      "larger than input [2, 3] in dimension 0"));
  EXPECT_TRUE(throws_with<TypeError>([] { gather(sample(), 1, tensor(std::vector<int32_t>{0, 0}, {2, 1})); }, "int64"));
}

TEST(Gather, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    Tensor i = idx({0, 3, 3, 1, 2, 2}, {3, 2});
    EXPECT_TRUE(grad_ok([i](const std::vector<Tensor>& in) { return gather(in[0], 1, i); }, {x}));
    Tensor j = idx({2, 2, 0, 1}, {1, 4});
    EXPECT_TRUE(grad_ok([j](const std::vector<Tensor>& in) { return gather(in[0], 0, j); }, {x}));
  }
}

TEST(ScatterAdd, OutOfPlaceAndInPlace) {
  Tensor base = zeros({2, 3});
  Tensor src = tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  Tensor i = idx({0, 0, 2, 1}, {2, 2});
  Tensor out = scatter_add(base, 1, i, src);
  EXPECT_TRUE(near(out, {3, 0, 0, 0, 4, 3}));
  EXPECT_TRUE(near(base, {0, 0, 0, 0, 0, 0}));  // out of place leaves the input alone
  scatter_add_(base, 1, i, src);
  EXPECT_TRUE(near(base, {3, 0, 0, 0, 4, 3}));
  Tensor rows = scatter_add(ones({3, 2}), 0, idx({2, 2}, {1, 2}), tensor(std::vector<float>{5, 6}, {1, 2}));
  EXPECT_TRUE(near(rows, {1, 1, 1, 1, 6, 7}));
}

TEST(ScatterAdd, SrcLargerThanIndexAndStridedOperands) {
  Tensor src = red_test::seq({2, 3});
  Tensor out = scatter_add(zeros({2, 2}), 1, idx({1, 0}, {2, 1}), src);  // only src[:, :1] is used
  EXPECT_TRUE(near(out, {0, 0, 3, 0}));
  Tensor self_t = transpose(zeros({3, 2}), 0, 1);  // a non-contiguous destination
  scatter_add_(self_t, 0, expand(idx({1, 1, 0}, {1, 3}), {2, 3}), add(red_test::seq({2, 3}), 1.0));
  EXPECT_TRUE(near(self_t, {0, 0, 9, 5, 7, 0}));
}

TEST(ScatterAdd, DtypesAndOneHotBuildOnIt) {
  Tensor i = idx({1, 1, 0}, {3});
  for (DType dt : {DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32}) {
    Tensor r = scatter_add(zeros({2}, dt), 0, i, ones({3}, dt));
    EXPECT_EQ(r.dtype(), dt);
    EXPECT_TRUE(near(r, {1, 2})) << dtype_name(dt);
  }
}

TEST(ScatterAdd, BadInput) {
  EXPECT_TRUE(throws_with<ValueError>([] { scatter_add(zeros({2}), 0, idx({2}), ones({1})); },
                                      "index 2 is out of bounds for dimension 0 with size 2"));
  EXPECT_TRUE(throws_with<TypeError>([] { scatter_add(zeros({2}), 0, idx({0}), ones({1}, DType::float64)); },
                                     "src dtype float64"));
  EXPECT_TRUE(throws_with<ShapeError>([] { scatter_add(zeros({2}), 0, idx({0, 1}), ones({1})); }, "larger than src"));
  EXPECT_TRUE(throws_with<ShapeError>([] { scatter_add(zeros({2, 2}), 0, idx({0}), ones({1})); }, "as many dims"));
  Tensor leaf = zeros({2}, DType::float64).requires_grad_();
  EXPECT_THROW(scatter_add_(leaf, 0, idx({0}), ones({1}, DType::float64)), AutogradError);
}

TEST(ScatterAdd, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor a = random_leaf({3, 4}, nc);
    Tensor src = random_leaf({3, 3}, nc);
    Tensor i = idx({0, 0, 2, 3, 3, 3}, {3, 2});  // repeated targets; src wider than index
    EXPECT_TRUE(grad_ok([i](const std::vector<Tensor>& in) { return scatter_add(in[0], 1, i, in[1]); }, {a, src}));
    Tensor j = idx({2, 0, 2, 1}, {2, 2});
    EXPECT_TRUE(grad_ok([j](const std::vector<Tensor>& in) { return scatter_add(in[0], 0, j, in[1]); }, {a, src}));
  }
}

TEST(OneHot, ValuesAndShapes) {
  Tensor o = one_hot(idx({0, 2, 1}));
  EXPECT_EQ(o.shape(), (Shape{3, 3}));
  EXPECT_EQ(ints(o), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 1, 0}));
  Tensor o5 = one_hot(idx({3, 0}, {1, 2}), 5);
  EXPECT_EQ(o5.shape(), (Shape{1, 2, 5}));
  EXPECT_EQ(ints(o5), (std::vector<int64_t>{0, 0, 0, 1, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(one_hot(idx({}, {0}), 4).shape(), (Shape{0, 4}));
  EXPECT_EQ(ints(one_hot(tensor(std::vector<int64_t>{1}, Shape{}), 2)), (std::vector<int64_t>{0, 1}));
}

TEST(OneHot, BadInput) {
  EXPECT_TRUE(throws_with<ValueError>([] { one_hot(idx({0, 3}), 3); }, "class value 3 is out of range"));
  EXPECT_TRUE(throws_with<ValueError>([] { one_hot(idx({-1})); }, "non-negative"));
  EXPECT_TRUE(throws_with<ValueError>([] { one_hot(idx({}, {0})); }, "cannot infer"));
  EXPECT_TRUE(throws_with<TypeError>([] { one_hot(tensor({1.f})); }, "int64"));
}

// ---- where index ranges are checked ----
// An index off the CPU is not read back by the ops layer; the kernels guard it.
// The host-backed "testdev" kind stands in for an accelerator: here without
// its indexing kernels, so with the CPU fallback its calls reach the CPU
// kernels with unchecked indices, which must still raise the ops layer's
// error (and without amin, whose fallback shows that the ops layer read the
// indices back).

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class IndexChecks : public ::testing::Test {
 protected:
  void SetUp() override { reset_fallback_stats(); }
  void TearDown() override { reset_fallback_stats(); }
  static Tensor on_dev(const Tensor& t) { return t.to(testing::test_device()); }
  // Whether the ops layer read the index back (amin runs only for that).
  static bool host_checked() { return fallback_stats().count("amin") > 0; }
  ScopedEnv fallback_{"HEARTH_ENABLE_CPU_FALLBACK", "1"};
  ScopedEnv check_{"HEARTH_CHECK_INDICES", nullptr};
  testing::ScopedOpRemoval lacks_{{OpId::gather, OpId::index_select, OpId::scatter_add, OpId::amin}};
};

TEST_F(IndexChecks, OffTheCpuTheKernelsRaiseWithoutAHostCheck) {
  Tensor x = on_dev(sample());
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        gather(x, 1, on_dev(idx({0, 5}, {2, 1})));
      },
      "[gather] index 5 is out of bounds for dimension 1 with size 3"));
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        index_select(x, 1, on_dev(idx({0, 3})));
      },
      "[index_select] index 3 is out of bounds for dimension 1 with size 3"));
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        scatter_add(x, 0, on_dev(idx({0, -1}, {1, 2})), x);
      },
      "[scatter_add] index -1 is out of bounds for dimension 0 with size 2"));
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        one_hot(on_dev(idx({0, 3})), 3);
      },
      "[scatter_add] index 3 is out of bounds for dimension 1 with size 3"));
  EXPECT_FALSE(host_checked());
  // Valid indices still work, and still without reading them back.
  EXPECT_TRUE(near(gather(x, 1, on_dev(idx({2, 0}, {2, 1}))).cpu(), {2, 3}));
  EXPECT_TRUE(near(index_select(x, 0, on_dev(idx({1}))).cpu(), {3, 4, 5}));
  EXPECT_EQ(ints(one_hot(on_dev(idx({2, 0})), 3).cpu()), (std::vector<int64_t>{0, 0, 1, 1, 0, 0}));
  EXPECT_FALSE(host_checked());
}

TEST_F(IndexChecks, CheckIndicesChecksOnTheHostForEveryDevice) {
  ScopedEnv on("HEARTH_CHECK_INDICES", "1");
  Tensor x = on_dev(sample());
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        gather(x, 1, on_dev(idx({0, 5}, {2, 1})));
      },
      "[gather] index 5 is out of bounds for dimension 1 with size 3"));
  EXPECT_TRUE(host_checked());
  EXPECT_EQ(fallback_stats().count("gather"), 0u);  // raised before the kernel ran
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        one_hot(on_dev(idx({0, 3})), 3);
      },
      "[one_hot] class value 3 is out of range for num_classes 3"));
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        scatter_add_(x, 0, on_dev(idx({2}, {1, 1})), x);
      },
      "[scatter_add_] index 2 is out of bounds for dimension 0 with size 2"));
}

TEST_F(IndexChecks, CpuIndicesAreCheckedOnTheHostAlways) {
  EXPECT_TRUE(throws_with<ValueError>(
      [] {
        gather(sample(), 1, idx({0, 5}, {2, 1}));
      },
      "[gather] index 5 is out of bounds for dimension 1 with size 3"));
  EXPECT_TRUE(throws_with<ValueError>([] { scatter_add_(zeros({2}), 0, idx({7}), ones({1})); },
                                      "[scatter_add_] index 7 is out of bounds"));
}

TEST_F(IndexChecks, InferringOneHotClassesReadsTheIndexOnAnyDevice) {
  EXPECT_TRUE(throws_with<ValueError>(
      [&] {
        one_hot(on_dev(idx({1, -1})));
      },
      "[one_hot] class values must be "
      "non-negative, got -1"));
  EXPECT_EQ(ints(one_hot(on_dev(idx({1, 0}))).cpu()), (std::vector<int64_t>{0, 1, 1, 0}));
}

}  // namespace
}  // namespace hearth
