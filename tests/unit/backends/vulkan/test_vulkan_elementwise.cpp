// The elementwise families on Vulkan (copy, unary, activation, binary,
// maximum, compare, where, clamp, pow) against the CPU kernels on random
// inputs: broadcast and strided operands, dtype conversions, and the
// backward of the activations.
#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanCopy, StridedAndConvertingCopiesMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor x = randn({6, 5, 4});
  const Tensor xv = x.to(vk());
  // A permuted (non-contiguous) source made contiguous.
  expect_close(xv.permute({2, 0, 1}).contiguous(), x.permute({2, 0, 1}).contiguous(), 0, 0, "permute");
  // Into a strided destination.
  Tensor dst = zeros({5, 12}, DType::float32, vk());
  dst.narrow(1, 2, 4).copy_(xv.select(0, 1));
  Tensor dst_cpu = zeros({5, 12});
  dst_cpu.narrow(1, 2, 4).copy_(x.select(0, 1));
  expect_close(dst, dst_cpu, 0, 0, "strided destination");
  // Conversions.
  const Tensor scaled = mul(x, 10.0f);
  for (DType to : {DType::int64, DType::int32, DType::uint8, DType::bool_}) {
    const Tensor src = to == DType::uint8 ? abs(scaled) : scaled;
    expect_close(src.to(vk()).to(to), src.to(to), 0, 0, std::string("float32 -> ") + dtype_name(to));
  }
  const Tensor ints = randint(-1000, 1000, {7, 9});
  expect_close(ints.to(vk()).to(DType::float32), ints.to(DType::float32), 0, 0, "int64 -> float32");
  expect_close(ints.to(vk()).to(DType::int32), ints.to(DType::int32), 0, 0, "int64 -> int32");
  expect_close(ints.to(vk()).t().contiguous(), ints.t().contiguous(), 0, 0, "int64 transpose");
}

TEST(VulkanCopy, FillWritesEveryDtype) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (DType t : {DType::float32, DType::int64, DType::int32, DType::uint8, DType::bool_}) {
    Tensor v = empty({3, 7}, t, vk());
    v.fill_(Scalar(5));
    expect_close(v, full({3, 7}, 5, t), 0, 0, std::string("fill ") + dtype_name(t));
  }
  Tensor big = zeros({4, 6}, DType::int64, vk());
  big.narrow(1, 1, 3).fill_(Scalar(int64_t{1} << 40));
  Tensor big_cpu = zeros({4, 6}, DType::int64);
  big_cpu.narrow(1, 1, 3).fill_(Scalar(int64_t{1} << 40));
  expect_close(big, big_cpu, 0, 0, "int64 fill of a strided view");
}

TEST(VulkanUnary, MatchesTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor x = randn({33, 17});
  const Tensor pos = add(abs(x), 0.1f);
  const Tensor xv = x.to(vk()), pv = pos.to(vk());
  expect_close(neg(xv), neg(x), 0, 0, "neg");
  expect_close(abs(xv), abs(x), 0, 0, "abs");
  expect_close(sign(xv), sign(x), 0, 0, "sign");
  expect_close(square(xv), square(x), 1e-6, 0, "square");
  expect_close(exp(xv), exp(x), 1e-5, 1e-6, "exp");
  expect_close(log(pv), log(pos), 1e-5, 1e-6, "log");
  expect_close(sqrt(pv), sqrt(pos), 1e-6, 1e-7, "sqrt");
  expect_close(rsqrt(pv), rsqrt(pos), 1e-5, 1e-6, "rsqrt");
  const Tensor ints = randint(-5, 5, {40});
  expect_close(neg(ints.to(vk())), neg(ints), 0, 0, "int neg");
  expect_close(abs(ints.to(vk())), abs(ints), 0, 0, "int abs");
  expect_close(logical_not(ints.to(vk())), logical_not(ints), 0, 0, "logical_not");
}

TEST(VulkanActivation, ForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor x = randn({64, 31});
  const Tensor g = randn({64, 31});
  const Tensor xv = x.to(vk()), gv = g.to(vk());
  expect_close(relu(xv), relu(x), 0, 0, "relu");
  expect_close(relu_backward(gv, relu(xv)), relu_backward(g, relu(x)), 0, 0, "relu_backward");
  expect_close(sigmoid(xv), sigmoid(x), 1e-5, 1e-6, "sigmoid");
  expect_close(tanh(xv), tanh(x), 1e-5, 1e-6, "tanh");
  expect_close(silu(xv), silu(x), 1e-5, 1e-6, "silu");
  expect_close(gelu(xv), gelu(x), 1e-5, 1e-6, "gelu");
  expect_close(gelu(xv, "tanh"), gelu(x, "tanh"), 1e-5, 1e-6, "gelu tanh");
  // Backward through autograd: the gradient of sum(gelu(x) * g) is gelu_backward(g, x).
  for (const std::string approx : {"none", "tanh"}) {
    Tensor xa = x.clone().requires_grad_();
    Tensor xb = xv.clone().requires_grad_();
    mul(gelu(xa, approx), g).sum().backward();
    mul(gelu(xb, approx), gv).sum().backward();
    expect_close(xb.grad(), xa.grad(), 1e-5, 1e-6, "gelu backward " + approx);
  }
}

