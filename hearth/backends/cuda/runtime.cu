// The CUDA device runtime: discovery (with the reason when there is no usable
// GPU), memory through the pool allocator, and copies ordered on the device's stream.
#include <cublasLt.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <sstream>

#include "hearth/backends/cuda/allocator.h"
#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/cuda_switches.h"
#include "hearth/backends/cuda/diagnosis.h"
#include "hearth/backends/cuda/host_allocator.h"
#include "hearth/backends/cuda/step_graph.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/env.h"

namespace hearth::cuda {
namespace {

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
    note_host_round_trip(index);
    cudaStream_t s = stream(index);
    HEARTH_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s));
    cuda::record_pinned_use(src, s);
  }
  void copy_to_host(void* dst, const void* src, size_t n, int index) override {
    note_host_round_trip(index);
    cudaStream_t s = stream(index);
    HEARTH_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s));
    HEARTH_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  void copy_within(void* dst, const void* src, size_t n, int index) override {
    HEARTH_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream(index)));
  }
  void synchronize(int index) override {
    note_host_round_trip(index);
    HEARTH_CUDA_CHECK(cudaStreamSynchronize(stream(index)));
  }

  bool supports_step_graphs() const override { return true; }
  std::string rehearse_step(int index, const std::function<void()>& step) override {
    return cuda::rehearse_step(index, step);
  }
  std::unique_ptr<StepGraph> capture_step(int index, const std::function<void()>& step) override {
    return cuda::capture_step(index, step);
  }

  class CudaTimingEvent final : public TimingEvent {
   public:
    explicit CudaTimingEvent(cudaStream_t s) {
      HEARTH_CUDA_CHECK(cudaEventCreate(&event));
      HEARTH_CUDA_CHECK(cudaEventRecord(event, s));
    }
    ~CudaTimingEvent() override { cudaEventDestroy(event); }
    CudaTimingEvent(const CudaTimingEvent&) = delete;
    CudaTimingEvent& operator=(const CudaTimingEvent&) = delete;
    cudaEvent_t event = nullptr;
  };
  std::shared_ptr<TimingEvent> record_timing_event(int index) override {
    return std::make_shared<CudaTimingEvent>(stream(index));
  }
  double elapsed_ms(const TimingEvent& start, const TimingEvent& end) override {
    const auto& a = static_cast<const CudaTimingEvent&>(start);
    const auto& b = static_cast<const CudaTimingEvent&>(end);
    HEARTH_CUDA_CHECK(cudaEventSynchronize(b.event));
    float ms = 0;
    HEARTH_CUDA_CHECK(cudaEventElapsedTime(&ms, a.event, b.event));
    return ms;
  }

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
    os << "CUDA runtime " << cuda_version_string(rt) << ", driver " << (drv ? cuda_version_string(drv) : "none")
       << ", cuBLASLt " << cublasLtGetVersion() << ", cuDNN " << cudnnGetVersion();
    return os.str();
  }

 private:
  const CudaRuntime& probed() const {
    std::call_once(once_, [this] { const_cast<CudaRuntime*>(this)->probe(); });
    return *this;
  }
  // One cause per case, each with what to do about it (hearth/backends/cuda/diagnosis.h).
  void probe() {
    count_ = 0;
    CudaProbe p;
    const bool visible_set = outside_env_is_set("CUDA_VISIBLE_DEVICES");
    p.visible_devices = visible_set ? outside_env("CUDA_VISIBLE_DEVICES") : "<unset>";
    // A deliberate setting comes first: whatever else is wrong, no GPU would be
    // used. Set to "" it hides every GPU, as it does for CUDA itself.
    if (visible_set && cuda_visible_devices_hides_all(p.visible_devices)) {
      p.problem = CudaProblem::devices_hidden;
      reason_ = describe_cuda_problem(p);
      return;
    }
    // The runtime opens the driver library itself and only answers
    // "insufficient driver" when it is missing; opening it first names the
    // library and the loader's error. HEARTH_CUDA_DRIVER_LIBRARY points the
    // check at another file (tests use a missing one).
    p.driver_library = switches::cuda_driver_library().get();
    void* driver = dlopen(p.driver_library.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (driver == nullptr) {
      const char* why = dlerror();
      p.error_text = why ? why : "";
      p.problem = CudaProblem::driver_not_loaded;
      reason_ = describe_cuda_problem(p);
      return;
    }
    dlclose(driver);
    cudaRuntimeGetVersion(&p.runtime_version);
    cudaDriverGetVersion(&p.driver_version);
    cudaError_t err = cudaGetDeviceCount(&count_);
    if (err != cudaSuccess) count_ = 0;
    (void)cudaGetLastError();
    if (err == cudaSuccess && count_ > 0) {
      if (!all_devices_prohibited()) return;
      count_ = 0;
      p.problem = CudaProblem::compute_prohibited;
    } else if (err == cudaSuccess || err == cudaErrorNoDevice) {
      p.problem = CudaProblem::no_device;
    } else if (err == cudaErrorInsufficientDriver) {
      p.problem = p.driver_version == 0 ? CudaProblem::driver_not_loaded : CudaProblem::driver_too_old;
    } else if (err == cudaErrorDevicesUnavailable) {
      p.problem = CudaProblem::devices_busy;
    } else {
      p.problem = CudaProblem::other;
      p.error_text = cudaGetErrorString(err);
    }
    reason_ = describe_cuda_problem(p);
  }

  // cudaGetDeviceCount counts devices no process may use; their compute mode says so.
  bool all_devices_prohibited() const {
    for (int d = 0; d < count_; ++d) {
      int mode = cudaComputeModeDefault;
      if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d) != cudaSuccess) return false;
      if (mode != cudaComputeModeProhibited) return false;
    }
    return true;
  }

  mutable std::once_flag once_;
  int count_ = 0;
  std::string reason_;
};

// The device has a few hardware work queues (8 by default) and the driver
// maps streams onto them; streams that share a queue run in one order, so a
// JPEG decoding stream's short copies can wait behind the training stream's
// long kernels. The image decoder's lanes, nvJPEG's own streams and the
// training and copy streams are more than 8: with 32 queues the JPEG engines
// under a ResNet-50 step took half the CPU time and ~25% less wall time per
// batch (bench/NOTES.md). The driver reads it when a context is made, which is
// after this (static initialisation, before any thread starts); a value the
// user set stays.
const bool queues_set = [] {
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
  return true;
}();

const bool registered = [] {
  register_device_runtime(register_device_kind("cuda"), std::make_unique<CudaRuntime>());
  return true;
}();

}  // namespace
}  // namespace hearth::cuda
