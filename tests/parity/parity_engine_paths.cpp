// Parity cases aimed at each path of the CUDA elementwise engine (loops.cuh,
// elementwise_plan.h) and of copy_ (tiled_transpose.cuh): 16-byte vectors over
// a dense innermost dim with a scalar tail, vectors with broadcast operands,
// the element path for misaligned views and odd inner sizes, 5-D spaces with
// stride-0 dims in the middle, permuted copies, tiled transposes, and casts
// between every pair of floating types. Inputs arrive dense and aligned; the
// cases make the offset and permuted views themselves.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kNumeric = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                     DType::int64,   DType::int32,   DType::uint8};
const std::vector<DType> kAllWithBool = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                         DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

// [B, S, H, D] <-> [B, H, S, D]: D = 64 dense on both sides (vectors), D = 7
// (elements), a permuted destination, and a 5-D expand with two stride-0 dims.
const ParityRegistrar permuted_copies(
    {"copy_ permutes: head split/merge, 5-D expand",
     {"copy_"},
     kAllWithBool,
     [](DType dt) {
       return std::vector<Tensor>{random_input({3, 10, 4, 64}, dt), random_input({3, 10, 4, 7}, dt),
                                  random_input({3, 1, 5, 1, 16}, dt)};
     },
     [](const std::vector<Tensor>& in, Device d) {
       const Tensor split = permute(in[0], {0, 2, 1, 3}).contiguous();
       const Tensor merge = permute(split, {0, 2, 1, 3}).contiguous();
       Tensor into = zeros({3, 4, 10, 64}, in[0].dtype(), d);
       copy_(permute(into, {0, 2, 1, 3}), in[0]);
       return std::vector<Tensor>{split, merge, into, permute(in[1], {0, 2, 1, 3}).contiguous(),
                                  expand(in[2], {3, 4, 5, 2, 16}).contiguous()};
     },
     false});

// Transposes of the last two dims through shared-memory tiles (partial tiles at
// the edges, a batch dim), NCHW <-> NHWC, and a 3-channel NHWC (too narrow for
// tiles: elements).
const ParityRegistrar transposed_copies(
    {"copy_ tiled transposes, NCHW <-> NHWC",
     {"copy_"},
     kAllWithBool,
     [](DType dt) {
       return std::vector<Tensor>{random_input({5, 19, 37}, dt), random_input({70, 45}, dt),
                                  random_input({2, 24, 5, 6}, dt), random_input({2, 3, 9, 9}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       const Tensor nhwc = contiguous(in[2], MemoryFormat::channels_last);
       return std::vector<Tensor>{transpose(in[0], 1, 2).contiguous(),
                                  transpose(in[1], 0, 1).contiguous(),
                                  transpose(slice(in[1], 1, 3, 40), 0, 1).contiguous(),
                                  nhwc,
                                  nhwc.contiguous(),
                                  contiguous(in[3], MemoryFormat::channels_last)};
     },
     false});

// Casts from the case's dtype to every floating type: dense with a tail (111
// elements), a view one element in (misaligned: elements), a permuted view
// with a dense inner dim (vectors of mixed widths) and a transposed one.
const ParityRegistrar casts(
    {"copy_ casts: tails, offset, permuted views",
     {"copy_"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({3, 37}, dt), random_input({4, 6, 16}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       std::vector<Tensor> outs;
       for (DType to : {DType::float32, DType::float64, DType::bfloat16, DType::float16}) {
         outs.push_back(cast(in[0], to));
         outs.push_back(cast(slice(flatten(in[0]), 0, 1, 111), to));
         outs.push_back(cast(permute(in[1], {1, 0, 2}), to));
         outs.push_back(cast(transpose(in[1], 1, 2), to));
       }
       return outs;
     },
     false});

// The arithmetic of attention scores: a [B,1,1,S] mask broadcast over heads and
// rows, a scalar scale, a 5-D add with stride-0 dims in the middle, dense odd
// sizes (tails), offset views (misaligned), and a comparison whose bool output
// is narrower than its inputs.
const ParityRegistrar arithmetic(
    {"add/mul/lt: mask, scalar, 5-D, tails, offsets",
     {"add", "mul", "lt", "sum"},
     kNumeric,
     [](DType dt) {
       return std::vector<Tensor>{random_input({2, 3, 16, 32}, dt), random_input({2, 1, 1, 32}, dt),
                                  random_input({3, 2, 5, 4, 16}, dt), random_input({3, 1, 5, 1, 16}, dt),
                                  random_input({3, 37}, dt), random_input({1001}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       const Tensor& flat = in[5];
       return std::vector<Tensor>{add(in[0], in[1]),
                                  mul(in[0], 0.125),
                                  add(in[2], in[3]),
                                  add(in[4], in[4]),
                                  mul(slice(flat, 0, 1, 1001), slice(flat, 0, 0, 1000)),
                                  add(slice(in[0], 3, 1, 31), slice(in[1], 3, 0, 30)),
                                  lt(in[0], in[1])};
     }});

}  // namespace
}  // namespace hearth::parity
