#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"

namespace hearth::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct Contexts {
  std::mutex mu;
  std::array<std::unique_ptr<DeviceContext>, kMaxDevices> owned;
  std::array<std::atomic<DeviceContext*>, kMaxDevices> ready{};  // lock-free fast path
};

Contexts& contexts() {
  static Contexts c;
  return c;
}

std::unique_ptr<DeviceContext> create(int device) {
  auto c = std::make_unique<DeviceContext>();
  c->device = device;
  HEARTH_CUDA_CHECK(cudaSetDevice(device));
  HEARTH_CUDA_CHECK(cudaGetDeviceProperties(&c->props, device));
  // A non-blocking stream: no implicit sync with the legacy default stream.
  HEARTH_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  return c;
}

}  // namespace

DeviceContext& context(int device) {
  auto& cs = contexts();
  HEARTH_CHECK(device >= 0 && device < kMaxDevices, DeviceError, "[cuda] device index ", device, " out of range");
  thread_local int current = -1;
  if (current != device) {
    HEARTH_CUDA_CHECK(cudaSetDevice(device));
    current = device;
  }
  if (DeviceContext* c = cs.ready[device].load(std::memory_order_acquire)) return *c;
  std::lock_guard<std::mutex> lock(cs.mu);
  if (!cs.owned[device]) {
    cs.owned[device] = create(device);
    cs.ready[device].store(cs.owned[device].get(), std::memory_order_release);
  }
  return *cs.owned[device];
}

DeviceContext& activate(int device) { return context(device); }

}  // namespace hearth::cuda
