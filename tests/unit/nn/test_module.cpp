// nn::Module: registration and PyTorch names, traversal, modes, placement,
// state dicts (through safetensors) and their loading rules.
#include <sstream>

#include <gtest/gtest.h>

#include "hearth/io/safetensors.h"
#include "hearth/nn/nn.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/sgd.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

using namespace nn;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <typename Pairs>
std::vector<std::string> names_of(const Pairs& pairs) {
  std::vector<std::string> out;
  for (const auto& [name, x] : pairs) out.push_back(name);
  return out;
}

// A residual-style block with a parameter, a persistent and a non-persistent
// buffer, and nested submodules: the naming cases of a ResNet layer.
class Block : public Module {
 public:
  Block() : Module("Block") {
    conv1 = register_module("conv1", std::make_shared<Conv2d>(2, 2, 3, 1, 1, 1, 1, false));
    bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(2));
    scale = register_parameter("scale", ones({2}));
    register_buffer("cache", zeros({2}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) override { return bn1->forward(conv1->forward(x)); }
  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<BatchNorm2d> bn1;
  Tensor scale;
};

class Net : public Module {
 public:
  Net() : Module("Net") {
    layer1 = register_module("layer1", std::make_shared<Sequential>(std::make_shared<Block>()));
    fc = register_module("fc", std::make_shared<Linear>(2, 3));
  }
  std::shared_ptr<Sequential> layer1;
  std::shared_ptr<Linear> fc;
};

TEST(NnModule, NamesFollowPyTorch) {
  auto net = std::make_shared<Net>();
  // A module's own entries come before its children's, as in PyTorch.
  EXPECT_EQ(names_of(net->named_parameters()),
            (std::vector<std::string>{"layer1.0.scale", "layer1.0.conv1.weight", "layer1.0.bn1.weight",
                                      "layer1.0.bn1.bias", "fc.weight", "fc.bias"}));
  EXPECT_EQ(names_of(net->named_buffers()),
            (std::vector<std::string>{"layer1.0.cache", "layer1.0.bn1.running_mean", "layer1.0.bn1.running_var",
                                      "layer1.0.bn1.num_batches_tracked"}));
  EXPECT_EQ(names_of(net->named_modules()),
            (std::vector<std::string>{"", "layer1", "layer1.0", "layer1.0.conv1", "layer1.0.bn1", "fc"}));
  EXPECT_EQ(names_of(net->named_children()), (std::vector<std::string>{"layer1", "fc"}));
  EXPECT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->parameters().size(), 6u);
  EXPECT_EQ(net->parameters(/*recurse=*/false).size(), 0u);
  EXPECT_EQ(net->fc->parameters(false).size(), 2u);
  EXPECT_EQ(net->buffers().size(), 4u);
  for (const Tensor& p : net->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  // Lookups by dotted path return the registered handles.
  EXPECT_TRUE(net->get_parameter("fc.weight").is_same(net->fc->weight));
  EXPECT_TRUE(net->get_buffer("layer1.0.bn1.running_mean")
                  .is_same(std::dynamic_pointer_cast<Block>(net->get_submodule("layer1.0"))->bn1->running_mean));
  EXPECT_EQ(net->get_submodule("layer1.0.conv1")->type_name(), "Conv2d");
  try {
    net->get_parameter("layer1.1.weight");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "layer1.1")) << e.what();
  }
  EXPECT_THROW(net->get_parameter("fc.running_mean"), ValueError);
  EXPECT_THROW(net->get_buffer("fc.weight"), ValueError);
}

TEST(NnModule, RegistrationRejectsBadNames) {
  Module m("Custom");
  m.register_parameter("w", zeros({2}));
  EXPECT_THROW(m.register_parameter("w", zeros({2})), ValueError);
  EXPECT_THROW(m.register_buffer("w", zeros({2})), ValueError);
  EXPECT_THROW(m.register_module("w", std::make_shared<ReLU>()), ValueError);
  try {
    m.register_parameter("a.b", zeros({2}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "a.b")) << e.what();
  }
  EXPECT_THROW(m.register_buffer("", zeros({2})), ValueError);
  EXPECT_THROW(m.register_parameter("i", zeros({2}, DType::int64)), TypeError);
  EXPECT_THROW(m.register_module("null", std::shared_ptr<Module>()), ValueError);
  // An absent parameter (bias=None) takes its name but is listed nowhere.
  Tensor none = m.register_parameter("bias", Tensor());
  EXPECT_FALSE(none.defined());
  EXPECT_EQ(names_of(m.named_parameters()), (std::vector<std::string>{"w"}));
  EXPECT_EQ(m.state_dict().count("bias"), 0u);
}

TEST(NnModule, ParametersAreDetachedLeaves) {
  Tensor x = ones({2});
  x.requires_grad_(true);
  Tensor y = mul(x, 2.0);  // not a leaf
  Module m("Custom");
  Tensor p = m.register_parameter("p", y);
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  Tensor frozen = m.register_parameter("frozen", ones({2}), /*requires_grad=*/false);
  EXPECT_FALSE(frozen.requires_grad());
  EXPECT_TRUE(Parameter(zeros({3})).requires_grad());
  m.requires_grad_(false);
  for (const Tensor& t : m.parameters()) EXPECT_FALSE(t.requires_grad());
}

