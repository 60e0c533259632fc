#include <gtest/gtest.h>

#include "hearth/nn/activation.h"
#include "hearth/nn/container.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using namespace nn;

TEST(NnContainer, SequentialRunsChildrenInOrder) {
  auto l1 = std::make_shared<Linear>(4, 3);
  auto l2 = std::make_shared<Linear>(3, 2);
  Sequential seq(l1, std::make_shared<ReLU>(), l2);
  EXPECT_EQ(seq.size(), 3u);
  Tensor x = randn({5, 4});
  testing::expect_close(seq.forward(x), linear(relu(linear(x, l1->weight, l1->bias)), l2->weight, l2->bias), 0);
  std::vector<std::string> names;
  for (const auto& [n, p] : seq.named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  // Empty: the identity.
  testing::expect_close(Sequential().forward(x), x, 0);
}

TEST(NnContainer, BuiltFromAVectorOrByPushBack) {
  Sequential a(std::vector<std::shared_ptr<Module>>{std::make_shared<ReLU>(), std::make_shared<Tanh>()});
  EXPECT_EQ(a.size(), 2u);
  Sequential b;
  b.push_back(std::make_shared<ReLU>());
  b.extend({std::make_shared<Tanh>(), std::make_shared<ReLU>()});
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b[1]->type_name(), "Tanh");
  EXPECT_EQ(b[-1]->type_name(), "ReLU");
}

TEST(NnContainer, ModuleListIndexesAndNames) {
  auto list = std::make_shared<ModuleList>();
  for (int i = 0; i < 3; ++i) list->push_back(std::make_shared<Linear>(2, 2));
  EXPECT_EQ(list->size(), 3u);
  EXPECT_EQ(list->named_parameters().back().first, "2.bias");
  EXPECT_TRUE(list->at<Linear>(-3)->weight.is_same(list->get_parameter("0.weight")));
  int count = 0;
  for (const auto& m : *list) count += m->type_name() == "Linear";
  EXPECT_EQ(count, 3);
  try {
    (*list)[3];
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "index 3")) << e.what();
  }
  EXPECT_THROW(list->at<ReLU>(0), TypeError);
  // A ModuleList has no forward of its own.
  EXPECT_THROW(list->forward(zeros({1, 2})), NotImplementedError);
}

}  // namespace
}  // namespace hearth
