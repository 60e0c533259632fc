#include "hearth/backends/cuda/image/block_cache.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hearth::cuda {
namespace {

struct Block {
  BlockKind kind;
  int device;  // -1 for host memory
  size_t nbytes;
};

struct Cache {
  std::mutex mu;
  // Free blocks by (kind, device, size).
  std::multimap<std::tuple<int, int, size_t>, void*> free;
  std::unordered_map<void*, Block> blocks;  // every block handed out or cached
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: the memory lives as long as the process
  return *c;
}

}  // namespace

void* take_block(BlockKind kind, size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  int device = -1;
  if (kind == BlockKind::device && cudaGetDevice(&device) != cudaSuccess) return nullptr;
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    const auto key = std::make_tuple(static_cast<int>(kind), device, nbytes);
    auto it = c.free.lower_bound(key);
    if (it != c.free.end() && std::get<0>(it->first) == static_cast<int>(kind) && std::get<1>(it->first) == device &&
        std::get<2>(it->first) <= 2 * nbytes) {
      void* p = it->second;
      c.free.erase(it);
      return p;
    }
  }
  void* p = nullptr;
  const cudaError_t err = kind == BlockKind::device ? cudaMalloc(&p, nbytes) : cudaHostAlloc(&p, nbytes, 0);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(c.mu);
  c.blocks[p] = {kind, device, nbytes};
  return p;
}

void give_block(BlockKind kind, void* ptr) {
  if (ptr == nullptr) return;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.blocks.find(ptr);
  if (it == c.blocks.end() || it->second.kind != kind) return;  // not ours: leave it alone
  c.free.emplace(std::make_tuple(static_cast<int>(kind), it->second.device, it->second.nbytes), ptr);
}

namespace {
thread_local std::vector<std::pair<BlockKind, void*>> t_held;
}  // namespace

void give_block_after_sync(BlockKind kind, void* ptr) {
  if (ptr != nullptr) t_held.emplace_back(kind, ptr);
}

void release_blocks_held() {
  for (const auto& [kind, ptr] : t_held) give_block(kind, ptr);
  t_held.clear();
}

}  // namespace hearth::cuda
