#include "hearth/core/tensor.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hearth/core/checked_size.h"
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::shared_ptr<Storage> host_storage(size_t nbytes) { return Storage::allocate(nbytes, Device()); }

TEST(Tensor, EmptyHasContiguousStridesAndRightSizes) {
  Tensor t = Tensor::empty({2, 3, 4}, DType::float64);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), DType::float64);
  EXPECT_TRUE(t.device().is_cpu());
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.element_size(), 8u);
  EXPECT_EQ(t.nbytes(), 192u);
  EXPECT_EQ(t.offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.is_floating_point());
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.shape_string(), "[2, 3, 4]");
  EXPECT_EQ(t.storage()->nbytes(), 192u);
}

TEST(Tensor, EmptyHandlesZeroDimAndZeroSizedShapes) {
  Tensor s = Tensor::empty({}, DType::int32);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_TRUE(s.is_contiguous());
  Tensor z = Tensor::empty({3, 0, 2});
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(z.nbytes(), 0u);
  EXPECT_EQ(z.strides(), (Strides{2, 2, 1}));
  EXPECT_TRUE(z.is_contiguous());
}

TEST(Tensor, EmptyRejectsNegativeSizes) {
  try {
    Tensor::empty({2, -1});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_TRUE(contains(e.what(), "[empty]")) << e.what();
    EXPECT_TRUE(contains(e.what(), "[2, -1]")) << e.what();
  }
}

TEST(Tensor, EmptyRefusesShapesWhoseByteCountWraps) {
  // 2^57 + 1 floats: 2^59 + 4 bytes fits, 2^57 + 1 x 2^57 elements does not.
  const int64_t big = (int64_t{1} << 57) + 1;
  for (const Shape& shape : {Shape{big, 768}, Shape{big, big}, Shape{int64_t{1} << 62, 4}}) {
    try {
      Tensor::empty(shape);
      FAIL() << "expected ShapeError for " << shape_str(shape);
    } catch (const ShapeError& e) {
      EXPECT_TRUE(contains(e.what(), shape_str(shape))) << e.what();
      EXPECT_TRUE(contains(e.what(), "int64")) << e.what();
    }
  }
  EXPECT_THROW(checked_nbytes({int64_t{1} << 61, 8}, 1), ShapeError);
  EXPECT_THROW(checked_nbytes({int64_t{1} << 61}, 4), ShapeError);
  EXPECT_EQ(checked_nbytes({3, 5}, 4), 60u);
}

TEST(Tensor, SizeAndStrideWrapAndCheckTheDim) {
  Tensor t = Tensor::empty({5, 7});
  EXPECT_EQ(t.size(0), 5);
  EXPECT_EQ(t.size(-2), 5);
  EXPECT_EQ(t.stride(-1), 1);
  EXPECT_THROW(t.size(2), ShapeError);
  EXPECT_THROW(t.stride(-3), ShapeError);
}

TEST(Tensor, FromStorageAcceptsViewsInsideTheStorage) {
  auto st = host_storage(12 * sizeof(float));
  Tensor a = Tensor::from_storage(st, DType::float32, {3, 4}, {4, 1}, 0);
  EXPECT_TRUE(a.is_contiguous());
  Tensor t = Tensor::from_storage(st, DType::float32, {4, 3}, {1, 4}, 0);  // a transposed view
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.storage().get(), a.storage().get());
  Tensor last = Tensor::from_storage(st, DType::float32, {1}, {1}, 11);
  EXPECT_EQ(last.data_ptr(), static_cast<char*>(st->data()) + 11 * sizeof(float));
  Tensor rev = Tensor::from_storage(st, DType::float32, {12}, {-1}, 11);  // negative strides, reaching element 0
  EXPECT_EQ(rev.numel(), 12);
  Tensor empty_far = Tensor::from_storage(st, DType::float32, {0, 5}, {100, 100}, 1000);  // no element: no bounds
  EXPECT_EQ(empty_far.numel(), 0);
}

TEST(Tensor, FromStorageRejectsViewsOutsideTheStorage) {
  auto st = host_storage(12 * sizeof(float));
  try {
    Tensor::from_storage(st, DType::float32, {3, 5}, {5, 1}, 0);  // 15 elements in 12
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_TRUE(contains(e.what(), "reaches outside its storage of 48 bytes")) << e.what();
    EXPECT_TRUE(contains(e.what(), "[3, 5]")) << e.what();
  }
  EXPECT_THROW(Tensor::from_storage(st, DType::float32, {1}, {1}, 12), ShapeError);       // one past the end
  EXPECT_THROW(Tensor::from_storage(st, DType::float32, {2}, {-1}, 0), ShapeError);       // before the start
  EXPECT_THROW(Tensor::from_storage(st, DType::float64, {7}, {1}, 0), ShapeError);        // wider dtype
  EXPECT_THROW(Tensor::from_storage(st, DType::float32, {2, 2}, {1}, 0), ShapeError);     // rank mismatch
  EXPECT_NO_THROW(Tensor::from_storage(st, DType::float64, {6}, {1}, 0));
}

