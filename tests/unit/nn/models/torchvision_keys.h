// The state-dict keys and shapes of torchvision's full-size models
// (tests/fixtures/golden/torchvision_keys.json), for checking that hearth's
// builds of the same models match them name for name.
#pragma once

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/core/shape.h"
#include "hearth/nn/init.h"
#include "hearth/nn/module.h"
#include "tests/support/golden.h"

namespace hearth::testing {

inline std::map<std::string, Shape> torchvision_keys(const std::string& model) {
  const std::string path = golden_path("torchvision_keys.json");
  std::ifstream in(path);
  if (!in.good()) throw std::runtime_error("cannot read " + path);
  const nlohmann::json all = nlohmann::json::parse(in);
  if (!all.contains(model)) throw std::runtime_error(path + " has no entry \"" + model + "\"");
  std::map<std::string, Shape> keys;
  for (const auto& entry : all.at(model)) keys[entry.at(0).get<std::string>()] = entry.at(1).get<Shape>();
  return keys;
}

inline std::map<std::string, Shape> state_dict_shapes(const nn::Module& module) {
  std::map<std::string, Shape> out;
  for (const auto& [name, t] : module.state_dict()) out[name] = t.shape();
  return out;
}

inline int64_t parameter_count(const nn::Module& module) {
  int64_t n = 0;
  for (const Tensor& p : module.parameters()) n += p.numel();
  return n;
}

// Keys of one map absent from the other, for a readable failure.
inline std::string key_difference(const std::map<std::string, Shape>& ours,
                                  const std::map<std::string, Shape>& theirs) {
  std::string out;
  for (const auto& [k, s] : ours)
    if (!theirs.count(k)) out += "\n  only in hearth: " + k;
  for (const auto& [k, s] : theirs) {
    auto it = ours.find(k);
    if (it == ours.end()) {
      out += "\n  only in torchvision: " + k;
    } else if (it->second != s) {
      out += "\n  shape differs: " + k;
    }
  }
  return out;
}

// The model `build` returns has torchvision's parameter count and exactly its
// state-dict names and shapes. Built under SkipInitGuard: only the layout
// matters, and drawing a VGG16's initial weights takes seconds.
template <typename Build>
void expect_torchvision_layout(const std::string& name, int64_t params, Build build) {
  std::shared_ptr<nn::Module> model;
  {
    nn::init::SkipInitGuard skip;
    model = build();
  }
  EXPECT_EQ(parameter_count(*model), params) << name;
  const auto ours = state_dict_shapes(*model), theirs = torchvision_keys(name);
  EXPECT_EQ(ours, theirs) << name << ":" << key_difference(ours, theirs);
}

}  // namespace hearth::testing
