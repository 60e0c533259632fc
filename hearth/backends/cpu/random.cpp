// Philox-based fills on the CPU, following the element-to-counter mapping in
// hearth/dispatch/schemas/random.h exactly, so the CUDA kernels can match them.
#include "hearth/dispatch/schemas/random.h"

#include <cmath>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

void uniform_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  const RandomAttrs& a = call.attrs<RandomAttrs>();
  const int64_t n = t.numel();
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* p = static_cast<T*>(t.data_ptr());
      if constexpr (std::is_same_v<T, double>) {
        parallel_for((n + 1) / 2, 1024, [&](int64_t b, int64_t e) {
          for (int64_t c = b; c < e; ++c) {
            auto r = philox4x32(a.offset + c, 0, a.seed);
            for (int64_t k = 0; k < 2 && 2 * c + k < n; ++k)
              p[2 * c + k] = a.a + (a.b - a.a) * uints_to_unit_double(r[2 * k], r[2 * k + 1]);
          }
        });
      } else {
        const float lo = static_cast<float>(a.a), span = static_cast<float>(a.b - a.a);
        parallel_for((n + 3) / 4, 1024, [&](int64_t b, int64_t e) {
          for (int64_t c = b; c < e; ++c) {
            auto r = philox4x32(a.offset + c, 0, a.seed);
            for (int64_t k = 0; k < 4 && 4 * c + k < n; ++k) p[4 * c + k] = T(lo + span * uint_to_unit_float(r[k]));
          }
        });
      }
    }
  });
}

void normal_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  const RandomAttrs& a = call.attrs<RandomAttrs>();
  const int64_t n = t.numel();
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* p = static_cast<T*>(t.data_ptr());
      parallel_for((n + 1) / 2, 512, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          auto r = philox4x32(a.offset + c, 0, a.seed);
          for (int64_t k = 0; k < 2 && 2 * c + k < n; ++k) {
            double u1 = (static_cast<double>(r[2 * k] >> 8) + 1.0) * (1.0 / 16777216.0);
            double u2 = static_cast<double>(r[2 * k + 1] >> 8) * (1.0 / 16777216.0);
            double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
            p[2 * c + k] = static_cast<T>(static_cast<compute_t<T>>(a.a + a.b * z));
          }
        }
      });
    }
  });
}

void randint_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  const RandomAttrs& a = call.attrs<RandomAttrs>();
  const int64_t n = t.numel();
  const int64_t low = static_cast<int64_t>(a.a);
  const uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(a.b) - low);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.data_ptr());
    parallel_for((n + 1) / 2, 1024, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        auto r = philox4x32(a.offset + c, 0, a.seed);
        for (int64_t k = 0; k < 2 && 2 * c + k < n; ++k) {
          uint64_t v = (static_cast<uint64_t>(r[2 * k]) << 32 | r[2 * k + 1]) % range;
          p[2 * c + k] = static_cast<T>(static_cast<compute_t<T>>(low + static_cast<int64_t>(v)));
        }
      }
    });
  });
}

HEARTH_REGISTER_KERNEL(uniform_, kCpu, uniform_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(normal_, kCpu, normal_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(randint_, kCpu, randint_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
