// Parity cases for channels_last (NHWC) images: conv2d (cuDNN with NHWC
// descriptors and filter, the NHWC bias-gradient kernel), batch_norm and
// batch_norm_add_relu (the [N*H*W, C] row path), the pooling kernels' NHWC
// indexing, and relu/add keeping the layout. Inputs are made channels_last inside run, so gradients
// flow back through the layout conversion to the harness's NCHW leaves; each
// case also checks that its outputs come back channels_last.
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

// Outputs must keep the input's format; a case fails loudly where one does not.
std::vector<Tensor> expect_channels_last(std::vector<Tensor> outs, const char* what) {
  for (const Tensor& t : outs)
    HEARTH_CHECK(t.dim() != 4 || t.is_contiguous(MemoryFormat::channels_last), ValueError, "[parity] ", what,
                 ": output of shape ", t.shape_string(), " lost the channels_last layout (strides ",
                 shape_str(t.strides()), ")");
  return outs;
}

ParityCase conv_case(const char* name, Shape x, Shape w, Pair stride, Pair padding, int64_t groups, bool bias,
                     bool nhwc_weight) {
  return ParityCase{
      std::string("conv2d channels_last ") + name,
      {"conv2d", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias"},
      kFloat,
      [=](DType dt) {
        return std::vector<Tensor>{random_input(x, dt), random_input(w, dt),
                                   bias ? random_input({w[0]}, dt) : Tensor()};
      },
      [=](const std::vector<Tensor>& in, Device) {
        Tensor weight = nhwc_weight ? nhwc(in[1]) : in[1];
        return expect_channels_last({conv2d(nhwc(in[0]), weight, in[2], stride, padding, {1, 1}, groups)}, "conv2d");
      },
      true,
      5e-3};
}

const ParityRegistrar conv_3x3(conv_case("3x3 pad1, NHWC weight", {2, 8, 11, 9}, {16, 8, 3, 3}, {1, 1}, {1, 1}, 1, true,
                                         true));
const ParityRegistrar conv_nchw_weight(conv_case("5x5 s2, NCHW weight (converted)", {3, 4, 13, 12}, {6, 4, 5, 5},
                                                 {2, 2}, {2, 2}, 1, true, false));
const ParityRegistrar conv_1x1(conv_case("1x1 64->40 bias", {4, 64, 7, 7}, {40, 64, 1, 1}, {1, 1}, {0, 0}, 1, true,
                                         true));
const ParityRegistrar conv_groups(conv_case("groups=2 no bias", {2, 6, 8, 8}, {4, 3, 3, 3}, {1, 1}, {0, 0}, 2, false,
                                            true));
// Many rows and 70 channels: several row chunks and a partial column tile in
// the NHWC bias-gradient kernel.
// The ReLU fused into the NHWC bias pass.
const ParityRegistrar conv_relu_nhwc(ParityCase{
    "conv2d_relu channels_last 3x3 pad1 bias",
    {"conv2d_relu", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias", "relu_backward"},
    kFloat,
    [](DType dt) {
      return relu_safe_conv_inputs({2, 8, 11, 9}, {16, 8, 3, 3}, true, dt);
    },
    [](const std::vector<Tensor>& in, Device) {
      return expect_channels_last({conv2d_relu(nhwc(in[0]), nhwc(in[1]), in[2], {1, 1}, {1, 1})}, "conv2d_relu");
    },
    true,
    5e-3});
// Masked and summed with 16-byte vectors over many row chunks (64 channels,
// 6272 rows), and 24 channels: a partial tile of vectors.
const ParityRegistrar conv_relu_nhwc_rows(ParityCase{
    "conv2d_relu channels_last 3x3 many rows, 64 and 24 channels",
    {"conv2d_relu", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias"},
    kFloat,
    [](DType dt) {
      std::vector<Tensor> a = relu_safe_conv_inputs({8, 16, 28, 28}, {64, 16, 3, 3}, true, dt);
      std::vector<Tensor> b = relu_safe_conv_inputs({3, 8, 9, 7}, {24, 8, 3, 3}, true, dt);
      a.insert(a.end(), b.begin(), b.end());
      return a;
    },
    [](const std::vector<Tensor>& in, Device) {
      return expect_channels_last({conv2d_relu(nhwc(in[0]), nhwc(in[1]), in[2], {1, 1}, {1, 1}),
                                   conv2d_relu(nhwc(in[3]), nhwc(in[4]), in[5], {1, 1}, {1, 1})},
                                  "conv2d_relu");
    },
    true,
    5e-3});
// The bias, the residual and the ReLU as the convolution's epilogue (a fused
// cuDNN graph where an engine takes it, an elementwise pass otherwise).
// Integer inputs and a bias of k + 0.5 keep every output away from the kink.
ParityCase conv_add_relu_case(const char* name, Shape x, Shape w, Pair stride, Pair padding) {
  return ParityCase{
      std::string("conv2d_add_relu channels_last ") + name,
      {"conv2d_add_relu", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias", "relu_backward"},
      kFloat,
      [=](DType dt) {
        std::vector<Tensor> in = relu_safe_conv_inputs(x, w, true, dt);
        const int64_t oh = (x[2] + 2 * padding[0] - w[2]) / stride[0] + 1,
                      ow = (x[3] + 2 * padding[1] - w[3]) / stride[1] + 1;
        in.push_back(cast(randint(-3, 4, {x[0], w[0], oh, ow}, DType::int64), dt));
        return in;
      },
      [=](const std::vector<Tensor>& in, Device) {
        return expect_channels_last({conv2d_add_relu(nhwc(in[0]), nhwc(in[1]), in[2], nhwc(in[3]), stride, padding)},
                                    "conv2d_add_relu");
      },
      true,
      5e-3};
}
const ParityRegistrar conv_add_relu_3x3(conv_add_relu_case("3x3 pad1", {2, 8, 11, 9}, {16, 8, 3, 3}, {1, 1}, {1, 1}));
const ParityRegistrar conv_add_relu_1x1(conv_add_relu_case("1x1 s2 64->32", {2, 64, 14, 14}, {32, 64, 1, 1}, {2, 2},
                                                           {0, 0}));
const ParityRegistrar conv_add_relu_odd(conv_add_relu_case("3x3, 3 input channels", {2, 3, 9, 10}, {8, 3, 3, 3}, {1, 1},
                                                           {1, 1}));
// conv2d with a bias and no ReLU through the fused graph, 1x1 as ResNet's
// folded projection shortcut.
const ParityRegistrar conv_bias_1x1_s2(conv_case("1x1 s2 bias", {2, 32, 14, 14}, {64, 32, 1, 1}, {2, 2}, {0, 0}, 1,
                                                 true, true));
const ParityRegistrar conv_bias_rows(conv_case("3x3 large spatial, 70 channels", {4, 3, 40, 36}, {70, 3, 3, 3}, {1, 1},
                                               {1, 1}, 1, true, true));

const ParityRegistrar batch_norm_nhwc({"batch_norm channels_last: training with running stats, eval",
                                       {"batch_norm", "batch_norm_backward"},
                                       kFloat,
                                       [](DType dt) {
                                         return std::vector<Tensor>{random_input({6, 5, 7, 9}, dt),
                                                                    random_input({5}, dt),
                                                                    add(random_input({5}, dt), 2.0),
                                                                    random_input({5}, dt), random_input({5}, dt)};
                                       },
                                       [](const std::vector<Tensor>& in, Device) {
                                         Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
                                         Tensor x = nhwc(in[0]);
                                         Tensor y = batch_norm(x, rm, rv, in[3], in[4], true, 0.2);
                                         Tensor e =
                                             batch_norm(x, in[1].detach(), in[2].detach(), in[3], Tensor(), false);
                                         std::vector<Tensor> outs = expect_channels_last({y, e}, "batch_norm");
                                         outs.push_back(rm);
                                         outs.push_back(rv);
                                         return outs;
                                       }});

// ResNet's block tail on channels_last activations: the output and both
// gradients that flow back through the layout conversion keep NHWC's numbers.
const ParityRegistrar batch_norm_add_relu_nhwc(
    {"batch_norm_add_relu channels_last: training with running stats, eval",
     {"batch_norm_add_relu", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({6, 16, 7, 9}, dt),  random_input({16}, dt),
                                  add(random_input({16}, dt), 2.0), random_input({16}, dt),
                                  random_input({16}, dt),           random_input({6, 16, 7, 9}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor x = nhwc(in[0]), r = nhwc(in[5]);
       Tensor y = batch_norm_add_relu(x, r, rm, rv, in[3], in[4], true, 0.2);
       Tensor e = batch_norm_add_relu(x, r, in[1].detach(), in[2].detach(), in[3], Tensor(), false);
       std::vector<Tensor> outs = expect_channels_last({y, e}, "batch_norm_add_relu");
       outs.push_back(rm);
       outs.push_back(rv);
       return outs;
     }});

const ParityRegistrar pools_nhwc({"max/avg/adaptive pooling channels_last",
                                  {"max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
                                   "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward"},
                                  kFloat,
                                  [](DType dt) {
                                    return std::vector<Tensor>{random_input({2, 5, 13, 11}, dt)};
                                  },
                                  [](const std::vector<Tensor>& in, Device) {
                                    Tensor x = nhwc(in[0]);
                                    return expect_channels_last(
                                        {max_pool2d(x, {3, 3}, {2, 2}, {1, 1}),
                                         max_pool2d(x, {2, 2}, {2, 1}, {0, 1}, {2, 1}, true),
                                         avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}),
                                         avg_pool2d(x, {3, 2}, {2, 2}, {1, 1}, true, false),
                                         adaptive_avg_pool2d(x, {1, 1}), adaptive_avg_pool2d(x, {5, 3})},
                                        "pooling");
                                  }});

const ParityRegistrar relu_add_nhwc(
    {"relu and add keep channels_last",
     {"relu", "relu_backward", "add"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({3, 6, 5, 4}, dt), random_input({3, 6, 5, 4}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor a = nhwc(in[0]), b = nhwc(in[1]);
       return expect_channels_last({relu(add(a, b)), mul(a, b)}, "relu/add");
     }});

}  // namespace
}  // namespace hearth::parity
