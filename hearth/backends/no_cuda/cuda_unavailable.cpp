// Registers the "cuda" device kind in a build without the CUDA backend, so that
// asking for it gives a clear reason instead of "unknown device".
#include "hearth/backends/cuda/diagnosis.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"

namespace hearth {
namespace {

class CudaUnavailableRuntime final : public DeviceRuntime {
 public:
  bool is_available() const override { return false; }
  std::string unavailable_reason() const override {
    cuda::CudaProbe probe;
    probe.problem = cuda::CudaProblem::built_without_cuda;
    return cuda::describe_cuda_problem(probe);
  }
  int device_count() const override { return 0; }
  std::string device_name(int) const override { return "none"; }
  void* allocate(size_t, int) override { fail(); }
  void deallocate(void*, int) override {}
  void copy_from_host(void*, const void*, size_t, int) override { fail(); }
  void copy_to_host(void*, const void*, size_t, int) override { fail(); }
  void copy_within(void*, const void*, size_t, int) override { fail(); }

 private:
  [[noreturn]] void fail() const { HEARTH_THROW(DeviceError, "[cuda] ", unavailable_reason()); }
};

const bool registered = [] {
  register_device_runtime(register_device_kind("cuda"), std::make_unique<CudaUnavailableRuntime>());
  return true;
}();

}  // namespace
}  // namespace hearth
