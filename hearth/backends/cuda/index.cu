// index_select, gather and scatter_add on CUDA (contracts in
// hearth/dispatch/schemas/index.h). Indices on the GPU arrive unchecked:
// each kernel tests every index before use and records a bad one
// (index_guard.cuh) instead of touching memory out of bounds.
//
// index_select and gather only move bytes, so they run on unsigned words of
// the element's (or, for index_select, a whole row chunk's) width: one kernel
// per width serves every dtype. scatter_add adds with atomics, so for floating
// dtypes the order of additions into one element, and the last bits of the
// sum, may differ from run to run; integer sums are exact.
#include <cstring>
#include <vector>

#include "hearth/backends/cuda/index_guard.cuh"
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/index.h"

namespace hearth::cuda {
namespace {

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// The bits written where an index was out of range: NaN for floating dtypes, 0 otherwise.
uint64_t skipped_element_bits(DType dt) {
  switch (dt) {
    case DType::float32:
      return 0x7fc00000u;
    case DType::float64:
      return 0x7ff8000000000000ull;
    case DType::bfloat16:
      return 0x7fc0u;
    case DType::float16:
      return 0x7e00u;
    default:
      return 0;
  }
}

// `bits` (one element of `elem` bytes) repeated across a word of type U.
template <typename U>
U repeated(uint64_t bits, size_t elem) {
  unsigned char bytes[sizeof(U)];
  for (size_t b = 0; b < sizeof(U); b += elem) std::memcpy(bytes + b, &bits, elem);  // little-endian
  U u;
  std::memcpy(&u, bytes, sizeof(U));
  return u;
}

// An offset calculator (byte strides) over `shape` for N operands, merging
// dims that are contiguous in all of them.
template <int N>
OffsetCalc<N> offsets_over(const Shape& shape, const std::array<std::vector<int64_t>, N>& byte_strides) {
  OffsetCalc<N> oc{};
  int nd = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = nd > 0;
    for (int k = 0; k < N && merge; ++k) merge = oc.strides[nd - 1][k] == byte_strides[k][d] * shape[d];
    if (merge) {
      oc.sizes[nd - 1] *= shape[d];
      for (int k = 0; k < N; ++k) oc.strides[nd - 1][k] = byte_strides[k][d];
      continue;
    }
    HEARTH_CHECK(nd < kMaxDims, NotImplementedError, "[cuda] indexing ops support at most ", kMaxDims,
                 " non-mergeable dimensions, got shape ", shape_str(shape));
    oc.sizes[nd] = shape[d];
    for (int k = 0; k < N; ++k) oc.strides[nd][k] = byte_strides[k][d];
    ++nd;
  }
  oc.ndim = nd;
  return oc;
}

std::vector<int64_t> byte_strides(const Tensor& t) {
  std::vector<int64_t> s(t.strides().begin(), t.strides().end());
  for (int64_t& v : s) v *= static_cast<int64_t>(t.element_size());
  return s;
}

// ---- index_select: out[o, j, :] = x[o, index[j], :], rows moved as words of U ----

template <typename U>
__global__ void index_select_kernel(const U* __restrict__ x, const int64_t* __restrict__ index, U* __restrict__ out,
                                    int64_t outer, int64_t n, int64_t k, int64_t words, U fill, IndexErrorSlot* slot,
                                    int dim) {
  const int64_t total = outer * k * words;
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t w = lin % words, r = lin / words, j = r % k, o = r / k;
    const int64_t v = index[j];
    if (index_in_range(v, n)) {
      out[lin] = x[(o * n + v) * words + w];
    } else {
      out[lin] = fill;
      if (w == 0) record_bad_index(slot, v, n, dim, IndexOp::index_select);
    }
  }
}

