#include "apps/common/run_results.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include <nlohmann/json.hpp>

#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Whole numbers (steps, sample counts) as integers, like Python writes them.
json metric_value(const std::string& name, double v) {
  if (!std::isfinite(v)) return nullptr;
  const bool count = name.ends_with("_samples") || name == "total_flos";
  if (count && v == std::floor(v)) return static_cast<int64_t>(v);
  return v;
}

}  // namespace

void save_metrics(const std::string& output_dir, const std::string& split, const MetricMap& metrics) {
  fs::create_directories(output_dir);
  json j = json::object();
  for (const auto& [k, v] : metrics) j[k] = metric_value(k, v);
  hearth::io::write_file_atomic((fs::path(output_dir) / (split + "_results.json")).string(), j.dump(4) + "\n");

  const fs::path all = fs::path(output_dir) / "all_results.json";
  json combined = json::object();
  if (fs::exists(all)) {
    hearth::io::check_regular_file(all.string(), "[results]");
    std::ifstream in(all);
    combined = json::parse(hearth::io::read_json_text(in, "[results] " + all.string()), nullptr,
                           /*allow_exceptions=*/false);
    if (!combined.is_object()) combined = json::object();
  }
  combined.update(j);
  hearth::io::write_file_atomic(all.string(), combined.dump(4) + "\n");
}

void log_metrics(std::ostream& out, const std::string& split, const MetricMap& metrics) {
  out << "***** " << split << " metrics *****\n";
  size_t width = 0;
  for (const auto& [k, v] : metrics) width = std::max(width, k.size());
  for (const auto& [k, v] : metrics)
    out << "  " << std::left << std::setw(static_cast<int>(width)) << k << " = " << v << "\n";
}

}  // namespace hearth::cli
