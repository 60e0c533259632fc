// The reducer's bucketing and its hook-driven launches, in one process (a
// Gloo group of one rank: averaging changes nothing, so the gradients must
// come back exactly as backward left them).
#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/distributed/gradient_reducer.h"
#include "hearth/distributed/process_group_registry.h"
#include "hearth/distributed/tcp_store.h"
#include "hearth/nn/models/mlp.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/unit/distributed/dist_testing.h"

using namespace hearth;
using namespace std::chrono_literals;

namespace {

distributed::ProcessGroupPtr group_of_one() {
  auto store = std::make_shared<distributed::TcpStore>(distributed::TcpStoreOptions{
      .host = "127.0.0.1", .port = 0, .rank = 0, .world_size = 1, .serve = true, .timeout = 5s, .token = ""});
  distributed::ProcessGroupOptions o;
  o.timeout = 5s;
  return distributed::new_process_group("gloo", store, o);
}

}  // namespace

TEST(GradientReducer, BucketsInReverseOrderAndLaunchDuringBackward) {
  HEARTH_SKIP_WITHOUT_GLOO();
  manual_seed(1);
  nn::models::MLP model(8, {32, 32}, 4, 0.0);
  std::vector<Tensor> params = model.parameters();
  // Small buckets: several of them, so launches can happen before backward ends.
  distributed::GradientReducer reducer(group_of_one(), params, /*bucket_bytes=*/600);
  ASSERT_GT(reducer.num_buckets(), 2u);
  std::vector<std::vector<size_t>> layout = reducer.bucket_layout();
  EXPECT_EQ(layout.front().front(), params.size() - 1);  // the last parameter comes first
  size_t total = 0;
  for (const auto& b : layout) total += b.size();
  EXPECT_EQ(total, params.size());

  Tensor x = randn({5, 8});
  Tensor y = tensor(std::vector<int64_t>{0, 1, 2, 3, 0}, {5});
  // Reference gradients without the reducer's involvement.
  reducer.prepare_for_backward(false);
  cross_entropy(model.forward(x), y).backward();
  std::vector<std::vector<float>> expected;
  for (const Tensor& p : params) expected.push_back(p.grad().to_vector<float>());
  reducer.finish();  // a non-sync backward leaves the gradients alone
  for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(params[i].grad().to_vector<float>(), expected[i]);
  for (const Tensor& p : params) p.zero_grad_();

  reducer.prepare_for_backward(true);
  cross_entropy(model.forward(x), y).backward();
  EXPECT_GE(reducer.launched_during_backward(), reducer.num_buckets() - 1);
  reducer.finish();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(params[i].grad().to_vector<float>(), expected[i]) << i;
}

// A channels_last parameter's gradient travels in its memory order and comes
// back channels_last with the same values (an NCHW .grad beside an NHWC
// parameter would send the optimizer's fused step down a slow path).
TEST(GradientReducer, ChannelsLastGradientsKeepTheirLayout) {
  HEARTH_SKIP_WITHOUT_GLOO();
  manual_seed(2);
  Tensor w = contiguous(randn({4, 3, 3, 3}), MemoryFormat::channels_last).detach().requires_grad_(true);
  Tensor b = randn({4}).detach().requires_grad_(true);
  distributed::GradientReducer reducer(group_of_one(), {w, b});
  Tensor x = contiguous(randn({2, 3, 6, 6}), MemoryFormat::channels_last);
  reducer.prepare_for_backward(false);
  conv2d(x, w, b, {1, 1}, {1, 1}).sum().backward();
  const std::vector<float> expected_w = w.grad().contiguous().to_vector<float>();
  const std::vector<float> expected_b = b.grad().to_vector<float>();
  reducer.finish();
  w.zero_grad_();
  b.zero_grad_();

  reducer.prepare_for_backward(true);
  conv2d(x, w, b, {1, 1}, {1, 1}).sum().backward();
  reducer.finish();
  EXPECT_TRUE(w.grad().is_contiguous(MemoryFormat::channels_last));
  EXPECT_FALSE(w.grad().is_contiguous());
  EXPECT_EQ(w.grad().contiguous().to_vector<float>(), expected_w);
  EXPECT_EQ(b.grad().to_vector<float>(), expected_b);
}
