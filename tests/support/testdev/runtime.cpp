#include "tests/support/testdev/runtime.h"

#include <cstdlib>
#include <cstring>

namespace hearth::testing {
namespace {

class HostBackedRuntime final : public DeviceRuntime {
 public:
  bool is_available() const override { return true; }
  int device_count() const override { return 1; }
  std::string device_name(int) const override { return "test device (host memory)"; }
  int auto_priority() const override { return -1; }  // never chosen by device=auto
  void* allocate(size_t nbytes, int) override { return std::malloc(nbytes ? nbytes : 1); }
  void deallocate(void* p, int) override { std::free(p); }
  void copy_from_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_within(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
};

}  // namespace

std::unique_ptr<DeviceRuntime> make_testdev_runtime() { return std::make_unique<HostBackedRuntime>(); }

}  // namespace hearth::testing
