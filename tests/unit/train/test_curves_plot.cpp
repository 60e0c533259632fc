#include <filesystem>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/train/curves_plot.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

using hearth::testing::read_file;
using hearth::testing::TempDir;
using json = nlohmann::json;

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(CurvesPlot, CollectsLossAndEvaluationSeriesByStep) {
  std::vector<json> entries = {
      {{"loss", 2.0}, {"learning_rate", 1e-3}, {"step", 10}},
      {{"eval_loss", 1.5},
       {"eval_accuracy", 0.5},
       {"eval_runtime", 3.0},
       {"eval_samples_per_second", 9.0},
       {"step", 10}},
      {{"loss", 1.0}, {"step", 20}},
      {{"eval_loss", 1.2}, {"eval_accuracy", 0.7}, {"step", 20}},
      {{"train_runtime", 5.0}, {"train_loss", 1.5}, {"step", 20}},
  };
  std::vector<CurveSeries> loss, metrics;
  collect_curves(entries, &loss, &metrics);
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_EQ(loss[0].name, "loss");
  EXPECT_EQ(loss[0].points, (std::vector<std::pair<double, double>>{{10, 2.0}, {20, 1.0}}));
  EXPECT_EQ(loss[1].name, "eval_loss");
  ASSERT_EQ(metrics.size(), 1u);  // runtime and throughput are not curves
  EXPECT_EQ(metrics[0].name, "eval_accuracy");
  EXPECT_EQ(metrics[0].points.size(), 2u);

  std::string svg = training_curves_svg(entries, "run <1>");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("run &lt;1&gt;"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_NE(svg.find(">eval_accuracy</text>"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(CurvesPlot, AnEmptyLogStillDrawsBothPanels) {
  std::string svg = training_curves_svg({}, "empty");
  EXPECT_EQ(count(svg, "nothing logged"), 2u);
  EXPECT_EQ(count(svg, "<polyline"), 0u);
}

TEST(CurvesPlot, ReadsMetricsJsonlAndToleratesACutLastLine) {
  TempDir dir;
  std::string path = dir.write("metrics.jsonl", "{\"loss\":1,\"step\":1}\n\n{\"loss\":0.5,\"step\":2}\n{\"loss\":0.");
  EXPECT_EQ(read_metrics_jsonl(path).size(), 2u);
  path = dir.write("bad.jsonl", "{\"loss\":1,\"step\":1}\n[1,2]\n{\"loss\":0.5,\"step\":2}\n");
  try {
    read_metrics_jsonl(path);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2 is not a JSON object"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_metrics_jsonl(dir.file("missing.jsonl")), IoError);
}

TEST(CurvesPlot, TrainingEndsByDrawingCurvesUnlessReportToIsNone) {
  TempDir dir;
  TrainingArguments args = testing::toy_args(dir.file("out"));
  args.report_to = {"jsonl"};
  args.num_train_epochs = 1;
  args.eval_strategy = "epoch";
  Trainer trainer(testing::toy_model(), args, testing::toy_dataset(32), testing::toy_dataset(16, 9), {},
                  testing::quiet());
  trainer.train();
  std::string svg = read_file(trainer.curves_path());
  EXPECT_EQ(count(svg, "<polyline"), 3u);  // loss, eval_loss, eval_accuracy (f1 only for two classes)
  // Redrawn from metrics.jsonl, the same picture.
  EXPECT_EQ(training_curves_svg(read_metrics_jsonl(trainer.metrics_path()), "training curves: " + args.output_dir),
            svg);

  args.report_to = {"none"};
  args.output_dir = dir.file("quiet");
  Trainer silent(testing::toy_model(), args, testing::toy_dataset(32), testing::toy_dataset(16, 9), {},
                 testing::quiet());
  silent.train();
  EXPECT_FALSE(std::filesystem::exists(silent.curves_path()));
}

}  // namespace
}  // namespace hearth::train

namespace hearth::train {
namespace {

// The text of every tick label: <text ... text-anchor="end|middle">LABEL</text>.
std::vector<std::string> tick_labels(const std::string& svg, const std::string& anchor) {
  std::vector<std::string> out;
  const std::string open = "text-anchor=\"" + anchor + "\">";
  for (size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    const size_t from = at + open.size();
    out.push_back(svg.substr(from, svg.find('<', from) - from));
  }
  return out;
}

TEST(CurvesPlot, TicksOfASmallRangeReadDifferentlyAndStepsAreWhole) {
  std::vector<nlohmann::json> log = {{{"step", 1}, {"epoch", 0.5}, {"loss", 2.30251}},
                                     {{"step", 2}, {"epoch", 1.0}, {"loss", 2.30259}}};
  const std::string svg = training_curves_svg(log, "small range");
  const std::vector<std::string> y = tick_labels(svg, "end");
  ASSERT_GE(y.size(), 2u);
  for (size_t i = 1; i < y.size(); ++i) EXPECT_NE(y[i], y[i - 1]) << svg;
  // Two steps: ticks at 1 and 2 only, never at 1.5.
  for (const std::string& x : tick_labels(svg, "middle"))
    EXPECT_EQ(x.find('.'), std::string::npos) << "fractional step tick " << x;
}

}  // namespace
}  // namespace hearth::train
