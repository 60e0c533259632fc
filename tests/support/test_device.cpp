#include "tests/support/test_device.h"

#include <cstdlib>
#include <cstring>

#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/registry.h"

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

// The test device reuses the CPU's kernels for the ops it "implements": its
// memory is host memory, so they are correct there.
void borrow_cpu_kernel(const char* op, DeviceKind kind, DTypeSet dtypes) {
  OpHandle h = find_op(op);
  if (h && h->kernels[kCpu.id].fn) register_kernel(op, kind, h->kernels[kCpu.id].fn, dtypes);
}

}  // namespace

DeviceKind test_device_kind() {
  static DeviceKind kind = [] {
    DeviceKind k = register_device_kind("testdev");
    register_device_runtime(k, std::make_unique<HostBackedRuntime>());
    borrow_cpu_kernel("copy_", k, DTypeSet::all());
    borrow_cpu_kernel("fill_", k, DTypeSet::all());
    borrow_cpu_kernel("add", k, DTypeSet::all());
    borrow_cpu_kernel("mul", k, {DType::float32, DType::float64});  // not for integers, on purpose
    return k;
  }();
  return kind;
}

}  // namespace hearth::testing
