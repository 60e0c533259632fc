// Parity cases for the CUDA row reductions and cumsum: every shape class the
// launch planner tells apart (many short rows, one group per row, block-wide
// groups, long rows split into segments), reductions over leading, trailing
// and middle dims (which the ops layer turns into transposing copies), views
// made inside the case, every dtype each op takes, forward and backward.
#include <cmath>
#include <limits>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/gpu/parity.h"

namespace hearth::gpu_testing {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kSummable = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                      DType::int64,   DType::int32,   DType::uint8};
const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

constexpr double kInf = std::numeric_limits<double>::infinity();

using Fn = std::function<std::vector<Tensor>(const Tensor&)>;

// One random input of `shape`; `fn` applies the op to it in several ways.
ParityCase one_input(std::string name, std::vector<std::string> covers, std::vector<DType> dtypes, Shape shape, Fn fn,
                     bool backward = true, double tolerance = 0) {
  return ParityCase{std::move(name),
                    std::move(covers),
                    std::move(dtypes),
                    [shape](DType dt) { return std::vector<Tensor>{random_input(shape, dt)}; },
                    [fn](const std::vector<Tensor>& in, Device) { return fn(in[0]); },
                    backward,
                    tolerance};
}

// ---- sum and mean ----

std::vector<Tensor> sums(const Tensor& x) {
  std::vector<Tensor> r{sum(x), sum(x, {-1}), sum(x, {0}), sum(transpose(x, 0, 1), {1}, true)};
  if (x.is_floating_point()) r.push_back(mean(x, {-1}));
  return r;
}

const ParityRegistrar sum_odd(one_input("sum/mean [37,129] each dim, transposed", {"sum"}, kSummable, {37, 129}, sums));
const ParityRegistrar sum_short_rows(one_input("sum many short rows [65537,3]", {"sum"}, kSummable, {65537, 3},
                                               [](const Tensor& x) {
                                                 return std::vector<Tensor>{sum(x, {1}), sum(slice(x, 1, 0, 3, 2), {1})};
                                               }));
const ParityRegistrar sum_vec_rows(one_input("sum aligned rows [1031,64], [8,4096]", {"sum"}, kSummable, {1031, 64},
                                             [](const Tensor& x) {
                                               return std::vector<Tensor>{sum(x, {1}), sum(x.reshape({8, -1}), {1})};
                                             }));
const ParityRegistrar sum_long_row(one_input("sum long row [1,1000003]", {"sum"}, kSummable, {1, 1000003},
                                             [](const Tensor& x) {
                                               std::vector<Tensor> r{sum(x, {1}), sum(slice(x, 1, 3, 1000003), {1})};
                                               if (x.is_floating_point()) r.push_back(mean(x));
                                               return r;
                                             }));
const ParityRegistrar sum_few_long_rows(one_input("sum few long rows [3,333336] middle dims", {"sum"}, kSummable,
                                                  {3, 333336}, [](const Tensor& x) {
                                                    Tensor four = x.reshape({3, 12, 27778});
                                                    return std::vector<Tensor>{sum(x, {1}), sum(four, {0, 2}),
                                                                               sum(four, {1}, true)};
                                                  }));

// ---- amax / amin and max_dim / min_dim (argmax) ----

std::vector<Tensor> extremes(const Tensor& x) {
  auto [mx, imx] = max_dim(x, -1);
  auto [mn, imn] = min_dim(transpose(x, 0, 1), -1, true);
  return {amax(x), amax(x, {-1}), amin(x, {0}), mx, imx, mn, imn, argmax(x, 0)};
}

const ParityRegistrar ext_odd(one_input("amax/amin/max_dim/min_dim [37,129]",
                                        {"amax", "amin", "max_dim", "min_dim", "scatter_add"}, kAll, {37, 129},
                                        extremes));
const ParityRegistrar ext_short(one_input("amax/max_dim many short rows [40001,5]",
                                          {"amax", "amin", "max_dim", "min_dim", "scatter_add"}, kAll, {40001, 5},
                                          extremes));
const ParityRegistrar ext_long(one_input("amax/max_dim long row [1,1000003]",
                                         {"amax", "amin", "max_dim", "min_dim", "scatter_add"}, kAll, {1, 1000003},
                                         [](const Tensor& x) {
                                           auto [mx, imx] = max_dim(x, 1);
                                           auto [mn, imn] = min_dim(slice(x, 1, 1, 1000003, 2), 1);
                                           return std::vector<Tensor>{amax(x), amin(x), mx, imx, mn, imn};
                                         }));

// NaN beats every number and the first NaN's index wins; ties go to the first.
const ParityRegistrar ext_nan(ParityCase{
    "amax/max_dim NaN and ties [33,517]",
    {"amax", "amin", "max_dim", "min_dim"},
    kFloat,
    [](DType dt) { return std::vector<Tensor>{random_input({33, 517}, dt)}; },
    [](const std::vector<Tensor>& in, Device) {
      Tensor x = in[0].clone();
      fill_(slice(slice(x, 0, 0, 33, 3), 1, 200, 517, 101), NAN);
      fill_(slice(slice(x, 0, 1, 33, 3), 1, 7, 517, 50), 2.0);  // ties for the maximum
      auto [mx, imx] = max_dim(x, 1);
      auto [mn, imn] = min_dim(x, 1);
      return std::vector<Tensor>{amax(x, {1}), amin(x, {1}), mx, imx, mn, imn, argmax(x.reshape({1, -1}), 1)};
    },
    false});

