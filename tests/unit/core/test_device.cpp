#include "hearth/core/device.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

DeviceKind cuda_kind() {
  DeviceKind k;
  EXPECT_TRUE(find_device_kind("cuda", &k)) << "every build registers the cuda kind (backend or stub)";
  return k;
}

TEST(Device, ParsesCpuAndRegisteredKinds) {
  Device cpu = Device::parse("cpu");
  EXPECT_TRUE(cpu.is_cpu());
  EXPECT_EQ(cpu.index, 0);
  EXPECT_EQ(cpu.str(), "cpu");

  Device cuda = Device::parse("cuda");
  EXPECT_EQ(cuda.kind, cuda_kind());
  EXPECT_EQ(cuda.index, 0);
  EXPECT_EQ(cuda.str(), "cuda:0");

  Device cuda1 = Device::parse("cuda:1");
  EXPECT_EQ(cuda1.kind, cuda_kind());
  EXPECT_EQ(cuda1.index, 1);
  EXPECT_EQ(cuda1.str(), "cuda:1");
  EXPECT_NE(cuda, cuda1);
  EXPECT_EQ(cuda1, Device(cuda_kind(), 1));
}

TEST(Device, DefaultIsCpuAndPrints) {
  Device d;
  EXPECT_TRUE(d.is_cpu());
  EXPECT_EQ(d, Device::parse("cpu"));
  std::ostringstream os;
  os << Device(cuda_kind(), 3);
  EXPECT_EQ(os.str(), "cuda:3");
}

TEST(Device, ParseRejectsMalformedSpecs) {
  for (const char* bad : {"cuda:", "cuda:x", "cuda:-1", "cuda:1:2", "cuda: 1", "cuda:1234567"}) {
    try {
      Device::parse(bad);
      ADD_FAILURE() << "expected ValueError for '" << bad << "'";
    } catch (const ValueError& e) {
      EXPECT_TRUE(contains(e.what(), "[device]")) << e.what();
      EXPECT_TRUE(contains(e.what(), bad)) << e.what();
    }
  }
}

TEST(Device, ParseRejectsUnknownKindListingKnownOnes) {
  try {
    Device::parse("tpu");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "unknown device 'tpu'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cpu")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cuda")) << e.what();
  }
  EXPECT_THROW(Device::parse(""), ValueError);
  EXPECT_THROW(Device::parse("CPU"), ValueError);  // kind names are exact
}

// A device PyTorch knows (Apple's "mps", as Hugging Face's Apple-silicon pages
// write it) is named for what it is, not only as unknown.
TEST(Device, ParseSaysWhatAPyTorchDeviceNameStandsFor) {
  try {
    Device::parse("mps");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "unknown device 'mps' (PyTorch's name for Apple's GPUs through Metal; this build "
                                   "of hearth has no backend for them); expected one of: auto, cpu"))
        << e.what();
  }
  try {
    Device::parse("xpu:1");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "unknown device 'xpu:1' (PyTorch's name for Intel's GPUs;")) << e.what();
  }
}

TEST(Device, ParseRejectsAutoAndNonzeroCpuIndex) {
  try {
    Device::parse("auto");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "resolve_device")) << e.what();
  }
  EXPECT_NO_THROW(Device::parse("cpu:0"));
  try {
    Device::parse("cpu:1");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "only index 0")) << e.what();
  }
}

TEST(DeviceKindRegistry, RegisteringIsIdempotentAndNamesRoundTrip) {
  int before = num_device_kinds();
  DeviceKind a = register_device_kind("unit_test_kind");
  DeviceKind b = register_device_kind("unit_test_kind");
  EXPECT_EQ(a, b);
  EXPECT_LE(num_device_kinds(), before + 1);
  EXPECT_EQ(device_kind_name(a), "unit_test_kind");
  DeviceKind found;
  ASSERT_TRUE(find_device_kind("unit_test_kind", &found));
  EXPECT_EQ(found, a);
  EXPECT_FALSE(find_device_kind("never_registered_kind", &found));
  EXPECT_EQ(device_kind_name(kCpu), "cpu");
}

TEST(DeviceKindRegistry, KindWithoutRuntimeIsADeviceError) {
  DeviceKind k = register_device_kind("kind_without_runtime");
  EXPECT_FALSE(has_device_runtime(k));
  try {
    device_runtime(k);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_TRUE(contains(e.what(), "kind_without_runtime")) << e.what();
  }
  EXPECT_THROW(resolve_device("kind_without_runtime"), DeviceError);
}

TEST(ResolveDevice, AutoPicksCpuWhenNoAcceleratorIsAvailable) {
  DeviceRuntime& cuda = device_runtime(cuda_kind());
  Device d = resolve_device("auto");
  if (cuda.is_available() && cuda.device_count() > 0) {
    EXPECT_EQ(d, Device(cuda_kind(), 0));
  } else {
    EXPECT_TRUE(d.is_cpu()) << d;
  }
  EXPECT_EQ(resolve_device(""), d);  // empty means auto
  // The test device is never chosen by auto (negative priority), even when registered.
  testing::test_device_kind();
  EXPECT_EQ(resolve_device("auto"), d);
}

TEST(ResolveDevice, CpuAndExplicitKindsAreParsedAndChecked) {
  EXPECT_TRUE(resolve_device("cpu").is_cpu());
  EXPECT_EQ(resolve_device("testdev"), testing::test_device());
  try {
    resolve_device("testdev:3");
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_TRUE(contains(e.what(), "testdev:3")) << e.what();
    EXPECT_TRUE(contains(e.what(), "only 1")) << e.what();
  }
  EXPECT_THROW(resolve_device("cuda:x"), ValueError);
}

TEST(ResolveDevice, UnavailableCudaSaysWhy) {
  DeviceRuntime& cuda = device_runtime(cuda_kind());
  if (cuda.is_available()) GTEST_SKIP() << "a CUDA runtime is available in this build";
  try {
    resolve_device("cuda");
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "cuda:0 was requested but is not available")) << msg;
    EXPECT_TRUE(contains(msg, cuda.unavailable_reason())) << msg;
    EXPECT_FALSE(cuda.unavailable_reason().empty());
  }
  EXPECT_EQ(cuda.device_count(), 0);
  EXPECT_THROW(check_device_usable(Device(cuda_kind(), 0)), DeviceError);
  if (!HEARTH_TEST_CUDA_BUILT) {  // the no_cuda stub says why, and how to get CUDA
    EXPECT_TRUE(contains(cuda.unavailable_reason(), "built without CUDA")) << cuda.unavailable_reason();
    EXPECT_TRUE(contains(cuda.unavailable_reason(), "-DHEARTH_CUDA=ON")) << cuda.unavailable_reason();
  }
}

TEST(DeviceRuntime, CpuRuntimeAllocatesAlignedAndCopies) {
  DeviceRuntime& cpu = device_runtime(kCpu);
  EXPECT_TRUE(cpu.is_available());
  EXPECT_EQ(cpu.device_count(), 1);
  for (size_t n : {size_t{0}, size_t{1}, size_t{100}}) {
    void* p = cpu.allocate(n, 0);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    cpu.deallocate(p, 0);
  }
  int src[3] = {1, 2, 3}, mid[3] = {}, dst[3] = {};
  cpu.copy_from_host(mid, src, sizeof src, 0);
  cpu.copy_to_host(dst, mid, sizeof mid, 0);
  EXPECT_EQ(dst[2], 3);
}

}  // namespace
}  // namespace hearth
