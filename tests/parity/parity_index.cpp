// Parity cases for the CUDA indexing kernels: index_select over rows of every
// word width, gather and scatter_add along each dim with strided, expanded and
// smaller-than-input indices, in place and out of place, every dtype; their
// backward passes run the other kernel of the pair.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

// ---- index_select ----

const ParityRegistrar select_2d(ParityCase{
    "index_select [37,129] dim 0/1, repeats, transposed",
    {"index_select", "scatter_add"},
    kAll,
    [](DType dt) {
      return std::vector<Tensor>{random_input({37, 129}, dt), randint(0, 37, {50}), randint(0, 129, {77})};
    },
    [](const std::vector<Tensor>& in, Device) {
      const Tensor &x = in[0], &rows = in[1], &cols = in[2];
      return std::vector<Tensor>{index_select(x, 0, rows), index_select(x, 1, cols),
                                 index_select(transpose(x, 0, 1), 1, rows), index_select(x, -1, slice(cols, 0, 0, 77, 3))};
    }});

// Row widths of 16-byte multiples (embedding-like), 8, 4, 2 and 1 bytes.
const ParityRegistrar select_words(ParityCase{
    "index_select rows of each word width [5,40,64]",
    {"index_select", "scatter_add"},
    kAll,
    [](DType dt) { return std::vector<Tensor>{random_input({5, 40, 64}, dt), randint(0, 40, {333})}; },
    [](const std::vector<Tensor>& in, Device) {
      const Tensor &x = in[0], &idx = in[1];
      std::vector<Tensor> r{index_select(x, 1, idx)};
      for (int64_t width : {1, 2, 3, 8}) r.push_back(index_select(slice(x, 2, 0, width), 1, idx));
      r.push_back(index_select(x.reshape({200, 64}), 0, slice(idx, 0, 0, 333, 7)));
      return r;
    }});

// ---- gather ----

const ParityRegistrar gather_dims(ParityCase{
    "gather dim 1/0, smaller and expanded index",
    {"gather", "scatter_add"},
    kAll,
    [](DType dt) {
      return std::vector<Tensor>{random_input({37, 129}, dt), randint(0, 129, {37, 50}), randint(0, 37, {60, 129}),
                                 randint(0, 129, {37, 1})};
    },
    [](const std::vector<Tensor>& in, Device) {
      const Tensor &x = in[0], &i1 = in[1], &i0 = in[2], &col = in[3];
      return std::vector<Tensor>{gather(x, 1, i1), gather(x, 0, i0), gather(x, 1, slice(i1, 0, 5, 25)),
                                 gather(x, 1, expand(col, {37, 20})), gather(transpose(x, 0, 1), 0, transpose(i1, 0, 1)),
                                 gather(x, -1, slice(i1, 1, 0, 50, 4))};
    }});

const ParityRegistrar gather_3d(ParityCase{
    "gather 3-D along the middle [6,300,17]",
    {"gather", "scatter_add"},
    kAll,
    [](DType dt) { return std::vector<Tensor>{random_input({6, 300, 17}, dt), randint(0, 300, {6, 1000, 17})}; },
    [](const std::vector<Tensor>& in, Device) {
      return std::vector<Tensor>{gather(in[0], 1, in[1]), gather(in[0], 1, slice(in[1], 2, 0, 17, 2))};
    }});

// ---- scatter_add (its gradient for src is gather) ----

const ParityRegistrar scatter_dims(ParityCase{
    "scatter_add dim 0/1, larger src, strided self",
    {"scatter_add", "gather"},
    kAll,
    [](DType dt) {
      return std::vector<Tensor>{random_input({37, 40}, dt), random_input({60, 45}, dt), randint(0, 37, {50, 40}),
                                 randint(0, 40, {37, 90})};
    },
    [](const std::vector<Tensor>& in, Device) {
      const Tensor &self = in[0], &src = in[1], &i0 = in[2], &i1 = in[3];
      Tensor wide_src = cat({src, src}, 1);  // [60, 90]
      return std::vector<Tensor>{scatter_add(self, 0, i0, src), scatter_add(self, 1, i1, slice(wide_src, 0, 0, 37)),
                                 scatter_add(transpose(self, 0, 1), 1, transpose(i0, 0, 1), transpose(src, 0, 1)),
                                 scatter_add(self, 1, expand(slice(i1, 1, 0, 1), {37, 5}), src)};
    }});

const ParityRegistrar scatter_inplace(ParityCase{
    "scatter_add_ in place, many collisions, one_hot",
    {"scatter_add"},
    kAll,
    [](DType dt) {
      return std::vector<Tensor>{random_input({7, 33}, dt), random_input({60, 33}, dt), randint(0, 7, {60, 33}),
                                 randint(0, 10, {5, 23})};
    },
    [](const std::vector<Tensor>& in, Device) {
      Tensor acc = in[0].detach().clone();
      scatter_add_(acc, 0, in[2], in[1].detach());
      Tensor strided = zeros({33, 7}, in[0].dtype(), in[0].device());
      scatter_add_(transpose(strided, 0, 1), 0, in[2], in[1].detach());
      return std::vector<Tensor>{acc, strided, one_hot(in[3], 10)};
    },
    false,
    4e-3});  // half-precision additions round per step, in whichever order the atomics land

}  // namespace
}  // namespace hearth::parity
