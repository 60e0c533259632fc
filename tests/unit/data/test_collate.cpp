#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/batch_assembler.h"
#include "hearth/data/collate.h"
#include "hearth/ops/factory.h"
#include "tests/support/test_device.h"

namespace hearth::data {
namespace {

Tensor scalar_i64(int64_t v) {
  Tensor t = Tensor::empty({}, DType::int64);
  *t.data<int64_t>() = v;
  return t;
}

TEST(Collate, StacksScalarsAndImagesAlongANewDim) {
  std::vector<Example> samples;
  for (int64_t i = 0; i < 3; ++i) {
    Tensor img = tensor<float>({1.0f * i, 2.0f * i, 3.0f * i, 4.0f * i}, {1, 2, 2});
    samples.push_back(Example{{"pixel_values", img}, {"labels", scalar_i64(i + 10)}});
  }
  Batch b = default_collate(samples);
  EXPECT_EQ(b.names(), (std::vector<std::string>{"labels", "pixel_values"}));
  EXPECT_EQ(b.at("labels").shape(), Shape{3});
  EXPECT_EQ(b.at("labels").to_vector<int64_t>(), (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(b.at("pixel_values").shape(), (Shape{3, 1, 2, 2}));
  EXPECT_TRUE(b.at("pixel_values").is_contiguous());
  EXPECT_EQ(b.at("pixel_values").to_vector<float>(), (std::vector<float>{0, 0, 0, 0, 1, 2, 3, 4, 2, 4, 6, 8}));
}

TEST(Collate, GathersNonContiguousAndOffDeviceSamples) {
  Tensor base = tensor<int32_t>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor t = base.transpose(0, 1);  // [[0,3],[1,4],[2,5]]
  Tensor col = base.select(1, 1);   // [1, 4], stride 3
  Tensor dev = tensor<int32_t>({7, 8, 9, 10, 11, 12}, {3, 2}).to(hearth::testing::test_device());
  Tensor out = stack_samples({t, t.contiguous(), dev}, "x");
  EXPECT_EQ(out.shape(), (Shape{3, 3, 2}));
  EXPECT_TRUE(out.device().is_cpu());
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5, 0, 3, 1, 4, 2, 5, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(stack_samples({col, col}).to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 1, 4}));
}

TEST(Collate, EveryDTypeAndEmptySamples) {
  for (DType d : {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32,
                  DType::uint8, DType::bool_}) {
    Tensor a = tensor<double>({1, 0}).to(d), b = tensor<double>({0, 1}).to(d);
    Tensor s = stack_samples({a, b});
    EXPECT_EQ(s.dtype(), d);
    EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{1, 0, 0, 1})) << dtype_name(d);
  }
  Tensor e = stack_samples({Tensor::empty({0, 4}), Tensor::empty({0, 4})});
  EXPECT_EQ(e.shape(), (Shape{2, 0, 4}));
}

TEST(Collate, MismatchesAreNamedErrors) {
  Example a{{"x", Tensor::empty({2})}}, b{{"x", Tensor::empty({3})}};
  try {
    default_collate({a, b});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'x': sample 1 has shape [3] but sample 0 has shape [2]"),
              std::string::npos)
        << e.what();
  }
  Example c{{"x", Tensor::empty({2}, DType::int64)}};
  EXPECT_THROW(default_collate({a, c}), TypeError);
  Example d{{"y", Tensor::empty({2})}};
  EXPECT_THROW(default_collate({a, d}), ValueError);
  Example e{{"x", Tensor::empty({2})}, {"y", Tensor::empty({2})}};
  EXPECT_THROW(default_collate({a, e}), ValueError);
  EXPECT_THROW(default_collate({}), ValueError);
  EXPECT_THROW(stack_samples({Tensor()}), ValueError);
}

TEST(BatchAssembler, SampleBySampleGivesDefaultCollatesBatchAndErrors) {
  auto fresh = [](const Shape& shape, DType dtype) { return Tensor::empty(shape, dtype); };
  Tensor base = tensor<int32_t>({0, 1, 2, 3, 4, 5}, {2, 3});
  std::vector<Example> samples = {
      Example{{"x", base.transpose(0, 1)}, {"labels", scalar_i64(1)}},  // not contiguous
      Example{{"x", base.transpose(0, 1).contiguous()}, {"labels", scalar_i64(2)}},
      Example{{"x", tensor<int32_t>({7, 8, 9, 10, 11, 12}, {3, 2}).to(hearth::testing::test_device())},
              {"labels", scalar_i64(3)}}};
  BatchAssembler assembler(3, fresh);
  for (const Example& s : samples) assembler.add(s);
  Batch got = assembler.finish();
  Batch expected = default_collate(samples);
  EXPECT_EQ(got.names(), expected.names());
  for (const std::string& name : expected.names()) {
    EXPECT_EQ(got.at(name).shape(), expected.at(name).shape()) << name;
    EXPECT_EQ(got.at(name).to(DType::int64).to_vector<int64_t>(),
              expected.at(name).to(DType::int64).to_vector<int64_t>())
        << name;
  }

  Example a{{"x", Tensor::empty({2})}}, b{{"x", Tensor::empty({3})}};
  BatchAssembler shapes(2, fresh);
  shapes.add(a);
  try {
    shapes.add(b);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'x': sample 1 has shape [3] but sample 0 has shape [2]"),
              std::string::npos)
        << e.what();
  }
  BatchAssembler dtypes(2, fresh), fields(2, fresh), short_batch(2, fresh);
  dtypes.add(a);
  EXPECT_THROW(dtypes.add(Example{{"x", Tensor::empty({2}, DType::int64)}}), TypeError);
  fields.add(a);
  EXPECT_THROW(fields.add(Example{{"y", Tensor::empty({2})}}), ValueError);
  short_batch.add(a);
  EXPECT_THROW(short_batch.finish(), ValueError);
  EXPECT_THROW(BatchAssembler(0, fresh), ValueError);
}

TEST(Example, AtNamesTheFieldsPresent) {
  Example ex{{"input_ids", Tensor::empty({4})}, {"labels", Tensor::empty({})}};
  EXPECT_TRUE(ex.contains("labels"));
  try {
    ex.at("pixel_values");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("input_ids, labels"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hearth::data
