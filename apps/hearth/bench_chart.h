// The speedup chart of `hearth bench --compare-cpu`, as the reference documents
// draw theirs: one horizontal bar per model and phase, drawn as standalone SVG.
#pragma once

#include <string>
#include <vector>

namespace hearth::cli {

struct SpeedupBar {
  std::string label;  // "resnet50 train"
  double speedup = 0;
};

std::string speedup_chart_svg(const std::vector<SpeedupBar>& bars, const std::string& title);

}  // namespace hearth::cli
