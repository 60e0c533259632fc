#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/train/device_select.h"
#include "tests/support/test_device.h"

namespace hearth::train {
namespace {

std::string device_error(const std::string& spec) {
  try {
    select_device(spec, false);
  } catch (const DeviceError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceSelect, UseCpuWinsOverTheDeviceSetting) {
  DeviceChoice c = select_device("cuda:7", /*use_cpu=*/true);
  EXPECT_TRUE(c.device.is_cpu());
  EXPECT_EQ(c.description, "cpu (use_cpu is set)");
  EXPECT_EQ(select_device("cpu", false).description, "cpu (device is cpu)");
}

TEST(DeviceSelect, AutoPicksTheAcceleratorOrSaysWhyNot) {
  DeviceChoice c = select_device("auto", false);
  EXPECT_EQ(c.device, resolve_device("auto"));
  if (c.device.is_cpu()) {
    EXPECT_EQ(c.description, "cpu (no accelerator: " + no_accelerator_reason() + ")");
    EXPECT_FALSE(no_accelerator_reason().empty());
  } else {
    EXPECT_EQ(c.description.rfind(c.device.str() + " (", 0), 0u) << c.description;
  }
}

TEST(DeviceSelect, AnAbsentAcceleratorFailsWithTheWayOut) {
  // cuda:99 exists on no machine, with or without a GPU or the CUDA backend.
  std::string msg = device_error("cuda:99");
  EXPECT_NE(msg.find("[trainer] "), std::string::npos);
  EXPECT_NE(msg.find("is not available on this system ("), std::string::npos) << msg;
  EXPECT_NE(msg.find(". Available: cpu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Use --device auto or --cpu."), std::string::npos) << msg;
  if (!device_runtime(Device::parse("cuda").kind).is_available()) {
    EXPECT_NE(device_error("cuda").find("accelerator 'cuda' is not available on this system ("), std::string::npos);
    EXPECT_NE(device_error("cuda").find(device_runtime(Device::parse("cuda").kind).unavailable_reason().substr(0, 20)),
              std::string::npos);
  }
}

// Lightning's "gpu": the accelerator auto picks, of whatever kind; never the CPU.
TEST(DeviceSelect, GpuIsTheAcceleratorAutoPicks) {
  const Device best = resolve_device("auto");
  if (best.is_cpu()) {
    const std::string msg = device_error("gpu");
    EXPECT_NE(msg.find("[trainer] device 'gpu': no accelerator is available ("), std::string::npos) << msg;
    EXPECT_NE(msg.find("Use --device auto or --cpu."), std::string::npos) << msg;
    return;
  }
  EXPECT_EQ(select_device("gpu", false).device.kind, best.kind);
  EXPECT_EQ(select_device("gpu:0", false).device, Device(best.kind, 0));
  EXPECT_NE(device_error("gpu:99").find("is not available on this system"), std::string::npos);
}

TEST(DeviceSelect, AnUnknownDeviceNamesTheKnownOnes) {
  std::string msg = device_error("tpu");
  EXPECT_NE(msg.find("device 'tpu' is not a device"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuda"), std::string::npos) << msg;
}

TEST(DeviceSelect, AnExplicitDeviceKindIsUsedAndDescribed) {
  Device dev = hearth::testing::test_device();
  DeviceChoice c = select_device(dev.str(), false);
  EXPECT_EQ(c.device, dev);
  EXPECT_EQ(c.description, dev.str() + " (test device (host memory))");
  // A test kind is never an accelerator device=auto would pick.
  EXPECT_EQ(available_devices().find("testdev"), std::string::npos);
}

}  // namespace
}  // namespace hearth::train
