// Parity cases for the kernels every backend has: copy_ (layouts and casts),
// fill_, the four arithmetic ops, the random fills and bmm.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/gpu/parity.h"

namespace hearth::gpu_testing {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8};

const ParityRegistrar copy_cast({"copy_ transposed + cast to every dtype",
                                 {"copy_"},
                                 kAll,
                                 [](DType dt) {
                                   return std::vector<Tensor>{random_input({37, 19}, dt)};
                                 },
                                 [](const std::vector<Tensor>& in, Device) {
                                   std::vector<Tensor> outs;
                                   for (DType to : {DType::float32, DType::int64, DType::bfloat16, DType::bool_})
                                     outs.push_back(cast(transpose(in[0], 0, 1).contiguous(), to));
                                   return outs;
                                 },
                                 false});

const ParityRegistrar fill({"fill_ strided slice",
                            {"fill_"},
                            kAll,
                            [](DType dt) {
                              return std::vector<Tensor>{random_input({9, 33}, dt)};
                            },
                            [](const std::vector<Tensor>& in, Device) {
                              Tensor t = in[0].clone();
                              fill_(slice(t, 1, 1, 30, 3), 7);
                              return std::vector<Tensor>{t};
                            },
                            false});

ParityCase binary_case(const char* name, const char* op, std::function<Tensor(const Tensor&, const Tensor&)> f,
                       std::vector<DType> dtypes) {
  return ParityCase{std::string(name) + " broadcast+transposed",
                    {op, "sum"},
                    std::move(dtypes),
                    [](DType dt) {
                      Tensor b = random_input({1, 17}, dt);
                      if (is_floating(dt)) b = add(b, 3.0).to(dt);  // keep divisors away from zero
                      return std::vector<Tensor>{random_input({17, 65}, dt), b, random_input({65}, dt)};
                    },
                    [f](const std::vector<Tensor>& in, Device) {
                      Tensor a_t = transpose(in[0], 0, 1);  // [65, 17] non-contiguous, broadcast with [1, 17]
                      return std::vector<Tensor>{f(a_t, in[1]), f(in[0], in[2])};
                    }};
}

const ParityRegistrar add_case(binary_case(
    "add", "add", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); }, kAll));
