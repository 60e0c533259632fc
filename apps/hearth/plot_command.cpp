// `hearth plot OUTPUT_DIR`: redraws OUTPUT_DIR/curves.svg (loss and evaluation
// metrics against the step) from OUTPUT_DIR/metrics.jsonl, e.g. while a run
// is still training, or after it was stopped.
#include <filesystem>
#include <iostream>

#include "apps/hearth/commands.h"
#include "hearth/core/errors.h"
#include "hearth/train/count_text.h"
#include "hearth/train/curves_plot.h"

namespace hearth::cli {
namespace {

struct PlotOptions {
  std::string output_dir;
  std::string output;
};

int run_plot(const PlotOptions& o) {
  namespace fs = std::filesystem;
  const std::string metrics = (fs::path(o.output_dir) / "metrics.jsonl").string();
  if (!fs::exists(metrics))
    throw UsageError("OUTPUT_DIR: expected a training output directory holding metrics.jsonl, found no " + metrics);
  std::vector<nlohmann::json> entries = train::read_metrics_jsonl(metrics);
  const std::string out = o.output.empty() ? (fs::path(o.output_dir) / "curves.svg").string() : o.output;
  train::write_training_curves(entries, "training curves: " + o.output_dir, out);
  std::vector<train::CurveSeries> loss, evals;
  train::collect_curves(entries, &loss, &evals);
  std::cout << "hearth plot: wrote " << out << " from " << entries.size() << " log entries";
  for (const auto* group : {&loss, &evals})
    for (const train::CurveSeries& c : *group)
      std::cout << "; " << c.name << " " << train::count_of(static_cast<int64_t>(c.points.size()), "point");
  std::cout << "\n";
  return 0;
}

}  // namespace

void add_plot_command(CLI::App& app) {
  auto* sub = app.add_subcommand("plot", "Redraw OUTPUT_DIR/curves.svg from OUTPUT_DIR/metrics.jsonl");
  auto o = std::make_shared<PlotOptions>();
  sub->add_option("output_dir", o->output_dir, "the training run's output directory")->required();
  sub->add_option("--output", o->output, "where to write the SVG (default: OUTPUT_DIR/curves.svg)");
  on_run(sub, [o] { return run_plot(*o); });
}

}  // namespace hearth::cli
