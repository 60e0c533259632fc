#include "hearth/train/curves_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::train {
namespace {

using json = nlohmann::json;

constexpr const char* kColors[] = {"#d9480f", "#1c7ed6", "#2b8a3e", "#ae3ec9", "#f08c00", "#495057"};

// A tick's label with as many decimals as the step between ticks needs, so
// that ticks 0.0001 apart over a loss near 2.3 read 2.3025, 2.3026, ...
// instead of 2.303 each time.
std::string tick_label(double t, double step) {
  if (std::abs(t) < step * 1e-6) t = 0;  // not -0 or 1e-17 from the additions
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 12);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, t);
  return buf;
}

// A step between ticks of 1, 2 or 5 times a power of ten, about `target` ticks over the span.
double tick_step(double span, int target) {
  if (!(span > 0)) return 1;
  double raw = span / target;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

bool is_curve_metric(const std::string& key) {
  if (key.rfind("eval_", 0) != 0 || key == "eval_loss") return false;
  for (const char* skip : {"runtime", "per_second"})
    if (key.find(skip) != std::string::npos) return false;
  return true;
}

void add_point(std::vector<CurveSeries>& series, const std::string& name, double step, double value) {
  if (!std::isfinite(value)) return;
  auto it = std::find_if(series.begin(), series.end(), [&](const CurveSeries& s) { return s.name == name; });
  if (it == series.end()) {
    series.push_back({name, {}});
    it = series.end() - 1;
  }
  it->points.emplace_back(step, value);
}

// One panel: axes, ticks, a polyline (and dots) per series, a legend.
void draw_panel(std::ostringstream& s, int x0, int y0, int w, int h, const std::string& title,
                const std::vector<CurveSeries>& series, size_t color_offset) {
  s << "<text x=\"" << x0 << "\" y=\"" << y0 - 10 << "\" font-size=\"14\" font-weight=\"bold\">" << svg_escape(title)
    << "</text>\n";
  s << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << w << "\" height=\"" << h
    << "\" fill=\"none\" stroke=\"#adb5bd\"/>\n";
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  for (const CurveSeries& c : series) {
    for (const auto& [x, y] : c.points) {
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  }
  if (!std::isfinite(xmin)) {
    s << "<text x=\"" << x0 + w / 2 << "\" y=\"" << y0 + h / 2
      << "\" text-anchor=\"middle\" fill=\"#868e96\">nothing logged</text>\n";
    return;
  }
  if (xmax == xmin) xmin -= 1, xmax += 1;
  if (ymax == ymin) ymin -= std::max(1e-3, std::abs(ymin) * 0.05), ymax += std::max(1e-3, std::abs(ymax) * 0.05);
  const double pad = (ymax - ymin) * 0.05;
  ymin -= pad, ymax += pad;
  auto px = [&](double x) { return x0 + (x - xmin) / (xmax - xmin) * w; };
  auto py = [&](double y) { return y0 + h - (y - ymin) / (ymax - ymin) * h; };
  // Steps are whole numbers: no tick between two of them.
  const double xs = std::max(1.0, tick_step(xmax - xmin, 6)), ys = tick_step(ymax - ymin, 5);
  for (double t = std::ceil(xmin / xs) * xs; t <= xmax + 1e-9 * xs; t += xs) {
    s << "<line x1=\"" << px(t) << "\" y1=\"" << y0 + h << "\" x2=\"" << px(t) << "\" y2=\"" << y0 + h + 4
      << "\" stroke=\"#495057\"/><text x=\"" << px(t) << "\" y=\"" << y0 + h + 17 << "\" text-anchor=\"middle\">"
      << tick_label(t, xs) << "</text>\n";
  }
  for (double t = std::ceil(ymin / ys) * ys; t <= ymax + 1e-9 * ys; t += ys) {
    s << "<line x1=\"" << x0 << "\" y1=\"" << py(t) << "\" x2=\"" << x0 + w << "\" y2=\"" << py(t)
      << "\" stroke=\"#e9ecef\"/><text x=\"" << x0 - 6 << "\" y=\"" << py(t) + 4 << "\" text-anchor=\"end\">"
      << tick_label(t, ys) << "</text>\n";
  }
  s << "<text x=\"" << x0 + w / 2 << "\" y=\"" << y0 + h + 34 << "\" text-anchor=\"middle\">step</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[(i + color_offset) % std::size(kColors)];
    s << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (const auto& [x, y] : series[i].points) s << px(x) << "," << py(y) << " ";
    s << "\"/>\n";
    // Dots mark the points: evaluations are few, and one point draws no line.
    if (series[i].points.size() <= 60)
      for (const auto& [x, y] : series[i].points)
        s << "<circle cx=\"" << px(x) << "\" cy=\"" << py(y) << "\" r=\"3\" fill=\"" << color << "\"/>\n";
    const int ly = y0 + 16 + static_cast<int>(i) * 18;
    s << "<rect x=\"" << x0 + w - 150 << "\" y=\"" << ly - 9 << "\" width=\"14\" height=\"4\" fill=\"" << color
      << "\"/><text x=\"" << x0 + w - 130 << "\" y=\"" << ly - 3 << "\">" << svg_escape(series[i].name) << "</text>\n";
  }
}

}  // namespace

