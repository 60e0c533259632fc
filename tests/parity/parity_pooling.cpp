// Parity cases for max, average and adaptive average pooling, forward and
// backward, NCHW and NHWC.
#include <cmath>

#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
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
// Many equal values (small integers): the CUDA backward, which finds each
// argmax again, must break ties as the CPU kernel does (first in window order).
const ParityRegistrar max_pool_ties({"max_pool2d ties, NCHW and NHWC C=16",
                                     {"max_pool2d", "max_pool2d_backward"},
                                     kFloat,
                                     [](DType dt) {
                                       return std::vector<Tensor>{
                                           cast(randint(0, 3, {2, 16, 13, 11}, DType::int64), dt)};
                                     },
                                     [](const std::vector<Tensor>& in, Device) {
                                       std::vector<Tensor> outs = max_pools(in[0]);
                                       for (Tensor& y : max_pools(nhwc(in[0]))) outs.push_back(y);
                                       return outs;
                                     }});
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

// Windows that tile the input (kernel == stride, sizes divisible): the backward
// writes each window's cells from one thread per output. Random values and
// ties (small integers), NCHW and NHWC with C = 16 (vector kernels), 12 and 5.
std::vector<Tensor> tiling_max_pools(const Tensor& x) {
  return {max_pool2d(x, {2, 2}), max_pool2d(x, {3, 3}, {3, 3}), max_pool2d(x, {2, 3}, {2, 3}),
          max_pool2d(x, {1, 1}, {1, 1})};
}
const ParityRegistrar max_pool_tiling({"max_pool2d windows tiling the input, NCHW and NHWC C=16,12,5, ties",
                                       {"max_pool2d", "max_pool2d_backward"},
                                       kFloat,
                                       [](DType dt) {
                                         return std::vector<Tensor>{
                                             random_input({2, 16, 12, 18}, dt), random_input({3, 12, 6, 6}, dt),
                                             random_input({2, 5, 6, 12}, dt),
                                             cast(randint(0, 3, {2, 16, 6, 12}, DType::int64), dt)};
                                       },
                                       [](const std::vector<Tensor>& in, Device) {
                                         std::vector<Tensor> outs;
                                         for (const Tensor& x : in) {
                                           for (Tensor& y : tiling_max_pools(x)) outs.push_back(y);
                                           for (Tensor& y : tiling_max_pools(nhwc(x))) outs.push_back(y);
                                         }
                                         return outs;
                                       }});

}  // namespace
}  // namespace hearth::parity
