#include "hearth/core/backend_options.h"

#include <atomic>

#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"

namespace hearth {
namespace {

// -1: not set yet; the first reader takes the environment's value (a setter
// that ran before wins). Never initialised from the environment in a static
// initialiser: a bad value is an exception where it can be caught.
constexpr int kUnset = -1;
std::atomic<int> g_precision{kUnset};
std::atomic<int> g_benchmark{kUnset};

int load_or_init(std::atomic<int>& slot, int (*from_environment)()) {
  int v = slot.load(std::memory_order_relaxed);
  if (v != kUnset) return v;
  const int initial = from_environment();
  // Another thread's setter or first read may have won; theirs stands.
  if (slot.compare_exchange_strong(v, initial, std::memory_order_relaxed)) return initial;
  return v;
}

int precision_from_environment() {
  return static_cast<int>(switches::allow_tf32().get() ? Float32MatmulPrecision::high
                                                       : Float32MatmulPrecision::highest);
}

int benchmark_from_environment() { return switches::convolution_benchmark().get() ? 1 : 0; }

}  // namespace

const char* float32_matmul_precision_name(Float32MatmulPrecision precision) {
  switch (precision) {
    case Float32MatmulPrecision::highest:
      return "highest";
    case Float32MatmulPrecision::high:
      return "high";
    case Float32MatmulPrecision::medium:
      return "medium";
  }
  return "?";
}

void set_float32_matmul_precision(Float32MatmulPrecision precision) {
  g_precision.store(static_cast<int>(precision), std::memory_order_relaxed);
}

void set_float32_matmul_precision(std::string_view precision) {
  for (Float32MatmulPrecision p :
       {Float32MatmulPrecision::highest, Float32MatmulPrecision::high, Float32MatmulPrecision::medium}) {
    if (precision == float32_matmul_precision_name(p)) {
      set_float32_matmul_precision(p);
      return;
    }
  }
  HEARTH_THROW(ValueError, "[backend options] float32 matmul precision must be highest, high or medium, got '",
               std::string(precision.substr(0, 100)), "'");
}

Float32MatmulPrecision float32_matmul_precision() {
  return static_cast<Float32MatmulPrecision>(load_or_init(g_precision, precision_from_environment));
}

bool float32_reduced_precision_allowed() { return float32_matmul_precision() != Float32MatmulPrecision::highest; }

void set_convolution_benchmark(bool on) { g_benchmark.store(on ? 1 : 0, std::memory_order_relaxed); }

bool convolution_benchmark() { return load_or_init(g_benchmark, benchmark_from_environment) != 0; }

}  // namespace hearth
