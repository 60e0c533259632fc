// Parity cases for the elementwise family: unary math, activations (with their
// backward formulas), comparisons and logic, maximum/minimum, where, clamp, pow,
// and the index-computed fills arange_/linspace_.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/gpu/parity.h"

namespace hearth::gpu_testing {
namespace {

using Fn = std::function<Tensor(const Tensor&)>;
const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kNumeric = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                     DType::int64,   DType::int32,   DType::uint8};
const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

// A unary op on a [23, 41] input, once dense and once through a transposed view.
ParityCase unary(const std::string& op, std::vector<std::string> covers, std::vector<DType> dtypes, Fn f,
                 bool positive = false, bool backward = true) {
  return ParityCase{op + " dense + transposed",
                    std::move(covers),
                    std::move(dtypes),
                    [positive](DType dt) {
                      Tensor x = random_input({23, 41}, dt);
                      if (positive) x = cast(add(abs(cast(x, DType::float64)), 0.5), dt);
                      return std::vector<Tensor>{x};
                    },
                    [f](const std::vector<Tensor>& in, Device) {
                      return std::vector<Tensor>{f(in[0]), f(transpose(in[0], 0, 1))};
                    },
                    backward};
}

const ParityRegistrar c_neg(unary("neg", {"neg"}, kNumeric, [](const Tensor& x) { return neg(x); }));
const ParityRegistrar c_abs(unary("abs", {"abs", "sign", "mul"}, kNumeric, [](const Tensor& x) { return abs(x); }));
const ParityRegistrar c_sign(unary(
    "sign", {"sign"}, kNumeric, [](const Tensor& x) { return sign(x); }, false, false));
const ParityRegistrar c_square(unary("square", {"square"}, kNumeric, [](const Tensor& x) { return square(x); }));
const ParityRegistrar c_relu(unary("relu", {"relu", "relu_backward"}, kNumeric,
                                   [](const Tensor& x) { return relu(x); }));
const ParityRegistrar c_exp(unary("exp", {"exp"}, kFloat, [](const Tensor& x) { return exp(x); }));
const ParityRegistrar c_log(unary(
    "log", {"log"}, kFloat, [](const Tensor& x) { return log(x); }, true));
const ParityRegistrar c_sqrt(unary(
    "sqrt", {"sqrt"}, kFloat, [](const Tensor& x) { return sqrt(x); }, true));
const ParityRegistrar c_rsqrt(unary(
    "rsqrt", {"rsqrt"}, kFloat, [](const Tensor& x) { return rsqrt(x); }, true));
const ParityRegistrar c_sigmoid(unary("sigmoid", {"sigmoid"}, kFloat, [](const Tensor& x) { return sigmoid(x); }));
const ParityRegistrar c_tanh(unary("tanh", {"tanh"}, kFloat, [](const Tensor& x) { return tanh(x); }));
const ParityRegistrar c_silu(unary("silu", {"silu"}, kFloat, [](const Tensor& x) { return silu(x); }));
const ParityRegistrar c_gelu(unary("gelu erf", {"gelu", "gelu_backward"}, kFloat,
                                   [](const Tensor& x) { return gelu(x); }));
const ParityRegistrar c_gelu_tanh(unary("gelu tanh", {"gelu", "gelu_backward"}, kFloat,
                                        [](const Tensor& x) { return gelu(x, "tanh"); }));
const ParityRegistrar c_pred(unary(
    "logical_not/isnan/isfinite", {"logical_not", "isnan", "isfinite"}, kAll,
    [](const Tensor& x) { return logical_or(logical_not(x), logical_or(isnan(x), isfinite(x))); }, false, false));
const ParityRegistrar c_clamp(unary("clamp", {"clamp"}, kNumeric,
                                    [](const Tensor& x) { return clamp(x, -0.25, 0.5); }));
const ParityRegistrar c_pow_scalar(unary("pow scalar 3", {"pow"}, kFloat, [](const Tensor& x) { return pow(x, 3); }));

using Fn2 = std::function<Tensor(const Tensor&, const Tensor&)>;

// Both comparisons in one bool tensor (as bytes), so one output checks them all.
Tensor cat_bools(const Tensor& a, const Tensor& b) { return add(cast(a, DType::uint8), mul(cast(b, DType::uint8), 2)); }

ParityCase binary(const std::string& name, std::vector<std::string> covers, std::vector<DType> dtypes, Fn2 f,
                  bool backward = true) {
  return ParityCase{
      name + " broadcast + transposed",
      std::move(covers),
      std::move(dtypes),
      [](DType dt) {
        Tensor a = random_input({19, 33}, dt);
        // Share some rows so eq/ne and ties see equal elements.
        Tensor b = random_input({19, 33}, dt);
        copy_(slice(b, 0, 0, 5), slice(a, 0, 0, 5));
        return std::vector<Tensor>{a, b, random_input({33}, dt)};
      },
      [f](const std::vector<Tensor>& in, Device) {
        return std::vector<Tensor>{f(in[0], in[1]), f(transpose(in[0], 0, 1), transpose(in[1], 0, 1)), f(in[0], in[2])};
      },
      backward};
}

const ParityRegistrar c_cmp(binary(
    "eq/ne/lt/le/gt/ge", {"eq", "ne", "lt", "le", "gt", "ge"}, kAll,
    [](const Tensor& a, const Tensor& b) {
      Tensor r = logical_and(eq(a, b), ne(a, b));
      for (Tensor t : {lt(a, b), le(a, b), gt(a, b), ge(a, b)}) r = logical_xor(r, t);
      return cat_bools(r, lt(a, b));
    },
    false));
const ParityRegistrar c_logic(binary(
    "logical_and/or/xor", {"logical_and", "logical_or", "logical_xor"}, kAll,
    [](const Tensor& a, const Tensor& b) { return logical_xor(logical_and(a, b), logical_or(a, b)); }, false));
const ParityRegistrar c_max(binary("maximum", {"maximum"}, kAll,
                                   [](const Tensor& a, const Tensor& b) { return maximum(a, b); }));
const ParityRegistrar c_min(binary("minimum", {"minimum"}, kAll,
                                   [](const Tensor& a, const Tensor& b) { return minimum(a, b); }));
const ParityRegistrar c_where(binary("where", {"where"}, kAll,
                                     [](const Tensor& a, const Tensor& b) { return where(gt(a, b), a, b); }));
const ParityRegistrar c_pow(ParityCase{
    "pow tensor^tensor",
    {"pow"},
    {DType::float32, DType::float64, DType::int64, DType::int32},
    [](DType dt) {
      Tensor base = random_input({7, 9}, dt);
      if (is_floating(dt)) base = add(abs(base), 0.5);
      Tensor e = is_floating(dt) ? random_input({9}, dt) : cast(randint(-2, 5, {9}), dt);
      return std::vector<Tensor>{base, e};
    },
    [](const std::vector<Tensor>& in, Device) { return std::vector<Tensor>{pow(in[0], in[1])}; }});
const ParityRegistrar c_range(ParityCase{"arange/linspace",
                                         {"arange_", "linspace_"},
                                         {DType::float32, DType::float64, DType::int64, DType::int32},
                                         [](DType) { return std::vector<Tensor>{}; },
                                         [](const std::vector<Tensor>&, Device d) {
                                           return std::vector<Tensor>{arange(-3, 1000, 7, DType::float32, d),
                                                                      arange(-3, 1000, 7, DType::int64, d),
                                                                      arange(0.5, 9.0, 0.25, DType::float64, d),
                                                                      linspace(-1.0, 2.0, 1001, DType::float32, d)};
                                         },
                                         false});

}  // namespace
}  // namespace hearth::gpu_testing
