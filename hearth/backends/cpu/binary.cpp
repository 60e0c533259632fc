// add, sub, mul, div on the CPU. Arithmetic in float for the half types.
#include "hearth/dispatch/schemas/binary.h"

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/strided_loop.h"

namespace hearth::cpu {
namespace {

// float32 a + alpha * b with b in a half dtype (schemas/binary.h): widened exactly, summed in float.
template <typename H>
void add_widening(OpCall& call, float alpha) {
  binary_loop<float, float, H>(call.out(0), call.in(0), call.in(1),
                               [alpha](float a, H b) { return a + alpha * static_cast<float>(b); });
}

void add_kernel(OpCall& call) {
  const Scalar alpha = call.attrs<AlphaAttrs>().alpha;
  if (call.out(0).dtype() == DType::float32 && call.in(1).dtype() == DType::bfloat16)
    return add_widening<BFloat16>(call, static_cast<float>(alpha.to_double()));
  if (call.out(0).dtype() == DType::float32 && call.in(1).dtype() == DType::float16)
    return add_widening<Half>(call, static_cast<float>(alpha.to_double()));
  run_binary(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>) {
      return [](bool a, bool b) { return a || b; };
    } else {
      const C al = alpha.to<C>();
      return [al](C a, C b) { return static_cast<C>(a + al * b); };
    }
  });
}

void sub_kernel(OpCall& call) {
  const Scalar alpha = call.attrs<AlphaAttrs>().alpha;
  run_binary(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>) {
      return [](bool a, bool b) { return a != b; };
    } else {
      const C al = alpha.to<C>();
      return [al](C a, C b) { return static_cast<C>(a - al * b); };
    }
  });
}

void mul_kernel(OpCall& call) {
  run_binary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>)
      return [](bool a, bool b) { return a && b; };
    else
      return [](C a, C b) { return static_cast<C>(a * b); };
  });
}

void div_kernel(OpCall& call) {
  run_binary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) { return static_cast<C>(a / b); };
  });
}

HEARTH_REGISTER_CPU_KERNEL(add, add_kernel, DTypeSet::all());
HEARTH_REGISTER_CPU_KERNEL(sub, sub_kernel, DTypeSet::all());
HEARTH_REGISTER_CPU_KERNEL(mul, mul_kernel, DTypeSet::all());
HEARTH_REGISTER_CPU_KERNEL(div, div_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
