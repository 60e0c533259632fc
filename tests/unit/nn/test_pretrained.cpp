#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/nn/container.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/pretrained.h"
#include "hearth/ops/factory.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::BatchNorm1d;
using nn::Linear;
using nn::Sequential;

std::shared_ptr<Sequential> make_net() {
  return std::make_shared<Sequential>(std::make_shared<Linear>(4, 3), std::make_shared<BatchNorm1d>(3),
                                      std::make_shared<Linear>(3, 2));
}

// The message of the ValueError `fn` throws, or a failure.
template <typename Fn>
std::string value_error_of(Fn fn) {
  try {
    fn();
  } catch (const ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ValueError";
  return "";
}

TEST(NnPretrained, LoadsEveryEntryConvertingDtypes) {
  testing::TempDir dir;
  manual_seed(0);
  auto source = make_net();
  nn::StateDict sd = source->state_dict();
  sd["1.running_mean"] = randn({3});
  sd["0.weight"] = sd["0.weight"].to(DType::float64);  // converted to the module's float32
  sd["1.num_batches_tracked"] = full({}, 7, DType::int64);
  io::save_safetensors(dir.file("w.safetensors"), sd);

  auto target = make_net();
  nn::LoadStateDictResult r = nn::load_pretrained(*target, dir.file("w.safetensors"));
  EXPECT_TRUE(r.missing_keys.empty() && r.unexpected_keys.empty());
  testing::expect_close(target->state_dict().at("0.weight"), source->state_dict().at("0.weight"), 1e-7);
  testing::expect_close(target->state_dict().at("1.running_mean"), sd.at("1.running_mean"));
  EXPECT_EQ(target->state_dict().at("0.weight").dtype(), DType::float32);
  EXPECT_EQ(target->state_dict().at("1.num_batches_tracked").item<int64_t>(), 7);
}

TEST(NnPretrained, NamesTheFileAndEveryBadKey) {
  testing::TempDir dir;
  auto net = make_net();
  nn::StateDict sd = net->state_dict();
  sd.erase("2.bias");
  sd["2.weight"] = zeros({5, 3});
  sd["head.weight"] = zeros({1});
  const std::string path = dir.file("bad.safetensors");
  io::save_safetensors(path, sd);

  const Tensor before = net->state_dict().at("0.weight").clone();
  const std::string msg = value_error_of([&] { nn::load_pretrained(*net, path); });
  for (const char* part :
       {"[load_pretrained]", "bad.safetensors", "Sequential", "1 missing from the file", "2.bias",
        "1 unexpected in the file", "head.weight", "1 with a different shape", "2.weight: file [5, 3], model [2, 3]"})
    EXPECT_TRUE(testing::contains(msg, part)) << "no \"" << part << "\" in: " << msg;
  // Nothing was written.
  testing::expect_close(net->state_dict().at("0.weight"), before);
}

TEST(NnPretrained, NonStrictReportsKeysButStillNeedsShapes) {
  testing::TempDir dir;
  auto net = make_net();
  nn::StateDict sd = net->state_dict();
  sd.erase("2.bias");
  sd["extra"] = zeros({1});
  sd["0.bias"] = full({3}, 0.5);
  io::save_safetensors(dir.file("partial.safetensors"), sd);
  nn::LoadStateDictResult r = nn::load_pretrained(*net, dir.file("partial.safetensors"), /*strict=*/false);
  EXPECT_EQ(r.missing_keys, std::vector<std::string>{"2.bias"});
  EXPECT_EQ(r.unexpected_keys, std::vector<std::string>{"extra"});
  testing::expect_close(net->state_dict().at("0.bias"), full({3}, 0.5));

  sd["0.bias"] = zeros({4});
  io::save_safetensors(dir.file("partial.safetensors"), sd);
  const std::string msg = value_error_of([&] { nn::load_pretrained(*net, dir.file("partial.safetensors"), false); });
  EXPECT_TRUE(testing::contains(msg, "0.bias: file [4], model [3]")) << msg;
}

TEST(NnPretrained, LongListsAreCut) {
  testing::TempDir dir;
  nn::StateDict sd;
  for (int i = 0; i < 25; ++i) sd["layer" + std::to_string(i) + ".weight"] = zeros({1});
  io::save_safetensors(dir.file("other.safetensors"), sd);
  auto net = make_net();
  const std::string msg = value_error_of([&] { nn::load_pretrained(*net, dir.file("other.safetensors")); });
  EXPECT_TRUE(testing::contains(msg, "25 unexpected in the file")) << msg;
  EXPECT_TRUE(testing::contains(msg, "... and 5 more")) << msg;
}

TEST(NnPretrained, MissingFileIsAnIoErrorNamingIt) {
  auto net = make_net();
  try {
    nn::load_pretrained(*net, "/no/such/weights.safetensors");
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "/no/such/weights.safetensors")) << e.what();
  }
}

}  // namespace
}  // namespace hearth