template <typename U>
void launch_index_select(const Tensor& x, const Tensor& index, const Tensor& out, int64_t row_bytes, int dim) {
  const int device = x.device().index;
  const int64_t outer = x.shape()[0], n = x.shape()[1], k = index.numel();
  const int64_t words = row_bytes / static_cast<int64_t>(sizeof(U));
  const U fill = repeated<U>(skipped_element_bits(x.dtype()), x.element_size());
  index_select_kernel<U><<<grid_for(outer * k * words, kThreads, device), kThreads, 0, stream(device)>>>(
      static_cast<const U*>(x.data_ptr()), static_cast<const int64_t*>(index.data_ptr()),
      static_cast<U*>(out.data_ptr()), outer, n, k, words, fill, index_error_slot(device), dim);
  HEARTH_CUDA_CHECK_LAUNCH();
}

void index_select_cuda(OpCall& call) {
  const Tensor &x = call.in(0), &index = call.in(1), &out = call.out(0);
  const int device = x.device().index;
  activate(device);
  raise_recorded_index_error(device, "index_select");
  if (out.numel() == 0) return;
  const int dim = static_cast<int>(call.attrs<IndexDimAttrs>().dim);
  const int64_t row_bytes = x.shape()[2] * static_cast<int64_t>(x.element_size());
  // The widest word that divides a row and the alignment of both buffers.
  const uintptr_t align = reinterpret_cast<uintptr_t>(x.data_ptr()) | reinterpret_cast<uintptr_t>(out.data_ptr());
  auto fits = [&](int64_t w) { return row_bytes % w == 0 && align % static_cast<uintptr_t>(w) == 0; };
  if (fits(16))
    launch_index_select<uint4>(x, index, out, row_bytes, dim);
  else if (fits(8))
    launch_index_select<uint64_t>(x, index, out, row_bytes, dim);
  else if (fits(4))
    launch_index_select<uint32_t>(x, index, out, row_bytes, dim);
  else if (fits(2))
    launch_index_select<uint16_t>(x, index, out, row_bytes, dim);
  else
    launch_index_select<uint8_t>(x, index, out, row_bytes, dim);
}

// ---- gather: out[c] = x[c with c[dim] = index[c]], elements moved as words of E ----

template <typename E>
__global__ void gather_kernel(const char* __restrict__ x, const char* __restrict__ index, E* __restrict__ out,
                              int64_t total, OffsetCalc<2> oc, int64_t x_dim_stride, int64_t size, E fill,
                              IndexErrorSlot* slot, int dim) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[2];
    oc.get(lin, off);
    const int64_t v = *reinterpret_cast<const int64_t*>(index + off[0]);
    if (index_in_range(v, size)) {
      out[lin] = *reinterpret_cast<const E*>(x + off[1] + v * x_dim_stride);
    } else {
      out[lin] = fill;
      record_bad_index(slot, v, size, dim, IndexOp::gather);
    }
  }
}

template <typename E>
void launch_gather(const Tensor& x, const Tensor& index, const Tensor& out, int dim) {
  const int device = x.device().index;
  std::vector<int64_t> xs = byte_strides(x);
  const int64_t x_dim_stride = xs[dim];
  xs[dim] = 0;  // the coordinate along dim comes from the index
  const OffsetCalc<2> oc = offsets_over<2>(index.shape(), {byte_strides(index), xs});
  const int64_t total = index.numel();
  gather_kernel<E><<<grid_for(total, kThreads, device), kThreads, 0, stream(device)>>>(
      static_cast<const char*>(x.data_ptr()), static_cast<const char*>(index.data_ptr()),
      static_cast<E*>(out.data_ptr()), total, oc, x_dim_stride, x.shape()[dim],
      repeated<E>(skipped_element_bits(x.dtype()), sizeof(E)), index_error_slot(device), dim);
  HEARTH_CUDA_CHECK_LAUNCH();
}

void gather_cuda(OpCall& call) {
  const Tensor &x = call.in(0), &index = call.in(1), &out = call.out(0);
  const int device = x.device().index;
  activate(device);
  raise_recorded_index_error(device, "gather");
  if (out.numel() == 0) return;
  const int dim = static_cast<int>(call.attrs<IndexDimAttrs>().dim);
  switch (x.element_size()) {
    case 1:
      launch_gather<uint8_t>(x, index, out, dim);
      break;
    case 2:
      launch_gather<uint16_t>(x, index, out, dim);
      break;
    case 4:
      launch_gather<uint32_t>(x, index, out, dim);
      break;
    default:
      launch_gather<uint64_t>(x, index, out, dim);
      break;
  }
}

