// The BERT golden check, shared by the CPU unit test and the GPU test: the
// model folder tests/fixtures/golden/bert_tiny (written by transformers'
// save_pretrained) is loaded with from_pretrained, runs the train-mode forward
// with labels and the backward of tests/fixtures/make_golden.py, then the eval
// forward, and every logit, the loss and every parameter gradient must match
// what transformers computed (in float64, stored as float32) within `tol`,
// measured as max |actual - expected| / max |expected| per tensor.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/models/bert.h"

namespace hearth::testing {

inline std::string bert_tiny_dir() { return std::string(HEARTH_FIXTURES_DIR) + "/golden/bert_tiny"; }
inline std::string bert_tiny_io_path() { return std::string(HEARTH_FIXTURES_DIR) + "/golden/bert_tiny.io.safetensors"; }

// max |actual - expected| / max |expected|, in float64 on the CPU.
inline double max_relative_error(const Tensor& actual, const Tensor& expected) {
  const std::vector<double> a = actual.cpu().to_vector<double>(), e = expected.cpu().to_vector<double>();
  if (a.size() != e.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::isnan(a[i]) ? INFINITY : std::abs(a[i] - e[i]));
    scale = std::max(scale, std::abs(e[i]));
  }
  return diff / std::max(scale, 1e-30);
}

// Returns the worst relative error seen (for reports).
inline double check_bert_golden(Device device, double tol) {
  using nn::models::BertForSequenceClassification;
  EXPECT_TRUE(std::filesystem::is_directory(bert_tiny_dir())) << bert_tiny_dir() << " is missing";
  auto model = BertForSequenceClassification::from_pretrained(bert_tiny_dir(), {.log = nullptr});
  model->to(device);
  model->train();
  std::map<std::string, Tensor> io = io::load_safetensors(bert_tiny_io_path(), device);
  const Tensor &ids = io.at("input_ids"), &types = io.at("token_type_ids"), &mask = io.at("attention_mask");

  double worst = 0;
  auto expect_match = [&](const Tensor& actual, const std::string& name) {
    const Tensor& expected = io.at(name);
    EXPECT_EQ(actual.shape(), expected.shape()) << name;
    if (expected.abs().max().item<double>() < 1e-10) {
      // Zero in exact arithmetic (the key biases: softmax ignores a shift
      // shared by a query's scores), so only rounding noise is left to compare.
      EXPECT_LT(actual.abs().max().item<double>(), 1e-6) << name << " should be zero";
      return;
    }
    const double err = max_relative_error(actual, expected);
    worst = std::max(worst, err);
    EXPECT_LT(err, tol) << name << ": relative error " << err;
  };

  auto out = model->forward(ids, types, mask, io.at("labels"));
  expect_match(out.logits, "logits");
  expect_match(out.loss, "loss");
  out.loss.backward();
  size_t grads = 0;
  for (const auto& [name, param] : model->named_parameters()) {
    if (!io.count("grad." + name)) {
      ADD_FAILURE() << "the fixture has no gradient for " << name;
      continue;
    }
    EXPECT_TRUE(param.grad().defined()) << name << " got no gradient";
    if (param.grad().defined()) expect_match(param.grad(), "grad." + name);
    ++grads;
  }
  const size_t fixture_grads =
      std::count_if(io.begin(), io.end(), [](const auto& kv) { return kv.first.rfind("grad.", 0) == 0; });
  EXPECT_EQ(grads, fixture_grads) << "every gradient of the fixture belongs to a parameter";

  model->eval();
  NoGradGuard no_grad;
  expect_match(model->forward(ids, types, mask), "eval_logits");
  return worst;
}

}  // namespace hearth::testing
