// Parity cases for the nn kernels: batch norm, layer norm, softmax/log_softmax,
// cross_entropy, nll_loss, embedding, dropout and attention_softmax, forward
// and backward. Shapes
// reach every launch path of the CUDA kernels: rows kept in registers and rows
// too long for them, 16-byte vector loads and odd widths that cannot use them,
// reductions along the last dim and along strided dims, [N, C] and [N, C, S]
// batch norm, half inputs beside float32 parameters.
#include <cmath>

#include "hearth/core/errors.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/gpu/parity.h"

namespace hearth::gpu_testing {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kHalf = {DType::bfloat16, DType::float16};
const std::vector<DType> kEvery = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                   DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

// Values in [0.5, 1.5): variances and class weights.
Tensor positive(const Shape& shape, DType dt) { return cast(add(mul(random_input(shape, DType::float64), 0.5), 1.0), dt); }

// Class targets in [0, C) with every fifth one `ignore` (the ignore_index the case passes).
Tensor targets(const Shape& shape, int64_t C, int64_t ignore = -100) {
  Tensor t = randint(0, C, shape, DType::int64);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); i += 5) p[i] = ignore;
  return t;
}

// ---- softmax / log_softmax ----

const std::vector<std::string> kSoftmaxOps = {"softmax", "log_softmax", "softmax_backward", "log_softmax_backward"};

const ParityRegistrar softmax_rows(
    {"softmax last dim: odd, aligned, wide, masked",
     kSoftmaxOps,
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({37, 129}, dt), random_input({16, 256}, dt),
                                  random_input({3, 5000}, dt), random_input({2, 20000}, dt),
                                  random_input({129, 37}, dt)};
     },
     [](const std::vector<Tensor>& in, Device d) {
       // -inf on the first 5 columns and on all of row 2 (a fully masked row is NaN on both devices).
       Tensor mask = zeros({37, 129}, in[0].dtype(), d);
       fill_(slice(mask, 1, 0, 5), -INFINITY);
       fill_(slice(mask, 0, 2, 3), -INFINITY);
       Tensor masked = add(in[0], mask);
       return std::vector<Tensor>{softmax(in[0], -1),
                                  log_softmax(mul(in[0], 10.0), 1),
                                  softmax(in[1], 1),
                                  log_softmax(in[1], -1),
                                  softmax(in[2], -1),
                                  log_softmax(in[3], -1),
                                  softmax(mul(in[3], 4.0), 1),
                                  log_softmax(transpose(in[4], 0, 1), 1),
                                  softmax(masked, 1),
                                  log_softmax(masked, 1)};
     }});

const ParityRegistrar softmax_cols({"softmax strided dims: middle, first",
                                    kSoftmaxOps,
                                    kFloat,
                                    [](DType dt) {
                                      return std::vector<Tensor>{random_input({4, 33, 7}, dt),
                                                                 random_input({5, 3, 70}, dt),
                                                                 random_input({65, 130}, dt)};
                                    },
                                    [](const std::vector<Tensor>& in, Device) {
                                      return std::vector<Tensor>{softmax(in[0], 1),      log_softmax(in[0], 1),
                                                                 softmax(in[1], 1),      log_softmax(in[1], -2),
                                                                 softmax(in[2], 0),      log_softmax(mul(in[2], 6.0), 0),
                                                                 softmax(in[0], 0)};
                                    }});

// ---- layer norm ----

