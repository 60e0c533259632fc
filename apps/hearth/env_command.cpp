// `hearth env`: what hearth sees on this machine: version, backends, devices.
#include <iostream>

#include "apps/hearth/commands.h"
#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/dispatch.h"

namespace hearth::cli {
namespace {

int print_env() {
  std::cout << "hearth version: " << HEARTH_VERSION << "\n";
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
    for (int d = 0; d < rt.device_count(); ++d) std::cout << "  " << Device(k, d).str() << " " << rt.device_name(d) << "\n";
  }
  std::cout << "device=auto resolves to: " << resolve_device("auto").str() << "\n";
  std::cout << "HEARTH_ENABLE_CPU_FALLBACK: " << (cpu_fallback_enabled() ? "on" : "off") << "\n";
  return 0;
}

}  // namespace

void add_env_command(CLI::App& app) {
  auto* sub = app.add_subcommand("env", "Print the version, backends and devices hearth sees");
  on_run(sub, [] { return print_env(); });
}

}  // namespace hearth::cli
