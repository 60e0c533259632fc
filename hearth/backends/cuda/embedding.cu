// Embedding lookup (a row gather) and its backward (a scatter-add of rows) on CUDA.
//
// The lookup copies rows in the widest unit (16 down to 1 bytes) both tables'
// alignment allows, so it serves every dtype. The backward is deterministic:
// indices are sorted with their positions (CUB's stable radix sort, on 32-bit
// keys with only the bits V needs). The sorted list is cut into pieces of at
// most kPiece entries that never straddle two indices; one group of threads
// sums each piece's gradient rows in position order into a float (double for
// float64) partial, then the group at the start of each run of equal indices
// adds its pieces in order. Long runs (BERT's token-type ids are all 0: one
// run of batch x sequence rows) thus spread over many groups instead of one
// group reading every row. The order is fixed by the indices alone: no atomics.
// Runs of at most kPiece rows are summed exactly as the CPU kernel sums them.
//
// Indices outside [0, V) cannot raise from the GPU without synchronising the
// host, so they are not checked there: the lookup writes NaN rows for them
// (zero rows for integer tables), and the backward drops their gradient.
#include <cstring>

#include <cub/device/device_radix_sort.cuh>

#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/embedding.h"

namespace hearth::cuda {
namespace {

using namespace nn;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// Rows of `units` copy units over groups of `tpr` threads, one row per group.
struct GatherPlan {
  int tpr = 1, threads = 256;
  unsigned blocks = 0;
};

GatherPlan plan_gather(int64_t rows, int64_t units, int device) {
  GatherPlan p;
  p.tpr = std::min(pow2_at_least((units + 3) / 4), 256);
  const int64_t want = static_cast<int64_t>(sm_count(device)) * 2048;
  while (p.tpr < 256 && rows * p.tpr < want && 2 * p.tpr <= units) p.tpr *= 2;
  p.blocks = row_grid(rows, p.threads / p.tpr, device);
  return p;
}

template <typename U>
__global__ void embedding_kernel(const U* __restrict__ weight, Index indices, U* __restrict__ out, int64_t K, int64_t V,
                                 int64_t units, U bad, int tpr) {
  const GroupPos gp = group_pos(tpr);
  for (int64_t k : group_rows(K, tpr, gp)) {
    const int64_t v = indices[k];
    U* dst = out + k * units;
    if (v < 0 || v >= V) {
      for (int64_t u = gp.t; u < units; u += tpr) dst[u] = bad;
      continue;
    }
    const U* src = weight + v * units;
    for (int64_t u = gp.t; u < units; u += tpr) dst[u] = src[u];
  }
}

template <typename U>
U fill_unit(unsigned char byte) {
  U u;
  std::memset(static_cast<void*>(&u), byte, sizeof(U));
  return u;
}

template <typename U>
void launch_gather(const Tensor& weight, const Tensor& indices, const Tensor& out, int64_t row_bytes, bool floating,
                   int device, cudaStream_t s) {
  const int64_t K = indices.numel(), V = weight.shape()[0], units = row_bytes / static_cast<int64_t>(sizeof(U));
  const GatherPlan p = plan_gather(K, units, device);
  embedding_kernel<U><<<p.blocks, p.threads, 0, s>>>(static_cast<const U*>(weight.data_ptr()), index_of(indices),
                                                     static_cast<U*>(out.data_ptr()), K, V, units,
                                                     fill_unit<U>(floating ? 0xFF : 0x00), p.tpr);  // all ones: NaN
  HEARTH_CUDA_CHECK_LAUNCH();
}

void embedding_forward(OpCall& call) {
  const Tensor &weight = call.in(0), &indices = call.in(1), &out = call.out(0);
  const int device = weight.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  if (indices.numel() == 0 || weight.shape()[1] == 0) return;
  const int64_t row_bytes = weight.shape()[1] * static_cast<int64_t>(weight.element_size());
  const uintptr_t addr = reinterpret_cast<uintptr_t>(weight.data_ptr()) | reinterpret_cast<uintptr_t>(out.data_ptr());
  auto fits = [&](int64_t unit) { return row_bytes % unit == 0 && addr % static_cast<uintptr_t>(unit) == 0; };
  const bool floating = is_floating(weight.dtype());
  if (fits(16))
    launch_gather<uint4>(weight, indices, out, row_bytes, floating, device, s);
  else if (fits(8))
    launch_gather<uint2>(weight, indices, out, row_bytes, floating, device, s);
  else if (fits(4))
    launch_gather<uint32_t>(weight, indices, out, row_bytes, floating, device, s);
  else if (fits(2))
    launch_gather<uint16_t>(weight, indices, out, row_bytes, floating, device, s);
  else
    launch_gather<uint8_t>(weight, indices, out, row_bytes, floating, device, s);
}

// Sort keys: the index, or V for an index out of range (sorted last, then skipped).
__global__ void embedding_keys_kernel(Index indices, int64_t K, int64_t V, uint32_t* keys, int32_t* positions) {
  for (int64_t k : thread_rows(K)) {
    const int64_t v = indices[k];
    keys[k] = static_cast<uint32_t>(v >= 0 && v < V ? v : V);
    positions[k] = static_cast<int32_t>(k);
  }
}

inline constexpr int64_t kPiece = 64;

// Pass 1: a group per block of kPiece sorted entries sums each piece (the
// entries of one index within the block) into partial[first entry of the piece].
template <typename D, typename A>
__global__ void embedding_piece_sums_kernel(const D* __restrict__ grad, const uint32_t* __restrict__ keys,
                                            const int32_t* __restrict__ positions, int64_t K, int64_t V, int64_t Dim,
                                            int64_t padding_idx, A* __restrict__ partial, int tpr) {
  const GroupPos gp = group_pos(tpr);
  const int64_t blocks_of_entries = (K + kPiece - 1) / kPiece;
  for (int64_t b : group_rows(blocks_of_entries, tpr, gp)) {
    const int64_t stop = min(K, (b + 1) * kPiece);
    for (int64_t q = b * kPiece; q < stop;) {
      const uint32_t v = keys[q];
      int64_t e = q + 1;
      while (e < stop && keys[e] == v) ++e;
      if (v < V && static_cast<int64_t>(v) != padding_idx) {
        for (int64_t d = gp.t; d < Dim; d += tpr) {
          A acc = 0;
          for (int64_t r = q; r < e; ++r) acc += to_acc(grad[static_cast<int64_t>(positions[r]) * Dim + d]);
          partial[q * Dim + d] = acc;
        }
      }
      q = e;
    }
  }
}

// Pass 2: the group at the start of each run adds the run's pieces: the one at
// its start and one at every kPiece boundary inside it, in order.
template <typename D, typename A>
__global__ void embedding_run_sums_kernel(const uint32_t* __restrict__ keys, const A* __restrict__ partial, int64_t K,
                                          int64_t V, int64_t Dim, int64_t padding_idx, D* __restrict__ gw, int tpr) {
  const GroupPos gp = group_pos(tpr);
  for (int64_t j : group_rows(K, tpr, gp)) {
    const uint32_t v = keys[j];
    if ((j > 0 && keys[j - 1] == v) || v >= V || static_cast<int64_t>(v) == padding_idx) continue;
    for (int64_t d = gp.t; d < Dim; d += tpr) {
      A acc = partial[j * Dim + d];
      for (int64_t p = (j / kPiece + 1) * kPiece; p < K && keys[p] == v; p += kPiece) acc += partial[p * Dim + d];
      gw[static_cast<int64_t>(v) * Dim + d] = from_acc<D>(acc);
    }
  }
}

int key_bits(int64_t V) {
  int bits = 1;
  while (bits < 32 && (int64_t{1} << bits) <= V) ++bits;
  return bits;
}

void embedding_backward(OpCall& call) {
  const Tensor &grad = call.in(0), &indices = call.in(1), &gw = call.out(0);
  const int64_t padding_idx = call.attrs<EmbeddingAttrs>().padding_idx;
  const Device dev = gw.device();
  activate(dev.index);
  const cudaStream_t s = stream(dev.index);
  const int64_t V = gw.shape()[0], Dim = gw.shape()[1], K = indices.numel();
  if (gw.numel() == 0) return;
  HEARTH_CUDA_CHECK(cudaMemsetAsync(gw.data_ptr(), 0, gw.nbytes(), s));  // rows no index names stay zero
  if (K == 0) return;
  HEARTH_CHECK(V < (int64_t{1} << 31) && K < (int64_t{1} << 31), NotImplementedError,
               "[embedding_backward] on cuda supports fewer than 2^31 rows and indices, got ", V, " rows and ", K,
               " indices");
  Tensor keys = Tensor::empty({2, K}, DType::int32, dev), positions = Tensor::empty({2, K}, DType::int32, dev);
  uint32_t* keys_in = static_cast<uint32_t*>(keys.data_ptr());
  uint32_t* keys_out = keys_in + K;
  int32_t* pos_in = static_cast<int32_t*>(positions.data_ptr());
  int32_t* pos_out = pos_in + K;
  embedding_keys_kernel<<<row_grid(K, 256, dev.index), 256, 0, s>>>(index_of(indices), K, V, keys_in, pos_in);
  HEARTH_CUDA_CHECK_LAUNCH();
  const int bits = key_bits(V);
  size_t temp_bytes = 0;
  HEARTH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, pos_in, pos_out,
                                                    static_cast<int>(K), 0, bits, s));
  Tensor temp = Tensor::empty({static_cast<int64_t>(std::max<size_t>(temp_bytes, 1))}, DType::uint8, dev);
  HEARTH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), temp_bytes, keys_in, keys_out, pos_in, pos_out,
                                                    static_cast<int>(K), 0, bits, s));
  HEARTH_CUDA_DISPATCH_FLOATING(gw.dtype(), "embedding_backward", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    Tensor partial = Tensor::empty({K, Dim}, std::is_same_v<A, double> ? DType::float64 : DType::float32, dev);
    A* part = static_cast<A*>(partial.data_ptr());
    const GatherPlan pieces = plan_gather((K + kPiece - 1) / kPiece, Dim, dev.index);
    embedding_piece_sums_kernel<D, A><<<pieces.blocks, pieces.threads, 0, s>>>(
        static_cast<const D*>(grad.data_ptr()), keys_out, pos_out, K, V, Dim, padding_idx, part, pieces.tpr);
    HEARTH_CUDA_CHECK_LAUNCH();
    const GatherPlan runs = plan_gather(K, Dim, dev.index);
    embedding_run_sums_kernel<D, A><<<runs.blocks, runs.threads, 0, s>>>(keys_out, part, K, V, Dim, padding_idx,
                                                                         static_cast<D*>(gw.data_ptr()), runs.tpr);
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

HEARTH_REGISTER_KERNEL(embedding, cuda_kind(), embedding_forward, DTypeSet::all());
HEARTH_REGISTER_KERNEL(embedding_backward, cuda_kind(), embedding_backward, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