const ParityRegistrar layer_norm_case(
    {"layer_norm: affine, none, weight only, wide, transposed",
     {"layer_norm", "layer_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({37, 129}, dt), random_input({129}, dt),
                                  random_input({129}, dt),     random_input({4, 8, 64}, dt),
                                  random_input({3, 20000}, dt), random_input({20000}, dt),
                                  random_input({129, 37}, dt),  random_input({300, 96}, dt),
                                  random_input({96}, dt),       random_input({96}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{layer_norm(in[0], {129}, in[1], in[2]),
                                  layer_norm(in[3], {8, 64}),
                                  layer_norm(in[4], {20000}, in[5], Tensor()),
                                  layer_norm(transpose(in[6], 0, 1), {129}, Tensor(), in[2], 1e-3),
                                  layer_norm(add(in[7], 5.0), {96}, in[8], in[9])};
     }});

const ParityRegistrar layer_norm_mixed({"layer_norm half input, float32 weight and bias",
                                        {"layer_norm", "layer_norm_backward"},
                                        kHalf,
                                        [](DType dt) {
                                          return std::vector<Tensor>{random_input({33, 96}, dt),
                                                                     random_input({96}, DType::float32),
                                                                     random_input({96}, DType::float32)};
                                        },
                                        [](const std::vector<Tensor>& in, Device) {
                                          return std::vector<Tensor>{layer_norm(in[0], {96}, in[1], in[2])};
                                        }});

// ---- batch norm ----

const ParityRegistrar batch_norm_training(
    {"batch_norm training: NCHW, [N,C], few rows, transposed",
     {"batch_norm", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({8, 6, 5, 7}, dt), random_input({6}, dt),       positive({6}, dt),
                                  random_input({6}, dt),          random_input({6}, dt),       random_input({33, 10}, dt),
                                  random_input({2, 3, 4099}, dt), random_input({3}, dt),       random_input({6, 9, 5}, dt),
                                  random_input({300, 4}, dt)};
     },
     [](const std::vector<Tensor>& in, Device d) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor rm1 = zeros({10}, in[0].dtype(), d), rv1 = ones({10}, in[0].dtype(), d);
       Tensor y0 = batch_norm(in[0], rm, rv, in[3], in[4], true, 0.3);
       Tensor y1 = batch_norm(in[5], rm1, rv1, Tensor(), Tensor(), true);
       Tensor y2 = batch_norm(in[6], Tensor(), Tensor(), in[7], Tensor(), true);
       Tensor y3 = batch_norm(transpose(in[8], 0, 1), Tensor(), Tensor(), in[3], in[4], true);
       Tensor y4 = batch_norm(add(in[9], 3.0), Tensor(), Tensor(), Tensor(), select(in[9], 0, 0), true);
       return std::vector<Tensor>{y0, rm, rv, y1, rm1, rv1, y2, y3, y4};
     }});

const ParityRegistrar batch_norm_eval({"batch_norm eval with running statistics",
                                       {"batch_norm", "batch_norm_backward"},
                                       kFloat,
                                       [](DType dt) {
                                         return std::vector<Tensor>{random_input({5, 4, 11}, dt), random_input({4}, dt),
                                                                    positive({4}, dt), random_input({4}, dt),
                                                                    random_input({4}, dt), random_input({7, 4}, dt)};
                                       },
                                       [](const std::vector<Tensor>& in, Device) {
                                         return std::vector<Tensor>{
                                             batch_norm(in[0], in[1], in[2], in[3], in[4], false),
                                             batch_norm(in[0], in[1], in[2], Tensor(), Tensor(), false, 0.1, 1e-3),
                                             batch_norm(in[5], in[1], in[2], in[3], Tensor(), false)};
                                       }});

const ParityRegistrar batch_norm_mixed({"batch_norm half input, float32 parameters and statistics",
                                        {"batch_norm", "batch_norm_backward"},
                                        kHalf,
                                        [](DType dt) {
                                          return std::vector<Tensor>{
                                              random_input({6, 5, 13}, dt), random_input({5}, DType::float32),
                                              positive({5}, DType::float32), random_input({5}, DType::float32),
                                              random_input({5}, DType::float32)};
                                        },
                                        [](const std::vector<Tensor>& in, Device) {
                                          Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
                                          Tensor y = batch_norm(in[0], rm, rv, in[3], in[4], true);
                                          Tensor e = batch_norm(in[0], in[1], in[2], in[3], in[4], false);
                                          return std::vector<Tensor>{y, rm, rv, e};
                                        }});

// Channels fastest ([N, C] and NHWC as [N*H*W, C]): 16-byte vectors of
// channels where C allows (64, 24, 2056 for every dtype), scalar ones where it
// does not (13, 2100 for the 16-bit types), one column tile and several (2056
// and 2100 channels are more than 256 vectors wide), many row splits with a
// remainder (2000 rows), and every combination of statistics and parameters.
Tensor nhwc(const Tensor& t) { return contiguous(t, MemoryFormat::channels_last); }