TEST(VulkanBinary, BroadcastAndStridedOperandsMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor a = randn({8, 1, 5});
  const Tensor b = randn({3, 5});
  const Tensor c = randn({5, 8}).t();  // a transposed view
  const Tensor av = a.to(vk()), bv = b.to(vk()), cv = c.to(vk()).contiguous().t().contiguous();
  const Tensor ct = c.to(vk());  // strided on the device
  expect_close(add(av, bv, 2.5), add(a, b, 2.5), 1e-6, 1e-6, "add alpha");
  expect_close(sub(av, bv), sub(a, b), 1e-6, 1e-6, "sub");
  expect_close(mul(av, bv), mul(a, b), 1e-6, 1e-6, "mul");
  expect_close(div(av, add(abs(bv), 1.0f)), div(a, add(abs(b), 1.0f)), 1e-6, 1e-6, "div");
  expect_close(add(ct, 1.0f), add(c, 1.0f), 0, 0, "strided + scalar");
  expect_close(mul(ct, ct.t().t()), mul(c, c), 0, 0, "strided * strided");
  expect_close(maximum(av, bv), maximum(a, b), 0, 0, "maximum");
  expect_close(minimum(av, bv), minimum(a, b), 0, 0, "minimum");
  const Tensor i = randint(-100, 100, {4, 6}), j = randint(-100, 100, {6});
  expect_close(add(i.to(vk()), j.to(vk()), 3), add(i, j, 3), 0, 0, "int64 add");
  expect_close(mul(i.to(vk()), j.to(vk())), mul(i, j), 0, 0, "int64 mul");
  expect_close(pow(add(abs(av), 0.5f), bv), pow(add(abs(a), 0.5f), b), 1e-5, 1e-6, "pow");
  expect_close(pow(av, 2.0f), pow(a, 2.0f), 1e-6, 1e-7, "pow of negatives by an integer");
  expect_close(pow(i.to(vk()), 3), pow(i, 3), 0, 0, "int pow");
}

TEST(VulkanCompare, ComparisonsWhereAndClampMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor a = randint(-3, 3, {7, 9}).to(DType::float32);
  const Tensor b = randint(-3, 3, {9}).to(DType::float32);
  const Tensor av = a.to(vk()), bv = b.to(vk());
  expect_close(eq(av, bv), eq(a, b), 0, 0, "eq");
  expect_close(ne(av, bv), ne(a, b), 0, 0, "ne");
  expect_close(lt(av, bv), lt(a, b), 0, 0, "lt");
  expect_close(le(av, bv), le(a, b), 0, 0, "le");
  expect_close(gt(av, bv), gt(a, b), 0, 0, "gt");
  expect_close(ge(av, bv), ge(a, b), 0, 0, "ge");
  const Tensor ia = randint(0, 1000, {50}), ib = randint(0, 1000, {50});
  expect_close(eq(ia.to(vk()), ib.to(vk())), eq(ia, ib), 0, 0, "int64 eq");
  expect_close(gt(ia.to(vk()), ib.to(vk())), gt(ia, ib), 0, 0, "int64 gt");
  const Tensor m = gt(a, 0.0f), mv = m.to(vk());
  expect_close(logical_and(mv, lt(av, 2.0f)), logical_and(m, lt(a, 2.0f)), 0, 0, "logical_and");
  expect_close(logical_xor(mv, lt(av, 2.0f)), logical_xor(m, lt(a, 2.0f)), 0, 0, "logical_xor");
  expect_close(where(mv, av, bv), where(m, a, b), 0, 0, "where");
  expect_close(masked_fill(av, mv, -7.0f), masked_fill(a, m, -7.0f), 0, 0, "masked_fill");
  const Tensor x = randn({100});
  expect_close(clamp(x.to(vk()), -0.5f, 0.5f), clamp(x, -0.5f, 0.5f), 0, 0, "clamp");
  expect_close(clamp_min(x.to(vk()), 0.0f), clamp_min(x, 0.0f), 0, 0, "clamp_min");
  expect_close(clamp(ia.to(vk()), 100, 200), clamp(ia, 100, 200), 0, 0, "int clamp");
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

// float64 tensors (the trainer accumulates its metrics in them) on devices
// with 64-bit floats in shaders; elsewhere a clear NotImplementedError.
TEST(VulkanFloat64, ConversionsArithmeticAndSumsAreExact) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor x = randn({50, 7});
  Tensor xd;
  try {
    xd = x.to(vk()).to(DType::float64);
  } catch (const NotImplementedError& e) {
    GTEST_SKIP() << e.what();
  }
  expect_close(xd, x.to(DType::float64), 0, 0, "float32 -> float64");
  const Tensor yd = randn({50, 7}, DType::float64);
  const Tensor yv = yd.to(vk());
  expect_close(yv, yd, 0, 0, "float64 round trip");
  expect_close(add(xd, yv, 0.25), add(x.to(DType::float64), yd, 0.25), 0, 0, "float64 add");
  expect_close(mul(yv, 3.0), mul(yd, 3.0), 0, 0, "float64 mul by a scalar");
  expect_close(div(yv, add(abs(yv), 1.0)), div(yd, add(abs(yd), 1.0)), 0, 0, "float64 div");
  expect_close(sum(yv, {1}), sum(yd, {1}), 1e-14, 1e-14, "float64 sum");
  expect_close(yv.to(DType::float32), yd.to(DType::float32), 0, 0, "float64 -> float32");
  expect_close(mul(yv, 1000.0).to(DType::int64), mul(yd, 1000.0).to(DType::int64), 0, 0, "float64 -> int64");
  Tensor f = empty({3}, DType::float64, vk());
  f.fill_(0.1);
  expect_close(f, full({3}, 0.1, DType::float64), 0, 0, "float64 fill");
}

}  // namespace
}  // namespace hearth
