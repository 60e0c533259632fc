// The CUDA device runtime: discovery (with the reason when there is no usable
// GPU), memory through the pool allocator, and copies ordered on the device's stream.
#include <cublasLt.h>
#include <cudnn.h>

#include <mutex>
#include <sstream>

#include "hearth/backends/cuda/allocator.h"
#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/host_allocator.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/env.h"

namespace hearth::cuda {
namespace {

std::string version_string(int v) {  // 12040 -> "12.4"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

class CudaRuntime final : public DeviceRuntime {
 public:
  // Probing initialises the driver (slow), so it waits for the first question.
  bool is_available() const override { return probed().count_ > 0; }
  std::string unavailable_reason() const override { return probed().reason_; }
  int device_count() const override { return probed().count_; }
  int auto_priority() const override { return 100; }
  std::string device_name(int index) const override {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, index) != cudaSuccess) return "unknown";
    return p.name;
  }

  void* allocate(size_t nbytes, int index) override { return cuda::allocate(nbytes, index); }
  void deallocate(void* ptr, int index) override { cuda::deallocate(ptr, index); }

  void* allocate_pinned_host(size_t nbytes) override { return cuda::allocate_pinned(nbytes); }
  void free_pinned_host(void* ptr) override { cuda::free_pinned(ptr); }

  void copy_from_host(void* dst, const void* src, size_t n, int index) override {
    // From pageable memory the call returns once `src` has been staged, so the
    // caller may free it. From pinned memory it returns at once, and the event
    // recorded on the block keeps it from reuse until the copy is done.
    // Ordering with kernels comes from the stream.
    cudaStream_t s = stream(index);
    HEARTH_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s));
    cuda::record_pinned_use(src, s);
  }
  void copy_to_host(void* dst, const void* src, size_t n, int index) override {
    cudaStream_t s = stream(index);
    HEARTH_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s));
    HEARTH_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  void copy_within(void* dst, const void* src, size_t n, int index) override {
    HEARTH_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream(index)));
  }
  void synchronize(int index) override { HEARTH_CUDA_CHECK(cudaStreamSynchronize(stream(index))); }

  MemoryStats memory_stats(int index) const override { return cuda::memory_stats(index); }
  void reset_peak_memory_stats(int index) override { cuda::reset_peak_memory_stats(index); }
  void empty_cache(int index) override { cuda::empty_cache(index); }
  void memory_info(int index, size_t* free_b, size_t* total_b) const override {
    context(index);
    HEARTH_CUDA_CHECK(cudaMemGetInfo(free_b, total_b));
  }
  std::string version_info() const override {
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    std::ostringstream os;
    os << "CUDA runtime " << version_string(rt) << ", driver " << (drv ? version_string(drv) : "none") << ", cuBLASLt "
       << cublasLtGetVersion() << ", cuDNN " << cudnnGetVersion();
    return os.str();
  }

 private:
  const CudaRuntime& probed() const {
    std::call_once(once_, [this] { const_cast<CudaRuntime*>(this)->probe(); });
    return *this;
  }
  // One cause per case, each with what to do about it.
  void probe() {
    cudaError_t err = cudaGetDeviceCount(&count_);
    if (err == cudaSuccess && count_ > 0) return;
    (void)cudaGetLastError();
    count_ = 0;
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    std::string visible = env_string("CUDA_VISIBLE_DEVICES", "<unset>");
    switch (err) {
      case cudaSuccess:
      case cudaErrorNoDevice:
        reason_ = (visible != "<unset>" && (visible.empty() || visible == "-1" || visible == "none"))
                      ? "CUDA_VISIBLE_DEVICES='" + visible + "' hides every GPU; unset it or list the GPUs to use."
                      : "no CUDA device was found (CUDA_VISIBLE_DEVICES=" + visible +
                            "). Check `nvidia-smi` and that the NVIDIA driver is loaded.";
        break;
      case cudaErrorInsufficientDriver:
        if (drv == 0) {
          reason_ =
              "the NVIDIA driver library (libcuda.so.1) could not be loaded: no NVIDIA driver is installed on "
              "this machine, or it is not on the library path. Install the driver and check `nvidia-smi`.";
          break;
        }
        reason_ = "the NVIDIA driver (" + (drv ? version_string(drv) : std::string("not found")) +
                  ") is older than the CUDA runtime hearth was built with (" + version_string(rt) +
                  "). Update the driver, or rebuild hearth with an older CUDA toolkit.";
        break;
      case cudaErrorDevicesUnavailable:
        reason_ = "every CUDA device is busy or in a prohibited compute mode (nvidia-smi -q shows the compute mode).";
        break;
      default:
        reason_ = std::string("the CUDA driver could not be initialised: ") + cudaGetErrorString(err) +
                  ". Check that the NVIDIA driver is installed (libcuda.so loads) and `nvidia-smi` works.";
    }
  }

  mutable std::once_flag once_;
  int count_ = 0;
  std::string reason_;
};

const bool registered = [] {
  register_device_runtime(register_device_kind("cuda"), std::make_unique<CudaRuntime>());
  return true;
}();

}  // namespace
}  // namespace hearth::cuda
