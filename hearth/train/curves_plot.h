// output_dir/curves.svg: the curves a person looks at after training, drawn
// from the log entries (metrics.jsonl, or the Trainer's log history):
// left, the training loss (and eval_loss) against the optimizer step; right,
// the evaluation metrics (accuracy, F1, ...). Standalone SVG, no dependency.
// `hearth plot OUTPUT_DIR` redraws it from metrics.jsonl.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hearth::train {

// One series of a panel: (step, value) points in step order.
struct CurveSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

// The series found in the entries: "loss" and "eval_loss" for the loss panel,
// every other eval_ metric (not runtime or throughput) for the metrics panel.
void collect_curves(const std::vector<nlohmann::json>& entries, std::vector<CurveSeries>* loss,
                    std::vector<CurveSeries>* metrics);
// `s` made safe as SVG text or attribute value (shared by every chart hearth draws).
std::string svg_escape(const std::string& s);
std::string training_curves_svg(const std::vector<nlohmann::json>& entries, const std::string& title);

// metrics.jsonl's entries; IoError when it cannot be read, ValueError naming
// the line that is not a JSON object.
std::vector<nlohmann::json> read_metrics_jsonl(const std::string& path);
// Writes training_curves_svg() to `path` atomically.
void write_training_curves(const std::vector<nlohmann::json>& entries, const std::string& title,
                           const std::string& path);

}  // namespace hearth::train
