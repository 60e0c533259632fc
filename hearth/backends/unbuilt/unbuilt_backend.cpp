// Registers every accelerator backend this build lacks (cmake/backends.cmake
// writes the table) as a device kind that is not available, with the reason
// its CMake file gave, so that `--device vulkan` in a build without Vulkan
// says why and what to do instead of "unknown device".
#include <memory>
#include <string>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"

namespace hearth {
namespace {

class UnbuiltBackendRuntime final : public DeviceRuntime {
 public:
  UnbuiltBackendRuntime(std::string name, std::string reason) : name_(std::move(name)), reason_(std::move(reason)) {}

  bool is_available() const override { return false; }
  std::string unavailable_reason() const override { return reason_; }
  int device_count() const override { return 0; }
  std::string device_name(int) const override { return "none"; }
  void* allocate(size_t, int) override { fail(); }
  void deallocate(void*, int) override {}
  void copy_from_host(void*, const void*, size_t, int) override { fail(); }
  void copy_to_host(void*, const void*, size_t, int) override { fail(); }
  void copy_within(void*, const void*, size_t, int) override { fail(); }

 private:
  [[noreturn]] void fail() const { HEARTH_THROW(DeviceError, "[", name_, "] ", reason_); }

  std::string name_;
  std::string reason_;
};

// Unused in a build that has every backend: the table is then empty.
[[maybe_unused]] void register_unbuilt_backend(const char* name, const char* reason) {
  register_device_runtime(register_device_kind(name), std::make_unique<UnbuiltBackendRuntime>(name, reason));
}

const bool registered = [] {
#define HEARTH_UNBUILT_BACKEND(name, reason) register_unbuilt_backend(name, reason);
#include "hearth/backends/unbuilt/unbuilt_backends.inc"
#undef HEARTH_UNBUILT_BACKEND
  return true;
}();

}  // namespace
}  // namespace hearth
