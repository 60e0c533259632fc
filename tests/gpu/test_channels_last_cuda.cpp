// A small ResNet's forward and backward on CUDA in channels_last equal the
// same in NCHW, for float32 and the half types, whose tensor-core
// convolutions want exactly this layout. Each weight gradient must also come
// back in its parameter's format. The two layouts run different cuDNN
// algorithms, so the results differ by rounding: with TF32 on (the default)
// float32 products keep fp16's 10 mantissa bits and get fp16's tolerance;
// `gpu.channels_last_fp32` runs the float32 case again with TF32 off, held
// tighter.
#include <gtest/gtest.h>

#include "hearth/core/backend_options.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth {
namespace {

using gpu_testing::relative_error;

std::shared_ptr<nn::models::ResNet> tiny_resnet(DType dtype, bool channels_last) {
  manual_seed(21);
  nn::models::ResNetConfig c;
  c.block = nn::models::ResNetBlock::bottleneck;
  c.layers = {1, 1, 1, 1};
  c.base_width = 8;
  c.num_classes = 10;
  auto net = std::make_shared<nn::models::ResNet>(c);
  net->to(gpu_testing::cuda0(), dtype);
  if (channels_last) nn::to_channels_last(*net);
  return net;
}

class ChannelsLastCuda : public ::testing::TestWithParam<DType> {};

TEST_P(ChannelsLastCuda, ResnetStepMatchesNchw) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const bool exact_float32 = dt == DType::float32 && !float32_reduced_precision_allowed();
  const double tol = exact_float32 ? 1e-3 : 8e-2;
  manual_seed(22);
  Tensor x = randn({4, 3, 32, 32}).to(gpu_testing::cuda0(), dt);
  Tensor target = randint(0, 10, {4}, DType::int64, gpu_testing::cuda0());
  auto a = tiny_resnet(dt, false), b = tiny_resnet(dt, true);
  for (const Tensor& p : b->parameters())
    if (p.dim() == 4 && p.size(1) > 1 && p.size(2) * p.size(3) > 1) {  // 1x1: both formats coincide
      EXPECT_EQ(p.suggest_memory_format(), MemoryFormat::channels_last);
    }
  Tensor xa = x, xb = contiguous(x, MemoryFormat::channels_last);
  Tensor la = a->forward(xa), lb = b->forward(xb);
  EXPECT_LT(relative_error(lb, la), tol);
  cross_entropy(la.to(DType::float32), target).backward();
  cross_entropy(lb.to(DType::float32), target).backward();
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    SCOPED_TRACE(pa[i].first);
    const Tensor ga = pa[i].second.grad(), gb = pb[i].second.grad();
    ASSERT_TRUE(gb.defined());
    EXPECT_EQ(gb.suggest_memory_format(), pb[i].second.suggest_memory_format());
    EXPECT_LT(relative_error(gb, ga), 3 * tol);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ChannelsLastCuda, ::testing::Values(DType::float32, DType::bfloat16, DType::float16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace hearth
