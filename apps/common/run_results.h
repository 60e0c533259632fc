// Result files in output_dir, as Hugging Face's Trainer.save_metrics writes
// them: <split>_results.json with the split's metrics, and all_results.json
// gathering every split's (merged into what is there), both pretty-printed
// with sorted keys. And the console table of Trainer.log_metrics. Shared by
// `hearth train`, `hearth eval` and run_glue.
#pragma once

#include <map>
#include <ostream>
#include <string>

namespace hearth::cli {

using MetricMap = std::map<std::string, double>;

void save_metrics(const std::string& output_dir, const std::string& split, const MetricMap& metrics);
void log_metrics(std::ostream& out, const std::string& split, const MetricMap& metrics);

}  // namespace hearth::cli