const ParityRegistrar sub_case(binary_case(
    "sub", "sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, kAll));
const ParityRegistrar mul_case(binary_case(
    "mul", "mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, kAll));
const ParityRegistrar div_case(binary_case(
    "div", "div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, kFloat));

const ParityRegistrar random_fills({"uniform_/normal_/randint_ same stream as cpu",
                                    {"uniform_", "normal_", "randint_"},
                                    kFloat,
                                    [](DType) { return std::vector<Tensor>{}; },
                                    [](const std::vector<Tensor>&, Device d) {
                                      return std::vector<Tensor>{
                                          rand({1001}, DType::float32, d), randn({777}, DType::float64, d),
                                          randn({513}, DType::bfloat16, d), randint(-5, 1000, {999}, DType::int64, d)};
                                    },
                                    false,
                                    1e-7});

const ParityRegistrar bmm_case(
    {"matmul batched, transposed operand",
     {"bmm"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({3, 33, 47}, dt), random_input({3, 65, 47}, dt),
                                  random_input({47, 31}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{matmul(in[0], transpose(in[1], 1, 2)), matmul(in[0], in[2])};
     },
     true,
     5e-3});  // TF32 tensor cores for float32

// linear with a bias: the GEMM's bias epilogue (cuBLASLt), a 3-D input folded
// into rows, and a transposed (column-major) input; backward through the
// products, the bias gradient as a product with ones.
const ParityRegistrar linear_case(
    {"linear + bias epilogue, 3-D and transposed",
     {"bmm"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({4, 37, 65}, dt), random_input({129, 65}, dt), random_input({129}, dt),
                                  random_input({65, 23}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{linear(in[0], in[1], in[2]), linear(transpose(in[3], 0, 1), in[1], in[2])};
     },
     true,
     5e-3});

}  // namespace
}  // namespace hearth::gpu_testing

namespace hearth::gpu_testing {
namespace {

// conv2d forward and all three backward kernels; shapes with stride, padding,
// dilation, groups (incl. depthwise) and a 1x1.
ParityCase conv_case(const char* name, Shape x, Shape w, Pair stride, Pair padding, Pair dilation, int64_t groups,
                     bool bias) {
  return ParityCase{std::string("conv2d ") + name,
                    {"conv2d", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias"},
                    {DType::float32, DType::float64, DType::bfloat16, DType::float16},
                    [=](DType dt) {
                      return std::vector<Tensor>{random_input(x, dt), random_input(w, dt),
                                                 bias ? random_input({w[0]}, dt) : Tensor()};
                    },
                    [=](const std::vector<Tensor>& in, Device) {
                      return std::vector<Tensor>{conv2d(in[0], in[1], in[2], stride, padding, dilation, groups)};
                    },
                    true,
                    5e-3};
}

const ParityRegistrar conv_basic(conv_case("3x3 pad1", {2, 5, 11, 9}, {7, 5, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true));
const ParityRegistrar conv_strided(conv_case("5x3 s2 p(2,1) d(1,2)", {3, 4, 13, 12}, {6, 4, 5, 3}, {2, 2}, {2, 1},
                                             {1, 2}, 1, true));
const ParityRegistrar conv_groups(conv_case("groups=2 no bias", {2, 6, 8, 8}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 2,
                                            false));
const ParityRegistrar conv_depthwise(conv_case("depthwise 3x3", {2, 8, 9, 9}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 8,
                                               true));
const ParityRegistrar conv_1x1(conv_case("1x1 64->32", {4, 64, 7, 7}, {32, 64, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true));
// conv2d with the ReLU fused into the bias's pass (the bias kernel runs for
// NCHW too then), and without a bias (a ReLU pass of its own).
ParityCase conv_relu_case(const char* name, Shape x, Shape w, bool bias) {
  return ParityCase{
      std::string("conv2d_relu ") + name,
      {"conv2d_relu", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias", "relu_backward"},
      {DType::float32, DType::float64, DType::bfloat16, DType::float16},
      // Without a bias, integer inputs would give exact zeros, which an inexact
      // algorithm (Winograd in float16) turns into tiny values of either sign.
      [=](DType dt) {
        return bias ? relu_safe_conv_inputs(x, w, bias, dt)
                    : std::vector<Tensor>{random_input(x, dt), random_input(w, dt), Tensor()};
      },
      [=](const std::vector<Tensor>& in, Device) {
        return std::vector<Tensor>{conv2d_relu(in[0], in[1], in[2], {1, 1}, {1, 1})};
      },
      true,
      5e-3};
}
const ParityRegistrar conv_relu_bias(conv_relu_case("3x3 pad1 bias", {2, 5, 11, 9}, {7, 5, 3, 3}, true));
const ParityRegistrar conv_relu_nobias(conv_relu_case("3x3 pad1 no bias", {2, 5, 11, 9}, {7, 5, 3, 3}, false));

}  // namespace
}  // namespace hearth::gpu_testing

namespace hearth::gpu_testing {
namespace {

const std::vector<DType> kPoolTypes = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const ParityRegistrar max_pool({"max_pool2d 3x3 s2 p1 + 2x2 dilated ceil",
                                {"max_pool2d", "max_pool2d_backward"},
                                kPoolTypes,
                                [](DType dt) {
                                  return std::vector<Tensor>{random_input({2, 3, 13, 11}, dt)};
                                },
                                [](const std::vector<Tensor>& in, Device) {
                                  return std::vector<Tensor>{max_pool2d(in[0], {3, 3}, {2, 2}, {1, 1}),
                                                             max_pool2d(in[0], {2, 2}, {2, 1}, {0, 1}, {2, 1}, true)};
                                }});

const ParityRegistrar avg_pool({"avg_pool2d 3x3 s2 p1 (in/excl pad), ceil",
                                {"avg_pool2d", "avg_pool2d_backward"},
                                kPoolTypes,
                                [](DType dt) {
                                  return std::vector<Tensor>{random_input({2, 3, 13, 11}, dt)};
                                },
                                [](const std::vector<Tensor>& in, Device) {
                                  return std::vector<Tensor>{avg_pool2d(in[0], {3, 3}, {2, 2}, {1, 1}),
                                                             avg_pool2d(in[0], {3, 2}, {2, 2}, {1, 1}, true, false)};
                                }});

const ParityRegistrar adaptive_pool(
    {"adaptive_avg_pool2d 13x11->(1,1),(5,3)",
     {"adaptive_avg_pool2d", "adaptive_avg_pool2d_backward"},
     kPoolTypes,
     [](DType dt) {
       return std::vector<Tensor>{random_input({2, 3, 13, 11}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{adaptive_avg_pool2d(in[0], {1, 1}), adaptive_avg_pool2d(in[0], {5, 3})};
     }});

}  // namespace
}  // namespace hearth::gpu_testing