TEST(Tensor, IsContiguousIgnoresSizeOneDims) {
  auto st = host_storage(64 * sizeof(float));
  EXPECT_TRUE(Tensor::from_storage(st, DType::float32, {1, 4}, {99, 1}, 0).is_contiguous());
  EXPECT_TRUE(Tensor::from_storage(st, DType::float32, {4, 1}, {1, 7}, 0).is_contiguous());
  EXPECT_FALSE(Tensor::from_storage(st, DType::float32, {4, 2}, {1, 4}, 0).is_contiguous());
  EXPECT_FALSE(Tensor::from_storage(st, DType::float32, {4}, {2}, 0).is_contiguous());
  EXPECT_FALSE(Tensor::from_storage(st, DType::float32, {2, 3}, {0, 1}, 0).is_contiguous());  // expanded
  EXPECT_TRUE(Tensor::from_storage(st, DType::float32, {0, 3}, {1, 5}, 0).is_contiguous());   // no elements
  EXPECT_TRUE(Tensor::from_storage(st, DType::float32, {3, 0}, {7, 7}, 0).is_contiguous());
}

TEST(Tensor, TypedDataAccessChecksTheDtype) {
  Tensor t = tensor({1.f, 2.f});
  EXPECT_EQ(t.data<float>()[1], 2.f);
  try {
    t.data<double>();
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_TRUE(contains(e.what(), "data<float64>() on a tensor of dtype float32")) << e.what();
  }
  Tensor undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_THROW(undefined.data<float>(), ValueError);
}

TEST(Tensor, ItemReadsTheOnlyElementAsAScalar) {
  EXPECT_EQ(tensor({2.5f}).item<float>(), 2.5f);
  EXPECT_EQ(tensor(std::vector<int64_t>{-7}).item<int64_t>(), -7);
  EXPECT_EQ(tensor(std::vector<double>{1.25}, Shape{1, 1}).item<double>(), 1.25);
  EXPECT_EQ(full({}, 3, DType::int32).item().category(), DTypeCategory::integral);
  EXPECT_EQ(full({}, 1.5, DType::bfloat16).item<float>(), 1.5f);
  EXPECT_TRUE(full({}, true, DType::bool_).item<bool>());
  Tensor strided = transpose(tensor(std::vector<float>{1, 2, 3, 4}, Shape{2, 2}), 0, 1);
  EXPECT_EQ(select(select(strided, 0, 0), 0, 1).item<float>(), 3.f);
  try {
    tensor({1.f, 2.f}).item();
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "[item] a tensor with 2 elements")) << e.what();
  }
  EXPECT_THROW(Tensor::empty({0}).item(), ValueError);
}

TEST(Tensor, ToVectorFollowsLogicalOrderAndConverts) {
  Tensor a = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(transpose(a, 0, 1).to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(tensor(std::vector<float>{0, 2, -1}).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_TRUE(Tensor::empty({0, 3}).to_vector<float>().empty());
}

TEST(Tensor, CloneIsAnIndependentContiguousCopy) {
  Tensor a = tensor(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  Tensor t = transpose(a, 0, 1);
  Tensor c = t.clone();
  EXPECT_NE(c.storage().get(), a.storage().get());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.shape(), t.shape());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  a.fill_(0);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  c.fill_(9);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(Tensor::empty({0, 2}).clone().shape(), (Shape{0, 2}));
}

TEST(Tensor, CopiesOfTheHandleShareEverything) {
  Tensor a = zeros({3});
  Tensor b = a;
  EXPECT_TRUE(b.is_same(a));
  b.fill_(2);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{2, 2, 2}));
  Tensor d = a.detach();
  EXPECT_FALSE(d.is_same(a));
  EXPECT_EQ(d.storage().get(), a.storage().get());
}

TEST(Tensor, ToDtypeConvertsValuesAndKeepsSameDtypeAsIs) {
  Tensor a = tensor(std::vector<float>{1.5f, -2.25f, 3.f});
  EXPECT_TRUE(a.to(DType::float32).is_same(a));
  Tensor d = a.to(DType::float64);
  EXPECT_EQ(d.dtype(), DType::float64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{1.5, -2.25, 3.0}));
  Tensor i = a.to(DType::int64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));  // truncation toward zero
  Tensor h = a.to(DType::float16);
  EXPECT_EQ(h.dtype(), DType::float16);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{1.5f, -2.25f, 3.f}));
  Tensor bf = a.to(DType::bfloat16);
  EXPECT_EQ(bf.to_vector<float>(), (std::vector<float>{1.5f, -2.25f, 3.f}));
  Tensor b = a.to(DType::bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, true, true}));
  Tensor u = tensor(std::vector<int64_t>{0, 255}).to(DType::uint8);
  EXPECT_EQ(u.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 255}));
  Tensor t = transpose(tensor(std::vector<float>{1, 2, 3, 4}, Shape{2, 2}), 0, 1).to(DType::int32);
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 2, 4}));
}

TEST(Tensor, ToTheSameDeviceIsTheSameTensor) {
  Tensor a = ones({2});
  EXPECT_TRUE(a.to(Device()).is_same(a));
  EXPECT_TRUE(a.cpu().is_same(a));
}

TEST(Tensor, VersionCounterIsSharedByViewsAndBumpedByInPlaceOps) {
  Tensor a = zeros({2, 2});
  Tensor v = transpose(a, 0, 1);
  uint32_t v0 = a.version();
  v.fill_(1);
  EXPECT_GT(a.version(), v0);
  EXPECT_EQ(a.version(), v.version());
}

}  // namespace
}  // namespace hearth
