// `hearth ops`: the coverage table, op x backend x dtype, with each op's family,
// read from the op list and the registry themselves so it can never drift from
// the code; `--where`: the source file of each kernel; `--minimal`: the
// primitive ops a backend must implement to train the models (ops_minimal.cpp).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "apps/hearth/commands.h"
#include "apps/hearth/ops_minimal.h"
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

// The listed ops in list order (grouped by family), then any op defined at run
// time that the list does not name.
std::vector<OpHandle> ops_to_print() {
  std::vector<OpHandle> ops;
  for (const OpInfo& info : all_op_infos()) ops.push_back(find_op(info.id));
  for (OpHandle op : all_ops())
    if (op->info == nullptr) ops.push_back(op);
  return ops;
}

std::string family_of(OpHandle op) { return op->info ? family_name(op->info->family) : "-"; }

int print_ops(bool markdown) {
  std::vector<DeviceKind> kinds;
  for (int i = 0; i < num_device_kinds(); ++i) {
    DeviceKind k{static_cast<uint8_t>(i)};
    if (has_device_runtime(k)) kinds.push_back(k);
  }
  const std::vector<OpHandle> ops = ops_to_print();
  if (markdown) {
    std::cout << "| op | family |";
    for (DeviceKind k : kinds) std::cout << " " << device_kind_name(k) << " |";
    std::cout << "\n|---|---|";
    for (size_t i = 0; i < kinds.size(); ++i) std::cout << "---|";
    std::cout << "\n";
    for (OpHandle op : ops) {
      std::cout << "| " << op->def.name << " | " << family_of(op) << " |";
      for (DeviceKind k : kinds) std::cout << " " << cell(op->kernels[k.id]) << " |";
      std::cout << "\n";
    }
    return 0;
  }
  // Columns as wide as their widest entry, two spaces apart: op, one per
  // device kind, family.
  constexpr size_t kGap = 2;
  size_t op_width = std::string("op").size();
  std::vector<size_t> widths;
  for (DeviceKind k : kinds) widths.push_back(std::string(device_kind_name(k)).size());
  for (OpHandle op : ops) {
    op_width = std::max(op_width, op->def.name.size());
    for (size_t i = 0; i < kinds.size(); ++i) widths[i] = std::max(widths[i], cell(op->kernels[kinds[i].id]).size());
  }
  std::cout << std::left << std::setw(static_cast<int>(op_width + kGap)) << "op";
  for (size_t i = 0; i < kinds.size(); ++i)
    std::cout << std::setw(static_cast<int>(widths[i] + kGap)) << device_kind_name(kinds[i]);
  std::cout << "family\n";
  std::vector<int> counts(kinds.size(), 0);
  for (OpHandle op : ops) {
    std::cout << std::setw(static_cast<int>(op_width + kGap)) << op->def.name;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const KernelEntry& k = op->kernels[kinds[i].id];
      counts[i] += k.fn ? 1 : 0;
      std::cout << std::setw(static_cast<int>(widths[i] + kGap)) << cell(k);
    }
    std::cout << family_of(op) << "\n";
  }
  std::cout << "\n" << ops.size() << " ops in " << kNumOpFamilies << " families;";
  for (size_t i = 0; i < kinds.size(); ++i)
    std::cout << " " << device_kind_name(kinds[i]) << ": " << counts[i] << " implemented"
              << (device_runtime(kinds[i]).is_available() ? "" : " (backend not available)")
              << (i + 1 < kinds.size() ? "," : "");
  std::cout << "\n";
  return 0;
}

// Per op and kind, the file that registered the kernel; for a fusion a kind
// has no kernel for, that dispatch composes it of primitives there. Kinds
// without any kernel (backends this build lacks) are left out.
int print_kernel_files() {
  const std::vector<OpHandle> ops = ops_to_print();
  std::vector<DeviceKind> kinds;
  for (int i = 0; i < num_device_kinds(); ++i) {
    DeviceKind k{static_cast<uint8_t>(i)};
    if (std::any_of(ops.begin(), ops.end(), [&](OpHandle op) { return op->kernels[k.id].fn != nullptr; }))
      kinds.push_back(k);
  }
  size_t op_width = std::string("op").size(), kind_width = std::string("kind").size();
  for (OpHandle op : ops) op_width = std::max(op_width, op->def.name.size());
  for (DeviceKind k : kinds) kind_width = std::max(kind_width, device_kind_name(k).size());
  constexpr size_t kGap = 2;
  std::cout << std::left << std::setw(static_cast<int>(op_width + kGap)) << "op"
            << std::setw(static_cast<int>(kind_width + kGap)) << "kind"
            << "kernel\n";
  for (OpHandle op : ops) {
    for (DeviceKind k : kinds) {
      std::string where;
      if (op->kernels[k.id].fn) {
        where = kernel_source_file(op, k);
        if (where.empty()) where = "(registered without its file)";
      } else if (is_fusion(op) && op->composition) {
        where = "composed of primitives (hearth/ops/" + family_of(op) + ".cpp)";
      } else {
        continue;
      }
      std::cout << std::setw(static_cast<int>(op_width + kGap)) << op->def.name
                << std::setw(static_cast<int>(kind_width + kGap)) << device_kind_name(k) << where << "\n";
    }
  }
  return 0;
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto* sub = app.add_subcommand("ops", "Print which ops each backend implements, for which dtypes");
  auto markdown = std::make_shared<bool>(false);
  auto where = std::make_shared<bool>(false);
  auto minimal = std::make_shared<bool>(false);
  auto* markdown_flag = sub->add_flag("--markdown", *markdown, "Print a Markdown table");
  auto* where_flag = sub->add_flag("--where", *where, "Print the source file of each kernel, per op and backend");
  auto* minimal_flag = sub->add_flag(
      "--minimal", *minimal,
      "Print (in Markdown) the primitive ops a backend must implement to train the MLP, small CNN, ResNet, "
      "VGG and BERT, found by tracing a training step of each (docs/backend_op_set.md)");
  where_flag->excludes(markdown_flag);
  minimal_flag->excludes(markdown_flag)->excludes(where_flag);
  on_run(sub, [markdown, where, minimal] {
    if (*minimal) return print_minimal_op_set();
    if (*where) return print_kernel_files();
    return print_ops(*markdown);
  });
}

}  // namespace hearth::cli
