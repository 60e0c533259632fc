// Expected strings are PyTorch's printouts of the same tensors, with hearth's
// spelling of dtypes ("float64", not "torch.float64") and node names.
#include <cmath>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/test_device.h"
#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

std::string str(const Tensor& t) { return t.to_string(); }

TEST(Print, MatrixOfFixedPointFloats) {
  Tensor t = tensor(std::vector<float>{1, -2.5, 3, 4}, {2, 2});
  EXPECT_EQ(str(t), "tensor([[ 1.0000, -2.5000],\n        [ 3.0000,  4.0000]])");
}

TEST(Print, WholeFloatsPrintWithATrailingPoint) {
  EXPECT_EQ(str(zeros({3})), "tensor([0., 0., 0.])");
  EXPECT_EQ(str(tensor({1.f, -20.f})), "tensor([  1., -20.])");
  EXPECT_EQ(str(tensor({-0.f})), "tensor([-0.])");
  EXPECT_EQ(str(scalar_tensor(2.0, DType::float32)), "tensor(2.)");
  EXPECT_EQ(str(scalar_tensor(2.5, DType::float32)), "tensor(2.5000)");
}

TEST(Print, IntegersAndBools) {
  EXPECT_EQ(str(arange(3)), "tensor([0, 1, 2])");
  EXPECT_EQ(str(tensor(std::vector<int32_t>{1, -20})), "tensor([  1, -20], dtype=int32)");
  EXPECT_EQ(str(tensor(std::vector<uint8_t>{7})), "tensor([7], dtype=uint8)");
  EXPECT_EQ(str(tensor(std::vector<bool>{true, false})), "tensor([ True, False])");
  EXPECT_EQ(str(scalar_tensor(5, DType::int64)), "tensor(5)");
  EXPECT_EQ(str(scalar_tensor(true, DType::bool_)), "tensor(True)");
}

TEST(Print, ScientificWhenMagnitudesSpreadOrAreExtreme) {
  EXPECT_EQ(str(tensor({1e-5f, 1.f})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(str(tensor({1e10f, 1.f})), "tensor([1.0000e+10, 1.0000e+00])");
  EXPECT_EQ(str(tensor({0.1f, 100.f})), "tensor([  0.1000, 100.0000])");  // a ratio of 1000 stays fixed
  EXPECT_EQ(str(tensor({-0.5f, 2000.f})), "tensor([-5.0000e-01,  2.0000e+03])");
}

TEST(Print, NonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(str(tensor({NAN, 1.5f, inf})), "tensor([   nan, 1.5000,    inf])");
  EXPECT_EQ(str(tensor({NAN, -inf})), "tensor([nan, -inf])");
  EXPECT_EQ(str(tensor({2.f, -inf})), "tensor([2., -inf])");
}

TEST(Print, DtypeSuffixForNonDefaultDtypes) {
  EXPECT_EQ(str(tensor(std::vector<double>{1, 2})), "tensor([1., 2.], dtype=float64)");
  EXPECT_EQ(str(tensor({1.5f, -2.f}).to(DType::bfloat16)), "tensor([ 1.5000, -2.0000], dtype=bfloat16)");
  EXPECT_EQ(str(tensor({0.25f}).to(DType::float16)), "tensor([0.2500], dtype=float16)");
}

TEST(Print, EmptyTensors) {
  EXPECT_EQ(str(zeros({0})), "tensor([])");
  EXPECT_EQ(str(zeros({2, 0})), "tensor([], size=(2, 0))");
  EXPECT_EQ(str(zeros({0}, DType::int64)), "tensor([], dtype=int64)");
  EXPECT_EQ(str(zeros({0, 3}, DType::float64)), "tensor([], size=(0, 3), dtype=float64)");
}

TEST(Print, ThreeDimensionsSeparateBlocksWithABlankLine) {
  EXPECT_EQ(str(arange(8).reshape({2, 2, 2})),
            "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])");
}

TEST(Print, LongRowsWrapAtEightyColumns) {
  EXPECT_EQ(str(arange(30, DType::float32)),
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
            "        28., 29.])");
}

TEST(Print, SuffixMovesToItsOwnLineWhenTooLong) {
  EXPECT_EQ(str(arange(28, DType::float64)),
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.],\n"
            "       dtype=float64)");
}

TEST(Print, SummarisesAboveAThousandElements) {
  EXPECT_EQ(str(arange(2000, DType::float32)),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])");
  EXPECT_EQ(str(arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  EXPECT_EQ(str(zeros({100, 100})),
            "tensor([[0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        ...,\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
            "        [0., 0., 0.,  ..., 0., 0., 0.]])");
  EXPECT_EQ(str(arange(1000)).find("..."), std::string::npos);  // 1000 is not above the threshold
  EXPECT_NE(str(arange(1001)).find("..."), std::string::npos);
}

TEST(Print, StyleIsChosenFromTheShownValuesOnly) {
  // The hidden middle (2.5) would force fixed-point; only the edges decide, as in PyTorch.
  Tensor t = ones({2000});
  t.narrow(0, 1000, 1).fill_(2.5);
  EXPECT_EQ(str(t), "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
}

TEST(Print, NonContiguousPrintsInLogicalOrder) {
  Tensor m = tensor(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(str(transpose(m, 0, 1)), "tensor([[1, 4],\n        [2, 5],\n        [3, 6]])");
}

TEST(Print, AutogradSuffixes) {
  Tensor x = ones({2, 2}).requires_grad_();
  EXPECT_EQ(str(x), "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)");
  Tensor y = mul(ones({2}).requires_grad_(), 2);
  EXPECT_EQ(str(y), "tensor([2., 2.], grad_fn=<MulBackward>)");
  EXPECT_EQ(str(y.detach()), "tensor([2., 2.])");
}

TEST(Print, DeviceSuffixOffTheCpu) {
  Tensor t = tensor({1.f, 2.f}).to(testing::test_device());
  EXPECT_EQ(str(t), "tensor([1., 2.], device='testdev:0')");
}

TEST(Print, StreamOperatorAndUndefined) {
  std::ostringstream os;
  os << arange(2);
  EXPECT_EQ(os.str(), "tensor([0, 1])");
  EXPECT_EQ(str(Tensor()), "tensor(undefined)");
}

}  // namespace
}  // namespace hearth
