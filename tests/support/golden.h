// Golden tests: a model's numbers against PyTorch's. A fixture pair under
// tests/fixtures/golden/ holds the weights (<name>.weights.safetensors, a
// state dict) and what PyTorch computed from them (<name>.io.safetensors:
// "input", "target", "logits", "loss", "grad.<param>", "buffer_after.<buffer>",
// "eval_logits"). Header-only so the CPU unit tests and the GPU tests share it.
#pragma once

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/tensor.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/module.h"
#include "hearth/nn/pretrained.h"
#include "hearth/ops/nn_functional.h"

namespace hearth::testing {

// The golden fixtures of the source tree (tests/fixtures/golden).
inline std::string golden_dir() { return std::string(HEARTH_FIXTURES_DIR) + "/golden"; }
inline std::string golden_path(const std::string& file) { return golden_dir() + "/" + file; }

// How far a tensor is from its reference, in float64 on the CPU.
struct GoldenError {
  // ||actual - expected|| / ||expected||; or, when the reference is zero up
  // to rounding (absolute), the RMS of actual - expected.
  double value = INFINITY;
  bool absolute = false;
};

// A reference whose RMS is below this is zero up to rounding: a conv bias
// followed by a training-mode BatchNorm has an exactly-zero gradient, which
// float64 leaves at 1e-17 and float32 at 1e-8. A ratio to such a norm
// measures only the rounding, so these compare by absolute RMS instead.
inline constexpr double kGoldenZeroRms = 1e-6;

// Infinity for a shape mismatch or a NaN in one tensor and not the other.
inline GoldenError golden_error(const Tensor& actual, const Tensor& expected) {
  if (actual.shape() != expected.shape()) return {};
  const std::vector<double> a = actual.cpu().to_vector<double>(), e = expected.cpu().to_vector<double>();
  double diff = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(e[i])) {
      if (std::isnan(a[i]) != std::isnan(e[i])) return {};
      continue;
    }
    diff += (a[i] - e[i]) * (a[i] - e[i]);
    ref += e[i] * e[i];
  }
  const double n = static_cast<double>(std::max<size_t>(a.size(), 1));
  if (std::sqrt(ref / n) < kGoldenZeroRms) return {std::sqrt(diff / n), true};
  return {std::sqrt(diff) / std::sqrt(ref), false};
}

// Collects the error of every named tensor and fails once, naming the worst
// tensor and every one over its tolerance: `rtol` for relative errors, `atol`
// (RMS) where the reference is zero up to rounding.
class ToleranceReport {
 public:
  explicit ToleranceReport(double rtol, double atol = 1e-6) : rtol_(rtol), atol_(atol) {}

  void compare(const std::string& name, const Tensor& actual, const Tensor& expected) {
    if (!actual.defined()) {
      entries_.push_back({name, {}, "hearth produced no tensor"});
      return;
    }
    std::string note;
    if (actual.shape() != expected.shape())
      note = "shape " + actual.shape_string() + " vs expected " + expected.shape_string();
    entries_.push_back({name, golden_error(actual, expected), note});
  }

  size_t size() const { return entries_.size(); }

  // One EXPECT over everything compared.
  void expect_all_within(const std::string& what) const {
    ASSERT_FALSE(entries_.empty()) << what << ": nothing was compared";
    const Entry* worst = &entries_.front();
    std::ostringstream over;
    size_t n_over = 0;
    for (const Entry& e : entries_) {
      if (!(share_of_tolerance(e) <= share_of_tolerance(*worst))) worst = &e;
      if (!(share_of_tolerance(e) <= 1.0)) {
        ++n_over;
        over << "\n  " << describe(e) << (e.note.empty() ? "" : " (" + e.note + ")");
      }
    }
    EXPECT_EQ(n_over, 0u) << what << ": " << n_over << " of " << entries_.size() << " tensors exceed relative error "
                          << rtol_ << " (absolute RMS " << atol_ << " where the reference is zero):" << over.str();
    std::cout << "[ golden   ] " << what << ": " << entries_.size() << " tensors, worst " << describe(*worst) << "\n";
  }

 private:
  struct Entry {
    std::string name;
    GoldenError error;
    std::string note;
  };
  double share_of_tolerance(const Entry& e) const { return e.error.value / (e.error.absolute ? atol_ : rtol_); }
  static std::string describe(const Entry& e) {
    std::ostringstream os;
    os << e.name << " at " << (e.error.absolute ? "absolute RMS error " : "relative error ") << e.error.value;
    return os.str();
  }

  double rtol_, atol_;
  std::vector<Entry> entries_;
};

// Loads <name>.weights.safetensors strictly into `model` (already on
// `device`), runs the fixture's training-mode forward, cross entropy and
// backward, then an eval-mode forward, and compares logits, loss, every
// gradient, every buffer after the step and the eval logits. Every "grad." and
// "buffer_after." entry of the fixture must name a tensor of the model, and
// every parameter and buffer must have one.
inline void run_golden_step(nn::Module& model, const std::string& name, Device device, double rtol,
                            double atol = 1e-6) {
  nn::load_pretrained(model, golden_path(name + ".weights.safetensors"));
  const std::map<std::string, Tensor> io = io::load_safetensors(golden_path(name + ".io.safetensors"));
  auto get = [&](const std::string& key) {
    auto it = io.find(key);
    if (it == io.end()) throw std::runtime_error(name + ".io.safetensors has no \"" + key + "\"");
    return it->second;
  };

  ToleranceReport report(rtol, atol);
  std::set<std::string> expected_keys;
  for (const auto& [key, t] : io)
    if (key.rfind("grad.", 0) == 0 || key.rfind("buffer_after.", 0) == 0) expected_keys.insert(key);

  model.train();
  model.zero_grad();
  const Tensor input = get("input").to(device), target = get("target").to(device);
  Tensor logits = model.forward(input);
  Tensor loss = cross_entropy(logits, target);
  loss.backward();
  report.compare("logits", logits, get("logits"));
  report.compare("loss", loss, get("loss"));

  std::set<std::string> compared_keys;
  for (const auto& [pname, p] : model.named_parameters()) {
    const std::string key = "grad." + pname;
    compared_keys.insert(key);
    if (!io.count(key)) continue;  // reported below as missing from the fixture
    report.compare(key, p.grad(), io.at(key));
  }
  for (const auto& [bname, b] : model.named_buffers()) {
    const std::string key = "buffer_after." + bname;
    compared_keys.insert(key);
    if (!io.count(key)) continue;
    report.compare(key, b, io.at(key));
  }
  EXPECT_EQ(compared_keys, expected_keys) << name << ": the model's parameters and buffers differ from the fixture's";

  model.eval();
  {
    NoGradGuard no_grad;
    report.compare("eval_logits", model.forward(input), get("eval_logits"));
  }
  report.expect_all_within(name);
}

}  // namespace hearth::testing
