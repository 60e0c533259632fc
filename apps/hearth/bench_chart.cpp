#include "apps/hearth/bench_chart.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "hearth/train/curves_plot.h"

namespace hearth::cli {

std::string speedup_chart_svg(const std::vector<SpeedupBar>& bars, const std::string& title) {
  const int label_w = 170, bar_w = 480, row_h = 28, top = 44;
  const int height = top + row_h * static_cast<int>(bars.size()) + 36;
  double most = 1;
  for (const SpeedupBar& b : bars) most = std::max(most, b.speedup);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label_w + bar_w + 90 << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"13\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">" << train::svg_escape(title) << "</text>\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = top + static_cast<int>(i) * row_h;
    const int w = std::max(1, static_cast<int>(bar_w * bars[i].speedup / most));
    const bool train = bars[i].label.find("train") != std::string::npos;
    char value[32];
    std::snprintf(value, sizeof value, "%.1fx", bars[i].speedup);
    s << "<text x=\"" << label_w - 8 << "\" y=\"" << y + 17 << "\" text-anchor=\"end\">"
      << train::svg_escape(bars[i].label) << "</text>\n";
    s << "<rect x=\"" << label_w << "\" y=\"" << y + 4 << "\" width=\"" << w << "\" height=\"" << row_h - 8
      << "\" fill=\"" << (train ? "#d9480f" : "#1c7ed6") << "\"/>\n";
    s << "<text x=\"" << label_w + w + 6 << "\" y=\"" << y + 17 << "\">" << value << "</text>\n";
  }
  s << "<text x=\"" << label_w << "\" y=\"" << height - 12
    << "\" fill=\"#555\">samples/s on the accelerator / samples/s on the CPU, same model, batch and data</text>\n";
  s << "</svg>\n";
  return s.str();
}

}  // namespace hearth::cli
