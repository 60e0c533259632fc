// `hearth env`: what a bug report needs: version, how hearth was built
// (options, compiler, BLAS, the CPU backend's libraries, CUDA/cuDNN), the
// devices it sees with their memory, threads, the instruction set the CPU
// kernels use, and the fallback setting.
#include <cblas.h>
#include <omp.h>

#include <iostream>

#include "apps/common/user_config.h"
#include "apps/hearth/commands.h"
#include "apps/hearth/host_info.h"
#include "hearth/core/backend_options.h"
#include "hearth/core/cpu_level.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/env.h"
#include "hearth/core/errors.h"
#include "hearth/core/switches.h"
#include "hearth/dispatch/backend_libraries.h"
#include "hearth/dispatch/cpu_reference.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/distributed/process_group_registry.h"
#include "hearth/train/device_select.h"
#include "hearth/version.h"

#ifndef HEARTH_BUILD_TYPE
#define HEARTH_BUILD_TYPE "unknown"
#endif
#ifndef HEARTH_BUILD_COMMIT
#define HEARTH_BUILD_COMMIT "unknown"
#endif
#ifndef HEARTH_BUILD_BACKENDS
#define HEARTH_BUILD_BACKENDS "unknown"
#endif
#ifndef HEARTH_BUILD_SANITIZE
#define HEARTH_BUILD_SANITIZE 0
#endif

namespace hearth::cli {
namespace {

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

const char* source_name(SwitchSource source) {
  switch (source) {
    case SwitchSource::default_value:
      return "default";
    case SwitchSource::config_file:
      return "config file";
    case SwitchSource::environment:
      return "environment";
  }
  return "?";
}

// Every declared switch: its value in effect, where that came from, and what
// the program's start would say of it.
void print_switches(std::ostream& out) {
  out << "switches (value: where it came from):\n";
  for (const Switch* s : all_switches()) {
    const std::string value = s->text();
    std::string shown = value.empty() ? "unset" : value;
    if (s->spec().secret && !value.empty()) shown = "set (" + std::to_string(value.size()) + " characters, hidden)";
    out << "  " << s->name() << "=" << shown << ": " << source_name(s->source());
    const std::string problem = s->problem(value);
    if (!problem.empty()) out << " -- not allowed: " << problem;
    out << "\n";
  }
}

int print_env(const std::string& config_file) {
  std::cout << "hearth version: " << HEARTH_VERSION << "\n";
  std::cout << "build: " << HEARTH_BUILD_TYPE << ", sanitizers " << (HEARTH_BUILD_SANITIZE ? "on" : "off")
            << ", commit " << HEARTH_BUILD_COMMIT << "\n";
  std::cout << "os: " << operating_system() << "\n";
  std::cout << "memory: " << physical_memory() << "\n";
  std::cout << "cpu: " << cpu_model() << "\n";
  std::cout << "accelerator backends built: " << HEARTH_BUILD_BACKENDS << "\n";
  std::cout << "compiler: " << compiler() << ", C++ " << __cplusplus << "\n";
  std::cout << "BLAS: " << openblas_get_config() << "\n";
  std::cout << "cpu kernels: " << cpu_level_description() << "\n";
  for (const BackendLibrary& lib : backend_libraries(kCpu))
    std::cout << "cpu " << lib.name << ": " << lib.describe() << "\n";
  for (int i = 0; i < num_device_kinds(); ++i) {
    DeviceKind k{static_cast<uint8_t>(i)};
    if (!has_device_runtime(k) || k == kCpu) continue;
    std::string v = device_runtime(k).version_info();
    std::cout << device_kind_name(k) << ": " << (v.empty() ? "not built" : v) << "\n";
  }
  for (int i = 0; i < num_device_kinds(); ++i) {
    DeviceKind k{static_cast<uint8_t>(i)};
    if (!has_device_runtime(k)) continue;
    DeviceRuntime& rt = device_runtime(k);
    std::cout << "backend " << device_kind_name(k) << ": ";
    if (!rt.is_available()) {
      std::cout << "not available: " << rt.unavailable_reason() << "\n";
      continue;
    }
    std::cout << rt.device_count() << " device(s)\n";
    for (int d = 0; d < rt.device_count(); ++d)
      std::cout << "  " << (k == kCpu ? "cpu" : train::describe_device(Device(k, d))) << "\n";
  }
  const std::string groups = distributed::process_group_backends();
  std::cout << "process groups (data parallelism): " << (groups.empty() ? "none" : groups) << "\n";
  std::cout << "device=auto resolves to: " << resolve_device("auto").str() << "\n";
  std::string omp = outside_env("OMP_NUM_THREADS");
  std::cout << "threads: " << omp_get_max_threads() << " OpenMP (OMP_NUM_THREADS " << (omp.empty() ? "unset" : omp)
            << "), " << omp_get_num_procs() << " processors; OpenBLAS " << openblas_get_num_threads()
            << " per GEMM (hearth splits large GEMMs over its OpenMP threads)\n";
  std::cout << "HEARTH_CPU_REFERENCE: " << (cpu_reference_forced() ? "on (hearth's own CPU kernels only)" : "off")
            << "\n";
  // The user's config first: it may turn the CPU fallback on.
  try {
    LoadedUserConfig user = load_user_config(config_file);
    std::cout << "config file: " << user.path
              << (user.found ? " (sets " + describe_user_config(user) + ")" : " (not present: built-in defaults)")
              << "\n";
    train::TrainingArguments args;
    apply_user_config(user, args);
  } catch (const Error& e) {
    std::cout << "config file: hearth train would refuse it: " << e.what() << "\n";
  }
  std::cout << "HEARTH_ENABLE_CPU_FALLBACK: " << (cpu_fallback_enabled() ? "on" : "off") << "\n";
  std::cout << "backend options: float32 matmul precision " << float32_matmul_precision_name(float32_matmul_precision())
            << ", convolution benchmark " << (convolution_benchmark() ? "on" : "off") << "\n";
  print_switches(std::cout);
  return 0;
}

}  // namespace

void add_env_command(CLI::App& app) {
  auto* sub = app.add_subcommand("env", "Print what a bug report needs: version, build, devices, threads, config");
  auto config_file = std::make_shared<std::string>();
  sub->add_option("--config_file", *config_file, "the config file to show (default: the one hearth train reads)");
  on_run(sub, [config_file] { return print_env(*config_file); });
}

}  // namespace hearth::cli
