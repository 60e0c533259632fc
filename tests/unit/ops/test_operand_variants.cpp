// Operand variants of primitives that a backend may leave out: bmm's bias
// (linear's epilogue) and partial sum (a gradient joining another), and
// conv2d_backward_input's partial sum. A kernel's check (registry.h) that
// refuses them makes the functional layer compute the plain product and add,
// with the same results; here on testdev, against the CPU.
#include <atomic>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/support/tensor_compare.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

using testing::relative_error;

std::atomic<int> refused{0};

// Takes only the plain form: two inputs, the rest absent.
bool plain_calls_only(const OpCall& call) {
  for (size_t i = 2; i < call.inputs.size(); ++i) {
    if (call.inputs[i].defined()) {
      ++refused;
      return false;
    }
  }
  return true;
}

// testdev's kernels of `ops` for a scope, with the check above.
class PlainOnly {
 public:
  explicit PlainOnly(std::vector<OpId> ops) : ops_(std::move(ops)) {
    for (OpId op : ops_) register_kernel_check(op, testing::test_device_kind(), plain_calls_only);
  }
  ~PlainOnly() {
    for (OpId op : ops_) register_kernel_check(op, testing::test_device_kind(), nullptr);
  }

 private:
  std::vector<OpId> ops_;
};

Tensor to(const Tensor& t, Device d) { return t.to(d).detach(); }

TEST(OperandVariants, LinearWithoutTheBiasEpilogueOrAPartialSumMatchesTheCpu) {
  manual_seed(4);
  const Tensor x0 = randn({5, 7}), w10 = randn({3, 7}), w20 = randn({3, 7}), b0 = randn({3}), g0 = randn({5, 3});
  auto run = [&](Device d) {
    Tensor x = to(x0, d).requires_grad_(), w1 = to(w10, d).requires_grad_(), b = to(b0, d).requires_grad_();
    Tensor w2 = to(w20, d).requires_grad_();
    // x feeds two products: its gradient from the second joins the first's.
    Tensor y = add(linear(x, w1, b), matmul(x, transpose(w2, 0, 1)));
    y.backward(to(g0, d));
    return std::vector<Tensor>{y, x.grad(), w1.grad(), w2.grad(), b.grad()};
  };
  const std::vector<Tensor> cpu = run(Device());
  refused = 0;
  reset_fallback_stats();
  PlainOnly plain({OpId::bmm});
  const std::vector<Tensor> dev = run(testing::test_device());
  EXPECT_GT(refused.load(), 0) << "the check was never asked about a bias or partial operand";
  EXPECT_TRUE(fallback_stats().empty()) << fallback_report();
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_LE(relative_error(dev[i], cpu[i]), 1e-6) << "result " << i;
}

TEST(OperandVariants, ConvolutionDataGradientWithoutAPartialSumMatchesTheCpu) {
  manual_seed(5);
  const Tensor x0 = randn({2, 3, 6, 6}), w10 = randn({4, 3, 3, 3}), w20 = randn({4, 3, 3, 3});
  const Tensor g0 = randn({2, 4, 4, 4});
  auto run = [&](Device d) {
    Tensor x = to(x0, d).requires_grad_(), w1 = to(w10, d).requires_grad_(), w2 = to(w20, d).requires_grad_();
    Tensor y = add(conv2d(x, w1), conv2d(x, w2));
    y.backward(to(g0, d));
    return std::vector<Tensor>{y, x.grad(), w1.grad(), w2.grad()};
  };
  const std::vector<Tensor> cpu = run(Device());
  refused = 0;
  PlainOnly plain({OpId::conv2d_backward_input});
  const std::vector<Tensor> dev = run(testing::test_device());
  if (autograd::fused_grad_accumulation_enabled()) {
    EXPECT_GT(refused.load(), 0) << "the check was never asked about a partial sum";
  }
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_LE(relative_error(dev[i], cpu[i]), 1e-6) << "result " << i;
}

}  // namespace
}  // namespace hearth
