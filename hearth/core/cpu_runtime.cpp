#include "hearth/core/cpu_runtime.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"

namespace hearth {
namespace {

// Each block starts with a header that records its size, so that freeing it
// can be counted without a table; the header keeps the 64-byte alignment.
constexpr size_t kHeader = 64;

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

class CpuRuntime final : public DeviceRuntime {
 public:
  // Made while the library loads: HEARTH_CPU_MEMORY_LIMIT is read at the
  // first allocation or query instead, where a bad value is an exception a
  // caller can catch (here it could only abort the process).
  CpuRuntime() = default;
  bool is_available() const override { return true; }
  int device_count() const override { return 1; }
  std::string device_name(int) const override { return "cpu"; }

  void* allocate(size_t nbytes, int) override {
    size_t rounded = (nbytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    const size_t limit = current_limit();
    const size_t now = active_.fetch_add(rounded, std::memory_order_relaxed) + rounded;
    if (limit != 0 && now > limit) {
      active_.fetch_sub(rounded, std::memory_order_relaxed);
      ++ooms_;
      HEARTH_THROW(OutOfMemoryError, "[cpu] out of memory: tried to allocate ", mib(nbytes), " with ",
                   mib(now - rounded), " in use of the ", mib(limit),
                   " limit (HEARTH_CPU_MEMORY_LIMIT); reduce the batch size or set auto_find_batch_size");
    }
    void* base = std::aligned_alloc(64, rounded + kHeader);
    if (base == nullptr) {
      active_.fetch_sub(rounded, std::memory_order_relaxed);
      ++ooms_;
      HEARTH_THROW(OutOfMemoryError, "[cpu] could not allocate ", nbytes,
                   " bytes of host memory; reduce the batch size or free memory");
    }
    std::memcpy(base, &rounded, sizeof rounded);
    ++allocs_;
    size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return static_cast<char*>(base) + kHeader;
  }
  void deallocate(void* ptr, int) override {
    if (ptr == nullptr) return;
    void* base = static_cast<char*>(ptr) - kHeader;
    size_t rounded = 0;
    std::memcpy(&rounded, base, sizeof rounded);
    active_.fetch_sub(rounded, std::memory_order_relaxed);
    std::free(base);
  }
  void copy_from_host(void* dst, const void* src, size_t n, int) override { std::memcpy(dst, src, n); }
  void copy_to_host(void* dst, const void* src, size_t n, int) override { std::memcpy(dst, src, n); }
  void copy_within(void* dst, const void* src, size_t n, int) override { std::memcpy(dst, src, n); }

  MemoryStats memory_stats(int) const override {
    MemoryStats s;
    s.active = active_.load();
    s.peak_active = peak_.load();
    s.reserved = s.active;  // nothing is cached: freed blocks go back to the C library
    s.limit = current_limit();
    s.num_device_allocs = allocs_.load();
    s.num_ooms = ooms_.load();
    return s;
  }
  void reset_peak_memory_stats(int) override { peak_.store(active_.load()); }
  bool set_memory_limit(int, size_t bytes) override {
    limit_.store(bytes);
    return true;
  }

 private:
  static constexpr size_t kLimitNotRead = SIZE_MAX;
  // The limit in effect (0: none): the switch's value until set_memory_limit().
  size_t current_limit() const {
    size_t limit = limit_.load(std::memory_order_relaxed);
    if (limit != kLimitNotRead) return limit;
    const size_t from_switch = static_cast<size_t>(switches::cpu_memory_limit().get());
    // A set_memory_limit() that ran meanwhile stands.
    limit_.compare_exchange_strong(limit, from_switch, std::memory_order_relaxed);
    return limit_.load(std::memory_order_relaxed);
  }

  std::atomic<size_t> active_{0}, peak_{0}, allocs_{0}, ooms_{0};
  mutable std::atomic<size_t> limit_{kLimitNotRead};
};

}  // namespace

std::unique_ptr<DeviceRuntime> make_cpu_runtime() { return std::make_unique<CpuRuntime>(); }

size_t parse_byte_size(const std::string& text, const std::string& what) {
  // One reading of sizes for the whole library: the switches' (KiB to TiB).
  double v = 0;
  HEARTH_CHECK(switch_detail::parse_bytes(text, v), ValueError, "[memory] ", what,
               ": expected a size in bytes, optionally with a KiB, MiB, GiB or TiB suffix (\"512MiB\"), got '", text,
               "'");
  return static_cast<size_t>(v);
}

}  // namespace hearth