const ParityRegistrar batch_norm_channels_fastest(
    {"batch_norm channels fastest: NHWC C=64,24,13, [2000,40], [40,2056], [30,2100]",
     {"batch_norm", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({4, 64, 9, 7}, dt), random_input({64}, dt), positive({64}, dt),
                                  random_input({64}, dt),          random_input({64}, dt), random_input({3, 24, 5, 5}, dt),
                                  random_input({2, 13, 6, 5}, dt), random_input({13}, dt), random_input({2000, 40}, dt),
                                  random_input({40, 2056}, dt),    random_input({30, 2100}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor y0 = batch_norm(nhwc(in[0]), rm, rv, in[3], in[4], true, 0.3);
       Tensor e0 = batch_norm(nhwc(in[0]), in[1].detach(), in[2].detach(), in[3], in[4], false);
       Tensor y1 = batch_norm(nhwc(in[5]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y2 = batch_norm(nhwc(add(in[6], 4.0)), Tensor(), Tensor(), in[7], Tensor(), true);
       Tensor y3 = batch_norm(in[8], Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y4 = batch_norm(in[9], Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y5 = batch_norm(in[10], Tensor(), Tensor(), Tensor(), Tensor(), true);
       return std::vector<Tensor>{y0, rm, rv, e0, y1, y2, y3, y4, y5};
     }});

const ParityRegistrar batch_norm_channels_fastest_mixed(
    {"batch_norm NHWC half input, float32 parameters and statistics",
     {"batch_norm", "batch_norm_backward"},
     kHalf,
     [](DType dt) {
       return std::vector<Tensor>{random_input({5, 32, 7, 6}, dt), random_input({32}, DType::float32),
                                  positive({32}, DType::float32), random_input({32}, DType::float32),
                                  random_input({32}, DType::float32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor x = nhwc(in[0]);
       Tensor y = batch_norm(x, rm, rv, in[3], in[4], true);
       Tensor e = batch_norm(x, in[1], in[2], in[3], in[4], false);
       return std::vector<Tensor>{y, rm, rv, e};
     }});

// The fused ReLU on every apply and partial-sum path: NCHW rows (vector and
// scalar widths), NHWC vectors and scalars, [N, C], eval statistics, and half
// inputs beside float32 parameters. The mask in the backward comes from the
// saved output, so gradients vanish exactly where the outputs were clipped.
const ParityRegistrar batch_norm_relu_case(
    {"batch_norm_relu: NCHW S=64 and S=35, NHWC C=32 and C=13, [N,C], eval",
     {"batch_norm_relu", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({3, 32, 8, 8}, dt), random_input({32}, dt), positive({32}, dt),
                                  random_input({32}, dt),          random_input({32}, dt), random_input({4, 13, 7, 5}, dt),
                                  random_input({500, 24}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor y0 = batch_norm_relu(in[0], rm, rv, in[3], in[4], true, 0.3);
       Tensor y1 = batch_norm_relu(nhwc(in[0]), Tensor(), Tensor(), in[3], in[4], true);
       Tensor y2 = batch_norm_relu(in[5], Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y3 = batch_norm_relu(nhwc(in[5]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y4 = batch_norm_relu(in[6], Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor e0 = batch_norm_relu(nhwc(in[0]), in[1].detach(), in[2].detach(), in[3], in[4], false);
       return std::vector<Tensor>{y0, rm, rv, y1, y2, y3, y4, e0};
     }});

const ParityRegistrar batch_norm_relu_mixed({"batch_norm_relu NHWC half input, float32 parameters",
                                             {"batch_norm_relu", "batch_norm_backward"},
                                             kHalf,
                                             [](DType dt) {
                                               return std::vector<Tensor>{random_input({4, 16, 6, 5}, dt),
                                                                          random_input({16}, DType::float32),
                                                                          random_input({16}, DType::float32)};
                                             },
                                             [](const std::vector<Tensor>& in, Device) {
                                               return std::vector<Tensor>{batch_norm_relu(
                                                   nhwc(in[0]), Tensor(), Tensor(), in[1], in[2], true)};
                                             }});

// The residual add before the fused ReLU (ResNet's block tail) on the same
// paths: the forward apply kernels' extra read (NCHW rows of S=64 and S=35,
// NHWC vectors C=32 and scalars C=13, [N, C]), and backward the residual's
// gradient written by both partial-sum kernels, among them eval without
// parameters, where only that gradient asks for the partial-sum pass. An NCHW
// residual beside an NHWC input is converted by the ops layer.
const ParityRegistrar batch_norm_add_relu_case(
    {"batch_norm_add_relu: NCHW S=64,35, NHWC C=32,13, [N,C], eval",
     {"batch_norm_add_relu", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{
           random_input({3, 32, 8, 8}, dt), random_input({32}, dt),          positive({32}, dt),
           random_input({32}, dt),          random_input({32}, dt),          random_input({3, 32, 8, 8}, dt),
           random_input({4, 13, 7, 5}, dt), random_input({4, 13, 7, 5}, dt), random_input({500, 24}, dt),
           random_input({500, 24}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       const Tensor erm = in[1].detach(), erv = in[2].detach();
       Tensor y0 = batch_norm_add_relu(in[0], in[5], rm, rv, in[3], in[4], true, 0.3);
       Tensor y1 = batch_norm_add_relu(nhwc(in[0]), nhwc(in[5]), Tensor(), Tensor(), in[3], in[4], true);
       Tensor y2 = batch_norm_add_relu(in[6], in[7], Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y3 = batch_norm_add_relu(nhwc(in[6]), in[7], Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y4 = batch_norm_add_relu(in[8], in[9], Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor e0 = batch_norm_add_relu(nhwc(in[0]), nhwc(in[5]), erm, erv, in[3], in[4], false);
       Tensor e1 = batch_norm_add_relu(in[0], in[5], erm, erv, Tensor(), Tensor(), false);
       Tensor e2 = batch_norm_add_relu(nhwc(in[0]), nhwc(in[5]), erm, erv, Tensor(), Tensor(), false);
       return std::vector<Tensor>{y0, rm, rv, y1, y2, y3, y4, e0, e1, e2};
     }});

const ParityRegistrar batch_norm_add_relu_mixed(
    {"batch_norm_add_relu NHWC half input, float32 parameters, float32 residual",
     {"batch_norm_add_relu", "batch_norm_backward"},
     kHalf,
     [](DType dt) {
       return std::vector<Tensor>{random_input({4, 16, 6, 5}, dt), random_input({16}, DType::float32),
                                  random_input({16}, DType::float32), random_input({4, 16, 6, 5}, dt),
                                  random_input({4, 16, 6, 5}, DType::float32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{
           batch_norm_add_relu(nhwc(in[0]), nhwc(in[3]), Tensor(), Tensor(), in[1], in[2], true),
           batch_norm_add_relu(nhwc(in[0]), nhwc(in[4]), Tensor(), Tensor(), in[1], in[2], true)};
     }});

// Enough NHWC rows (1.2M of 8 channels) that every thread of the channels-fastest
// kernels walks its rows four in flight before the remainder loop, forward and
// in the partial-sum pass that writes the residual's gradient (a few hundred
// thousand rows are shared out one per thread on a GPU of 132 SMs).
const ParityRegistrar batch_norm_add_relu_many_rows({"batch_norm_add_relu NHWC 1.2M rows x 8 channels",
                                                     {"batch_norm_add_relu", "batch_norm_backward"},
                                                     {DType::float32, DType::bfloat16},
                                                     [](DType dt) {
                                                       return std::vector<Tensor>{
                                                           random_input({256, 8, 64, 72}, dt), random_input({8}, dt),
                                                           random_input({8}, dt), random_input({256, 8, 64, 72}, dt)};
                                                     },
                                                     [](const std::vector<Tensor>& in, Device) {
                                                       return std::vector<Tensor>{
                                                           batch_norm_add_relu(nhwc(in[0]), nhwc(in[3]), Tensor(),
                                                                               Tensor(), in[1], in[2], true)};
                                                     }});

// ---- max pooling: the backward gathers over the windows that can hold a cell ----

// Every window shape the gather must get right: heavy overlap (3x3 stride 1),
// ResNet's 3x3 stride 2 pad 1, dilation with padding, ceil_mode's partial last
// window, and stride above the kernel (cells in no window get zero).
std::vector<Tensor> max_pools(const Tensor& x) {
  return {max_pool2d(x, {3, 3}, {1, 1}, {1, 1}),
          max_pool2d(x, {3, 3}, {2, 2}, {1, 1}),
          max_pool2d(x, {3, 2}, {1, 2}, {1, 1}, {2, 3}),
          max_pool2d(x, {2, 3}, {2, 2}, {1, 0}, {1, 1}, true),
          max_pool2d(x, {2, 2}, {3, 3}),
          max_pool2d(x, {2, 2})};
}

const ParityRegistrar max_pool_windows_nchw({"max_pool2d NCHW: overlap, s2 p1, dilation, ceil, gaps",
                                             {"max_pool2d", "max_pool2d_backward"},
                                             kFloat,
                                             [](DType dt) {
                                               return std::vector<Tensor>{random_input({2, 3, 13, 11}, dt)};
                                             },
                                             [](const std::vector<Tensor>& in, Device) { return max_pools(in[0]); }});

// C = 16: vector kernels for every dtype; 12: vectors for float32 and float64
// only; 5: the scalar NHWC path.
const ParityRegistrar max_pool_windows_nhwc({"max_pool2d NHWC C=16,12,5: overlap, s2 p1, dilation, ceil, gaps",
                                             {"max_pool2d", "max_pool2d_backward"},
                                             kFloat,
                                             [](DType dt) {
                                               return std::vector<Tensor>{random_input({2, 16, 13, 11}, dt),
                                                                          random_input({3, 12, 9, 10}, dt),
                                                                          random_input({2, 5, 7, 9}, dt)};
                                             },
                                             [](const std::vector<Tensor>& in, Device) {
                                               std::vector<Tensor> outs;
                                               for (const Tensor& x : in)
                                                 for (Tensor& y : max_pools(nhwc(x))) {
                                                   HEARTH_CHECK(y.is_contiguous(MemoryFormat::channels_last),
                                                                ValueError, "[parity] max_pool2d lost channels_last");
                                                   outs.push_back(y);
                                                 }
                                               return outs;
                                             }});

// ---- losses (reduction "none": the per-row kernels alone) ----

const ParityRegistrar cross_entropy_case(
    {"cross_entropy: ignore, weight, smoothing, [N,C,d], wide",
     {"cross_entropy", "cross_entropy_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({37, 11}, dt),   targets({37}, 11),  positive({11}, dt),
                                  random_input({4, 7, 3}, dt),  targets({4, 3}, 7), random_input({5, 20000}, dt),
                                  targets({5}, 20000),          random_input({64, 1000}, dt), targets({64}, 1000, 3),
                                  positive({1000}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{cross_entropy(in[0], in[1], Tensor(), -100, "none"),
                                  cross_entropy(in[0], in[1], in[2], -100, "none", 0.1),
                                  cross_entropy(mul(in[0], 8.0), in[1], Tensor(), -100, "none", 0.3),
                                  cross_entropy(in[3], in[4], Tensor(), -100, "none"),
                                  cross_entropy(in[5], in[6], Tensor(), -100, "none", 0.05),
                                  // ignore_index 3: the -100 targets become 3 so they are ignored too
                                  cross_entropy(in[7], where(ge(in[8], 0), in[8], 3), in[9], 3, "none")};
     }});

const ParityRegistrar nll_loss_case({"nll_loss: ignore, weight, [N,C,d]",
                                     {"nll_loss", "nll_loss_backward"},
                                     kFloat,
                                     [](DType dt) {
                                       return std::vector<Tensor>{random_input({37, 11}, dt), targets({37}, 11),
                                                                  positive({11}, dt), random_input({3, 5, 4}, dt),
                                                                  targets({3, 4}, 5, 2)};
                                     },
                                     [](const std::vector<Tensor>& in, Device) {
                                       return std::vector<Tensor>{nll_loss(in[0], in[1], Tensor(), -100, "none"),
                                                                  nll_loss(in[0], in[1], in[2], -100, "none"),
                                                                  nll_loss(in[3], where(ge(in[4], 0), in[4], 2), Tensor(),
                                                                           2, "none")};
                                     }});

const ParityRegistrar loss_mixed({"losses: half logits, float32 class weights",
                                  {"cross_entropy", "cross_entropy_backward", "nll_loss", "nll_loss_backward"},
                                  kHalf,
                                  [](DType dt) {
                                    return std::vector<Tensor>{random_input({29, 13}, dt), targets({29}, 13),
                                                               positive({13}, DType::float32)};
                                  },
                                  [](const std::vector<Tensor>& in, Device) {
                                    return std::vector<Tensor>{
                                        cross_entropy(in[0], in[1], in[2], -100, "none", 0.2),
                                        nll_loss(in[0], in[1], in[2], -100, "none")};
                                  }});

const ParityRegistrar loss_reductions({"losses reduced: mean (weighted), sum",
                                       {"cross_entropy", "cross_entropy_backward", "nll_loss", "nll_loss_backward"},
                                       kFloat,
                                       [](DType dt) {
                                         return std::vector<Tensor>{random_input({45, 17}, dt), targets({45}, 17),
                                                                    positive({17}, dt)};
                                       },
                                       [](const std::vector<Tensor>& in, Device) {
                                         return std::vector<Tensor>{
                                             cross_entropy(in[0], in[1]),
                                             cross_entropy(in[0], in[1], in[2], -100, "mean", 0.1),
                                             cross_entropy(in[0], in[1], Tensor(), -100, "sum"),
                                             nll_loss(in[0], in[1], in[2]),
                                             nll_loss(in[0], in[1], Tensor(), -100, "sum")};
                                       }});

// ---- embedding ----

const ParityRegistrar embedding_case(
    {"embedding: repeats, padding_idx, int32 indices, aligned rows",
     {"embedding", "embedding_backward"},
     kFloat,
     [](DType dt) {
       Tensor idx = randint(0, 50, {7, 9}, DType::int64);
       for (int64_t i = 0; i < idx.numel(); i += 4) idx.data<int64_t>()[i] = 3;  // many repeats of the padding row
       return std::vector<Tensor>{random_input({50, 33}, dt), idx, random_input({20, 64}, dt),
                                  randint(0, 20, {40}, DType::int32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{embedding(in[1], in[0], 3), embedding(in[1], in[0]), embedding(in[3], in[2]),
                                  embedding(in[3], in[2], 0)};
     }});

const ParityRegistrar embedding_every_dtype({"embedding lookup, every dtype",
                                             {"embedding"},
                                             kEvery,
                                             [](DType dt) {
                                               return std::vector<Tensor>{random_input({30, 7}, dt),
                                                                          randint(0, 30, {12}, DType::int64),
                                                                          random_input({9, 16}, dt),
                                                                          randint(0, 9, {5, 2}, DType::int32)};
                                             },
                                             [](const std::vector<Tensor>& in, Device) {
                                               return std::vector<Tensor>{embedding(in[1], in[0]),
                                                                          embedding(in[3], in[2])};
                                             },
                                             false});

// ---- dropout: the same Philox mask as the CPU ----

const ParityRegistrar dropout_case({"dropout: odd length, 2-D, transposed, several p",
                                    {"dropout", "dropout_backward"},
                                    kFloat,
                                    [](DType dt) {
                                      return std::vector<Tensor>{random_input({1001}, dt), random_input({64, 33}, dt),
                                                                 random_input({33, 64}, dt)};
                                    },
                                    [](const std::vector<Tensor>& in, Device) {
                                      return std::vector<Tensor>{dropout(in[0], 0.3), dropout(in[1], 0.5),
                                                                 dropout(transpose(in[2], 0, 1), 0.1),
                                                                 dropout(in[1], 0.9), dropout(slice(in[0], 0, 3, 1001), 0.25)};
                                    },
                                    true,
                                    1e-7});

// ---- attention_softmax: scale, mask, softmax and dropout; the same mask as the CPU ----

const ParityRegistrar attention_softmax_case(
    {"attention_softmax: BERT mask, odd, long, p",
     {"attention_softmax", "attention_softmax_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({2, 3, 8, 128}, dt), mul(random_input({2, 1, 1, 128}, dt), 4.0),
                                  random_input({3, 5, 37}, dt),     random_input({5, 37}, dt),
                                  random_input({5, 1}, dt),         random_input({2, 20000}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       // The masks are constants (a mask that requires grad takes the composite).
       Tensor bert = in[1].detach().clone();
       fill_(slice(bert, -1, 100, 128), lowest_finite(bert.dtype()));  // padded keys
       Tensor rows = in[3].detach(), column = in[4].detach();
       return std::vector<Tensor>{
           attention_softmax(in[0], bert, 0.125, 0.1, true),                    // vector loads, whole counters
           attention_softmax(in[0], bert, 0.125),                               // evaluation
           attention_softmax(in[2], rows, 0.7, 0.3, true),                      // odd rows: scalar loads
           attention_softmax(in[2], column, 1.5, 0.5, true),                    // a mask of one column
           attention_softmax(in[2], cast(rows, DType::float32), 0.7),           // float32 mask beside half scores
           attention_softmax(transpose(in[2], 1, 2), Tensor(), 2.0, 0.2, true),  // no mask, rows of 5
           attention_softmax(in[5], Tensor(), 3.0, 0.25, true),                 // rows too long for registers
           attention_softmax(in[5], Tensor(), 0.5)};
     }});

}  // namespace
}  // namespace hearth::gpu_testing
