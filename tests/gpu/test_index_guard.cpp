// Out-of-range indices on CUDA: kernels skip them without touching memory out
// of bounds and the next indexing call raises; HEARTH_CHECK_INDICES=1 raises at
// the offending call instead.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

Tensor rows(Device d) { return tensor(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3}, d); }
Tensor index(std::vector<int64_t> v, Shape s, Device d) { return tensor(v, s, d); }

TEST(IndexGuard, GatherSkipsABadIndexAndTheNextCallRaises) {
  HEARTH_REQUIRE_CUDA();
  const Device g = cuda0();
  std::vector<float> got = gather(rows(g), 1, index({2, 9, 0, 1}, {2, 2}, g)).cpu().to_vector<float>();
  EXPECT_EQ(got[0], 2.f);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_EQ(got[2], 3.f);
  EXPECT_EQ(got[3], 4.f);
  const std::string msg = error_of([&] { index_select(rows(g), 0, index({1}, {1}, g)); });
  EXPECT_NE(msg.find("[index_select] an earlier gather on cuda:0 met index 9, which is out of bounds for dimension 1 "
                     "with size 3"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("HEARTH_CHECK_INDICES=1"), std::string::npos) << msg;
  // Raised once: the record is cleared.
  EXPECT_EQ(index_select(rows(g), 0, index({1}, {1}, g)).cpu().to_vector<float>(), (std::vector<float>{3, 4, 5}));
}

TEST(IndexGuard, ScatterAddDropsABadIndex) {
  HEARTH_REQUIRE_CUDA();
  const Device g = cuda0();
  Tensor out = scatter_add(zeros({2, 3}, DType::float32, g), 1, index({0, -4}, {1, 2}, g),
                           tensor(std::vector<float>{5, 7}, {1, 2}, g));
  EXPECT_EQ(out.cpu().to_vector<float>(), (std::vector<float>{5, 0, 0, 0, 0, 0}));
  const std::string msg = error_of([&] { gather(rows(g), 1, index({0}, {1, 1}, g)); });
  EXPECT_NE(msg.find("an earlier scatter_add on cuda:0 met index -4"), std::string::npos) << msg;
}

TEST(IndexGuard, IndexSelectWritesZerosForIntegers) {
  HEARTH_REQUIRE_CUDA();
  const Device g = cuda0();
  Tensor x = tensor(std::vector<int64_t>{1, 2, 3, 4}, {2, 2}, g);
  EXPECT_EQ(index_select(x, 0, index({1, 2}, {2}, g)).cpu().to_vector<int64_t>(), (std::vector<int64_t>{3, 4, 0, 0}));
  EXPECT_NE(error_of([&] { index_select(x, 0, index({0}, {1}, g)); }).find("met index 2"), std::string::npos);
}

TEST(IndexGuard, CheckIndicesRaisesAtTheCall) {
  HEARTH_REQUIRE_CUDA();
  const Device g = cuda0();
  ScopedEnv env("HEARTH_CHECK_INDICES", "1");
  EXPECT_EQ(error_of([&] { gather(rows(g), 1, index({2, 9, 0, 1}, {2, 2}, g)); }),
            "[gather] index 9 is out of bounds for dimension 1 with size 3");
  EXPECT_EQ(error_of([&] { one_hot(index({1, 5}, {2}, g), 3); }),
            "[one_hot] class value 5 is out of range for num_classes 3");
  // Nothing was recorded on the device.
  EXPECT_EQ(gather(rows(g), 1, index({1}, {1, 1}, g)).cpu().to_vector<float>(), (std::vector<float>{1}));
}

TEST(IndexGuard, OneHotInferringTheCountAlwaysChecks) {
  HEARTH_REQUIRE_CUDA();
  const Device g = cuda0();
  EXPECT_EQ(error_of([&] { one_hot(index({1, -2}, {2}, g)); }), "[one_hot] class values must be non-negative, got -2");
  EXPECT_EQ(one_hot(index({1, 0}, {2}, g)).cpu().to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
}

}  // namespace
}  // namespace hearth::gpu_testing
