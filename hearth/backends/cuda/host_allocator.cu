#include <map>
#include <mutex>
#include <vector>

#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/host_allocator.h"
#include "hearth/core/errors.h"

namespace hearth::cuda {
namespace {

struct Block {
  size_t size = 0;
  bool in_use = false;
  std::vector<cudaEvent_t> pending;  // copies from the block that may still run
};

struct HostPool {
  std::mutex mu;
  std::map<char*, Block> blocks;           // by start address
  std::multimap<size_t, char*> free_list;  // cached blocks by size
  std::vector<cudaEvent_t> spare_events;
  size_t host_allocs = 0;
};

HostPool& pool() {
  static HostPool* p = new HostPool;  // lives to exit: blocks may be freed by static destructors
  return *p;
}

// Sizes round up to a power of two (at least 4 KiB), so a freed block serves
// the next request of similar size; batches repeat their sizes every step.
size_t size_class(size_t n) {
  size_t s = 4096;
  while (s < n) s *= 2;
  return s;
}

// True when every copy from `b` has finished; finished events go back to the spares.
bool copies_done(HostPool& p, Block& b) {
  while (!b.pending.empty()) {
    cudaError_t e = cudaEventQuery(b.pending.back());
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    HEARTH_CUDA_CHECK(e);
    p.spare_events.push_back(b.pending.back());
    b.pending.pop_back();
  }
  return true;
}

}  // namespace

void* allocate_pinned(size_t nbytes) {
  HostPool& p = pool();
  const size_t size = size_class(nbytes);
  std::lock_guard<std::mutex> lock(p.mu);
  auto [first, last] = p.free_list.equal_range(size);
  for (auto it = first; it != last; ++it) {
    Block& b = p.blocks.at(it->second);
    if (!copies_done(p, b)) continue;
    char* ptr = it->second;
    p.free_list.erase(it);
    b.in_use = true;
    return ptr;
  }
  void* ptr = nullptr;
  cudaError_t err = cudaHostAlloc(&ptr, size, cudaHostAllocPortable);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    HEARTH_THROW(OutOfMemoryError, "[cuda] could not allocate ", size, " bytes of pinned host memory (",
                 cudaGetErrorString(err), "). Set dataloader_pin_memory to false or use a smaller batch.");
  }
  ++p.host_allocs;
  p.blocks[static_cast<char*>(ptr)] = Block{size, true, {}};
  return ptr;
}

void free_pinned(void* ptr) {
  if (!ptr) return;
  HostPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  auto it = p.blocks.find(static_cast<char*>(ptr));
  if (it == p.blocks.end() || !it->second.in_use) return;
  it->second.in_use = false;
  p.free_list.emplace(it->second.size, it->first);
}

bool record_pinned_use(const void* src, cudaStream_t stream) {
  HostPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.blocks.empty()) return false;
  char* c = const_cast<char*>(static_cast<const char*>(src));
  auto it = p.blocks.upper_bound(c);
  if (it == p.blocks.begin()) return false;
  --it;
  if (c >= it->first + it->second.size) return false;
  cudaEvent_t ev;
  if (p.spare_events.empty()) {
    HEARTH_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  } else {
    ev = p.spare_events.back();
    p.spare_events.pop_back();
  }
  HEARTH_CUDA_CHECK(cudaEventRecord(ev, stream));
  it->second.pending.push_back(ev);
  return true;
}

PinnedStats pinned_stats() {
  HostPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  PinnedStats s;
  s.blocks = p.blocks.size();
  s.host_allocs = p.host_allocs;
  for (const auto& [ptr, b] : p.blocks) {
    s.bytes += b.size;
    if (b.in_use) s.in_use_bytes += b.size;
  }
  return s;
}

}  // namespace hearth::cuda