TEST(NnModule, SharedParametersAreListedOnceButSavedUnderEveryName) {
  // Tied weights: the output layer registers the embedding's parameter.
  auto emb = std::make_shared<Embedding>(5, 3);
  auto head = std::make_shared<Module>("Head");
  Tensor tied = head->register_parameter("weight", emb->weight);
  EXPECT_TRUE(tied.is_same(emb->weight));
  Module model("Tied");
  model.register_module("emb", emb);
  model.register_module("head", head);
  EXPECT_EQ(names_of(model.named_parameters()), (std::vector<std::string>{"emb.weight"}));
  StateDict sd = model.state_dict();
  EXPECT_EQ(sd.size(), 2u);
  EXPECT_TRUE(sd.at("head.weight").storage() == sd.at("emb.weight").storage());

  // One module under two names: its parameters once, its state twice.
  Module twice("Twice");
  auto lin = std::make_shared<Linear>(2, 2);
  twice.register_module("first", lin);
  twice.register_module("second", lin);
  EXPECT_EQ(twice.parameters().size(), 2u);
  EXPECT_EQ(twice.named_modules().size(), 2u);
  EXPECT_EQ(twice.state_dict().size(), 4u);
  EXPECT_EQ(twice.state_dict().count("second.weight"), 1u);
}

TEST(NnModule, TrainAndEvalReachEveryDescendant) {
  auto net = std::make_shared<Net>();
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training()) << m->type_name();
  net->train();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training()) << m->type_name();
  net->layer1->eval();
  EXPECT_TRUE(net->fc->is_training());
  EXPECT_FALSE(net->get_submodule("layer1.0.bn1")->is_training());
}

TEST(NnModule, ToDtypeConvertsFloatingTensorsInPlaceOfTheSameHandles) {
  auto net = std::make_shared<Net>();
  Tensor w = net->fc->weight;
  const std::vector<double> before = w.to_vector<double>();
  optim::SGD opt(net->parameters(), {.lr = 0.1});  // built before the conversion
  net->to(DType::float64);
  EXPECT_EQ(w.dtype(), DType::float64);  // the handle the optimizer holds
  EXPECT_EQ(w.to_vector<double>(), before);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(net->get_buffer("layer1.0.bn1.running_mean").dtype(), DType::float64);
  EXPECT_EQ(net->get_buffer("layer1.0.bn1.num_batches_tracked").dtype(), DType::int64);
  // The optimizer updates the converted parameter.
  w.set_grad(ones(w.shape(), DType::float64));
  opt.step();
  EXPECT_NEAR(w.to_vector<double>()[0], before[0] - 0.1, 1e-6);
  EXPECT_THROW(net->to(DType::int32), TypeError);
}

TEST(NnModule, ToDeviceMovesParametersBuffersAndGradients) {
  auto lin = std::make_shared<Linear>(3, 2);
  Tensor w = lin->weight;
  w.set_grad(ones({2, 3}));
  const Device dev = testing::test_device();
  lin->to(dev);
  EXPECT_EQ(w.device(), dev);
  EXPECT_EQ(lin->bias.device(), dev);
  EXPECT_EQ(w.grad().device(), dev);
  lin->to(Device(), DType::float64);
  EXPECT_TRUE(w.device().is_cpu());
  EXPECT_EQ(w.dtype(), DType::float64);
  EXPECT_EQ(w.grad().dtype(), DType::float64);
}

TEST(NnModule, ZeroGrad) {
  auto lin = std::make_shared<Linear>(3, 2);
  Tensor x = ones({4, 3});
  sum(lin->forward(x)).backward();
  ASSERT_TRUE(lin->weight.grad().defined());
  lin->zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(sum(abs(lin->weight.grad())).item<double>(), 0.0);
  lin->zero_grad();
  EXPECT_FALSE(lin->weight.grad().defined());
  EXPECT_FALSE(lin->bias.grad().defined());
}

TEST(NnModule, StateDictHoldsParametersAndPersistentBuffers) {
  auto net = std::make_shared<Net>();
  StateDict sd = net->state_dict();
  std::vector<std::string> keys;
  for (const auto& [k, v] : sd) keys.push_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"fc.bias", "fc.weight", "layer1.0.bn1.bias", "layer1.0.bn1.num_batches_tracked",
                                      "layer1.0.bn1.running_mean", "layer1.0.bn1.running_var", "layer1.0.bn1.weight",
                                      "layer1.0.conv1.weight", "layer1.0.scale"}));
  EXPECT_EQ(sd.at("layer1.0.bn1.num_batches_tracked").dtype(), DType::int64);
  EXPECT_EQ(sd.at("layer1.0.bn1.num_batches_tracked").dim(), 0);
  // Entries share storage with the module and are detached.
  EXPECT_TRUE(sd.at("fc.weight").storage() == net->fc->weight.storage());
  EXPECT_FALSE(sd.at("fc.weight").requires_grad());
}