// ---- var / std ----

std::vector<Tensor> variances(const Tensor& x) {
  return {var(x), var(x, {-1}), std(x, {0}, 0), var(transpose(x, 0, 1), {1}, 0, true), std(x, {-1}, 1)};
}

const ParityRegistrar var_odd(one_input("var/std [37,129] each dim, correction 0/1", {"var", "sum"}, kFloat,
                                        {37, 129}, variances));
const ParityRegistrar var_short(one_input("var/std short rows [4099,2], [4099,1]", {"var", "sum"}, kFloat, {4099, 2},
                                          [](const Tensor& x) {
                                            // A single element with correction 1 divides 0 by 0: NaN on both.
                                            return std::vector<Tensor>{var(x, {1}), std(x, {1}, 0),
                                                                       var(slice(x, 1, 0, 1), {1})};
                                          }));
const ParityRegistrar var_long(one_input("var/std long row [1,1000003] (offset)", {"var", "sum"}, kFloat, {1, 1000003},
                                         [](const Tensor& x) {
                                           Tensor shifted = add(x, 3.0);  // a mean far from 0
                                           return std::vector<Tensor>{var(shifted), std(x, {1}), var(x, {1}, 0)};
                                         }));

// ---- norm ----

std::vector<Tensor> norms(const Tensor& x) {
  std::vector<Tensor> r;
  for (double p : {2.0, 1.0, 3.0, 0.5, kInf, -kInf}) r.push_back(norm(x, p, {-1}));
  r.push_back(norm(transpose(x, 0, 1), 2.0, {1}, true));
  r.push_back(norm(x));
  return r;
}

const ParityRegistrar norm_odd(one_input("norm p=2,1,3,0.5,inf,-inf [37,129]", {"norm"}, kFloat, {37, 129}, norms));
const ParityRegistrar norm_zero(ParityCase{
    "norm p=0 counts nonzeros [37,129]",
    {"norm"},
    kFloat,
    [](DType dt) { return std::vector<Tensor>{random_input({37, 129}, dt)}; },
    [](const std::vector<Tensor>& in, Device) {
      Tensor x = in[0].clone();
      fill_(slice(x, 1, 0, 129, 3), 0.0);
      return std::vector<Tensor>{norm(x, 0.0, {1}), norm(x, 0.0)};
    },
    false});
const ParityRegistrar norm_long(one_input("norm long row [2,500001], short rows [9001,7]", {"norm"}, kFloat,
                                          {2, 500001}, [](const Tensor& x) {
                                            Tensor short_rows = slice(x.reshape({-1}), 0, 0, 63007).reshape({9001, 7});
                                            return std::vector<Tensor>{norm(x, 2.0, {1}), norm(x, kInf, {1}),
                                                                       norm(x, 1.0), norm(short_rows, 2.0, {1}),
                                                                       norm(short_rows, 3.0, {1})};
                                          }));

// ---- cumsum (its gradient is the reverse scan) ----

std::vector<Tensor> cumsums(const Tensor& x) {
  return {cumsum(x, 1), cumsum(x, 0), cumsum(transpose(x, 0, 1), 1), cumsum(slice(x, 1, 1, 129, 2), 1)};
}

const ParityRegistrar cumsum_odd(one_input("cumsum [37,129] rows, columns, views", {"cumsum"}, kSummable, {37, 129},
                                           cumsums));
const ParityRegistrar cumsum_aligned(one_input("cumsum aligned rows [257,1024], short rows", {"cumsum"}, kSummable,
                                               {257, 1024}, [](const Tensor& x) {
                                                 return std::vector<Tensor>{cumsum(x, 1), cumsum(x.reshape({-1, 4}), 1),
                                                                            cumsum(slice(x, 1, 0, 5), 1)};
                                               }));
const ParityRegistrar cumsum_long(one_input("cumsum long row [1,1000003], [2,262144]", {"cumsum"}, kSummable,
                                            {1, 1000003}, [](const Tensor& x) {
                                              Tensor aligned = slice(x, 1, 0, 524288).reshape({2, 262144});
                                              return std::vector<Tensor>{cumsum(x, 1), cumsum(aligned, 1)};
                                            }));
const ParityRegistrar cumsum_lines(one_input("cumsum long lines [3,100000,2], [1,18181,33]", {"cumsum"}, kSummable,
                                             {3, 100000, 2}, [](const Tensor& x) {
                                               Tensor wide = slice(x.reshape({-1}), 0, 0, 18181 * 33).reshape({1, 18181, 33});
                                               return std::vector<Tensor>{cumsum(x, 1), cumsum(wide, 1),
                                                                          cumsum(x, 0)};
                                             }));

}  // namespace
}  // namespace hearth::gpu_testing
