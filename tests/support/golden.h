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

// ||actual - expected|| / ||expected||, in float64. A reference whose norm is
// below an RMS of 1e-6 per element is compared against that floor instead,
// so an all-zero gradient needs only an all-(nearly)-zero answer. Infinity for
// a shape mismatch or a NaN in one tensor and not the other.
inline double golden_relative_error(const Tensor& actual, const Tensor& expected) {
  if (actual.shape() != expected.shape()) return INFINITY;
  const std::vector<double> a = actual.cpu().to_vector<double>(), e = expected.cpu().to_vector<double>();
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(e[i])) {
      if (std::isnan(a[i]) != std::isnan(e[i])) return INFINITY;
      continue;
    }
    num += (a[i] - e[i]) * (a[i] - e[i]);
    den += e[i] * e[i];
  }
  const double floor = 1e-6 * std::sqrt(static_cast<double>(std::max<size_t>(a.size(), 1)));
  return std::sqrt(num) / std::max(std::sqrt(den), floor);
}

// Collects one relative error per named tensor and fails once, naming the
// worst tensor and every one over the tolerance.
class ToleranceReport {
 public:
  explicit ToleranceReport(double tolerance) : tolerance_(tolerance) {}

  void compare(const std::string& name, const Tensor& actual, const Tensor& expected) {
    if (!actual.defined()) {
      errors_.push_back({name, INFINITY, "hearth produced no tensor"});
      return;
    }
    std::string note;
    if (actual.shape() != expected.shape())
      note = "shape " + actual.shape_string() + " vs expected " + expected.shape_string();
    errors_.push_back({name, golden_relative_error(actual, expected), note});
  }

  size_t size() const { return errors_.size(); }

  // One EXPECT over everything compared.
  void expect_all_within(const std::string& what) const {
    ASSERT_FALSE(errors_.empty()) << what << ": nothing was compared";
    const Entry* worst = &errors_.front();
    std::ostringstream over;
    size_t n_over = 0;
    for (const Entry& e : errors_) {
      if (!(e.error <= worst->error)) worst = &e;
      if (!(e.error <= tolerance_)) {
        ++n_over;
        over << "\n  " << e.name << ": " << e.error << (e.note.empty() ? "" : " (" + e.note + ")");
      }
    }
    EXPECT_EQ(n_over, 0u) << what << ": " << n_over << " of " << errors_.size() << " tensors exceed relative error "
                          << tolerance_ << ":" << over.str();
    std::cout << "[ golden   ] " << what << ": " << errors_.size() << " tensors, worst " << worst->name
              << " at relative error " << worst->error << "\n";
  }

 private:
  struct Entry {
    std::string name;
    double error;
    std::string note;
  };
  double tolerance_;
  std::vector<Entry> errors_;
};

// Loads <name>.weights.safetensors strictly into `model` (already on
// `device`), runs the fixture's training-mode forward, cross entropy and
// backward, then an eval-mode forward, and compares logits, loss, every
// gradient, every buffer after the step and the eval logits. Every "grad." and
// "buffer_after." entry of the fixture must name a tensor of the model, and
// every parameter and buffer must have one.
inline void run_golden_step(nn::Module& model, const std::string& name, Device device, double tolerance) {
  nn::load_pretrained(model, golden_path(name + ".weights.safetensors"));
  const std::map<std::string, Tensor> io = io::load_safetensors(golden_path(name + ".io.safetensors"));
  auto get = [&](const std::string& key) {
    auto it = io.find(key);
    if (it == io.end()) throw std::runtime_error(name + ".io.safetensors has no \"" + key + "\"");
    return it->second;
  };

  ToleranceReport report(tolerance);
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