TEST(NnModule, StateDictRoundTripsThroughSafetensors) {
  testing::TempDir dir;
  auto a = std::make_shared<Net>();
  a->train();
  a->layer1->forward(randn({4, 2, 3, 3}));  // moves the running statistics
  const std::string path = dir.file("model.safetensors");
  io::save_safetensors(path, a->state_dict());

  auto b = std::make_shared<Net>();  // different random initialisation
  LoadStateDictResult r = b->load_state_dict(io::load_safetensors(path));
  EXPECT_TRUE(r.missing_keys.empty());
  EXPECT_TRUE(r.unexpected_keys.empty());
  for (const auto& [name, t] : a->state_dict())
    EXPECT_EQ(b->state_dict().at(name).to_vector<double>(), t.to_vector<double>()) << name;
  EXPECT_EQ(b->get_buffer("layer1.0.bn1.num_batches_tracked").item<int64_t>(), 1);
  a->eval();
  b->eval();
  Tensor x = randn({2, 2, 3, 3});
  EXPECT_EQ(a->fc->forward(mean(a->layer1->forward(x), {2, 3})).to_vector<float>(),
            b->fc->forward(mean(b->layer1->forward(x), {2, 3})).to_vector<float>());
}

TEST(NnModule, StrictLoadingListsMissingAndUnexpectedKeys) {
  auto net = std::make_shared<Net>();
  StateDict sd = std::make_shared<Net>()->state_dict();
  sd.erase("fc.bias");
  sd.erase("layer1.0.bn1.running_var");
  sd["fc.extra"] = zeros({1});
  const std::vector<float> before = net->fc->weight.to_vector<float>();
  try {
    net->load_state_dict(sd);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "missing key(s): \"layer1.0.bn1.running_var\", \"fc.bias\"")) << e.what();
    EXPECT_TRUE(contains(e.what(), "unexpected key(s): \"fc.extra\"")) << e.what();
  }
  EXPECT_EQ(net->fc->weight.to_vector<float>(), before);  // nothing written

  LoadStateDictResult r = net->load_state_dict(sd, /*strict=*/false);
  // Missing keys in state_dict order (module by module); unexpected ones sorted.
  EXPECT_EQ(r.missing_keys, (std::vector<std::string>{"layer1.0.bn1.running_var", "fc.bias"}));
  EXPECT_EQ(r.unexpected_keys, (std::vector<std::string>{"fc.extra"}));
  EXPECT_EQ(net->fc->weight.to_vector<float>(), sd.at("fc.weight").to_vector<float>());
}

TEST(NnModule, ShapeMismatchAlwaysThrowsNamingKeyAndShapes) {
  auto net = std::make_shared<Net>();
  StateDict sd = net->state_dict();
  sd["fc.weight"] = zeros({4, 2});
  for (bool strict : {true, false}) {
    try {
      net->load_state_dict(sd, strict);
      FAIL() << "expected ShapeError";
    } catch (const ShapeError& e) {
      EXPECT_TRUE(contains(e.what(), "\"fc.weight\"")) << e.what();
      EXPECT_TRUE(contains(e.what(), "[4, 2]")) << e.what();
      EXPECT_TRUE(contains(e.what(), "[3, 2]")) << e.what();
    }
  }
}

TEST(NnModule, LoadingCastsAndCopiesIntoTheExistingTensors) {
  auto lin = std::make_shared<Linear>(2, 1);
  Tensor w = lin->weight;
  StateDict sd{{"weight", tensor(std::vector<double>{1.5, -2.0}, {1, 2})}, {"bias", tensor(std::vector<double>{0.25})}};
  lin->load_state_dict(sd);
  EXPECT_TRUE(lin->weight.is_same(w));
  EXPECT_EQ(w.dtype(), DType::float32);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(lin->forward(ones({1, 2})).item<float>(), -0.25f);
}

TEST(NnModule, ForwardAndPrinting) {
  Module plain("Custom");
  try {
    plain.forward(zeros({1}));
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_TRUE(contains(e.what(), "[Custom]")) << e.what();
  }
  auto seq = std::make_shared<Sequential>(std::make_shared<Linear>(4, 2), std::make_shared<ReLU>());
  EXPECT_EQ(seq->repr(), "Sequential(\n  (0): Linear(in_features=4, out_features=2, bias=true)\n  (1): ReLU()\n)");
  std::ostringstream os;
  os << *seq;
  EXPECT_EQ(os.str(), seq->repr());
}

TEST(NnModule, ApplyVisitsChildrenFirst) {
  auto net = std::make_shared<Net>();
  std::vector<std::string> order;
  net->apply([&](Module& m) { order.push_back(m.type_name()); });
  EXPECT_EQ(order, (std::vector<std::string>{"Conv2d", "BatchNorm2d", "Block", "Sequential", "Linear", "Net"}));
}

}  // namespace
}  // namespace hearth
