#include "hearth/backends/cpu/onednn/engine.h"

#include <string>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/backend_libraries.h"

namespace hearth::cpu::onednn {
namespace {

bool has_native_bf16(dnnl::cpu_isa isa) {
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

// For `hearth env`. oneDNN's OpenMP runtime is the one hearth's kernels use
// (libgomp), so its primitives run on the same team of threads, one call at a
// time: no second pool competes for the cores.
std::string describe() {
  const dnnl_version_t* v = dnnl::version();
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  std::string s = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                  std::to_string(v->patch) + ", ISA " + isa_name(isa) + ", " + std::to_string(num_threads()) +
                  " threads (hearth's OpenMP team); convolutions in float32";
  if (has_native_bf16(isa)) s += " and bfloat16";
  return s;
}

[[maybe_unused]] const bool kRegistered = [] {
  register_backend_library(kCpu, {"oneDNN", describe});
  return true;
}();

}  // namespace

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& cpu_stream() {
  static dnnl::stream stream(cpu_engine());
  return stream;
}

bool supports(DType dtype) {
  if (dtype == DType::float32) return true;
  static const bool bf16 = has_native_bf16(dnnl::get_effective_cpu_isa());
  return dtype == DType::bfloat16 && bf16;
}

dnnl::memory::data_type to_dnnl(DType dtype) {
  return dtype == DType::bfloat16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

}  // namespace hearth::cpu::onednn
