// Lightning's --accelerator: auto, gpu (the first available accelerator, as
// device=auto picks it, whatever its kind), or any registered device kind.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "apps/common/lightning_flags.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "tests/support/test_device.h"

namespace hearth::cli {
namespace {

train::TrainingArguments apply_accelerator(const std::string& value) {
  CLI::App app;
  LightningFlags flags;
  flags.add_to(app);
  std::vector<std::string> args{"program", "--accelerator", value};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  train::TrainingArguments t;
  flags.apply(t);
  return t;
}

std::string error_of(const std::string& value) {
  try {
    apply_accelerator(value);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

// An accelerator for these tests, available only while `available` is set, at
// a priority above every real backend's, so that device=auto takes it then.
std::atomic<bool> fake_available{false};

class FakeAcceleratorRuntime final : public DeviceRuntime {
 public:
  bool is_available() const override { return fake_available.load(); }
  std::string unavailable_reason() const override { return "the fake accelerator is switched off"; }
  int device_count() const override { return 1; }
  std::string device_name(int) const override { return "fake accelerator (host memory)"; }
  int auto_priority() const override { return 1000; }
  void* allocate(size_t nbytes, int) override { return std::malloc(nbytes ? nbytes : 1); }
  void deallocate(void* p, int) override { std::free(p); }
  void copy_from_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_within(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
};

DeviceKind fake_accelerator() {
  static DeviceKind kind = [] {
    DeviceKind k = register_device_kind("fakeaccel");
    register_device_runtime(k, std::make_unique<FakeAcceleratorRuntime>());
    return k;
  }();
  return kind;
}

TEST(LightningFlags, AcceleratorTakesEveryRegisteredKindByName) {
  testing::test_device_kind();
  EXPECT_EQ(apply_accelerator("cpu").device, "cpu");
  EXPECT_EQ(apply_accelerator("auto").device, "auto");
  EXPECT_EQ(apply_accelerator("testdev").device, "testdev");
  EXPECT_EQ(apply_accelerator("cuda").device, "cuda");  // every build registers the kind
  const std::string e = error_of("tpu");
  EXPECT_NE(e.find("[trainer] --accelerator: expected \"auto\", \"cpu\", \"gpu\", "), std::string::npos) << e;
  EXPECT_NE(e.find("\"cuda\""), std::string::npos) << e;
  EXPECT_NE(e.find("\"testdev\""), std::string::npos) << e;
  EXPECT_NE(e.find("got \"tpu\""), std::string::npos) << e;
}

TEST(LightningFlags, GpuIsTheFirstAvailableAcceleratorOrAClearError) {
  fake_accelerator();
  fake_available = false;
  const Device best = resolve_device("auto");
  if (best.is_cpu()) {
    // No accelerator here (CI): the error names each backend's reason.
    const std::string e = error_of("gpu");
    EXPECT_NE(e.find("[trainer] --accelerator gpu: no accelerator is available: "), std::string::npos) << e;
    EXPECT_NE(e.find("fakeaccel: the fake accelerator is switched off"), std::string::npos) << e;
    EXPECT_NE(e.find("cuda: "), std::string::npos) << e;
    EXPECT_NE(e.find("Use --accelerator cpu"), std::string::npos) << e;
  } else {
    EXPECT_EQ(apply_accelerator("gpu").device, device_kind_name(best.kind));
  }
  // With an accelerator of the highest priority available, gpu is its kind.
  fake_available = true;
  EXPECT_EQ(apply_accelerator("gpu").device, "fakeaccel");
  fake_available = false;
}

}  // namespace
}  // namespace hearth::cli
