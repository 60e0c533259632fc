#include <array>
#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>

#include "hearth/backends/cuda/allocator.h"
#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/cuda_switches.h"

namespace hearth::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct DevicePool {
  std::mutex mu;
  bool initialised = false;
  cudaMemPool_t pool = nullptr;
  std::unordered_map<void*, size_t> sizes;
  MemoryStats stats;
  size_t total = 0;
  // While a step is watched (begin_step_watch): its own live allocations, and
  // how many older ones it freed.
  bool watching = false;
  bool recording = false;
  std::unordered_map<void*, size_t> born;
  size_t freed_from_before = 0;
};

std::array<DevicePool, kMaxDevices>& pools() {
  static std::array<DevicePool, kMaxDevices> p;
  return p;
}

std::string gib(size_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << bytes / double(1ull << 30) << " GiB";
  return os.str();
}

// Called with p.mu held.
void init_pool(DevicePool& p, int device) {
  if (p.initialised) return;
  context(device);
  HEARTH_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&p.pool, device));
  // Keep freed memory in the pool instead of returning it at every sync.
  uint64_t threshold = UINT64_MAX;
  HEARTH_CUDA_CHECK(cudaMemPoolSetAttribute(p.pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  size_t free_b = 0;
  HEARTH_CUDA_CHECK(cudaMemGetInfo(&free_b, &p.total));
  const NumberSwitch& fraction = switches::cuda_memory_fraction();  // from 0.001 to 1
  if (fraction.is_set()) p.stats.limit = static_cast<size_t>(fraction.get() * static_cast<double>(p.total));
  p.initialised = true;
}

size_t reserved_bytes(DevicePool& p) {
  uint64_t v = 0;
  cudaMemPoolGetAttribute(p.pool, cudaMemPoolAttrReservedMemCurrent, &v);
  return static_cast<size_t>(v);
}

[[noreturn]] void throw_oom(DevicePool& p, size_t nbytes, int device, const char* cause) {
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  p.stats.num_ooms++;
  HEARTH_THROW(OutOfMemoryError, "[cuda] out of memory on cuda:", device, ": tried to allocate ", gib(nbytes), " (",
               cause, "). hearth holds ", gib(p.stats.active), " in live tensors and ", gib(reserved_bytes(p)),
               " reserved in total; the device has ", gib(free_b), " free of ", gib(total_b),
               p.stats.limit ? " (limit " + gib(p.stats.limit) + " from HEARTH_CUDA_MEMORY_FRACTION)" : std::string(),
               ". Reduce the batch size, use precision=bf16-mixed, or use gradient_accumulation_steps to keep the "
               "effective batch.");
}

}  // namespace

void* allocate(size_t nbytes, int device) {
  if (nbytes == 0) nbytes = 1;
  nbytes = (nbytes + 511) / 512 * 512;  // 512-byte granules keep vectorised accesses aligned
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  init_pool(p, device);
  if (p.stats.limit && p.stats.active + nbytes > p.stats.limit) throw_oom(p, nbytes, device, "over the memory limit");
  cudaStream_t s = stream(device);
  const size_t reserved_before = p.recording ? 0 : reserved_bytes(p);
  void* ptr = nullptr;
  cudaError_t err = cudaMallocAsync(&ptr, nbytes, s);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    // Give cached blocks back to the device, then try once more.
    HEARTH_CUDA_CHECK(cudaStreamSynchronize(s));
    HEARTH_CUDA_CHECK(cudaMemPoolTrimTo(p.pool, 0));
    err = cudaMallocAsync(&ptr, nbytes, s);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw_oom(p, nbytes, device, "the device is full even after releasing hearth's cache");
    }
  }
  HEARTH_CUDA_CHECK(err);
  if (!p.recording && reserved_bytes(p) > reserved_before) p.stats.num_device_allocs++;
  p.sizes[ptr] = nbytes;
  if (p.watching) p.born[ptr] = nbytes;
  p.stats.active += nbytes;
  if (p.stats.active > p.stats.peak_active) p.stats.peak_active = p.stats.active;
  return ptr;
}

void deallocate(void* ptr, int device) {
  if (!ptr) return;
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  auto it = p.sizes.find(ptr);
  if (it != p.sizes.end()) {
    p.stats.active -= it->second;
    p.sizes.erase(it);
  }
  if (p.watching && p.born.erase(ptr) == 0) p.freed_from_before++;
  // Stream-ordered: the block is reusable once the stream passes this point.
  cudaFreeAsync(ptr, stream(device));
}

MemoryStats memory_stats(int device) {
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  init_pool(p, device);
  MemoryStats s = p.stats;
  s.reserved = reserved_bytes(p);
  return s;
}

void reset_peak_memory_stats(int device) {
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  p.stats.peak_active = p.stats.active;
}

void empty_cache(int device) {
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  init_pool(p, device);
  HEARTH_CUDA_CHECK(cudaStreamSynchronize(stream(device)));
  HEARTH_CUDA_CHECK(cudaMemPoolTrimTo(p.pool, 0));
}

void begin_step_watch(int device) {
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  p.watching = true;
  p.born.clear();
  p.freed_from_before = 0;
}

void set_recording(int device, bool recording) {
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  p.recording = recording;
}

StepMemoryReport end_step_watch(int device) {
  DevicePool& p = pools()[device];
  std::lock_guard<std::mutex> lock(p.mu);
  StepMemoryReport r;
  r.freed_from_before = p.freed_from_before;
  r.outliving = p.born.size();
  for (const auto& [ptr, bytes] : p.born) r.outliving_bytes += bytes;
  p.watching = false;
  p.born.clear();
  return r;
}

}  // namespace hearth::cuda
