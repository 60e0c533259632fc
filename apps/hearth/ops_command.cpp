// `hearth ops`: the coverage table, op x backend x dtype, read from the registry
// itself so it can never drift from the code.
#include <iomanip>
#include <iostream>

#include "apps/hearth/commands.h"
#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cli {
namespace {

std::string short_dtype(DType t) {
  switch (t) {
    case DType::float32: return "f32";
    case DType::float64: return "f64";
    case DType::bfloat16: return "bf16";
    case DType::float16: return "f16";
    case DType::int64: return "i64";
    case DType::int32: return "i32";
    case DType::uint8: return "u8";
    case DType::bool_: return "bool";
  }
  return "?";
}

std::string cell(const KernelEntry& k) {
  if (!k.fn) return "-";
  std::string s;
  for (int i = 0; i < kNumDTypes; ++i)
    if (k.dtypes.contains(static_cast<DType>(i))) s += (s.empty() ? "" : ",") + short_dtype(static_cast<DType>(i));
  return s;
}

int print_ops(bool markdown) {
  std::vector<DeviceKind> kinds;
  for (int i = 0; i < num_device_kinds(); ++i) {
    DeviceKind k{static_cast<uint8_t>(i)};
    if (has_device_runtime(k)) kinds.push_back(k);
  }
  auto ops = all_ops();
  if (markdown) {
    std::cout << "| op |";
    for (DeviceKind k : kinds) std::cout << " " << device_kind_name(k) << " |";
    std::cout << "\n|---|";
    for (size_t i = 0; i < kinds.size(); ++i) std::cout << "---|";
    std::cout << "\n";
    for (OpHandle op : ops) {
      std::cout << "| " << op->def.name << " |";
      for (DeviceKind k : kinds) std::cout << " " << cell(op->kernels[k.id]) << " |";
      std::cout << "\n";
    }
    return 0;
  }
  std::cout << std::left << std::setw(26) << "op";
  for (DeviceKind k : kinds) std::cout << std::setw(40) << device_kind_name(k);
  std::cout << "\n";
  std::vector<int> counts(kinds.size(), 0);
  for (OpHandle op : ops) {
    std::cout << std::setw(26) << op->def.name;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const KernelEntry& k = op->kernels[kinds[i].id];
      counts[i] += k.fn ? 1 : 0;
      std::cout << std::setw(40) << cell(k);
    }
    std::cout << "\n";
  }
  std::cout << "\n" << ops.size() << " ops;";
  for (size_t i = 0; i < kinds.size(); ++i)
    std::cout << " " << device_kind_name(kinds[i]) << ": " << counts[i] << " implemented"
              << (device_runtime(kinds[i]).is_available() ? "" : " (backend not available)")
              << (i + 1 < kinds.size() ? "," : "");
  std::cout << "\n";
  return 0;
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto* sub = app.add_subcommand("ops", "Print which ops each backend implements, for which dtypes");
  auto markdown = std::make_shared<bool>(false);
  sub->add_flag("--markdown", *markdown, "Print a Markdown table");
  on_run(sub, [markdown] { return print_ops(*markdown); });
}

}  // namespace hearth::cli
