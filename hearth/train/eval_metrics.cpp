#include "hearth/train/eval_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "hearth/core/errors.h"
#include "hearth/train/metrics.h"

namespace hearth::train {
namespace {

template <typename T>
void check_lists(const char* metric, const std::vector<T>& a, const std::vector<T>& b) {
  HEARTH_CHECK(a.size() == b.size(), ValueError, "[metrics] ", metric, ": expected as many predictions as labels, got ",
               a.size(), " and ", b.size());
  HEARTH_CHECK(!a.empty(), ValueError, "[metrics] ", metric, ": expected at least one prediction, got none");
}

}  // namespace

double accuracy(const std::vector<int64_t>& predictions, const std::vector<int64_t>& labels) {
  check_lists("accuracy", predictions, labels);
  size_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) correct += predictions[i] == labels[i];
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

double binary_f1(const std::vector<int64_t>& predictions, const std::vector<int64_t>& labels) {
  check_lists("f1", predictions, labels);
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool p = predictions[i] == 1, l = labels[i] == 1;
    tp += p && l;
    fp += p && !l;
    fn += !p && l;
  }
  return f1_score(tp, fp, fn);
}

double matthews_corrcoef(const std::vector<int64_t>& predictions, const std::vector<int64_t>& labels) {
  check_lists("matthews_correlation", predictions, labels);
  // With t_k and p_k the true and predicted counts of class k, c the correct
  // predictions and s the samples: (c s - t.p) / sqrt((s^2 - p.p)(s^2 - t.t)).
  std::map<int64_t, double> t, p;
  double c = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    t[labels[i]] += 1;
    p[predictions[i]] += 1;
    c += predictions[i] == labels[i];
  }
  const auto s = static_cast<double>(labels.size());
  double tp = 0, pp = 0, tt = 0;
  for (const auto& [k, v] : t) {
    tt += v * v;
    auto it = p.find(k);
    if (it != p.end()) tp += v * it->second;
  }
  for (const auto& [k, v] : p) pp += v * v;
  const double denominator = std::sqrt((s * s - pp) * (s * s - tt));
  return denominator == 0 ? 0.0 : (c * s - tp) / denominator;
}

double mean_squared_error(const std::vector<double>& predictions, const std::vector<double>& labels) {
  check_lists("mse", predictions, labels);
  double sum = 0;
  for (size_t i = 0; i < labels.size(); ++i) sum += (predictions[i] - labels[i]) * (predictions[i] - labels[i]);
  return sum / static_cast<double>(labels.size());
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_lists("pearson", x, y);
  const auto n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  // Rounding can push |r| a hair past 1; SciPy clips it too.
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    // Positions i..j (0-based) share the mean of ranks i+1..j+1.
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  check_lists("spearmanr", x, y);
  return pearson(average_ranks(x), average_ranks(y));
}

}  // namespace hearth::train