// ---- scatter_add: out = self; out[c with c[dim] = index[c]] += src[c] ----

// Adds v to *p atomically. Bytes have no atomic add of their own: they update
// the aligned 32-bit word holding them with compare-and-swap (bool with or).
template <typename D>
__device__ __forceinline__ void atomic_add(D* p, D v) {
  if constexpr (std::is_same_v<D, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<D, bool> || std::is_same_v<D, uint8_t>) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    if constexpr (std::is_same_v<D, bool>) {
      if (v) atomicOr(word, 1u << shift);
    } else {
      unsigned int old = *word, assumed;
      do {
        assumed = old;
        const unsigned int byte = ((assumed >> shift) + static_cast<unsigned int>(v)) & 0xffu;
        old = atomicCAS(word, assumed, (assumed & ~(0xffu << shift)) | (byte << shift));
      } while (old != assumed);
    }
  } else {
    atomicAdd(p, v);  // float, double, int32, __half, __nv_bfloat16
  }
}

template <typename D>
__global__ void scatter_add_kernel(const char* __restrict__ src, const char* __restrict__ index, char* out,
                                   int64_t total, OffsetCalc<3> oc, int64_t out_dim_stride, int64_t size,
                                   IndexErrorSlot* slot, int dim) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[3];
    oc.get(lin, off);
    const int64_t v = *reinterpret_cast<const int64_t*>(index + off[0]);
    if (!index_in_range(v, size)) {
      record_bad_index(slot, v, size, dim, IndexOp::scatter_add);
      continue;
    }
    atomic_add(reinterpret_cast<D*>(out + off[2] + v * out_dim_stride), *reinterpret_cast<const D*>(src + off[1]));
  }
}

template <typename D>
struct IdentityFn {
  __device__ D operator()(D v) const { return v; }
};

void scatter_add_cuda(OpCall& call) {
  const Tensor &self = call.in(0), &index = call.in(1), &src = call.in(2), &out = call.out(0);
  const int device = self.device().index;
  activate(device);
  raise_recorded_index_error(device, "scatter_add");
  const int dim = static_cast<int>(call.attrs<IndexDimAttrs>().dim);
  const bool in_place = out.data_ptr() == self.data_ptr() && out.strides() == self.strides();
  HEARTH_CUDA_DISPATCH_ALL(self.dtype(), "scatter_add", [&] {
    using D = scalar_t;
    if (!in_place) {
      if (self.is_contiguous() && out.is_contiguous())
        HEARTH_CUDA_CHECK(
            cudaMemcpyAsync(out.data_ptr(), self.data_ptr(), out.nbytes(), cudaMemcpyDeviceToDevice, stream(device)));
      else
        gpu_elementwise<D, D>(out, {&self}, IdentityFn<D>{});
    }
    const int64_t total = index.numel();
    if (total == 0) return;
    std::vector<int64_t> os = byte_strides(out);
    const int64_t out_dim_stride = os[dim];
    os[dim] = 0;
    const OffsetCalc<3> oc = offsets_over<3>(index.shape(), {byte_strides(index), byte_strides(src), os});
    scatter_add_kernel<D><<<grid_for(total, kThreads, device), kThreads, 0, stream(device)>>>(
        static_cast<const char*>(src.data_ptr()), static_cast<const char*>(index.data_ptr()),
        static_cast<char*>(out.data_ptr()), total, oc, out_dim_stride, out.shape()[dim], index_error_slot(device), dim);
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

HEARTH_REGISTER_KERNEL(index_select, cuda_kind(), index_select_cuda, DTypeSet::all());
HEARTH_REGISTER_KERNEL(gather, cuda_kind(), gather_cuda, DTypeSet::all());
HEARTH_REGISTER_KERNEL(scatter_add, cuda_kind(), scatter_add_cuda, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