void collect_curves(const std::vector<json>& entries, std::vector<CurveSeries>* loss,
                    std::vector<CurveSeries>* metrics) {
  for (const json& e : entries) {
    if (!e.is_object() || !e.contains("step") || !e["step"].is_number() || e.contains("train_runtime")) continue;
    const double step = e["step"].get<double>();
    for (const auto& [key, value] : e.items()) {
      if (!value.is_number()) continue;
      if (key == "loss" || key == "eval_loss")
        add_point(*loss, key, step, value.get<double>());
      else if (is_curve_metric(key))
        add_point(*metrics, key, step, value.get<double>());
    }
  }
  // The training loss first, whatever order the entries came in.
  std::stable_sort(loss->begin(), loss->end(),
                   [](const CurveSeries& a, const CurveSeries& b) { return a.name == "loss" && b.name != "loss"; });
}

std::string training_curves_svg(const std::vector<json>& entries, const std::string& title) {
  std::vector<CurveSeries> loss, metrics;
  collect_curves(entries, &loss, &metrics);
  const int panel_w = 420, panel_h = 280, left = 70, gap = 100, top = 70;
  const int width = left + panel_w + gap + panel_w + 30, height = top + panel_h + 60;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << left << "\" y=\"26\" font-size=\"16\" font-weight=\"bold\">" << svg_escape(title) << "</text>\n";
  draw_panel(s, left, top, panel_w, panel_h, "loss", loss, 0);
  draw_panel(s, left + panel_w + gap, top, panel_w, panel_h, "evaluation metrics", metrics, 2);
  s << "</svg>\n";
  return s.str();
}

std::vector<json> read_metrics_jsonl(const std::string& path) {
  io::check_regular_file(path, "[plot]");
  std::ifstream in(path);
  HEARTH_CHECK(in.good(), IoError, "[plot] ", path, ": cannot be read (train with report_to jsonl or all to write it)");
  std::vector<json> entries;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    io::check_json_limits(line, "[plot] " + path + ": line " + std::to_string(n));
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    // A run killed mid-write leaves a partial last line; any other bad line is an error.
    if (j.is_discarded() && in.peek() == std::char_traits<char>::eof()) break;
    HEARTH_CHECK(j.is_object(), ValueError, "[plot] ", path, ": line ", n, " is not a JSON object");
    entries.push_back(std::move(j));
  }
  return entries;
}

void write_training_curves(const std::vector<json>& entries, const std::string& title, const std::string& path) {
  io::write_file_atomic(path, training_curves_svg(entries, title));
}

// Text for SVG content and attribute values: &, <, > and " escaped.
std::string svg_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

}  // namespace hearth::train
