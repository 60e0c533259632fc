// Parity cases for batch_norm and its fused forms batch_norm_relu and
// batch_norm_add_relu, forward and backward: [N, C] and [N, C, S], training and
// eval, channels fastest (NHWC), half inputs beside float32 parameters.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kHalf = {DType::bfloat16, DType::float16};

const ParityRegistrar batch_norm_training(
    {"batch_norm training: NCHW, [N,C], few rows, transposed",
     {"batch_norm", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({8, 6, 5, 7}, dt), random_input({6}, dt), positive({6}, dt),
                                  random_input({6}, dt),          random_input({6}, dt), random_input({33, 10}, dt),
                                  random_input({2, 3, 4099}, dt), random_input({3}, dt), random_input({6, 9, 5}, dt),
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
const ParityRegistrar batch_norm_eval(
    {"batch_norm eval with running statistics",
     {"batch_norm", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({5, 4, 11}, dt), random_input({4}, dt), positive({4}, dt),
                                  random_input({4}, dt),        random_input({4}, dt), random_input({7, 4}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{batch_norm(in[0], in[1], in[2], in[3], in[4], false),
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
const ParityRegistrar batch_norm_channels_fastest(
    {"batch_norm channels fastest: NHWC C=64,24,13, [2000,40], [40,2056], [30,2100]",
     {"batch_norm", "batch_norm_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{
           random_input({4, 64, 9, 7}, dt), random_input({64}, dt),      positive({64}, dt),
           random_input({64}, dt),          random_input({64}, dt),      random_input({3, 24, 5, 5}, dt),
           random_input({2, 13, 6, 5}, dt), random_input({13}, dt),      random_input({2000, 40}, dt),
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
       return std::vector<Tensor>{
           random_input({3, 32, 8, 8}, dt), random_input({32}, dt), positive({32}, dt),
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
// The step counter each training call increments in its finalize kernel:
// every fused form, NCS and NHWC, counted once per call and never in eval.
const ParityRegistrar batch_norm_step_counter(
    {"batch_norm counts the batch in its kernels (num_batches_tracked)",
     {"batch_norm", "batch_norm_relu", "batch_norm_add_relu"},
     {DType::float32, DType::bfloat16},
     [](DType dt) {
       return std::vector<Tensor>{random_input({4, 16, 6, 5}, dt), random_input({4, 16, 6, 5}, dt),
                                  random_input({16}, dt), positive({16}, dt)};
     },
     [](const std::vector<Tensor>& in, Device d) {
       Tensor counter = full({}, 7, DType::int64, d);
       Tensor y0 = batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, counter);
       Tensor y1 = batch_norm_relu(nhwc(in[0]), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, counter);
       Tensor y2 = batch_norm_add_relu(nhwc(in[0]), nhwc(in[1]), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1,
                                       1e-5, counter);
       Tensor e0 = batch_norm(in[0], in[2].detach(), in[3].detach(), Tensor(), Tensor(), false, 0.1, 1e-5, counter);
       return std::vector<Tensor>{y0, y1, y2, e0, cast(counter, DType::float64)};
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
const ParityRegistrar batch_norm_add_relu_many_rows(
    accelerator_scale({"batch_norm_add_relu NHWC 1.2M rows x 8 channels",
                       {"batch_norm_add_relu", "batch_norm_backward"},
                       {DType::float32, DType::bfloat16},
                       [](DType dt) {
                         return std::vector<Tensor>{random_input({256, 8, 64, 72}, dt), random_input({8}, dt),
                                                    random_input({8}, dt), random_input({256, 8, 64, 72}, dt)};
                       },
                       [](const std::vector<Tensor>& in, Device) {
                         return std::vector<Tensor>{
                             batch_norm_add_relu(nhwc(in[0]), nhwc(in[3]), Tensor(), Tensor(), in[1], in[2], true)};
                       }}));

// Channels-fastest shapes small enough for the single-kernel path
// (hearth/backends/cuda/batch_norm_single_kernel.cu: one cooperative kernel
// forward and one backward): NHWC [6272, 64], [6272, 256], [98, 2048] and
// [N, C] with 2 rows, running statistics updated, weight and bias present and
// absent; C = 24 takes the path too (48 bytes of bfloat16), C = 13 the three
// kernels, so both paths meet in one call sequence.
const std::vector<DType> kSingleKernel = {DType::float32, DType::bfloat16, DType::float16};
const ParityRegistrar batch_norm_single_kernel_case(accelerator_scale(
    {"batch_norm single kernel: NHWC C=64,256,2048,24,13, [2,64]",
     {"batch_norm", "batch_norm_backward"},
     kSingleKernel,
     [](DType dt) {
       return std::vector<Tensor>{random_input({8, 64, 28, 28}, dt), random_input({64}, dt),
                                  positive({64}, dt),                  random_input({64}, dt),
                                  random_input({64}, dt),              random_input({8, 256, 28, 28}, dt),
                                  random_input({2, 2048, 7, 7}, dt),   random_input({2048}, dt),
                                  random_input({2, 64}, dt),           random_input({8, 24, 28, 28}, dt),
                                  random_input({8, 13, 28, 28}, dt)};
     },
     [](const std::vector<Tensor>& in, Device d) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor rm1 = in[1].detach().clone(), rv1 = in[2].detach().clone();
       Tensor rm2 = zeros({256}, in[0].dtype(), d), rv2 = ones({256}, in[0].dtype(), d);
       Tensor y0 = batch_norm(nhwc(in[0]), rm, rv, in[3], in[4], true, 0.3);
       Tensor y1 = batch_norm(nhwc(add(in[5], 2.0)), rm2, rv2, Tensor(), Tensor(), true);
       Tensor y2 = batch_norm(nhwc(in[6]), Tensor(), Tensor(), in[7], Tensor(), true);
       Tensor y3 = batch_norm(in[8], rm1, rv1, in[3], in[4], true);
       Tensor y4 = batch_norm(nhwc(in[9]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y5 = batch_norm(nhwc(in[10]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       return std::vector<Tensor>{y0, rm, rv, y1, rm2, rv2, y2, y3, rm1, rv1, y4, y5};
     }}));
// The fused ReLU on the single-kernel path: with weight and bias the backward
// recomputes the mask from x and the forward's affine output; [6272, 512] and
// [3, 64] too (not two rows: two samples normalise to +-1 whatever x is, so
// x's gradient is zero but for rounding, and no relative error can judge it).
const ParityRegistrar batch_norm_relu_single_kernel_case(accelerator_scale(
    {"batch_norm single kernel relu: NHWC C=256,512, [3,64]",
     {"batch_norm_relu", "batch_norm_backward"},
     kSingleKernel,
     [](DType dt) {
       return std::vector<Tensor>{random_input({8, 256, 28, 28}, dt), random_input({256}, dt), positive({256}, dt),
                                  random_input({256}, dt),             random_input({256}, dt),
                                  random_input({2, 512, 56, 56}, dt),  random_input({3, 64}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor y0 = batch_norm_relu(nhwc(in[0]), rm, rv, in[3], in[4], true, 0.3);
       Tensor y1 = batch_norm_relu(nhwc(in[0]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y2 = batch_norm_relu(nhwc(in[5]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y3 = batch_norm_relu(in[6], Tensor(), Tensor(), Tensor(), Tensor(), true);
       return std::vector<Tensor>{y0, rm, rv, y1, y2, y3};
     },
     true,
     // 4.8M outputs pass a ReLU: a backend whose batch norm rounds otherwise
     // than the CPU's may put the odd output within rounding of zero on the
     // other side, and that element's gradient flips; one flip in 1.6M moves
     // x's gradient by about 1.6e-3 of its norm (seen on lavapipe's Vulkan).
     4e-3}));
// The residual on the single-kernel path: the backward writes the residual's
// gradient in its first phase and reads it back in its last; [25088, 64]
// with running statistics, [6272, 256], [98, 2048] and [2, 64].
const ParityRegistrar batch_norm_add_relu_single_kernel_case(accelerator_scale(
    {"batch_norm single kernel add_relu: NHWC C=64,256,2048, [2,64]",
     {"batch_norm_add_relu", "batch_norm_backward"},
     kSingleKernel,
     [](DType dt) {
       return std::vector<Tensor>{random_input({32, 64, 28, 28}, dt),  random_input({32, 64, 28, 28}, dt),
                                  random_input({64}, dt),              positive({64}, dt),
                                  random_input({64}, dt),              random_input({64}, dt),
                                  random_input({8, 256, 28, 28}, dt),  random_input({8, 256, 28, 28}, dt),
                                  random_input({2, 2048, 7, 7}, dt),   random_input({2, 2048, 7, 7}, dt),
                                  random_input({2, 64}, dt),           random_input({2, 64}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor rm = in[2].detach().clone(), rv = in[3].detach().clone();
       Tensor y0 = batch_norm_add_relu(nhwc(in[0]), nhwc(in[1]), rm, rv, in[4], in[5], true, 0.3);
       Tensor y1 = batch_norm_add_relu(nhwc(in[6]), nhwc(in[7]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y2 = batch_norm_add_relu(nhwc(in[8]), nhwc(in[9]), Tensor(), Tensor(), Tensor(), Tensor(), true);
       Tensor y3 = batch_norm_add_relu(in[10], in[11], Tensor(), Tensor(), in[4], in[5], true);
       return std::vector<Tensor>{y0, rm, rv, y1, y2, y3};
     }}));
// Half inputs beside float32 parameters and running statistics, and the step
// counter, on the single-kernel path.
const ParityRegistrar batch_norm_single_kernel_mixed(accelerator_scale(
    {"batch_norm single kernel: half input, float32 parameters, step counter",
     {"batch_norm", "batch_norm_relu", "batch_norm_add_relu", "batch_norm_backward"},
     kHalf,
     [](DType dt) {
       return std::vector<Tensor>{random_input({8, 256, 28, 28}, dt), random_input({256}, DType::float32),
                                  positive({256}, DType::float32),     random_input({256}, DType::float32),
                                  random_input({256}, DType::float32), random_input({8, 256, 28, 28}, dt)};
     },
     [](const std::vector<Tensor>& in, Device d) {
       Tensor counter = full({}, 7, DType::int64, d);
       Tensor rm = in[1].detach().clone(), rv = in[2].detach().clone();
       Tensor x = nhwc(in[0]);
       Tensor y0 = batch_norm(x, rm, rv, in[3], in[4], true, 0.1, 1e-5, counter);
       Tensor y1 = batch_norm_relu(x, rm, rv, in[3], in[4], true, 0.1, 1e-5, counter);
       Tensor y2 = batch_norm_add_relu(x, nhwc(in[5]), rm, rv, in[3], in[4], true, 0.1, 1e-5, counter);
       return std::vector<Tensor>{y0, y1, y2, rm, rv, cast(counter, DType::float64)};
     }}));

}  // namespace
}  // namespace hearth::parity
